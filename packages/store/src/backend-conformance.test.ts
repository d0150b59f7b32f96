import { runBackendSuite } from '@converge/runtime/testing/backend-suite';
import { Store } from './store.ts';

runBackendSuite({
  name: 'store',
  makeBackend: async (types) => {
    const store = new Store({ types, bookmarkIntervalMs: 500 });
    return { backend: store, compact: async () => store.compact(), close: () => store.close() };
  },
});
