/** converge dev's webhook host (binds only once something is registered) passes the WebhookHost suite. */

import { noopLogger } from '@converge/runtime';
import { Store } from '@converge/store';
import { webhookHostSuite } from '../../kube/src/webhook/webhook-host-test-support.ts';
import { DevWebhooks } from '../src/dev-webhooks.ts';

webhookHostSuite("converge dev's host", () => {
  const store = new Store();
  const dev = new DevWebhooks({
    backend: store,
    logger: noopLogger,
    output: { out: () => {}, err: () => {} },
    registrations: () => [],
  });
  return {
    host: dev.host,
    port: async () => (await dev.listening()).port,
    ca: () => dev.caBundle ?? '',
    cleanup: () => store.close(),
  };
});
