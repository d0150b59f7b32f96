import { runBackendSuite, suiteNamespaces } from '@converge/runtime/testing/backend-suite';
import { startEmbeddedCluster } from './test-harness.ts';

// The same conformance suite the in-process store passes, here over HTTPS against the embedded API
// server: a fresh server per test, the suite's custom kinds registered as CRDs through the backend,
// and the backend loaded from the kubeconfig the server generates.
runBackendSuite({
  name: 'kube (embedded API server over HTTPS)',
  timeoutMs: 20_000,
  makeBackend: async (types) => {
    const cluster = await startEmbeddedCluster({
      types,
      namespaces: suiteNamespaces,
      bookmarkIntervalMs: 500,
    });
    return {
      backend: cluster.backend,
      compact: async () => cluster.server.store.compact(),
      close: () => cluster.close(),
    };
  },
});
