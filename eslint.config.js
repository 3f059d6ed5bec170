// ESLint flat config: typescript-eslint's type-aware rules for src/ and test/, plain rules for JS.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';
import { importX } from 'eslint-plugin-import-x';
import { createTypeScriptImportResolver } from 'eslint-import-resolver-typescript';

/**
 * The layers of src/, lowest first: a folder may import from its own layer and the ones below,
 * never from above (ARCHITECTURE.md draws them). index.ts, the package's entry, is above them all.
 */
const LAYERS = [
  ['src/restgraph-error.ts'],
  ['src/start-up-errors.ts'],
  ['src/errors.ts', 'src/package-version.ts', 'src/promise-or-value.ts', 'src/retry-backoff.ts'],
  ['src/schema'],
  ['src/store'],
  ['src/core'],
  ['src/auth', 'src/webhooks', 'src/mail', 'src/files'],
  ['src/openapi'],
  ['src/http'],
  ['src/rest', 'src/graphql'],
  ['src/app'],
  ['src/cli'],
];

/** Zones for import-x/no-restricted-paths: each layer against those above it, and neighbours in a layer against each other. */
function layerZones() {
  const zones = [];
  LAYERS.forEach((layer, i) => {
    const above = LAYERS.slice(i + 1).flat();
    for (const target of layer) {
      const neighbours = layer.filter((other) => other !== target);
      if (above.length > 0) zones.push({ target, from: above, message: `${target} is below these layers (see ARCHITECTURE.md): it may not import them.` });
      if (neighbours.length > 0) zones.push({ target, from: neighbours, message: `${target} and ${neighbours.join(', ')} are side by side: neither imports the other.` });
    }
  });
  // Only the store knows the databases: the dialect folders are reached through open-database.ts
  // alone, and neither knows the other.
  const dialects = ['src/store/sqlite', 'src/store/postgres'];
  const message = 'only src/store/open-database.ts reaches a dialect folder: the rest of restgraph asks the database and its dialect rules for what differs.';
  for (const target of [...LAYERS.flat().filter((folder) => folder !== 'src/store'), 'src/index.ts', 'src/store/!(open-database).ts']) {
    zones.push({ target, from: dialects, message });
  }
  zones.push({ target: dialects[0], from: dialects[1], message: 'the SQLite driver does not know PostgreSQL.' });
  zones.push({ target: dialects[1], from: dialects[0], message: 'the PostgreSQL driver does not know SQLite.' });
  return zones;
}

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'data/**', 'coverage/**', 'bench/results/**', 'test/vendor/**'] },
  js.configs.recommended,
  {
    files: ['**/*.js', '**/*.mjs'],
    languageOptions: { globals: { ...globals.node }, sourceType: 'module' },
  },
  {
    // The browser app example (docs/accounts.md#browser-apps): a page's script, not Node's.
    files: ['examples/browser-app/app.js'],
    languageOptions: { globals: { ...globals.browser } },
  },
  {
    files: ['src/**/*.ts'],
    plugins: { 'import-x': importX },
    settings: {
      'import-x/resolver-next': [createTypeScriptImportResolver({ project: 'tsconfig.json' })],
      // no-cycle follows imports into the files they name: it must parse TypeScript to do so.
      'import-x/parsers': { '@typescript-eslint/parser': ['.ts'] },
      'import-x/extensions': ['.ts', '.js'],
    },
    rules: {
      'import-x/no-restricted-paths': ['error', { zones: layerZones() }],
      'import-x/no-cycle': ['error', { ignoreExternal: true }],
      'import-x/no-duplicates': ['error', { 'prefer-inline': true }],
    },
  },
  {
    files: ['**/*.ts'],
    extends: [...tseslint.configs.strictTypeChecked],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/restrict-template-expressions': ['error', { allowNumber: true, allowBoolean: true }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
      '@typescript-eslint/no-confusing-void-expression': 'off',
      '@typescript-eslint/no-unnecessary-condition': ['error', { allowConstantLoopConditions: true }],
      'no-restricted-syntax': [
        'error',
        { selector: "MemberExpression[object.name='it'][property.name='only']", message: '.only must not be committed' },
        { selector: "MemberExpression[object.name='describe'][property.name='only']", message: '.only must not be committed' },
        // no-floating-promises and no-misused-promises let this pass: the promise an async callback of
        // .finally() returns rejects with nothing to catch it (an unhandled rejection).
        {
          selector: "CallExpression[callee.property.name='finally'] > :matches(ArrowFunctionExpression, FunctionExpression)[async=true]",
          message: 'an async .finally() callback rejects unhandled when it throws: use try/finally in an async function',
        },
      ],
    },
  },
  {
    // The admin console (console/): browser code, type-checked against console/tsconfig.json.
    files: ['console/**/*.{ts,tsx}'],
    extends: [...tseslint.configs.strictTypeChecked],
    languageOptions: {
      globals: { ...globals.browser },
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/restrict-template-expressions': ['error', { allowNumber: true, allowBoolean: true }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
      '@typescript-eslint/no-confusing-void-expression': 'off',
      '@typescript-eslint/no-unnecessary-condition': ['error', { allowConstantLoopConditions: true }],
    },
  },
);
