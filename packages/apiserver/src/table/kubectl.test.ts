/**
 * The real kubectl against a minimal server whose lists and gets answer through wantsTable and
 * toTable: what users see in `kubectl get`. Skipped when no kubectl is on PATH.
 */
import { execFile, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type PrinterColumn, toTable, wantsTable } from './index.ts';

const hasKubectl = spawnSync('kubectl', ['version', '--client'], { encoding: 'utf8' }).status === 0;
const run = promisify(execFile);

const NOW = Date.UTC(2026, 0, 10, 12, 0, 0);
const ago = (minutes: number) => new Date(NOW - minutes * 60_000).toISOString();

interface Resource {
  readonly group: string;
  readonly version: string;
  readonly kind: string;
  readonly plural: string;
  readonly printerColumns?: readonly PrinterColumn[];
  readonly items: readonly Record<string, unknown>[];
}

const RESOURCES: readonly Resource[] = [
  {
    group: '',
    version: 'v1',
    kind: 'ConfigMap',
    plural: 'configmaps',
    items: [
      {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'settings', namespace: 'shop', creationTimestamp: ago(40) },
        data: { a: '1', b: '2' },
      },
      {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'bin', namespace: 'shop', creationTimestamp: ago(3 * 60) },
        binaryData: { x: 'AA==' },
      },
    ],
  },
  {
    group: '',
    version: 'v1',
    kind: 'Pod',
    plural: 'pods',
    items: [
      {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'web-1', namespace: 'shop', creationTimestamp: ago(26 * 60) },
        spec: { nodeName: 'node-1', containers: [{ name: 'app' }] },
        status: {
          phase: 'Running',
          podIPs: [{ ip: '10.244.0.7' }],
          containerStatuses: [
            {
              name: 'app',
              ready: true,
              restartCount: 2,
              state: { running: {} },
              lastState: { terminated: { exitCode: 1, finishedAt: ago(20) } },
            },
          ],
        },
      },
      {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'batch-0', namespace: 'jobs', creationTimestamp: ago(50) },
        spec: { containers: [{ name: 'work' }] },
        status: { phase: 'Pending' },
      },
    ],
  },
  {
    group: 'example.com',
    version: 'v1',
    kind: 'Widget',
    plural: 'widgets',
    printerColumns: [
      { name: 'Size', type: 'string', jsonPath: '.spec.size' },
      { name: 'Ready', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].status' },
      { name: 'Replicas', type: 'integer', jsonPath: '.spec.replicas', priority: 1 },
      { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
    ],
    items: [
      {
        apiVersion: 'example.com/v1',
        kind: 'Widget',
        metadata: { name: 'w1', namespace: 'shop', creationTimestamp: ago(90) },
        spec: { size: 'L', replicas: 3 },
        status: { conditions: [{ type: 'Ready', status: 'True' }] },
      },
    ],
  },
];

function route(path: string): { resource: Resource; namespace?: string; name?: string } | undefined {
  const parts = path.split('/').filter((p) => p !== '');
  const [root, ...rest] = parts;
  const [group, version, ...tail] = root === 'api' ? ['', ...rest] : rest;
  const namespaced = tail[0] === 'namespaces';
  const [plural, name] = namespaced ? tail.slice(2) : tail;
  const resource = RESOURCES.find((r) => r.group === group && r.version === version && r.plural === plural);
  if (resource === undefined) return undefined;
  return { resource, ...(namespaced ? { namespace: tail[1] } : {}), ...(name === undefined ? {} : { name }) };
}

function discovery(path: string): unknown {
  const list = (group: string, version: string) => ({
    kind: 'APIResourceList',
    apiVersion: 'v1',
    groupVersion: group === '' ? version : `${group}/${version}`,
    resources: RESOURCES.filter((r) => r.group === group && r.version === version).map((r) => ({
      name: r.plural,
      singularName: r.kind.toLowerCase(),
      namespaced: true,
      kind: r.kind,
      verbs: ['get', 'list'],
    })),
  });
  if (path === '/version') return { major: '1', minor: '32', gitVersion: 'v1.32.4' };
  if (path === '/api') return { kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [] };
  if (path === '/apis') {
    const gv = { groupVersion: 'example.com/v1', version: 'v1' };
    return {
      kind: 'APIGroupList',
      apiVersion: 'v1',
      groups: [{ name: 'example.com', versions: [gv], preferredVersion: gv }],
    };
  }
  if (path === '/api/v1') return list('', 'v1');
  if (path === '/apis/example.com/v1') return list('example.com', 'v1');
  return undefined;
}

