import { createReferenceBackend } from './reference-backend.ts';
import { runBackendSuite } from './run-backend-suite.ts';

runBackendSuite({
  name: 'reference',
  makeBackend: async (types) => {
    const backend = createReferenceBackend({ types, bookmarkIntervalMs: 100 });
    return { backend, compact: () => backend.compact(), close: () => backend.close() };
  },
});
