// Lint rules, including the layer import rules of docs/architecture.md.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const layer = (files, patterns) => ({
  files,
  rules: { 'no-restricted-imports': ['error', { patterns }] },
});
const banned = (group, message) => ({ group, message });

export default tseslint.config(
  { ignores: ['node_modules/**', 'dist/**', 'data/**', 'bench/results/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { process: 'readonly', console: 'readonly' } },
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_' },
      ],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-console': ['error', { allow: ['warn', 'error'] }],
    },
  },
  // http/ may read the store but never builds SQL of its own or emits events.
  layer(
    ['src/http/**'],
    [
      banned(['**/events/bus*', '**/events/queue*'], 'Routes never emit events: call an action.'),
      banned(['kysely'], 'Routes never build SQL: add a query to store/.'),
      banned(['**/workers/**', '**/cli/**'], 'http/ does not import workers or the CLI.'),
    ],
  ),
  // actions/ never see Fastify or the HTTP layer, so the CLI, workers and tests call them unchanged.
  layer(
    ['src/actions/**'],
    [
      banned(
        ['**/http/**', 'fastify', '@fastify/*'],
        'Actions take (ctx, actor, params) and never see HTTP.',
      ),
      banned(['**/cli/**', '**/workers/**'], 'Actions do not import the CLI or workers.'),
    ],
  ),
  // store/ holds SQL only.
  layer(
    ['src/store/**'],
    [
      banned(
        [
          '**/http/**',
          '**/actions/**',
          '**/events/**',
          '**/lib/**',
          '**/infra/**',
          '**/cli/**',
          '**/workers/**',
        ],
        'store/ imports Kysely and its own schema only.',
      ),
    ],
  ),
  // lib/ is pure.
  layer(
    ['src/lib/**'],
    [
      banned(
        [
          '**/http/**',
          '**/actions/**',
          '**/events/**',
          '**/infra/**',
          '**/cli/**',
          '**/workers/**',
        ],
        'lib/ is pure: no database, events or side effects.',
      ),
      // Presenters turn rows into JSON, so lib/ may know the row types, but never the queries.
      {
        ...banned(['**/store/**'], 'lib/ may import row types only (import type).'),
        allowTypeImports: true,
      },
      banned(
        [
          'node:fs',
          'node:net',
          'node:http',
          'node:child_process',
          'kysely',
          'pg',
          'better-sqlite3',
          'ioredis',
          'undici',
        ],
        'lib/ is pure: no I/O.',
      ),
    ],
  ),
  // events/ owns queues and the bus; it presents through lib/ and reads through store/, never actions/ or http/.
  layer(
    ['src/events/**'],
    [
      banned(
        ['**/http/**', '**/actions/**', '**/cli/**', '**/workers/**'],
        'events/ does not import actions, http, CLI or workers.',
      ),
    ],
  ),
  // The register snapshot composes each area's read-only presenters, so it may read actions/.
  layer(
    ['src/events/initial-state.ts'],
    [
      banned(
        ['**/http/**', '**/cli/**', '**/workers/**'],
        'The snapshot does not import http, CLI or workers.',
      ),
    ],
  ),
  {
    files: ['src/cli/**', 'src/cli.ts', 'bench/**', 'test/**'],
    rules: { 'no-console': 'off' },
  },
  {
    files: ['test/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['**/shared/**', '../../shared/**'],
              message: 'Tests must not read ../shared.',
            },
          ],
        },
      ],
    },
  },
);
