import { existsSync, readFileSync, statSync } from 'node:fs';
import Module, { createRequire } from 'node:module';
import { dirname, resolve } from 'node:path';

/** File extensions of user modules (custom persistors, custom channels), in lookup order. */
export const USER_MODULE_EXTENSIONS = ['.js', '.cjs', '.ts', '.cts'] as const;

/** `base` itself when it is a file, else `<base><ext>` for the first extension that exists. */
export function findUserModule(base: string): string | null {
  if (existsSync(base) && statSync(base).isFile()) return base;
  for (const ext of USER_MODULE_EXTENSIONS) {
    if (existsSync(`${base}${ext}`)) return `${base}${ext}`;
  }
  return null;
}

interface TypeScriptCompiler {
  transpileModule(
    input: string,
    options: {
      compilerOptions: Record<string, unknown>;
      fileName: string;
      reportDiagnostics: boolean;
    },
  ): { outputText: string; diagnostics?: readonly TsDiagnostic[] };
  flattenDiagnosticMessageText(message: unknown, newLine: string): string;
  ModuleKind: { CommonJS: number };
  ScriptTarget: { ES2022: number };
}

interface TsDiagnostic {
  messageText: unknown;
  start?: number;
}

type ModuleInternals = Module & { _compile(code: string, filename: string): void };
type ModuleStatics = { _nodeModulePaths(from: string): string[] };

const compiled = new Map<string, { mtimeMs: number; exports: Record<string, unknown> }>();

function typescriptFor(file: string): TypeScriptCompiler {
  for (const from of [file, __filename]) {
    try {
      return createRequire(from)('typescript') as TypeScriptCompiler;
    } catch {
      // try Parley's own copy next
    }
  }
  throw new Error(
    `${file} is TypeScript and the 'typescript' package is not installed: install it next to ` +
      'the module, or compile the module to JavaScript',
  );
}

/**
 * Loads a user's module. JavaScript goes through `require` (CommonJS). A TypeScript file
 * (`.ts`, `.cts`) is transpiled in memory by the `typescript` compiler — of the user's project
 * when it has one, else Parley's — to CommonJS and evaluated as that file, so its own relative
 * imports and packages resolve from its folder. Types are not checked here: that is the user's
 * build's job, as with ts-node's transpile-only mode.
 */
export function requireUserModule(file: string): Record<string, unknown> {
  if (!/\.c?ts$/.test(file)) {
    return createRequire(file)(file) as Record<string, unknown>;
  }
  const { mtimeMs } = statSync(file);
  const cached = compiled.get(file);
  if (cached !== undefined && cached.mtimeMs === mtimeMs) return cached.exports;
  const ts = typescriptFor(file);
  const source = readFileSync(file, 'utf8');
  const { outputText, diagnostics } = ts.transpileModule(source, {
    fileName: file,
    reportDiagnostics: true,
    compilerOptions: {
      module: ts.ModuleKind.CommonJS,
      target: ts.ScriptTarget.ES2022,
      esModuleInterop: true,
      sourceMap: false,
    },
  });
  const first = diagnostics?.[0];
  if (first !== undefined) {
    const line = source.slice(0, first.start ?? 0).split('\n').length;
    throw new Error(`${file}:${line}: ${ts.flattenDiagnosticMessageText(first.messageText, ' ')}`);
  }
  const mod = new Module(file) as ModuleInternals;
  mod.filename = file;
  mod.paths = (Module as unknown as ModuleStatics)._nodeModulePaths(dirname(file));
  // Relative imports of further TypeScript files load the same way; the rest as Node does.
  const nodeRequire = mod.require.bind(mod);
  mod.require = Object.assign((id: string): unknown => {
    if (id.startsWith('.')) {
      const target = findUserModule(resolve(dirname(file), id));
      if (target !== null && /\.c?ts$/.test(target)) return requireUserModule(target);
    }
    return nodeRequire(id);
  }, nodeRequire);
  mod._compile(outputText, file);
  const exports = mod.exports as Record<string, unknown>;
  compiled.set(file, { mtimeMs, exports });
  return exports;
}
