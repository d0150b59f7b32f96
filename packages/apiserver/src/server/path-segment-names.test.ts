import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runKubectl } from './kubectl-support.ts';
import { startTestServer, type TestResponse, type TestServer } from './test-support.ts';

/*
 * The defect: `DELETE /api/v1/namespaces/victim/configmaps/..` answered 200 with a Namespace and
 * deleted the namespace — `new URL(req.url)` removed the dot segment, and the rewritten request was
 * authorized and served. kube-apiserver never resolves dot segments and refuses `.`, `..` and
 * names holding `/` or `%` (IsValidPathSegmentName) with a 400.
 */

const NS = '/api/v1/namespaces';
const VICTIM = `${NS}/victim`;
const CM = `${VICTIM}/configmaps`;

let dir: string;
let t: TestServer;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'converge-path-names-'));
  t = await startTestServer({ secure: true, kubeconfigPath: join(dir, 'kubeconfig') });
  const created = [
    await t.request(NS, { method: 'POST', body: { metadata: { name: 'victim' } } }),
    await t.request(CM, { method: 'POST', body: { metadata: { name: 'keep-1' }, data: { a: '1' } } }),
    await t.request(CM, { method: 'POST', body: { metadata: { name: 'keep-2' }, data: { b: '2' } } }),
    await t.request('/apis/apps/v1/namespaces/victim/deployments', {
      method: 'POST',
      body: {
        metadata: { name: 'web' },
        spec: {
          replicas: 1,
          selector: { matchLabels: { app: 'web' } },
          template: {
            metadata: { labels: { app: 'web' } },
            spec: { containers: [{ name: 'c', image: 'x' }] },
          },
        },
      },
    }),
  ];
  for (const res of created) expect(res.status, res.text).toBe(201);
});
afterAll(async () => {
  await t.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The namespace still exists, is not terminating, and holds both ConfigMaps unchanged. */
async function expectVictimIntact(): Promise<void> {
  const ns = await t.request(VICTIM);
  expect(ns.status).toBe(200);
  expect((ns.json as { metadata: Record<string, unknown> }).metadata.deletionTimestamp).toBeUndefined();
  const list = await t.request(CM);
  expect(list.status).toBe(200);
  const items = (list.json as { items: { metadata: { name: string; deletionTimestamp?: string } }[] }).items;
  expect(items.map((i) => i.metadata.name).sort()).toEqual(['keep-1', 'keep-2']);
  for (const item of items) expect(item.metadata.deletionTimestamp).toBeUndefined();
}

function expectBadRequest(res: TestResponse, message: string): void {
  expect(res.status, res.text).toBe(400);
  expect(res.json).toMatchObject({
    kind: 'Status',
    status: 'Failure',
    reason: 'BadRequest',
    code: 400,
    message,
  });
}

describe('DELETE …/configmaps/.. deleted the namespace (dot segments were normalised away)', () => {
  it('refuses DELETE …/configmaps/.. with 400; the namespace and its ConfigMaps are intact', async () => {
    const res = await t.request(`${CM}/..`, { method: 'DELETE' });
    expectBadRequest(res, `Name parameter invalid: "..": may not be '..'`);
    await expectVictimIntact();
  });

  it('refuses DELETE …/configmaps/. with 400; no ConfigMap is deleted', async () => {
    const res = await t.request(`${CM}/.`, { method: 'DELETE' });
    expectBadRequest(res, `Name parameter invalid: ".": may not be '.'`);
    await expectVictimIntact();
  });

  it('refuses GET …/configmaps/. and …/configmaps/.. (not a list, not the namespace)', async () => {
    expectBadRequest(await t.request(`${CM}/.`), `Name parameter invalid: ".": may not be '.'`);
    expectBadRequest(await t.request(`${CM}/..`), `Name parameter invalid: "..": may not be '..'`);
    expectBadRequest(await t.request(`${CM}/../`), `Name parameter invalid: "..": may not be '..'`);
  });

  it('refuses percent-encoded dots (%2e%2e, %2E%2e, .%2e, %2e) the same way', async () => {
    for (const raw of ['%2e%2e', '%2E%2e', '.%2e', '%2e.']) {
      expectBadRequest(
        await t.request(`${CM}/${raw}`, { method: 'DELETE' }),
        `Name parameter invalid: "..": may not be '..'`,
      );
    }
    expectBadRequest(
      await t.request(`${CM}/%2e`, { method: 'DELETE' }),
      `Name parameter invalid: ".": may not be '.'`,
    );
    await expectVictimIntact();
  });

  it('refuses PUT and PATCH of …/configmaps/.. (they would have written the namespace)', async () => {
    const put = await t.request(`${CM}/..`, {
      method: 'PUT',
      body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'victim', labels: { hit: 'yes' } } },
    });
    expectBadRequest(put, `Name parameter invalid: "..": may not be '..'`);
    const patch = await t.request(`${CM}/%2e%2e`, {
      method: 'PATCH',
      raw: JSON.stringify({ metadata: { labels: { hit: 'yes' } } }),
      headers: { 'content-type': 'application/merge-patch+json' },
    });
    expectBadRequest(patch, `Name parameter invalid: "..": may not be '..'`);
    const ns = await t.request(VICTIM);
    expect(
      (ns.json as { metadata: { labels?: Record<string, string> } }).metadata.labels?.hit,
    ).toBeUndefined();
  });

  it('refuses a namespace in the path that is . or .., and a Namespace named ..', async () => {
    expectBadRequest(
      await t.request(`${NS}/../configmaps/keep-1`, { method: 'DELETE' }),
      `Namespace parameter invalid: "..": may not be '..'`,
    );
    expectBadRequest(
      await t.request(`${NS}/%2e/configmaps`, { method: 'DELETE' }),
      `Namespace parameter invalid: ".": may not be '.'`,
    );
    expectBadRequest(
      await t.request(`${NS}/..`, { method: 'DELETE' }),
      `Name parameter invalid: "..": may not be '..'`,
    );
    expectBadRequest(
      await t.request(`${NS}/../status`, { method: 'PUT', body: {} }),
      `Name parameter invalid: "..": may not be '..'`,
    );
    await expectVictimIntact();
  });

  it("refuses names holding '/' (%2F) or '%' (%25, double-encoded %252e) with 400", async () => {
    const slash = await t.request(`${CM}/..%2Fkeep-1`, { method: 'DELETE' });
    expect(slash.status).toBe(400);
    expect(slash.json).toMatchObject({
      reason: 'BadRequest',
      message: expect.stringContaining("may not contain '/'"),
    });
    expectBadRequest(
      await t.request(`${CM}/%252e%252e`, { method: 'DELETE' }),
      `Name parameter invalid: "%2e%2e": may not contain '%'`,
    );
    expectBadRequest(await t.request(`${CM}/a%25b`), `Name parameter invalid: "a%b": may not contain '%'`);
    await expectVictimIntact();
  });

  it('still serves names that merely contain dots, and decodes each segment once', async () => {
    expect((await t.request(`${CM}/...`)).status).toBe(404);
    expect((await t.request(`${CM}/keep-1.`)).status).toBe(404);
    expect((await t.request(`${CM}/%6Beep-1`)).status).toBe(200);
    expect((await t.request(`${CM}/keep-1/`)).status).toBe(200);
    // a dot segment after the name is a subresource nobody serves, never the collection
    expect((await t.request(`${CM}/keep-1/..`, { method: 'DELETE' })).status).toBe(404);
    await expectVictimIntact();
  });

  it('kubectl delete configmap .. is refused by kubectl itself (client-go) and deletes nothing', async () => {
    const kubeconfig = join(dir, 'kubeconfig');
    const result = await runKubectl('kubectl', kubeconfig, join(dir, 'cache'), [
      'delete',
      'configmap',
      '..',
      '-n',
      'victim',
    ]);
    expect(result.code).not.toBe(0);
    // client-go's request builder refuses the name before sending anything
    expect(result.stderr).toContain(`invalid resource name "..": [may not be '..']`);
    const get = await runKubectl('kubectl', kubeconfig, join(dir, 'cache'), [
      'get',
      'configmap',
      '.',
      '-n',
      'victim',
    ]);
    expect(get.code).not.toBe(0);
    expect(get.stderr).toContain(`invalid resource name ".": [may not be '.']`);
    await expectVictimIntact();
  });
});