function handle(req: IncomingMessage, res: ServerResponse): void {
  const url = new URL(req.url ?? '/', 'http://localhost');
  const send = (status: number, body: unknown, contentType = 'application/json') => {
    res.writeHead(status, { 'content-type': contentType });
    res.end(JSON.stringify(body));
  };
  const found = discovery(url.pathname);
  if (found !== undefined) {
    send(200, found);
    return;
  }
  const target = route(url.pathname);
  if (target === undefined) {
    send(404, { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'NotFound', code: 404 });
    return;
  }
  const { resource } = target;
  const items = resource.items.filter((item) => {
    const meta = item.metadata as { name: string; namespace: string };
    return (
      (target.namespace === undefined || meta.namespace === target.namespace) &&
      (target.name === undefined || meta.name === target.name)
    );
  });
  const table = wantsTable(req.headers.accept, url.searchParams.get('includeObject'));
  if (table === undefined) {
    send(200, {
      kind: `${resource.kind}List`,
      apiVersion: 'v1',
      metadata: { resourceVersion: '7' },
      items,
    });
    return;
  }
  const converted = toTable({
    objects: items,
    group: resource.group,
    version: resource.version,
    kind: resource.kind,
    ...(resource.printerColumns === undefined ? {} : { printerColumns: resource.printerColumns }),
    includeObject: table.includeObject,
    tableVersion: table.version,
    resourceVersion: '7',
    nowMs: NOW,
  });
  send(200, converted, table.contentType);
}

/** kubectl's columns: cells separated by runs of three or more spaces. */
const rows = (output: string) =>
  output
    .trimEnd()
    .split('\n')
    .map((line) => line.trimEnd().split(/ {3,}/));

describe.skipIf(!hasKubectl)('kubectl get renders the server’s Tables', () => {
  let server: Server;
  let cacheDir: string;
  let kubectl: (...args: string[]) => Promise<string>;

  beforeAll(async () => {
    server = createServer(handle);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    cacheDir = mkdtempSync(join(tmpdir(), 'converge-kubectl-'));
    kubectl = async (...args) => {
      const { stdout } = await run(
        'kubectl',
        [
          '--server',
          `http://127.0.0.1:${port}`,
          '--cache-dir',
          cacheDir,
          '--request-timeout',
          '10s',
          ...args,
        ],
        { env: { ...process.env, KUBECONFIG: '/dev/null' } },
      );
      return stdout;
    };
  });

  afterAll(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    rmSync(cacheDir, { recursive: true, force: true });
  });

  it('prints ConfigMaps as NAME DATA AGE, aligned by kubectl', async () => {
    expect(await kubectl('get', 'configmaps', '-n', 'shop')).toBe(
      ['NAME       DATA   AGE', 'settings   2      40m', 'bin        1      3h', ''].join('\n'),
    );
  });

  it('shows the wide pod columns only with -o wide', async () => {
    expect(rows(await kubectl('get', 'pods', '-n', 'shop'))).toEqual([
      ['NAME', 'READY', 'STATUS', 'RESTARTS', 'AGE'],
      ['web-1', '1/1', 'Running', '2 (20m ago)', '26h'],
    ]);
    expect(rows(await kubectl('get', 'pods', '-n', 'shop', '-o', 'wide'))).toEqual([
      ['NAME', 'READY', 'STATUS', 'RESTARTS', 'AGE', 'IP', 'NODE', 'NOMINATED NODE', 'READINESS GATES'],
      ['web-1', '1/1', 'Running', '2 (20m ago)', '26h', '10.244.0.7', 'node-1', '<none>', '<none>'],
    ]);
  });

  it('adds the NAMESPACE column across namespaces from the rows’ PartialObjectMetadata', async () => {
    expect(rows(await kubectl('get', 'pods', '-A'))).toEqual([
      ['NAMESPACE', 'NAME', 'READY', 'STATUS', 'RESTARTS', 'AGE'],
      ['shop', 'web-1', '1/1', 'Running', '2 (20m ago)', '26h'],
      ['jobs', 'batch-0', '0/1', 'Pending', '0', '50m'],
    ]);
  });

  it('prints custom resources with their printer columns, priority 1 only with -o wide', async () => {
    expect(rows(await kubectl('get', 'widgets', '-n', 'shop'))).toEqual([
      ['NAME', 'SIZE', 'READY', 'AGE'],
      ['w1', 'L', 'True', '90m'],
    ]);
    expect(rows(await kubectl('get', 'widgets', '-n', 'shop', '-o', 'wide'))).toEqual([
      ['NAME', 'SIZE', 'READY', 'REPLICAS', 'AGE'],
      ['w1', 'L', 'True', '3', '90m'],
    ]);
  });

  it('gets one object as a one-row Table, and sorts with includeObject=Object', async () => {
    expect(rows(await kubectl('get', 'configmap', 'settings', '-n', 'shop'))).toEqual([
      ['NAME', 'DATA', 'AGE'],
      ['settings', '2', '40m'],
    ]);
    expect(rows(await kubectl('get', 'pods', '-A', '--sort-by=.metadata.name')).map((r) => r[1])).toEqual([
      'NAME',
      'batch-0',
      'web-1',
    ]);
  });
});
