/**
 * Kinds declared with `defineKind` against the embedded API server and the real kubectl: the
 * generated CRD is accepted and established, and objects are validated, defaulted, printed, scaled
 * and status-patched as the TypeBox schema and the kind's options say.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { crdsOf, kindOf } from '@converge/kube';
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import { type ApiServer, createApiServer } from '../../packages/apiserver/src/server/api-server.ts';
import { type KubectlResult, runKubectl } from '../../packages/apiserver/src/server/kubectl-support.ts';
import { type Website, websiteV1, websiteV1beta1 } from './website-kinds.ts';

let dir: string;
let server: ApiServer;
let kubeconfig: string;

function kubectl(args: readonly string[], input?: string): Promise<KubectlResult> {
  return runKubectl('kubectl', kubeconfig, join(dir, 'cache'), args, input === undefined ? {} : { input });
}

function site(name: string, spec: Website['spec']): string {
  const object: Website = {
    apiVersion: 'example.com/v1',
    kind: 'Website',
    metadata: { name, namespace: 'default' },
    spec,
  };
  return JSON.stringify(object);
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'converge-kinds-'));
  kubeconfig = join(dir, 'kubeconfig');
  server = createApiServer({ kubeconfigPath: kubeconfig });
  await server.listen();
  const crds = crdsOf([websiteV1beta1, websiteV1]);
  const applied = await kubectl(
    ['apply', '-f', '-'],
    JSON.stringify({ apiVersion: 'v1', kind: 'List', items: crds }),
  );
  expect(applied.stderr).toBe('');
  expect(applied.stdout).toBe('customresourcedefinition.apiextensions.k8s.io/websites.example.com created\n');
  const established = await kubectl(['wait', '--for=condition=established', 'crd/websites.example.com']);
  expect(established.stderr).toBe('');
});

afterAll(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('a kind declared with defineKind, served by the embedded API server', () => {
  it('has a resource type and an object type derived from its schemas', () => {
    expect(kindOf(websiteV1.type)).toBe(websiteV1);
    expect(websiteV1.type).toMatchObject({
      group: 'example.com',
      version: 'v1',
      kind: 'Website',
      plural: 'websites',
      namespaced: true,
      statusSubresource: true,
      requireResourceVersionOnUpdate: true,
      generation: true,
    });
    expectTypeOf<Website['spec']['host']>().toEqualTypeOf<string>();
    expectTypeOf<Website['spec']['port']>().toEqualTypeOf<number | string | undefined>();
    expectTypeOf<Website['spec']['tier']>().toEqualTypeOf<'free' | 'pro' | undefined>();
    expectTypeOf<NonNullable<Website['status']>['readyReplicas']>().toEqualTypeOf<number | undefined>();
  });

  it('refuses a spec that breaks the schema with the server’s field paths', async () => {
    const result = await kubectl(
      ['apply', '-f', '-'],
      site('bad', { host: 'example.com', replicas: 20, tier: 'pro' }),
    );
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      'The Website "bad" is invalid: spec.replicas: Invalid value: 20: spec.replicas in body should be less than or equal to 10\n',
    );
    const enumResult = await kubectl(
      ['apply', '-f', '-'],
      site('bad', { host: 'example.com', tier: 'gold' as 'pro' }),
    );
    expect(enumResult.stderr).toBe(
      'The Website "bad" is invalid: \n' +
        '* spec.tier: Unsupported value: "gold": supported values: "free", "pro"\n' +
        '* <nil>: Invalid value: "null": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation\n',
    );
  });

  it('enforces CEL rules declared next to the type and on the root', async () => {
    const field = await kubectl(['apply', '-f', '-'], site('bad', { host: 'Not A Host' }));
    expect(field.stderr).toBe(
      'The Website "bad" is invalid: spec.host: Invalid value: "string": host must be a DNS name\n',
    );
    const root = await kubectl(['apply', '-f', '-'], site('bad', { host: 'example.com', replicas: 5 }));
    expect(root.stderr).toBe(
      'The Website "bad" is invalid: <nil>: Invalid value: "object": free websites have at most 3 replicas\n',
    );
  });

  it('applies defaults and keeps int-or-string, maps, list-maps, free-form and nullable fields', async () => {
    const spec: Website['spec'] = {
      host: 'example.com',
      port: 'http',
      labels: { team: 'web' },
      paths: [{ path: '/', backend: 'main' }],
      extra: { anything: [1, 'two'] },
      note: null,
    };
    // create, not apply: apply's three-way merge reads `note: null` as "remove the field".
    const result = await kubectl(['create', '-f', '-'], site('home', spec));
    expect(result.stderr).toBe('');
    const stored = await kubectl(['get', 'website', 'home', '-o', 'jsonpath={.spec}']);
    expect(JSON.parse(stored.stdout)).toEqual({ ...spec, replicas: 1, tier: 'free' });
  });

  it('shows the printer columns in kubectl get (priority 1 only with -o wide)', async () => {
    const table = await kubectl(['get', 'websites']);
    expect(table.stderr).toBe('');
    expect(table.stdout.split('\n')[0]).toMatch(/^NAME\s+HOST\s+REPLICAS\s+AGE$/);
    expect(table.stdout.split('\n')[1]).toMatch(/^home\s+example\.com\s+1\s+\S+$/);
    const wide = await kubectl(['get', 'ws', '-o', 'wide']);
    expect(wide.stdout.split('\n')[0]).toMatch(/^NAME\s+HOST\s+REPLICAS\s+TIER\s+AGE$/);
    const byCategory = await kubectl(['get', 'web']);
    expect(byCategory.stdout.split('\n')[1]).toMatch(/^home\s+example\.com\s+1\s+\S+$/);
  });

  it('serves /status and /scale', async () => {
    const patched = await kubectl([
      'patch',
      'website',
      'home',
      '--subresource=status',
      '--type=merge',
      '-p',
      '{"status":{"readyReplicas":1,"selector":"app=home"}}',
    ]);
    expect(patched.stderr).toBe('');
    const status = await kubectl([
      'get',
      'website',
      'home',
      '--subresource=status',
      '-o',
      'jsonpath={.status}',
    ]);
    expect(JSON.parse(status.stdout)).toEqual({ readyReplicas: 1, selector: 'app=home' });
    const scaled = await kubectl(['scale', 'website', 'home', '--replicas=2']);
    expect(scaled.stdout).toBe('website.example.com/home scaled\n');
    const scale = await kubectl(['get', 'website', 'home', '--subresource=scale', '-o', 'json']);
    const body = JSON.parse(scale.stdout) as { kind: string; spec: unknown; status: unknown };
    expect(body.kind).toBe('Scale');
    expect(body.spec).toEqual({ replicas: 2 });
    expect(body.status).toEqual({ replicas: 1, selector: 'app=home' });
  });

  it('serves the older version next to the storage one, marked deprecated in the CRD', async () => {
    const old = await kubectl(['get', 'websites.v1beta1.example.com', 'home', '-o', 'jsonpath={.spec.host}']);
    expect(old.stdout).toBe('example.com');
    const versions = await kubectl([
      'get',
      'crd',
      'websites.example.com',
      '-o',
      'jsonpath={range .spec.versions[*]}{.name} {.storage} {.deprecated} {.deprecationWarning}{"\\n"}{end}',
    ]);
    expect(versions.stdout).toBe(
      'v1beta1 false true example.com/v1beta1 Website is deprecated; use example.com/v1\nv1 true  \n',
    );
  });
});
