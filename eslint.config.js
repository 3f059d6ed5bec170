// ESLint flat config: typescript-eslint's type-aware rules for src/ and test/, plain rules for JS.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'data/**', 'coverage/**', 'bench/results/**'] },
  js.configs.recommended,
  {
    files: ['**/*.js', '**/*.mjs'],
    languageOptions: { globals: { ...globals.node }, sourceType: 'module' },
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
);
