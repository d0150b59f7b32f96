/** Where test files live (vitest.config.ts and scripts/test-kinds.ts). */
export const TEST_GLOBS = [
  'packages/*/src/**/*.test.ts',
  'packages/*/test/**/*.test.ts',
  'examples/**/*.test.ts',
  'bench/**/*.test.ts',
  'docs/**/*.test.ts',
  'test/**/*.test.ts',
];
