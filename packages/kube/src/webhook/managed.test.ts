import { X509Certificate } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as tlsConnect } from 'node:tls';
import { createApiServer } from '@converge/apiserver';
import {
  allowed,
  type CustomResourceDefinition,
  customResourceDefinitionType,
  denied,
  isNotFound,
  type KubeObject,
  type Logger,
  Manager,
  namespaceType,
  noopLogger,
  OptionsError,
  type ResourceType,
  resourceType,
  type Secret,
  secretType,
} from '@converge/runtime';
import { Store } from '@converge/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KubeBackend } from '../backend/index.ts';
import { crdFor, crdType } from '../backend/test-harness.ts';
import { loadKubeconfig } from '../config/index.ts';
import { generateWebhookCertificates } from './certificates.ts';
import { validatingWebhookConfigurationType, type WebhookConfiguration } from './configurations.ts';
import { ManagedWebhooks } from './managed.ts';
import { certificatesOf, ensureSharedCertificates, SECRET_KEYS } from './managed-certificates.ts';
import { webhookHostSuite } from './webhook-host-test-support.ts';

type Website = KubeObject & { spec: { domain: string } };

const websiteType: ResourceType = resourceType({
  group: 'example.com',
  version: 'v1',
  kind: 'Website',
  plural: 'websites',
  namespaced: true,
});
const service = { namespace: 'webhook-system', name: 'website-webhooks' };
const HOSTS = [
  'website-webhooks.webhook-system.svc',
  'website-webhooks.webhook-system.svc.cluster.local',
  'website-webhooks.webhook-system',
  'website-webhooks',
];

