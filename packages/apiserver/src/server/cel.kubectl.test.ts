import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiServer, createApiServer } from './api-server.ts';
import { type KubectlResult, runKubectl } from './kubectl-support.ts';

const CRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: websites.example.com
spec:
  group: example.com
  scope: Namespaced
  names: { plural: websites, singular: website, kind: Website }
  versions:
    - name: v1
      served: true
      storage: true
      subresources:
        status: {}
        scale: { specReplicasPath: .spec.replicas, statusReplicasPath: .status.replicas }
      schema:
        openAPIV3Schema:
          type: object
          properties:
            spec:
              type: object
              x-kubernetes-validations:
                - rule: self.replicas <= 10
                  message: must be at most 10
                  fieldPath: .replicas
                - rule: self.replicas >= oldSelf.replicas
                  message: replicas cannot decrease
                  reason: FieldValueForbidden
              properties:
                replicas: { type: integer }
                domain:
                  type: string
                  maxLength: 253
                  x-kubernetes-validations:
                    - rule: "self.matches('^[a-z0-9.-]+$')"
                      messageExpression: "'domain ' + self + ' is not a DNS name'"
                names:
                  type: array
                  maxItems: 1000
                  items: { type: string, maxLength: 8 }
                  x-kubernetes-validations:
                    - rule: self.all(x, self.exists(y, x == y))
            status:
              type: object
              properties:
                ready: { type: boolean }
                replicas: { type: integer }
              x-kubernetes-validations:
                - rule: "!has(oldSelf.ready) || !oldSelf.ready || self.ready"
                  message: a ready website stays ready
`;

const website = (spec: string): string => `apiVersion: example.com/v1
kind: Website
metadata: { name: home, namespace: default }
spec: ${spec}
`;

/** The CRD as another kind (`Site`), so that refusing it leaves the Website CRD alone. */
const renamed = (crd: string): string =>
  crd
    .replace('websites.example.com', 'sites.example.com')
    .replace(
      'plural: websites, singular: website, kind: Website',
      'plural: sites, singular: site, kind: Site',
    );

let dir: string;
let server: ApiServer;
let kubeconfig: string;

function kubectl(args: readonly string[], input?: string): Promise<KubectlResult> {
  return runKubectl('kubectl', kubeconfig, join(dir, 'cache'), args, input === undefined ? {} : { input });
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'converge-cel-'));
  kubeconfig = join(dir, 'kubeconfig');
  server = createApiServer({ kubeconfigPath: kubeconfig });
  await server.listen();
  const created = await kubectl(['apply', '-f', '-'], CRD);
  expect(created.stderr).toBe('');
  const established = await kubectl(['wait', '--for=condition=established', 'crd/websites.example.com']);
  expect(established.code).toBe(0);
});

afterAll(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('real kubectl against x-kubernetes-validations', () => {
  it('refuses an invalid Website with every failed rule, worded as kube-apiserver words them', async () => {
    const result = await kubectl(['apply', '-f', '-'], website('{ replicas: 20, domain: "Bad Domain" }'));
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      'The Website "home" is invalid: \n' +
        '* spec.replicas: Invalid value: "object": must be at most 10\n' +
        '* spec.domain: Invalid value: "string": domain Bad Domain is not a DNS name\n',
    );
  });

  it('accepts a valid Website, then lets a transition rule compare the update with oldSelf', async () => {
    expect((await kubectl(['apply', '-f', '-'], website('{ replicas: 5, domain: example.com }'))).code).toBe(
      0,
    );
    const down = await kubectl(['apply', '-f', '-'], website('{ replicas: 3, domain: example.com }'));
    expect(down.stderr).toBe('The Website "home" is invalid: spec: Forbidden: replicas cannot decrease\n');
    const up = await kubectl(['apply', '-f', '-'], website('{ replicas: 6, domain: example.com }'));
    expect(up.code).toBe(0);
    const stored = await kubectl(['get', 'website', 'home', '-o', 'jsonpath={.spec.replicas}']);
    expect(stored.stdout).toBe('6');
  });

  it('runs the rules of the status subresource on status writes', async () => {
    const ready = await kubectl([
      'patch',
      'website',
      'home',
      '--subresource=status',
      '--type=merge',
      '-p',
      '{"status":{"ready":true}}',
    ]);
    expect(ready.code).toBe(0);
    const unready = await kubectl([
      'patch',
      'website',
      'home',
      '--subresource=status',
      '--type=merge',
      '-p',
      '{"status":{"ready":false}}',
    ]);
    expect(unready.stderr).toBe(
      'The Website "home" is invalid: status: Invalid value: "object": a ready website stays ready\n',
    );
  });

  it('runs the rules on /scale writes too', async () => {
    const scaled = await kubectl(['scale', 'website', 'home', '--replicas=20']);
    expect(scaled.code).toBe(1);
    expect(scaled.stderr).toContain('spec.replicas: Invalid value: "object": must be at most 10');
    expect((await kubectl(['scale', 'website', 'home', '--replicas=8'])).code).toBe(0);
  });

  it('stops a rule that costs too much at runtime, with the call-cost message', async () => {
    const names = Array.from({ length: 1000 }, (_, i) => `n${i}`).join(', ');
    const result = await kubectl(
      ['apply', '-f', '-'],
      website(`{ replicas: 8, domain: example.com, names: [${names}] }`),
    );
    expect(result.stderr).toBe(
      'The Website "home" is invalid: spec.names: Invalid value: "array": ' +
        "'operation cancelled: actual cost limit exceeded': no further validation rules will be run due to call cost exceeds limit for rule: " +
        'self.all(x, self.exists(y, x == y))\n',
    );
  });

  it('refuses a CRD whose rule does not compile, and one whose rule is estimated too expensive', async () => {
    const broken = await kubectl(
      ['apply', '-f', '-'],
      renamed(CRD.replace('self.replicas <= 10', 'self.replicas == true')),
    );
    expect(broken.stderr).toContain(
      'The CustomResourceDefinition "sites.example.com" is invalid: spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule: ' +
        'Invalid value: apiextensions.ValidationRule{Rule:"self.replicas == true", Message:"must be at most 10", MessageExpression:"", ' +
        'Reason:(*apiextensions.FieldValueErrorReason)(nil), FieldPath:".replicas", OptionalOldSelf:(*bool)(nil)}: ' +
        "compilation failed: ERROR: <input>:1:15: found no matching overload for '_==_' applied to '(int, bool)'\n" +
        ' | self.replicas == true\n | ..............^\n',
    );
    const unbounded = await kubectl(['apply', '-f', '-'], renamed(CRD.replace(/ *maxItems: 1000\n/, '')));
    expect(unbounded.stderr).toContain(
      'spec.validation.openAPIV3Schema.properties[spec].properties[names].x-kubernetes-validations[0].rule: Forbidden: estimated rule cost exceeds budget by factor of more than 100x',
    );
    expect((await kubectl(['get', 'crd', 'sites.example.com'])).code).toBe(1);
  });
});