/** Every stored object as `group/plural|namespace/name` → resourceVersion. */
async function snapshot(): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const type of t.server.store.types()) {
    const list = await t.server.store.list(type);
    for (const item of list.items) {
      const m = item.metadata ?? {};
      out.set(`${type.group}/${type.plural}|${m.namespace ?? ''}/${m.name ?? ''}`, m.resourceVersion ?? '');
    }
  }
  return out;
}

function changedKeys(before: Map<string, string>, after: Map<string, string>): string[] {
  const keys = new Set([...before.keys(), ...after.keys()]);
  return [...keys].filter((k) => before.get(k) !== after.get(k));
}

/** One route shape: the type (`group/plural`) of the object a path names, and the path itself. */
interface Route {
  readonly type: string;
  readonly namespaced: boolean;
  readonly path: (ns: string, name: string) => string;
  readonly getOnly?: true;
}

const routes: readonly Route[] = [
  { type: '/configmaps', namespaced: true, path: (ns, n) => `/api/v1/namespaces/${ns}/configmaps/${n}` },
  { type: '/secrets', namespaced: true, path: (ns, n) => `/api/v1/namespaces/${ns}/secrets/${n}` },
  ...['', '/status', '/scale'].map(
    (sub): Route => ({
      type: 'apps/deployments',
      namespaced: true,
      path: (ns, n) => `/apis/apps/v1/namespaces/${ns}/deployments/${n}${sub}`,
    }),
  ),
  ...['', '/status', '/finalize'].map(
    (sub): Route => ({
      type: '/namespaces',
      namespaced: false,
      path: (_ns, n) => `/api/v1/namespaces/${n}${sub}`,
    }),
  ),
  ...['', '/status'].map(
    (sub): Route => ({ type: '/nodes', namespaced: false, path: (_ns, n) => `/api/v1/nodes/${n}${sub}` }),
  ),
  {
    type: 'rbac.authorization.k8s.io/clusterroles',
    namespaced: false,
    path: (_ns, n) => `/apis/rbac.authorization.k8s.io/v1/clusterroles/${n}`,
  },
  {
    type: '/configmaps',
    namespaced: true,
    getOnly: true,
    path: (ns, n) => `/api/v1/watch/namespaces/${ns}/configmaps/${n}`,
  },
];

