import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const ambient = [
  { name: 'Date', message: 'core/ and sim/ take time as an argument or a Clock: no ambient Date.' },
  { name: 'setTimeout', message: 'core/ and sim/ never schedule timers: return a wait command instead.' },
  { name: 'setInterval', message: 'core/ and sim/ never schedule timers.' },
  { name: 'performance', message: 'core/ and sim/ take time as an argument or a Clock.' },
];

export default tseslint.config(
  { ignores: ['**/dist/**', '**/node_modules/**', 'lab-out/**', 'coverage/**', 'docs/api/**', 'reports/**', '.stryker-tmp/**', '**/*.d.ts', 'packages/herdless/test/.docs-blocks/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-non-null-assertion': 'off',
    },
  },
  {
    // The functional core and the simulator: no ambient time or randomness (STYLE.md, habit 1).
    files: ['packages/herdless/src/core/**/*.ts', 'packages/herdless/src/sim/**/*.ts'],
    rules: {
      'no-restricted-globals': ['error', ...ambient],
      'no-restricted-properties': [
        'error',
        { object: 'Math', property: 'random', message: 'Inject an Rng instead of Math.random.' },
        { object: 'Date', property: 'now', message: 'Take now as an argument or a Clock.' },
      ],
    },
  },
  {
    files: ['**/*.js', '**/*.mjs'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly', URL: 'readonly', fetch: 'readonly', performance: 'readonly' } },
  },
);
