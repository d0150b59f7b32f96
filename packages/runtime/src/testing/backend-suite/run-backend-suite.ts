import { describe } from 'vitest';
import { defineClusterTests } from './cluster.suite.ts';
import { defineCreateTests } from './create.suite.ts';
import { defineDeleteTests } from './delete.suite.ts';
import { defineGcTests } from './gc.suite.ts';
import { defineIsolationTests } from './isolation.suite.ts';
import { defineListTests } from './list.suite.ts';
import { defineMetadataOnlyTests } from './metadata-only.suite.ts';
import { type BackendSuiteOptions, resolveSuiteOptions } from './options.ts';
import { definePaginationTests } from './pagination.suite.ts';
import { definePatchTests } from './patch.suite.ts';
import { definePropertyTests } from './property.suite.ts';
import { defineShardTests } from './shard.suite.ts';
import { defineStatusTests } from './status.suite.ts';
import { defineUpdateTests } from './update.suite.ts';
import { defineWatchTests } from './watch.suite.ts';
import { defineWatchFilterTests } from './watch-filter.suite.ts';

/**
 * Declares the Backend conformance suite in the calling vitest test file: one `describe` named
 * `Backend conformance: <name>` with a test per behaviour of the Backend contract, each against a
 * fresh backend from `makeBackend` that is closed afterwards. Tests that need a capability the
 * backend lacks are skipped with the reason in their title; the Expired tests are skipped when the
 * harness has no `compact()`.
 *
 * Call it at the top level of a `*.test.ts` file (vitest collects tests synchronously). Waits are
 * bounded, so a broken backend fails the test instead of hanging it.
 *
 * @example
 * // packages/store/src/store-backend.test.ts
 * import { runBackendSuite } from '@converge/runtime/testing';
 * import { createStore } from './index.ts';
 *
 * runBackendSuite({
 *   name: 'store',
 *   makeBackend: async (types) => {
 *     const store = createStore({ types });
 *     return { backend: store.backend, compact: async () => store.compact(), close: async () => store.close() };
 *   },
 * });
 */
export function runBackendSuite(options: BackendSuiteOptions): void {
  const ctx = resolveSuiteOptions(options);
  describe(`Backend conformance: ${ctx.name}`, () => {
    defineCreateTests(ctx);
    defineUpdateTests(ctx);
    defineStatusTests(ctx);
    definePatchTests(ctx);
    defineListTests(ctx);
    definePaginationTests(ctx);
    defineWatchTests(ctx);
    defineWatchFilterTests(ctx);
    defineShardTests(ctx);
    defineMetadataOnlyTests(ctx);
    defineDeleteTests(ctx);
    defineGcTests(ctx);
    defineClusterTests(ctx);
    defineIsolationTests(ctx);
    definePropertyTests(ctx);
  });
}