/** Raw segments that must never address anything: dots (also encoded), `/`, `%`, undecodable. */
const hostile = fc.constantFrom(
  '.',
  '..',
  '%2e',
  '%2E',
  '%2e%2e',
  '%2E%2e',
  '.%2e',
  '%2e.',
  '..%2F',
  '%2F',
  '%2f..',
  'keep-1%2F..',
  '%252e',
  '%252e%252e',
  '%25',
  '%',
  '%zz',
);
/** Raw segments that name an object literally (none of them exists). */
const ghost = fc.constantFrom('ghost', '...', '..a', '.a', 'a..', 'ghost.');
const methods = fc.constantFrom('GET', 'PUT', 'PATCH', 'DELETE');

interface Case {
  readonly route: Route;
  readonly method: string;
  readonly ns: string;
  readonly name: string;
  readonly nsHostile: boolean;
  readonly nameHostile: boolean;
  /** A `/..`-like tail after the name (never resolved: nothing may change). */
  readonly tail: string;
  readonly trailing: string;
  /** Index of the `/` doubled into an empty segment, or -1. */
  readonly emptyAt: number;
}

const cases: fc.Arbitrary<Case> = fc
  .record({
    route: fc.constantFrom(...routes),
    method: methods,
    ns: fc.oneof(
      { weight: 2, arbitrary: fc.constant({ raw: 'victim', hostile: false }) },
      { weight: 1, arbitrary: hostile.map((raw) => ({ raw, hostile: true })) },
    ),
    name: fc.oneof(
      { weight: 3, arbitrary: hostile.map((raw) => ({ raw, hostile: true })) },
      { weight: 1, arbitrary: ghost.map((raw) => ({ raw, hostile: false })) },
    ),
    tail: fc.constantFrom('', '', '', '/..', '/.', '/%2e%2e', '/../..', '/%2E%2e/keep-1'),
    trailing: fc.constantFrom('', '/', '//'),
    emptyAt: fc.oneof({ weight: 4, arbitrary: fc.constant(-1) }, { weight: 1, arbitrary: fc.nat(8) }),
  })
  .map(
    (c): Case => ({
      route: c.route,
      method: c.route.getOnly === true ? 'GET' : c.method,
      ns: c.ns.raw,
      // a watch of a harmless name would stay open: the watch route only gets hostile names
      name: c.route.getOnly === true && !c.name.hostile ? '..' : c.name.raw,
      nsHostile: c.route.namespaced && c.ns.hostile,
      nameHostile: c.route.getOnly === true || c.name.hostile,
      tail: c.tail,
      trailing: c.trailing,
      emptyAt: c.emptyAt,
    }),
  );

