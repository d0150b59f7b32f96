/**
 * Real kubectl and @kubernetes/client-node against a CRD with webhook conversion: objects written
 * in v2 are stored in v1, read (get, list, watch) in either version, and a failed conversion reads
 * as kube-apiserver's `Error from server: conversion webhook for … failed: …`.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CustomObjectsApi, KubeConfig, Watch } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiServer, createApiServer } from '../../packages/apiserver/src/server/api-server.ts';
import { type KubectlResult, runKubectl } from '../../packages/apiserver/src/server/kubectl-support.ts';
import { type ConversionHooks, startConversionHooks, widgetCrd, widgetV1, widgetV2 } from './support.ts';

let dir: string;
let server: ApiServer;
let kubeconfig: string;
let hooks: ConversionHooks;
let kc: KubeConfig;

function kubectl(args: readonly string[], input?: string): Promise<KubectlResult> {
  return runKubectl('kubectl', kubeconfig, join(dir, 'cache'), args, input === undefined ? {} : { input });
}

/** Runs `kubectl args` until its output contains `expected`, then stops it. */
function kubectlUntil(
  args: readonly string[],
  expected: string,
  onStart: () => Promise<void>,
): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn('kubectl', ['--kubeconfig', kubeconfig, '--cache-dir', join(dir, 'cache'), ...args], {
      env: { ...process.env, KUBECONFIG: kubeconfig },
    });
    let out = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`kubectl printed no ${expected}: ${out}`));
    }, 60_000);
    let started = false;
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      out += chunk;
      if (!started) {
        started = true;
        onStart().catch(reject);
      }
      if (out.includes(expected)) {
        clearTimeout(timer);
        child.kill('SIGTERM');
        resolve(out);
      }
    });
  });
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'converge-conversion-'));
  kubeconfig = join(dir, 'kubeconfig');
  server = createApiServer({ kubeconfigPath: kubeconfig });
  await server.listen();
  hooks = await startConversionHooks();
  const crd = widgetCrd({ url: `${hooks.url}/convert`, caBundle: hooks.caBundle });
  const applied = await kubectl(['apply', '-f', '-'], JSON.stringify(crd));
  expect(applied.stderr).toBe('');
  kc = new KubeConfig();
  kc.loadFromFile(kubeconfig);
});

afterAll(async () => {
  await hooks.stop();
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('kubectl', () => {
  it('applies a v2 widget and gets it in v2 and in v1', async () => {
    const applied = await kubectl(['apply', '-f', '-'], JSON.stringify(widgetV2('k1', 3, 'red')));
    expect(applied.stderr).toBe('');
    expect(applied.stdout).toBe('widget.example.com/k1 created\n');
    const v2 = await kubectl(['get', 'widgets.v2.example.com', 'k1', '-o', 'json']);
    expect(JSON.parse(v2.stdout)).toMatchObject({
      apiVersion: 'example.com/v2',
      spec: { replicas: 3, paint: { color: 'red' } },
    });
    const v1 = await kubectl(['get', 'widgets.v1.example.com', 'k1', '-o', 'json']);
    expect(JSON.parse(v1.stdout)).toMatchObject({
      apiVersion: 'example.com/v1',
      spec: { size: 3, color: 'red' },
    });
    const table = await kubectl(['get', 'widgets.v2.example.com']);
    expect(table.stdout).toMatch(/^NAME\s+AGE\nk1\s+\d+s\n$/);
    const list = await kubectl(['get', 'widgets.v2.example.com', '-o', 'json']);
    expect(JSON.parse(list.stdout).items).toEqual([
      expect.objectContaining({ apiVersion: 'example.com/v2' }),
    ]);
  });

  it('kubectl edit-style patch in v2 changes the stored v1 object', async () => {
    await kubectl(['apply', '-f', '-'], JSON.stringify(widgetV2('k2', 1, 'red')));
    const patched = await kubectl([
      'patch',
      'widgets.v2.example.com',
      'k2',
      '--type=merge',
      '-p',
      '{"spec":{"replicas":7}}',
    ]);
    expect(patched.stderr).toBe('');
    const v1 = await kubectl(['get', 'widgets.v1.example.com', 'k2', '-o', 'jsonpath={.spec.size}']);
    expect(v1.stdout).toBe('7');
  });

  it('watches in v2 print converted events (existing, then live)', async () => {
    const out = await kubectlUntil(
      ['get', 'widgets.v2.example.com', '--output-watch-events', '-o', 'json', '-w'],
      '"replicas":11',
      () => kubectl(['apply', '-f', '-'], JSON.stringify(widgetV2('k3', 11, 'blue'))).then(() => undefined),
    );
    expect(out).toContain('"type":"ADDED"');
    expect(out).not.toContain('"apiVersion":"example.com/v1"');
    expect(out).toContain('"replicas":3');
  });

  it('a failed conversion prints as kube-apiserver answers it', async () => {
    await kubectl(['apply', '-f', '-'], JSON.stringify(widgetV1('k4', 1, 'unconvertible-v1')));
    const got = await kubectl(['get', 'widgets.v2.example.com', 'k4']);
    expect(got.code).toBe(1);
    expect(got.stderr).toBe(
      'Error from server: conversion webhook for example.com/v1, Kind=Widget failed: cannot convert Widget "default/k4" from example.com/v1 to example.com/v2: colour unconvertible-v1 has no v2 form\n',
    );
    expect((await kubectl(['get', 'widgets.v1.example.com', 'k4'])).code).toBe(0);
    await kubectl(['delete', 'widgets.v1.example.com', 'k4']);
  });
});

describe('@kubernetes/client-node', () => {
  it('creates in v2, reads and lists in both versions, watches in v2', async () => {
    const api = kc.makeApiClient(CustomObjectsApi);
    const base = { group: 'example.com', namespace: 'default', plural: 'widgets' };
    await api.createNamespacedCustomObject({ ...base, version: 'v2', body: widgetV2('c1', 4, 'green') });
    expect(await api.getNamespacedCustomObject({ ...base, version: 'v1', name: 'c1' })).toMatchObject({
      spec: { size: 4, color: 'green' },
    });
    const list = (await api.listNamespacedCustomObject({ ...base, version: 'v2' })) as {
      apiVersion: string;
      items: { apiVersion: string }[];
    };
    expect(list.apiVersion).toBe('example.com/v2');
    expect(list.items.every((i) => i.apiVersion === 'example.com/v2')).toBe(true);
    const seen: {
      phase: string;
      object: { apiVersion: string; spec: unknown; metadata: { name: string } };
    }[] = [];
    const got = new Promise<void>((resolve, reject) => {
      void new Watch(kc)
        .watch(
          '/apis/example.com/v2/namespaces/default/widgets',
          { fieldSelector: 'metadata.name=c2' },
          (phase, object) => {
            seen.push({ phase, object });
            if (phase === 'ADDED') resolve();
          },
          (error: unknown) => {
            if (error) reject(error instanceof Error ? error : new Error(String(error)));
          },
        )
        .then(async (request) => {
          await api.createNamespacedCustomObject({ ...base, version: 'v1', body: widgetV1('c2', 8, 'pink') });
          await got;
          request.abort();
        }, reject);
    });
    await got;
    expect(seen[0]).toMatchObject({
      phase: 'ADDED',
      object: {
        apiVersion: 'example.com/v2',
        metadata: { name: 'c2' },
        spec: { replicas: 8, paint: { color: 'pink' } },
      },
    });
  });
});
