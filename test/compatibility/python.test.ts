// The official Kubernetes Python client (Debian's python3-kubernetes) against the embedded server.
// One Python process runs every flow (test/compatibility/python/flows.py) and prints what it saw;
// each test asserts one flow against what kube-apiserver 1.32 answers.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CompatServer, run, startCompatServer } from './compat-test-support.ts';

const script = fileURLToPath(new URL('./python/flows.py', import.meta.url));

/** The first Python that imports the `kubernetes` package (Debian installs it for /usr/bin/python3). */
function findPython(): string | undefined {
  for (const candidate of ['/usr/bin/python3', 'python3']) {
    const probe = spawnSync(candidate, ['-c', 'import kubernetes'], { encoding: 'utf8' });
    if (probe.status === 0) return candidate;
  }
  return undefined;
}

const python = findPython();
if (python === undefined) {
  console.warn(
    '\n*** SKIPPED: the Python client compatibility tests: no python3 with the `kubernetes` package. ' +
      'Install it with `apt-get install -y python3-kubernetes` (.ci/run does). ***\n',
  );
}

type Results = Record<string, Record<string, unknown>>;
let compat: CompatServer;
let results: Results;

describe.skipIf(python === undefined)('the official Python client (python3-kubernetes)', () => {
  beforeAll(async () => {
    compat = await startCompatServer('python');
    const out = await run(python as string, [script, compat.kubeconfig]);
    if (out.code !== 0) throw new Error(`flows.py exited ${out.code}\n${out.stderr}`);
    results = JSON.parse(out.stdout) as Results;
  });
  afterAll(async () => {
    await compat?.close();
  });

  it('python: list namespaces — CoreV1Api.list_namespace sees the four system namespaces and its own', () => {
    expect(results['list-namespaces']).toEqual({
      names: ['default', 'kube-node-lease', 'kube-public', 'kube-system', 'py'],
    });
  });

  it('python: configmap — create, get, strategic-merge patch, delete (Status Success), then 404', () => {
    expect(results.configmap).toEqual({
      created: { a: '1' },
      uidStable: true,
      patched: { a: '1', b: '2' },
      rvChanged: true,
      deletedKind: 'Status',
      deletedStatus: 'Success',
      getAfterDelete: 404,
    });
  });

  it('python: deployment — AppsV1Api create with defaults, patch replicas, read scale, delete', () => {
    expect(results.deployment).toEqual({
      strategy: 'RollingUpdate',
      revisionHistoryLimit: 10,
      imagePullPolicy: 'Always',
      replicas: 3,
      generation: 2,
      scaleReplicas: 3,
      remaining: [],
    });
  });

  it('python: watch — Watch().stream (watch=true) sees ADDED, MODIFIED, DELETED in order', () => {
    expect(results.watch).toEqual({
      events: [
        ['ADDED', 'w1'],
        ['MODIFIED', 'w1'],
        ['DELETED', 'w1'],
      ],
    });
  });

  it('python: custom objects — a CRD becomes Established; CustomObjectsApi create, get, merge patch, status patch, list, 422 on a wrong type', () => {
    expect(results['crd-custom-objects']).toEqual({
      established: true,
      size: 1,
      patchedSize: 2,
      ready: true,
      statusKeptSpec: 2,
      listKind: 'WidgetList',
      listed: ['w'],
      invalid: {
        status: 422,
        reason: 'Unprocessable Entity',
        kind: 'Status',
        bodyReason: 'Invalid',
        code: 422,
      },
    });
  });

  it('python: errors — 404, 409 and 422 surface as ApiException with the status, reason phrase and Status body', () => {
    expect(results.errors).toEqual({
      notFound: { status: 404, reason: 'Not Found', kind: 'Status', bodyReason: 'NotFound', code: 404 },
      conflict: { status: 409, reason: 'Conflict', kind: 'Status', bodyReason: 'AlreadyExists', code: 409 },
      invalid: {
        status: 422,
        reason: 'Unprocessable Entity',
        kind: 'Status',
        bodyReason: 'Invalid',
        code: 422,
      },
    });
  });

  it('python: list options — limit and continue, label and field selectors, dry run, a stale replace (409), delete_collection', () => {
    expect(results['list-options']).toEqual({
      firstPage: ['page-0', 'page-1'],
      // kube-apiserver counts the remaining items only for a list without selectors
      remaining: null,
      secondPage: ['page-2'],
      secondContinue: null,
      byField: ['page-1'],
      dryRunName: 'dry',
      dryRunStored: false,
      staleReplace: { status: 409, reason: 'Conflict', kind: 'Status', bodyReason: 'Conflict', code: 409 },
      afterDeleteCollection: 0,
    });
  });
});