function pathOf(c: Case): string {
  const path = `${c.route.path(c.ns, c.name)}${c.tail}${c.trailing}`;
  if (c.emptyAt < 0) return path;
  // double one inner `/` (never the first: a leading `//` is trimmed as kube trims it)
  const slashes = [...path.matchAll(/\//g)].map((m) => m.index).filter((i) => i > 0);
  const at = slashes[c.emptyAt % slashes.length] as number;
  return `${path.slice(0, at)}/${path.slice(at)}`;
}

/** A body that would change whatever object it reached. */
function bodyOf(method: string): { raw?: string; headers?: Record<string, string> } {
  if (method === 'PATCH') {
    return {
      raw: JSON.stringify({ metadata: { labels: { fuzzed: 'yes' } } }),
      headers: { 'content-type': 'application/merge-patch+json' },
    };
  }
  if (method === 'PUT') {
    return {
      raw: JSON.stringify({
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: { name: 'victim', labels: { fuzzed: 'yes' } },
      }),
      headers: { 'content-type': 'application/json' },
    };
  }
  return {};
}

describe('fuzzing route shapes with hostile names: a request changes nothing but the object its path names', () => {
  it('dot, slash and percent names change nothing at all; other names change at most their own object', async () => {
    await fc.assert(
      fc.asyncProperty(cases, async (c) => {
        const path = pathOf(c);
        const before = await snapshot();
        const revision = t.server.store.revision;
        const res = await t.request(path, { method: c.method, ...bodyOf(c.method) });
        const after = await snapshot();
        const changed = changedKeys(before, after);
        const what = `${c.method} ${path} → ${res.status} ${res.text.slice(0, 300)}`;
        expect(res.status, what).toBeLessThan(500);
        if (res.status >= 400) expect(res.json, what).toMatchObject({ kind: 'Status', code: res.status });
        const refused = c.nsHostile || c.nameHostile || c.tail !== '' || c.emptyAt >= 0;
        if (refused) {
          expect(changed, what).toEqual([]);
          expect(t.server.store.revision, what).toBe(revision);
          expect([400, 404, 405], what).toContain(res.status);
          if (c.tail === '' && c.emptyAt < 0) expect(res.status, what).toBe(400);
          return;
        }
        const key = `${c.route.type}|${c.route.namespaced ? c.ns : ''}/${decodeURIComponent(c.name)}`;
        for (const k of changed) expect(k, what).toBe(key);
      }),
      { numRuns: 200 },
    );
    await expectVictimIntact();
  });

  it('a PATCH through an encoded but harmless name changes exactly that object (the oracle sees changes)', async () => {
    const before = await snapshot();
    const res = await t.request(`${CM}/%6Beep-1`, {
      method: 'PATCH',
      raw: JSON.stringify({ metadata: { labels: { touched: 'yes' } } }),
      headers: { 'content-type': 'application/merge-patch+json' },
    });
    expect(res.status, res.text).toBe(200);
    expect(changedKeys(before, await snapshot())).toEqual(['/configmaps|victim/keep-1']);
  });
});
