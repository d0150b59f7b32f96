import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const src = (path: string): string => fileURLToPath(new URL(path, import.meta.url));

// Workspace packages resolve to their TypeScript sources, never to a stale dist/.
const workspace = [
  {
    find: /^@converge\/runtime\/testing\/backend-suite$/,
    replacement: src('./packages/runtime/src/testing/backend-suite/index.ts'),
  },
  {
    find: /^@converge\/runtime\/testing\/leader-lock-suite$/,
    replacement: src('./packages/runtime/src/leader-election/lock-suite.ts'),
  },
  { find: /^@converge\/runtime\/testing$/, replacement: src('./packages/runtime/src/testing/index.ts') },
  { find: /^@converge\/runtime$/, replacement: src('./packages/runtime/src/index.ts') },
  { find: /^@converge\/store$/, replacement: src('./packages/store/src/index.ts') },
  { find: /^@converge\/apiserver$/, replacement: src('./packages/apiserver/src/index.ts') },
  { find: /^@converge\/kube$/, replacement: src('./packages/kube/src/index.ts') },
  { find: /^@converge\/nats$/, replacement: src('./packages/nats/src/index.ts') },
  { find: /^@converge\/metrics$/, replacement: src('./packages/metrics/src/index.ts') },
  { find: /^@converge\/tracing$/, replacement: src('./packages/tracing/src/index.ts') },
];

export default defineConfig({
  resolve: {
    alias: workspace,
    conditions: ['@converge/source'],
  },
  test: {
    include: [
      'packages/*/src/**/*.test.ts',
      'packages/*/test/**/*.test.ts',
      'examples/**/*.test.ts',
      'bench/**/*.test.ts',
      'docs/**/*.test.ts',
      'test/**/*.test.ts',
    ],
    testTimeout: 20_000,
    hookTimeout: 20_000,
    pool: 'forks',
  },
});
