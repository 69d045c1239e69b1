// @ts-check
import eslint from '@eslint/js';
import prettier from 'eslint-config-prettier';
import tseslint from 'typescript-eslint';

const frameworkImports = [
  '@nestjs/*',
  'typeorm',
  'typeorm/*',
  'pg',
  'ws',
  'class-validator',
  'class-transformer',
  'express',
  'passport*',
  'nestjs-pino',
];

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      'node_modules/**',
      'coverage/**',
      '.parley/**',
      'models/**',
      'bin/**',
      'bench/scratch/**',
      'bench/results/**',
    ],
  },
  eslint.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  prettier,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/await-thenable': 'error',
      '@typescript-eslint/require-await': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': 'error',
      '@typescript-eslint/consistent-type-imports': [
        'error',
        { fixStyle: 'inline-type-imports', disallowTypeAnnotations: false },
      ],
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_' },
      ],
      eqeqeq: ['error', 'always', { null: 'ignore' }],
      curly: ['error', 'multi-line'],
      'no-console': 'error',
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['../*', '../**'],
              message: 'Use the src/… alias instead of parent-relative imports.',
            },
          ],
        },
      ],
    },
  },
  {
    // Nest relies on runtime type metadata from constructor parameter types, so
    // type-only imports must not be forced where a class is injected.
    files: ['src/modules/**/*.ts', 'src/platform/**/*.ts', 'src/app.module.ts', 'src/cli/**/*.ts'],
    rules: { '@typescript-eslint/consistent-type-imports': 'off' },
  },
  {
    files: ['src/core/**/*.ts'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['../*', '../**'],
              message: 'Use the src/… alias instead of parent-relative imports.',
            },
            {
              group: frameworkImports,
              message: 'src/core is framework-free: no Nest, TypeORM, pg, ws or validators.',
            },
            {
              group: ['src/modules/*', 'src/platform/*', 'src/modules/**', 'src/platform/**'],
              message: 'core must not depend on modules or platform.',
            },
          ],
        },
      ],
    },
  },
  {
    // The conversation tables belong to the tracker module: other modules use its public
    // surface (src/modules/tracker/index.ts), never its files or a DataSource of their own.
    files: ['src/modules/conversations-graphql/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['../*', '../**'],
              message: 'Use the src/… alias instead of parent-relative imports.',
            },
            {
              group: ['src/modules/tracker/*', 'src/modules/tracker/**'],
              message: "Import the tracker module's public surface: 'src/modules/tracker'.",
            },
            {
              group: ['typeorm', '@nestjs/typeorm', 'pg'],
              message: 'Conversation data comes through ConversationQuery (src/modules/tracker).',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['**/*.js', '**/*.mjs', '**/*.cjs'],
    extends: [tseslint.configs.disableTypeChecked],
    languageOptions: {
      globals: {
        require: 'readonly',
        module: 'writable',
        process: 'readonly',
        __dirname: 'readonly',
        console: 'readonly',
      },
    },
    rules: { '@typescript-eslint/no-require-imports': 'off', 'no-console': 'off' },
  },
  {
    // The inspector's and the review page's plain browser scripts (served as is, no build step).
    files: ['src/modules/inspector/page/**/*.js', 'src/modules/review/page/**/*.js'],
    languageOptions: {
      sourceType: 'script',
      globals: {
        document: 'readonly',
        location: 'readonly',
        history: 'readonly',
        navigator: 'readonly',
        performance: 'readonly',
        crypto: 'readonly',
        fetch: 'readonly',
        WebSocket: 'readonly',
        URL: 'readonly',
        URLSearchParams: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        getSelection: 'readonly',
        io: 'readonly',
      },
    },
  },
  {
    files: ['test/**/*.ts', 'src/**/*.spec.ts', 'bench/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/unbound-method': 'off',
    },
  },
  {
    files: ['bench/**/*', 'scripts/**/*'],
    rules: { 'no-console': 'off' },
  },
);
