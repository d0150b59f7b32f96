import { defineConfig } from 'vitest/config';

export default defineConfig({
  resolve: {
    conditions: ['@converge/source'],
  },
  test: {
    include: [
      'packages/*/src/**/*.test.ts',
      'packages/*/test/**/*.test.ts',
      'examples/**/*.test.ts',
      'bench/**/*.test.ts',
    ],
    testTimeout: 20_000,
    hookTimeout: 20_000,
    pool: 'forks',
    reporters: ['default'],
  },
});