/** Polls `probe` until it returns true (every 20 ms, at most 10 s). */
async function eventually(what: string, probe: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * An embedded API server whose webhook Services resolve to the port in `target.port` (the
 * replica "the Service" currently sends to), and KubeBackends on it.
 */
let store: Store;
let server: ReturnType<typeof createApiServer>;
let dir: string;
let kubeconfig: string;
const backends: KubeBackend[] = [];
const target = { port: 0 };
const connect = (): KubeBackend => {
  const backend = new KubeBackend({ config: loadKubeconfig({ path: kubeconfig, env: {} }) });
  backends.push(backend);
  return backend;
};

beforeAll(async () => {
  store = new Store();
  server = createApiServer({ store, webhookServiceResolver: () => `https://127.0.0.1:${target.port}` });
  await server.listen();
  dir = mkdtempSync(join(tmpdir(), 'converge-managed-'));
  kubeconfig = join(dir, 'kubeconfig');
  writeFileSync(kubeconfig, server.kubeconfig(), { mode: 0o600 });
  const backend = connect();
  await backend.create(crdType, crdFor(websiteType) as never);
  for (const name of ['web', 'webhook-system']) await backend.create(namespaceType, { metadata: { name } });
  await eventually('websites served', async () => {
    try {
      await backend.list(websiteType, { limit: 1 });
      return true;
    } catch (error) {
      if (isNotFound(error)) return false;
      throw error;
    }
  });
}, 30_000);

afterAll(async () => {
  await Promise.all(backends.map((b) => b.close()));
  await server?.close();
  await store?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The SHA-256 fingerprint of the certificate served on 127.0.0.1:`port` for the webhook Service. */
function servedFingerprint(port: number, ca: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = tlsConnect({ host: '127.0.0.1', port, ca, servername: HOSTS[0] }, () => {
      const fingerprint = socket.getPeerX509Certificate()?.fingerprint256 ?? '';
      socket.end();
      resolve(fingerprint);
    });
    socket.once('error', reject);
  });
}

/** A logger keeping its messages. */
function recordingLogger(messages: string[]): Logger {
  const logger: Logger = {
    debug: () => {},
    info: (_fields, message) => messages.push(message),
    warn: (_fields, message) => messages.push(message),
    error: (_fields, message) => messages.push(message),
    child: () => logger,
  };
  return logger;
}

/** One replica: a manager with a validator served by managed webhooks over its own connection. */
function replica() {
  const backend = connect();
  const messages: string[] = [];
  let manager: Manager;
  const managed = new ManagedWebhooks({
    backend,
    registrations: () => manager.webhooks,
    service,
    secret: 'website-webhook-certs',
    server: { host: '127.0.0.1', port: 0 },
    retryDelayMs: 20,
    logger: recordingLogger(messages),
  });
  manager = new Manager({ backend, webhookServer: managed });
  manager
    .webhook<Website>(websiteType)
    .withValidator({
      validate: ({ object }) =>
        object?.spec.domain.includes(' ') ? denied('spec.domain has a space') : allowed(),
    })
    .withConverter({ convert: (object) => object })
    .complete();
  const stop = new AbortController();
  const running = manager.start(stop.signal);
  return {
    managed,
    messages,
    running,
    stop: async () => {
      stop.abort();
      await running;
    },
  };
}

const bad = (name: string): Website => ({
  apiVersion: 'example.com/v1',
  kind: 'Website',
  metadata: { name, namespace: 'web' },
  spec: { domain: 'my blog' },
});

describe('ManagedWebhooks against the embedded API server', () => {
  it('two replicas share one Secret, either serves the configured webhooks, and edits are undone', async () => {
    const a = replica();
    const b = replica();
    const [atA, atB] = await Promise.all([a.managed.listening(), b.managed.listening()]);
    expect(a.managed.caBundle).toBeDefined();
    expect(b.managed.caBundle).toBe(a.managed.caBundle);
    const admin = connect();
    const secret = await admin.get<Secret>(secretType, {
      namespace: 'webhook-system',
      name: 'website-webhook-certs',
    });
    expect(secret.type).toBe('kubernetes.io/tls');
    expect(certificatesOf(secret)?.caCert).toBe(a.managed.caBundle);
    expect(new X509Certificate(certificatesOf(secret)?.cert ?? '').subjectAltName).toContain(
      'DNS:website-webhooks.webhook-system.svc',
    );

    const configuration = () =>
      admin.get<WebhookConfiguration>(validatingWebhookConfigurationType, {
        namespace: '',
        name: 'website-webhooks',
      });
    await eventually('the configuration', () =>
      configuration().then(
        () => true,
        () => false,
      ),
    );
    expect((await configuration()).webhooks?.[0]).toMatchObject({
      name: 'vwebsite-v1.example.com',
      clientConfig: {
        service: {
          namespace: 'webhook-system',
          name: 'website-webhooks',
          port: 443,
          path: '/validate-example-com-v1-website',
        },
        caBundle: Buffer.from(a.managed.caBundle ?? '').toString('base64'),
      },
    });

    target.port = atA.port;
    await expect(admin.create(websiteType, bad('one'))).rejects.toThrow(
      'admission webhook "vwebsite-v1.example.com" denied the request: spec.domain has a space',
    );
    // Replica A goes; the Service sends to B, which serves with the same certificate.
    await a.stop();
    target.port = atB.port;
    await expect(admin.create(websiteType, bad('two'))).rejects.toThrow(
      /denied the request: spec.domain has a space/,
    );

    // Someone empties the configuration, then deletes it: B puts it back each time.
    const edited = await configuration();
    await admin.update(validatingWebhookConfigurationType, { ...edited, webhooks: [] } as never);
    await eventually(
      'the webhooks restored',
      async () => ((await configuration()).webhooks?.length ?? 0) === 1,
    );
    await admin.delete(validatingWebhookConfigurationType, { namespace: '', name: 'website-webhooks' });
    await eventually('the configuration recreated', () =>
      configuration().then(
        () => true,
        () => false,
      ),
    );
    await expect(admin.create(websiteType, bad('three'))).rejects.toThrow(/denied the request/);
    // The Secret deleted: B writes back the certificates it serves with.
    const secretKey = { namespace: 'webhook-system', name: 'website-webhook-certs' };
    await admin.delete(secretType, secretKey);
    await eventually('the Secret recreated', async () => {
      try {
        return certificatesOf(await admin.get<Secret>(secretType, secretKey))?.caCert === b.managed.caBundle;
      } catch {
        return false;
      }
    });
    // The CRD's conversion points at the Service's /convert; reset by hand, it is set again.
    const crd = () =>
      admin.get<CustomResourceDefinition>(customResourceDefinitionType, {
        namespace: '',
        name: 'websites.example.com',
      });
    expect((await crd()).spec?.conversion).toMatchObject({
      strategy: 'Webhook',
      webhook: {
        clientConfig: { service: { name: 'website-webhooks', path: '/convert' } },
        conversionReviewVersions: ['v1'],
      },
    });
    const current = await crd();
    await admin.update(customResourceDefinitionType, {
      ...current,
      spec: { ...current.spec, conversion: { strategy: 'None' } },
    } as never);
    await eventually(
      'the conversion restored',
      async () => (await crd()).spec?.conversion?.strategy === 'Webhook',
    );
    // A renewed serving certificate under the same CA in the Secret: B serves it, no restart.
    const before = await admin.get<Secret>(secretType, secretKey);
    const kept = certificatesOf(before);
    const renewed = await generateWebhookCertificates({
      hosts: HOSTS,
      ca: { cert: kept?.caCert ?? '', key: kept?.caKey ?? '' },
    });
    await admin.update(secretType, {
      ...before,
      data: {
        ...before.data,
        [SECRET_KEYS.cert]: Buffer.from(renewed.cert).toString('base64'),
        [SECRET_KEYS.key]: Buffer.from(renewed.key).toString('base64'),
      },
    });
    const renewedFingerprint = new X509Certificate(renewed.cert).fingerprint256;
    await eventually('the renewed certificate served', async () => {
      return (await servedFingerprint(atB.port, kept?.caCert ?? '')) === renewedFingerprint;
    });
    // Another CA in the Secret (a replica started since replaced it): B stops configuring and says why.
    const other = await generateWebhookCertificates({ hosts: HOSTS });
    const stored = await admin.get<Secret>(secretType, secretKey);
    await admin.update(secretType, {
      ...stored,
      data: { ...stored.data, [SECRET_KEYS.caCert]: Buffer.from(other.caCert).toString('base64') },
    });
    await eventually('the warning', async () =>
      b.messages.some((m) =>
        m.startsWith('The webhook Secret holds another CA than this replica serves with'),
      ),
    );
    await b.stop();
    await admin.delete(validatingWebhookConfigurationType, { namespace: '', name: 'website-webhooks' });
  }, 60_000);

  it('a Secret that cannot serve the Service is replaced, keeping a good CA (and so the caBundle)', async () => {
    const admin = connect();
    const old = await generateWebhookCertificates({ hosts: ['elsewhere.default.svc'] });
    const b64 = (s: string) => Buffer.from(s).toString('base64');
    await admin.create(secretType, {
      metadata: { namespace: 'webhook-system', name: 'wrong-hosts' },
      data: {
        [SECRET_KEYS.cert]: b64(old.cert),
        [SECRET_KEYS.key]: b64(old.key),
        [SECRET_KEYS.caCert]: b64(old.caCert),
        [SECRET_KEYS.caKey]: b64(old.caKey),
      },
    });
    const renewed = await ensureSharedCertificates({
      backend: admin,
      namespace: 'webhook-system',
      name: 'wrong-hosts',
      hosts: HOSTS,
      labels: {},
      logger: noopLogger,
    });
    expect(renewed.caCert).toBe(old.caCert);
    expect(new X509Certificate(renewed.cert).subjectAltName).toContain(
      'DNS:website-webhooks.webhook-system.svc',
    );
    // Unreadable: a new CA.
    await admin.create(secretType, {
      metadata: { namespace: 'webhook-system', name: 'garbage' },
      data: { [SECRET_KEYS.cert]: b64('x') },
    });
    const fresh = await ensureSharedCertificates({
      backend: admin,
      namespace: 'webhook-system',
      name: 'garbage',
      hosts: HOSTS,
      labels: {},
      logger: noopLogger,
    });
    expect(
      certificatesOf(await admin.get<Secret>(secretType, { namespace: 'webhook-system', name: 'garbage' })),
    ).toEqual(fresh);
    // Usable: read as is.
    const again = await ensureSharedCertificates({
      backend: admin,
      namespace: 'webhook-system',
      name: 'garbage',
      hosts: HOSTS,
      labels: {},
      logger: noopLogger,
    });
    expect(again).toEqual(fresh);
  }, 30_000);

  it('five replicas racing to create the Secret all end with the same certificate', async () => {
    const results = await Promise.all(
      Array.from({ length: 5 }, () =>
        ensureSharedCertificates({
          backend: connect(),
          namespace: 'webhook-system',
          name: 'raced',
          hosts: HOSTS,
          labels: {},
          logger: noopLogger,
        }),
      ),
    );
    expect(new Set(results.map((r) => r.cert)).size).toBe(1);
  }, 30_000);

  it.each([
    [{ service: { namespace: 'Bad', name: 'x' } }, 'service.namespace'],
    [{ service: { namespace: 'a', name: 'x', port: 0 } }, 'service.port'],
    [{ secret: '' }, 'secret'],
    [{ registrations: 'x' }, 'registrations'],
    [{ resyncIntervalMs: -1 }, 'resyncIntervalMs'],
  ])('refuses %j', (override, field) => {
    const options = { backend: connect(), registrations: [], service, secret: 's', ...override };
    expect(() => new ManagedWebhooks(options as never)).toThrow(expect.objectContaining({ field }));
    expect(() => new ManagedWebhooks(options as never)).toThrow(OptionsError);
  });
});

webhookHostSuite('ManagedWebhooks', () => {
  const managed = new ManagedWebhooks({
    backend: connect(),
    registrations: [],
    service: { namespace: 'webhook-system', name: 'suite-hooks' },
    secret: 'suite-hooks-certs',
    server: { host: '127.0.0.1', port: 0 },
  });
  return {
    host: managed,
    port: async () => (await managed.listening()).port,
    ca: () => managed.caBundle ?? '',
    servername: 'suite-hooks.webhook-system.svc',
  };
});
