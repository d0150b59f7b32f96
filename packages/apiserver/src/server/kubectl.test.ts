import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiServer, createApiServer } from './api-server.ts';
import { type KubectlResult, type KubectlRun, kubectlBinary, runKubectl } from './kubectl-support.ts';

const CRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  scope: Namespaced
  names: { plural: widgets, singular: widget, kind: Widget, shortNames: [wd] }
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
          x-kubernetes-preserve-unknown-fields: true
`;

const configMap = (value: string): string => `apiVersion: v1
kind: ConfigMap
metadata:
  name: demo
data:
  a: "${value}"
`;

let dir: string;
let server: ApiServer;
let kubeconfig: string;
let binary = 'kubectl';

function kubectl(args: readonly string[], options?: KubectlRun): Promise<KubectlResult> {
  return runKubectl(binary, kubeconfig, join(dir, `cache-${binary.replace(/\W/g, '_')}`), args, options);
}

async function ok(args: readonly string[], options?: KubectlRun): Promise<string> {
  const result = await kubectl(args, options);
  expect(result.code, `kubectl ${args.join(' ')}\n${result.stderr}`).toBe(0);
  return result.stdout;
}

/** A fresh server per kubectl binary, so every minor runs the whole scenario from the start. */
function useServer(bin: string): void {
  beforeAll(async () => {
    binary = bin;
    dir = mkdtempSync(join(tmpdir(), 'converge-kubectl-'));
    kubeconfig = join(dir, 'kubeconfig');
    server = createApiServer({ kubeconfigPath: kubeconfig });
    await server.listen();
  });
  afterAll(async () => {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });
}

/**
 * The scenario runs under the dispatcher (which picks the minor matching /version, 1.32) and under
 * every pinned newer minor present (1.29 and later validate `apply` through /openapi/v3).
 */
const binaries: [string, string][] = [
  ['dispatcher (1.32)', 'kubectl'],
  ...[33, 31, 29].flatMap((minor): [string, string][] => {
    const path = kubectlBinary(minor);
    return path === undefined ? [] : [[`1.${minor}`, path]];
  }),
];

describe.each(binaries)('real kubectl %s', (_label, bin) => {
  useServer(bin);

  it('kubectl version reports the server as v1.32', async () => {
    expect(await ok(['version'])).toMatch(/Server Version: v1\.32\.\d+/);
  });

  it('kubectl api-resources lists built-in kinds with short names', async () => {
    const out = await ok(['api-resources']);
    expect(out).toMatch(/configmaps\s+cm\s+v1\s+true\s+ConfigMap/);
    expect(out).toMatch(/deployments\s+deploy\s+apps\/v1\s+true\s+Deployment/);
    expect(out).toMatch(/leases\s+coordination\.k8s\.io\/v1\s+true\s+Lease/);
  });

  it('kubectl get ns shows the system namespaces; create namespace (a protobuf body) works', async () => {
    const out = await ok(['get', 'ns']);
    for (const ns of ['default', 'kube-system', 'kube-public', 'kube-node-lease']) expect(out).toContain(ns);
    expect(await ok(['create', 'namespace', 'x'])).toContain('namespace/x created');
    expect(await ok(['get', 'ns', 'x', '-o', 'jsonpath={.status.phase}'])).toBe('Active');
  });

  it('kubectl apply creates and then updates a ConfigMap (client-side apply, strategic merge patch)', async () => {
    expect(await ok(['apply', '-f', '-'], { input: configMap('1') })).toContain('configmap/demo created');
    expect(await ok(['apply', '-f', '-'], { input: configMap('2') })).toContain('configmap/demo configured');
    expect(await ok(['get', 'cm', 'demo', '-o', 'jsonpath={.data.a}'])).toBe('2');
  });

  it('kubectl apply of a CRD, wait for Established, apply a custom resource and get it as YAML and JSON', async () => {
    expect(await ok(['apply', '-f', '-'], { input: CRD })).toContain(
      'customresourcedefinition.apiextensions.k8s.io/widgets.example.com created',
    );
    expect(
      await ok(['wait', '--for=condition=Established', 'crd/widgets.example.com', '--timeout=60s']),
    ).toContain('condition met');
    const widget =
      'apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w1\nspec:\n  size: 3\n  replicas: 1\n';
    expect(await ok(['apply', '-f', '-'], { input: widget })).toContain('widget.example.com/w1 created');
    expect(await ok(['get', 'wd', 'w1', '-o', 'yaml'])).toMatch(/kind: Widget[\s\S]*size: 3/);
    const json = JSON.parse(await ok(['get', 'widget', 'w1', '-o', 'json'])) as { spec: { size: number } };
    expect(json.spec.size).toBe(3);
    expect(await ok(['scale', 'widget', 'w1', '--replicas=4'])).toContain('scaled');
    expect(await ok(['get', 'widget', 'w1', '-o', 'jsonpath={.spec.replicas}'])).toBe('4');
  });

  it('kubectl label, annotate and patch (merge and json)', async () => {
    await ok(['label', 'cm', 'demo', 'team=web']);
    await ok(['annotate', 'cm', 'demo', 'note=hi']);
    await ok(['patch', 'cm', 'demo', '--type=merge', '-p', '{"data":{"b":"2"}}']);
    await ok(['patch', 'cm', 'demo', '--type=json', '-p', '[{"op":"add","path":"/data/c","value":"3"}]']);
    const out = await ok([
      'get',
      'cm',
      'demo',
      '-o',
      'jsonpath={.metadata.labels.team} {.metadata.annotations.note} {.data.b}{.data.c}',
    ]);
    expect(out).toBe('web hi 23');
  });

  it('kubectl get prints the server Table columns; explain and diff work', async () => {
    expect(await ok(['get', 'cm', 'demo'])).toMatch(/NAME\s+DATA\s+AGE\ndemo\s+3\s+/);
    expect(await ok(['explain', 'configmap.data'])).toContain('FIELD: data <map[string]string>');
    const diff = await kubectl(['diff', '-f', '-'], { input: configMap('9') });
    expect(diff.code, diff.stderr).toBe(1);
    expect(diff.stdout).toMatch(/-\s+a: "2"[\s\S]*\+\s+a: "9"/);
    expect(await ok(['get', 'cm', 'demo', '-o', 'jsonpath={.data.a}'])).toBe('2');
  });

  it('kubectl apply --server-side, and a conflicting field manager needs --force-conflicts', async () => {
    const manifest = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ssa\ndata:\n  k: one\n';
    expect(await ok(['apply', '--server-side', '-f', '-'], { input: manifest })).toContain(
      'configmap/ssa serverside-applied',
    );
    const other = manifest.replace('one', 'two');
    const conflict = await kubectl(['apply', '--server-side', '--field-manager=other', '-f', '-'], {
      input: other,
    });
    expect(conflict.code).not.toBe(0);
    expect(conflict.stderr).toContain('conflict');
    await ok(['apply', '--server-side', '--field-manager=other', '--force-conflicts', '-f', '-'], {
      input: other,
    });
    expect(await ok(['get', 'cm', 'ssa', '-o', 'jsonpath={.data.k}'])).toBe('two');
  });

  it('kubectl get --watch receives an event', async () => {
    // The watch lists first (existing objects print as ADDED), then watches from that list: what
    // is created once the list printed can only come as an event. Timed by what kubectl prints,
    // not by a clock: with a second suite beside this one a fixed 4 s window was too short.
    await ok(['create', 'configmap', 'before-watch']);
    let onListed: () => void = () => {};
    const listed = new Promise<void>((resolve) => {
      onListed = resolve;
    });
    const watching = kubectl(['get', 'cm', '--watch', '--output-watch-events'], {
      until: /ADDED\s+watched/,
      onStdout: (out) => {
        if (/ADDED\s+before-watch/.test(out)) onListed();
      },
    });
    await Promise.race([
      listed,
      watching.then((r) => {
        throw new Error(`kubectl --watch ended before it listed: ${r.code} ${r.stderr}`);
      }),
    ]);
    await ok(['create', 'configmap', 'watched']);
    const result = await watching;
    expect(result.stdout).toMatch(/ADDED\s+before-watch[\s\S]*\nADDED\s+watched/);
    await ok(['delete', 'configmap', 'before-watch']);
  });

  it('kubectl delete of an object with a finalizer: it stays until the finalizer goes, then wait --for=delete returns', async () => {
    await ok([
      'patch',
      'cm',
      'demo',
      '--type=merge',
      '-p',
      '{"metadata":{"finalizers":["example.com/hold"]}}',
    ]);
    await ok(['delete', 'cm', 'demo', '--wait=false']);
    expect(await ok(['get', 'cm', 'demo', '-o', 'jsonpath={.metadata.deletionTimestamp}'])).not.toBe('');
    const waiting = kubectl(['wait', '--for=delete', 'cm/demo', '--timeout=60s'], { timeoutMs: 90_000 });
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    await ok(['patch', 'cm', 'demo', '--type=json', '-p', '[{"op":"remove","path":"/metadata/finalizers"}]']);
    const waited = await waiting;
    expect(waited.code, waited.stderr).toBe(0);
    expect((await kubectl(['get', 'cm', 'demo'])).stderr).toContain('NotFound');
  });

  it('kubectl delete ns removes the namespace and its objects', async () => {
    await ok(['-n', 'x', 'create', 'configmap', 'inside']);
    await ok(['-n', 'x', 'apply', '-f', '-'], {
      input: 'apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w2\nspec: {}\n',
    });
    expect(await ok(['delete', 'ns', 'x', '--timeout=60s'])).toContain('namespace "x" deleted');
    expect((await kubectl(['get', 'ns', 'x'])).stderr).toContain('NotFound');
    expect(await ok(['-n', 'x', 'get', 'cm,widgets', '-o', 'name'])).toBe('');
  });

  it('kubectl delete of a CRD removes its resource type', async () => {
    await ok(['delete', 'crd', 'widgets.example.com', '--timeout=60s']);
    const after = await kubectl(['get', 'widgets']);
    expect(after.code).not.toBe(0);
    // kubectl's cached discovery still knows the type (its 6 h TTL); the server no longer serves it.
    expect(after.stderr).toMatch(
      /doesn't have a resource type "widgets"|could not find the requested resource/,
    );
  });
});

/*
 * kubectl 1.27 and 1.28 validate `apply` with /openapi/v2 (protobuf), which is not served: they
 * need --validate=false there. 1.29 and later validate through /openapi/v3.
 */
describe.runIf(kubectlBinary(27) !== undefined)('pinned kubectl 1.27 (v2beta1 and legacy discovery)', () => {
  useServer('kubectl');
  const old = (args: readonly string[], options?: KubectlRun): Promise<KubectlResult> =>
    runKubectl(kubectlBinary(27) as string, kubeconfig, join(dir, 'cache-127'), args, options);

  it('gets, applies, patches and deletes', async () => {
    const get = await old(['get', 'ns', 'default']);
    expect(get.code, get.stderr).toBe(0);
    const apply = await old(['apply', '--validate=false', '-f', '-'], {
      input: configMap('old').replace('name: demo', 'name: old'),
    });
    expect(apply.code, apply.stderr).toBe(0);
    const patch = await old(['patch', 'cm', 'old', '-p', '{"data":{"b":"x"}}']);
    expect(patch.code, patch.stderr).toBe(0);
    expect((await old(['get', 'cm', 'old', '-o', 'jsonpath={.data.b}'])).stdout).toBe('x');
    expect((await old(['delete', 'cm', 'old'])).code).toBe(0);
  });
});
