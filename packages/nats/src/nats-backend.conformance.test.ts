import { runBackendSuite } from '@converge/runtime/testing/backend-suite';
import { testBackend } from './test-support.ts';

// The conformance suite every Converge backend passes, here against a real nats-server with
// JetStream: each test gets buckets of its own (a unique prefix) that are deleted afterwards.
// compact() is the backend's own: it drops old revisions, delete markers and held list snapshots
// without touching current objects, so the Expired tests run for real.
runBackendSuite({
  name: 'nats (JetStream KV)',
  timeoutMs: 15_000,
  makeBackend: async (types) => {
    const { backend, destroy } = await testBackend(types);
    return {
      backend,
      compact: async () => {
        await backend.compact();
      },
      close: destroy,
    };
  },
});
