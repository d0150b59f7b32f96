/**
 * Admission of the `/scale` subresource: `kubectl scale` goes through a validating webhook
 * registered for `deployments/scale` (a real WebhookServer) which sees autoscaling/v1 Scale
 * objects, and through a ValidatingAdmissionPolicy on `deployments/scale`; rules naming only
 * `deployments` are not called for scale writes.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type AdmissionRequest, allowed, denied, WebhookServer } from '@converge/kube';
import type { KubeObject } from '@converge/runtime';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type ApiServer, createApiServer } from '../../packages/apiserver/src/server/api-server.ts';
import { type KubectlResult, runKubectl } from '../../packages/apiserver/src/server/kubectl-support.ts';

type Scale = KubeObject & { spec?: { replicas?: number } };

let dir: string;
let server: ApiServer;
let kubeconfig: string;
let hooks: WebhookServer;
let stopHooks: AbortController;
let url = '';
let caBundle = '';
const seen: string[] = [];
let lastScale: AdmissionRequest<Scale> | undefined;

function kubectl(args: readonly string[], input?: string): Promise<KubectlResult> {
  return runKubectl('kubectl', kubeconfig, join(dir, 'cache'), args, input === undefined ? {} : { input });
}

const configuration = (resources: string): string => `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: { name: scale-checks }
webhooks:
- name: vscale.example.com
  sideEffects: None
  admissionReviewVersions: [v1]
  clientConfig: { url: "${url}/validate-scale", caBundle: ${caBundle} }
  rules: [{ operations: [UPDATE], apiGroups: [apps], apiVersions: [v1], resources: [${resources}] }]
`;

const DEPLOYMENT = `apiVersion: apps/v1
kind: Deployment
metadata: { name: web, namespace: default }
spec:
  replicas: 1
  selector: { matchLabels: { app: web } }
  template:
    metadata: { labels: { app: web } }
    spec: { containers: [{ name: web, image: nginx }] }
`;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'converge-scale-admission-'));
  kubeconfig = join(dir, 'kubeconfig');
  server = createApiServer({ kubeconfigPath: kubeconfig });
  await server.listen();
  hooks = new WebhookServer({ host: '127.0.0.1', port: 0, tls: { generate: { hosts: ['127.0.0.1'] } } });
  hooks.validating<Scale>('/validate-scale', {
    validate(request) {
      seen.push(`${request.kind.kind} ${request.subResource ?? ''} ${request.name}`);
      if (request.kind.kind === 'Scale') lastScale = request;
      const replicas = request.object?.spec?.replicas ?? 0;
      return replicas > 5 ? denied(`at most 5 replicas, not ${replicas}`) : allowed();
    },
  });
  hooks.mutating<Scale>('/cap-scale', {
    default(scale) {
      return { ...scale, spec: { ...scale.spec, replicas: Math.min(scale.spec?.replicas ?? 0, 4) } };
    },
  });
  stopHooks = new AbortController();
  void hooks.start(stopHooks.signal).catch(() => undefined);
  ({ url } = await hooks.listening());
  caBundle = Buffer.from(hooks.caBundle ?? '').toString('base64');
  const created = await kubectl(['apply', '-f', '-'], DEPLOYMENT);
  expect(created.stderr).toBe('');
  expect(created.stdout).toBe('deployment.apps/web created\n');
});

afterAll(async () => {
  stopHooks.abort();
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

beforeEach(() => {
  seen.length = 0;
  lastScale = undefined;
});

describe('admission on the scale subresource', () => {
  it('a webhook for deployments/scale sees the Scale and can deny kubectl scale', async () => {
    expect((await kubectl(['apply', '-f', '-'], configuration('deployments/scale'))).code).toBe(0);
    const ok = await kubectl(['scale', 'deployment', 'web', '--replicas=3']);
    expect(ok.stderr).toBe('');
    expect(ok.stdout).toBe('deployment.apps/web scaled\n');
    expect(lastScale).toMatchObject({
      kind: { group: 'autoscaling', version: 'v1', kind: 'Scale' },
      resource: { group: 'apps', version: 'v1', resource: 'deployments' },
      subResource: 'scale',
      name: 'web',
      namespace: 'default',
      operation: 'UPDATE',
      object: { apiVersion: 'autoscaling/v1', kind: 'Scale', spec: { replicas: 3 } },
      oldObject: { apiVersion: 'autoscaling/v1', kind: 'Scale', spec: { replicas: 1 } },
    });
    const refused = await kubectl(['scale', 'deployment', 'web', '--replicas=9']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toBe(
      'Error from server (Forbidden): admission webhook "vscale.example.com" denied the request: at most 5 replicas, not 9\n',
    );
    const replicas = await kubectl(['get', 'deployment', 'web', '-o', 'jsonpath={.spec.replicas}']);
    expect(replicas.stdout).toBe('3');
    // a main-resource update is not a scale write
    expect((await kubectl(['label', 'deployment', 'web', 'tier=front'])).code).toBe(0);
    expect(seen).toEqual(['Scale scale web', 'Scale scale web']);
  });

  it('rules for the main resource are not called for scale writes, */scale is', async () => {
    expect((await kubectl(['apply', '-f', '-'], configuration('deployments'))).code).toBe(0);
    expect((await kubectl(['scale', 'deployment', 'web', '--replicas=7'])).code).toBe(0);
    expect(seen).toEqual([]);
    expect((await kubectl(['label', 'deployment', 'web', 'tier=back', '--overwrite'])).code).toBe(1);
    expect(seen).toEqual(['Deployment  web']);
    seen.length = 0;
    expect((await kubectl(['apply', '-f', '-'], configuration('"*/scale"'))).code).toBe(0);
    expect((await kubectl(['scale', 'deployment', 'web', '--replicas=4'])).code).toBe(0);
    expect(seen).toEqual(['Scale scale web']);
    expect((await kubectl(['delete', 'validatingwebhookconfiguration', 'scale-checks'])).code).toBe(0);
  });

  it('a ValidatingAdmissionPolicy on deployments/scale checks the Scale object', async () => {
    const policy = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: { name: scale-limit }
spec:
  matchConstraints:
    resourceRules: [{ apiGroups: [apps], apiVersions: [v1], operations: [UPDATE], resources: [deployments/scale] }]
  validations:
  - expression: "object.kind == 'Scale' && object.spec.replicas <= oldObject.spec.replicas + 2"
    messageExpression: "'scale by at most 2 at a time, not ' + string(object.spec.replicas - oldObject.spec.replicas)"
    reason: Forbidden
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: { name: scale-limit }
spec: { policyName: scale-limit, validationActions: [Deny] }
`;
    expect((await kubectl(['apply', '-f', '-'], policy)).code).toBe(0);
    const refused = await kubectl(['scale', 'deployment', 'web', '--replicas=10']);
    expect(refused.stderr).toBe(
      `Error from server (Forbidden): deployments.apps "web" is forbidden: ValidatingAdmissionPolicy 'scale-limit' with binding 'scale-limit' denied request: scale by at most 2 at a time, not 6\n`,
    );
    expect((await kubectl(['scale', 'deployment', 'web', '--replicas=6'])).stdout).toBe(
      'deployment.apps/web scaled\n',
    );
  });

  it('a mutating webhook for deployments/scale changes the Scale that is written', async () => {
    expect((await kubectl(['delete', 'validatingadmissionpolicybinding', 'scale-limit'])).code).toBe(0);
    const mutating = `apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata: { name: scale-cap }
webhooks:
- name: mscale.example.com
  sideEffects: None
  admissionReviewVersions: [v1]
  clientConfig: { url: "${url}/cap-scale", caBundle: ${caBundle} }
  rules: [{ operations: [UPDATE], apiGroups: [apps], apiVersions: [v1], resources: [deployments/scale] }]
`;
    expect((await kubectl(['apply', '-f', '-'], mutating)).code).toBe(0);
    expect((await kubectl(['scale', 'deployment', 'web', '--replicas=9'])).stdout).toBe(
      'deployment.apps/web scaled\n',
    );
    const replicas = await kubectl(['get', 'deployment', 'web', '-o', 'jsonpath={.spec.replicas}']);
    expect(replicas.stdout).toBe('4');
  });
});
