// @ts-check
'use strict';
// Architecture boundaries of src/, checked by `npm run lint` (depcruise src --config …).
// Paths are relative to the directory depcruise runs in (the repository root); the
// boundaries spec (test/integration/boundaries.int-spec.ts) runs this same file against a
// planted tree to prove each rule fires.

// Every module exposes an index.ts; importing past it is an error like the other rules.
const MODULE_BOUNDARY_SEVERITY = 'error';

// Packages that tie code to a framework, a database driver or a transport. They may resolve
// (node_modules/…, possibly through a symlinked node_modules) or not (the bare name).
const FRAMEWORK_PACKAGES = [
  '@nestjs/[^/]+',
  'typeorm',
  'pg',
  'ws',
  'express',
  'passport[^/]*',
  'class-validator',
  'class-transformer',
  'nestjs-pino',
  'socket\\.io',
  'minio',
];
const framework = `(^|/)(node_modules/)?(${FRAMEWORK_PACKAGES.join('|')})(/|$)`;

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'core-no-framework',
      comment:
        'src/core is framework-free: no Nest, TypeORM, pg, ws, Express, Passport, validators, ' +
        'pino, socket.io or MinIO. Adapters for those live in src/modules and src/platform.',
      severity: 'error',
      from: { path: '^src/core/' },
      to: { path: framework },
    },
    {
      name: 'core-no-outer-layers',
      comment:
        'src/core depends on nothing outside itself in src: modules, platform, cli and bootstrap ' +
        'depend on core, never the other way round.',
      severity: 'error',
      from: { path: '^src/core/' },
      to: { path: '^src/(modules|platform|cli|bootstrap)/' },
    },
    {
      name: 'no-circular',
      comment:
        'No import cycles in src through runtime imports. A cycle that passes through a ' +
        'type-only import is erased at compile time (the event catalogue: each kind names the ' +
        'DialogueEvent union that names every kind) and is allowed.',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true, viaOnly: { dependencyTypesNot: ['type-only'] } },
    },
    {
      name: 'module-public-api',
      comment:
        'A module uses another module only through its public file src/modules/<name>/index.ts ' +
        '(an index.ts in a sub-folder is not public).',
      severity: MODULE_BOUNDARY_SEVERITY,
      from: { path: '^src/modules/([^/]+)/' },
      to: {
        path: '^src/modules/[^/]+/',
        pathNot: ['^src/modules/$1/', '^src/modules/[^/]+/index\\.ts$'],
      },
    },
    {
      name: 'platform-not-to-modules',
      comment: 'src/platform is the shared base of the modules and must not import them.',
      severity: MODULE_BOUNDARY_SEVERITY,
      from: { path: '^src/platform/' },
      to: { path: '^src/modules/' },
    },
    {
      name: 'src-not-to-test',
      comment: 'Product code (and the specs beside it) never imports from test/.',
      severity: 'error',
      from: { path: '^src/' },
      to: { path: '^test/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      mainFields: ['module', 'main', 'types', 'typings'],
    },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
