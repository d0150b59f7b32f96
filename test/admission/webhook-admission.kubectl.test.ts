/**
 * Real kubectl against the embedded API server with admission webhooks served by a real
 * WebhookServer: a denial and a warning print as kubectl users know them, and a defaulted object
 * comes back with the mutating webhook's changes.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiServer, createApiServer } from '../../packages/apiserver/src/server/api-server.ts';
import { type KubectlResult, runKubectl } from '../../packages/apiserver/src/server/kubectl-support.ts';
import { type Hooks, startHooks } from './support.ts';

let dir: string;
let server: ApiServer;
let kubeconfig: string;
let hooks: Hooks;

function kubectl(args: readonly string[], input?: string): Promise<KubectlResult> {
  return runKubectl('kubectl', kubeconfig, join(dir, 'cache'), args, input === undefined ? {} : { input });
}

const configMap = (name: string, data: string): string => `apiVersion: v1
kind: ConfigMap
metadata: { name: ${name}, namespace: default }
data: ${data}
`;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'converge-admission-'));
  kubeconfig = join(dir, 'kubeconfig');
  server = createApiServer({ kubeconfigPath: kubeconfig });
  await server.listen();
  hooks = await startHooks();
  const webhook = (name: string, path: string): string => `
  - name: ${name}
    sideEffects: None
    admissionReviewVersions: [v1]
    clientConfig: { url: "${hooks.url}${path}", caBundle: ${hooks.caBundle} }
    rules: [{ operations: [CREATE, UPDATE], apiGroups: [""], apiVersions: [v1], resources: [configmaps] }]`;
  const configurations = `apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata: { name: defaults }
webhooks:${webhook('mcm.example.com', '/default')}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: { name: checks }
webhooks:${webhook('vcm.example.com', '/validate')}
`;
  const created = await kubectl(['apply', '-f', '-'], configurations);
  expect(created.stderr).toBe('');
});

afterAll(async () => {
  await hooks.stop();
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('real kubectl against admission webhooks', () => {
  it('prints the denial of a validating webhook, with its warning', async () => {
    const result = await kubectl(['apply', '-f', '-'], configMap('denied', '{ bad: "no" }'));
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      'Warning: checked by vcm\n' +
        'Error from server (Forbidden): error when creating "STDIN": admission webhook "vcm.example.com" ' +
        'denied the request: data.bad is not allowed: no\n',
    );
  });

  it('prints the warning of an allowed write, and the object comes back defaulted', async () => {
    const result = await kubectl(['apply', '-f', '-'], configMap('site', '{ warn: "loud" }'));
    expect(result.stderr).toBe('Warning: data.warn is set to loud\n');
    expect(result.stdout).toBe('configmap/site created\n');
    const got = await kubectl([
      'get',
      'configmap',
      'site',
      '-o',
      'jsonpath={.data.defaulted} {.metadata.labels.defaulted}',
    ]);
    expect(got.stdout).toBe('true yes');
  });
});
