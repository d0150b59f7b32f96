import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiServer, createApiServer } from './api-server.ts';
import { type KubectlResult, type KubectlRun, runKubectl } from './kubectl-support.ts';

let dir: string;
let server: ApiServer;
let kubeconfig: string;

function kubectl(args: readonly string[], options?: KubectlRun): Promise<KubectlResult> {
  return runKubectl('kubectl', kubeconfig, join(dir, 'cache'), args, options);
}

async function ok(args: readonly string[], options?: KubectlRun): Promise<string> {
  const result = await kubectl(args, options);
  expect(result.code, `kubectl ${args.join(' ')}\n${result.stderr}`).toBe(0);
  return result.stdout;
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'converge-kubectl-endpoints-'));
  kubeconfig = join(dir, 'kubeconfig');
  server = createApiServer({ kubeconfigPath: kubeconfig });
  await server.listen();
});
afterAll(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('kubectl against the endpoints clients call', () => {
  it('kubectl auth can-i create deployments → yes; whoami names the admin', async () => {
    // kubectl sends this SelfSubjectAccessReview as protobuf
    expect(await ok(['auth', 'can-i', 'create', 'deployments'])).toBe('yes\n');
    const who = await ok(['auth', 'whoami', '-o', 'json']);
    expect(JSON.parse(who).status.userInfo.username).toBe('converge-admin');
    // SelfSubjectRulesReview
    const list = await ok(['auth', 'can-i', '--list']);
    expect(list.split('\n')[0]).toMatch(/^Resources\s+Non-Resource URLs\s+Resource Names\s+Verbs$/);
    expect(list).toMatch(/^\*\.\*\s+\[\]\s+\[\]\s+\[\*\]$/m);
  });

  it('kubectl create token default (the ServiceAccount every namespace gets) with an audience and a duration', async () => {
    const token = (await ok(['create', 'token', 'default', '--audience=vault', '--duration=1h'])).trim();
    const claims = JSON.parse(Buffer.from(token.split('.')[1] as string, 'base64url').toString()) as {
      aud: string[];
      exp: number;
      iat: number;
      sub: string;
    };
    expect([claims.aud, claims.exp - claims.iat, claims.sub]).toEqual([
      ['vault'],
      3600,
      'system:serviceaccount:default:default',
    ]);
  });

  it('kubectl create token prints a token the server authenticates', async () => {
    await ok(['create', 'serviceaccount', 'builder']);
    const token = (await ok(['create', 'token', 'builder', '--duration=20m'])).trim();
    expect(token.split('.')).toHaveLength(3);
    const asToken = ['--token', token];
    expect(await ok(['auth', 'whoami', '-o', 'jsonpath={.status.userInfo.username}', ...asToken])).toBe(
      'system:serviceaccount:default:builder',
    );
    const denied = await kubectl(['auth', 'can-i', 'list', 'pods', ...asToken]);
    expect([denied.code, denied.stdout]).toEqual([1, 'no\n']);
  });

  it("kubectl logs of a pending pod prints nothing; kubectl exec fails with upstream's message", async () => {
    await ok(['run', 'idle', '--image=busybox', '--restart=Never']);
    // the server's 204 No Content: exit 0, nothing on either stream, as against kube-apiserver
    const logs = await kubectl(['logs', 'idle']);
    expect([logs.code, logs.stdout, logs.stderr]).toEqual([0, '', '']);
    const followed = await kubectl(['logs', 'idle', '-f', '--tail=5']);
    expect([followed.code, followed.stdout, followed.stderr]).toEqual([0, '', '']);
    const exec = await kubectl(['exec', 'idle', '--', 'ls']);
    expect([exec.code, exec.stderr]).toEqual([
      1,
      'Error from server (BadRequest): pod idle does not have a host assigned\n',
    ]);
  });

  it('kubectl diff --server-side with empty labels, annotations and finalizers against an object without them shows nothing', async () => {
    const bare = `apiVersion: v1
kind: ConfigMap
metadata:
  name: empty-maps
data:
  a: "1"
`;
    const withEmpty = bare.replace(
      '  name: empty-maps\n',
      '  name: empty-maps\n  labels: {}\n  annotations: {}\n  finalizers: []\n',
    );
    await ok(['apply', '--server-side', '-f', '-'], { input: bare });
    const diff = await kubectl(['diff', '--server-side', '-f', '-'], { input: withEmpty });
    expect([diff.code, diff.stdout, diff.stderr]).toEqual([0, '', '']);
  });

  it('kubectl get events.events.k8s.io --field-selector reason=X lists only those', async () => {
    const event = (name: string, reason: string): string => `apiVersion: events.k8s.io/v1
kind: Event
metadata:
  name: ${name}
eventTime: "2026-11-26T10:00:00.000000Z"
reportingController: example.com/operator
reportingInstance: operator-0
action: Reconcile
reason: ${reason}
type: Normal
regarding:
  kind: ConfigMap
  namespace: default
  name: settings
`;
    await ok(['create', '-f', '-'], { input: `${event('ev-a', 'Synced')}---\n${event('ev-b', 'Failed')}` });
    const out = await ok(['get', 'events.events.k8s.io', '--field-selector', 'reason=Failed', '-o', 'name']);
    expect(out).toBe('event.events.k8s.io/ev-b\n');
    const bad = await kubectl(['get', 'events.events.k8s.io', '--field-selector', 'involvedObject.name=x']);
    expect(bad.stderr).toBe(
      'Error from server (BadRequest): Unable to find "events.k8s.io/v1, Resource=events" that match label selector "", field selector "involvedObject.name=x": field label not supported: involvedObject.name\n',
    );
  });

  it('kubectl get events.events.k8s.io --field-selector regarding.name=X lists only the events about X; -o json shows eventTime: null for a core/v1 Event', async () => {
    const about = (name: string, pod: string): string => `apiVersion: events.k8s.io/v1
kind: Event
metadata:
  name: ${name}
eventTime: "2026-11-26T10:00:00.000000Z"
reportingController: example.com/operator
reportingInstance: operator-0
action: Reconcile
reason: Synced
type: Normal
regarding:
  kind: Pod
  namespace: default
  name: ${pod}
`;
    const legacy = `apiVersion: v1
kind: Event
metadata:
  name: legacy-web
involvedObject:
  kind: Pod
  namespace: default
  name: web
reason: Pulled
message: pulled
type: Normal
count: 1
firstTimestamp: "2026-11-26T10:00:00Z"
lastTimestamp: "2026-11-26T10:00:00Z"
source:
  component: kubelet
`;
    await ok(['create', '-f', '-'], {
      input: `${about('ab-web', 'web')}---\n${about('ab-db', 'db')}---\n${legacy}`,
    });
    const names = await ok([
      'get',
      'events.events.k8s.io',
      '--field-selector',
      'regarding.name=web',
      '-o',
      'name',
      '--sort-by',
      '.metadata.name',
    ]);
    expect(names).toBe('event.events.k8s.io/ab-web\nevent.events.k8s.io/legacy-web\n');
    const table = await ok([
      'get',
      'events.events.k8s.io',
      '--field-selector',
      'regarding.kind=Pod,regarding.name=db',
    ]);
    const rows = table.split('\n').filter((line) => line !== '');
    expect(rows).toHaveLength(2); // the header and the one Event about pod/db
    expect(rows[1]).toMatch(/\bpod\/db\b/);
    const json = JSON.parse(await ok(['get', 'events.events.k8s.io', 'legacy-web', '-o', 'json']));
    expect(json).toMatchObject({
      eventTime: null,
      deprecatedSource: { component: 'kubelet' },
      regarding: { name: 'web' },
    });
    expect(JSON.parse(await ok(['get', 'events.events.k8s.io', 'ab-web', '-o', 'json']))).toMatchObject({
      eventTime: '2026-11-26T10:00:00.000000Z',
      deprecatedFirstTimestamp: null,
      deprecatedLastTimestamp: null,
      deprecatedSource: {},
    });
  });

  it('kubectl --as impersonates: whoami names the user, can-i answers for the ServiceAccount', async () => {
    const who = JSON.parse(await ok(['auth', 'whoami', '-o', 'json', '--as=jane', '--as-group=devs']));
    expect(who.status.userInfo).toEqual({ username: 'jane', groups: ['devs', 'system:authenticated'] });
    const sa = await kubectl(['auth', 'can-i', 'list', 'pods', '--as=system:serviceaccount:default:builder']);
    expect([sa.code, sa.stdout]).toEqual([1, 'no\n']);
    expect(await ok(['auth', 'can-i', 'create', 'selfsubjectaccessreviews', '--as=jane'])).toBe('yes\n');
  });
});
