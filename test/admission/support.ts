import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import {
  type AdmissionRequest,
  allowed,
  denied,
  generateWebhookCertificates,
  WebhookServer,
} from '@converge/kube';
import type { KubeObject } from '@converge/runtime';

/** One webhook server with a recording validator and defaulter for ConfigMaps. */
export interface Hooks {
  /** The server itself (for its in-process dispatch). */
  readonly server: WebhookServer;
  readonly url: string;
  readonly port: number;
  /** base64 PEM of the CA, for `caBundle`. */
  readonly caBundle: string;
  /** Every request the webhooks received, as `<path> <operation> <name>`. */
  readonly calls: string[];
  /** The last review request received. */
  last: AdmissionRequest<KubeObject> | undefined;
  stop(): Promise<void>;
}

type ConfigMap = KubeObject & { data?: Record<string, string> };

/**
 * Starts a WebhookServer on 127.0.0.1 (its certificate also names `hooks.webhooks.svc`):
 * `/validate` denies a ConfigMap with `data.bad` and warns about `data.warn`; `/default` sets
 * `data.defaulted` and the label `defaulted=yes`.
 */
export async function startHooks(): Promise<Hooks> {
  const server = new WebhookServer({
    host: '127.0.0.1',
    port: 0,
    tls: { generate: { hosts: ['127.0.0.1', 'localhost', 'hooks.webhooks.svc'] } },
  });
  const calls: string[] = [];
  const hooks: Hooks = {
    server,
    url: '',
    port: 0,
    caBundle: '',
    calls,
    last: undefined,
    stop: async () => undefined,
  };
  server.validating<ConfigMap>('/validate', {
    validate(request) {
      calls.push(`/validate ${request.operation} ${request.name}`);
      hooks.last = request;
      const data = request.object?.data ?? {};
      if (data.bad !== undefined)
        return denied(`data.bad is not allowed: ${data.bad}`, { warnings: ['checked by vcm'] });
      return allowed(data.warn === undefined ? {} : { warnings: [`data.warn is set to ${data.warn}`] });
    },
  });
  server.mutating<ConfigMap>('/default', {
    default(configMap) {
      calls.push(`/default ${configMap.metadata.name ?? ''}`);
      return {
        ...configMap,
        metadata: { ...configMap.metadata, labels: { ...configMap.metadata.labels, defaulted: 'yes' } },
        data: { ...configMap.data, defaulted: 'true' },
      };
    },
  });
  const controller = new AbortController();
  const started = server.start(controller.signal);
  started.catch(() => undefined);
  const { url, port } = await server.listening();
  return Object.assign(hooks, {
    url,
    port,
    caBundle: Buffer.from(server.caBundle ?? '').toString('base64'),
    stop: async () => {
      controller.abort();
      await started;
    },
  });
}

/** A bare HTTPS webhook: `answer` gets each AdmissionReview and the path; silent when absent. */
export async function startHttpsServer(
  answer?: (review: { request: Record<string, unknown> }, path: string) => unknown,
): Promise<{ url: string; caBundle: string; close(): Promise<void> }> {
  const certs = await generateWebhookCertificates({ hosts: ['127.0.0.1'] });
  const server: Server = createServer({ cert: certs.cert, key: certs.key }, (req, res) => {
    if (answer === undefined) return;
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const review = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
        request: Record<string, unknown>;
      };
      const body = JSON.stringify(answer(review, new URL(req.url ?? '/', 'https://x').pathname));
      res.writeHead(200, { 'content-type': 'application/json' }).end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `https://127.0.0.1:${port}`,
    caBundle: Buffer.from(certs.caCert).toString('base64'),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** An AdmissionReview v1 response allowing `uid`, with a JSON patch when given. */
export function allowing(uid: unknown, patch?: readonly object[]): unknown {
  return {
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    response: {
      uid,
      allowed: true,
      ...(patch === undefined
        ? {}
        : { patchType: 'JSONPatch', patch: Buffer.from(JSON.stringify(patch)).toString('base64') }),
    },
  };
}

/** A rule for ConfigMaps (core/v1) with the given operations. */
export function configMapRule(operations: readonly string[] = ['CREATE', 'UPDATE']): Record<string, unknown> {
  return { operations, apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] };
}

/** A ValidatingWebhookConfiguration (or Mutating one) with one webhook. */
export function configuration(
  kind: 'ValidatingWebhookConfiguration' | 'MutatingWebhookConfiguration',
  name: string,
  webhook: Record<string, unknown>,
): Record<string, unknown> {
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind,
    metadata: { name },
    webhooks: [
      { sideEffects: 'None', admissionReviewVersions: ['v1'], rules: [configMapRule()], ...webhook },
    ],
  };
}

/** A ServiceAccount's token and user, as the server authenticates it. */
export interface ServiceAccountCredentials {
  readonly token: string;
  /** `metadata.uid` of the ServiceAccount (the user's uid). */
  readonly uid: string;
  /** The token's `jti` (the user's `authentication.kubernetes.io/credential-id` is `JTI=<jti>`). */
  readonly jti: string;
}

/**
 * Creates the ServiceAccount `name` in `default` (unless it exists), lets it write ConfigMaps there
 * (a Role and a RoleBinding) and returns a new token for it (TokenRequest).
 */
export async function configMapWriter(
  api: {
    request(
      path: string,
      options?: { method?: string; body?: unknown },
    ): Promise<{ status: number; json: unknown }>;
  },
  name: string,
): Promise<ServiceAccountCredentials> {
  const ns = '/api/v1/namespaces/default';
  const rbac = '/apis/rbac.authorization.k8s.io/v1/namespaces/default';
  await api.request(`${ns}/serviceaccounts`, { method: 'POST', body: { metadata: { name } } });
  const account = await api.request(`${ns}/serviceaccounts/${name}`);
  const role = {
    metadata: { name },
    rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['create', 'update', 'patch', 'get'] }],
  };
  const roleBinding = {
    metadata: { name },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name },
    subjects: [{ kind: 'ServiceAccount', name, namespace: 'default' }],
  };
  for (const [path, body] of [
    [`${rbac}/roles`, role],
    [`${rbac}/rolebindings`, roleBinding],
  ] as const) {
    const created = await api.request(path, { method: 'POST', body });
    // 409: made by an earlier test of the same server
    if (created.status !== 201 && created.status !== 409)
      throw new Error(`${path}: ${created.status} ${JSON.stringify(created.json)}`);
  }
  const issued = await api.request(`${ns}/serviceaccounts/${name}/token`, {
    method: 'POST',
    body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: {} },
  });
  const token = (issued.json as { status: { token: string } }).status.token;
  const claims = JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString()) as {
    jti?: string;
  };
  return { token, uid: (account.json as { metadata: { uid: string } }).metadata.uid, jti: claims.jti ?? '' };
}
