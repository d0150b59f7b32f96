/**
 * The leader fencing policy `converge manifests` generates, applied with the rest of the manifests
 * to a `converge serve` process and exercised with the real kubectl as a cluster would see the
 * operator's pods: impersonating its ServiceAccount with the pod-name extra a pod-bound token
 * carries (`as-user-extra` in a kubeconfig). The pod holding the Lease writes; another pod of the
 * operator is refused with `stale fencing epoch` on create, update, delete and the status
 * subresource — until the Lease moves to it, after which the former holder is refused. Other
 * users, tokens without the pod extra, the Lease and Events are not affected.
 */
import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { errorFromStatus, type Status } from '@converge/kube';
import { FencedError } from '@converge/runtime';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, parseAllDocuments, stringify } from 'yaml';
import { parseCommand } from '../src/index.ts';
import { runManifests } from '../src/manifests-cmd.ts';
import { type ConvergeProcess, spawnConverge, waitFor } from './processes.ts';

const exec = promisify(execFile);
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const FIXTURE = fileURLToPath(new URL('./fixtures/manifests-operator/', import.meta.url));
const PROJECTS = join(ROOT, '.converge', 'test-projects');

const NS = 'website-operator-system';
const SA = `system:serviceaccount:${NS}:website-operator`;
const LEASE = 'website-operator-leader';
const POD_A = 'website-operator-7d9f8-aaaaa';
const POD_B = 'website-operator-7d9f8-bbbbb';

let dir = '';
let serve: ConvergeProcess | undefined;

interface Result {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** kubectl with the kubeconfig `who` (see {@link kubeconfigs}). */
async function kubectl(who: string, args: readonly string[], input?: string): Promise<Result> {
  const run = exec(
    'kubectl',
    ['--kubeconfig', join(dir, `kubeconfig-${who}`), '--cache-dir', join(dir, 'cache'), ...args],
    { timeout: 60_000 },
  );
  if (input !== undefined) run.child.stdin?.end(input);
  try {
    const { stdout, stderr } = await run;
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : 1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

async function ok(who: string, args: readonly string[], input?: string): Promise<string> {
  const result = await kubectl(who, args, input);
  expect(result, `${who}: kubectl ${args.join(' ')}`).toMatchObject({ code: 0 });
  return result.stdout;
}

/** Expects kubectl to be refused by the fencing policy; returns its error. */
async function fenced(who: string, args: readonly string[], input?: string): Promise<string> {
  const result = await kubectl(who, args, input);
  expect(result.code, `${who}: kubectl ${args.join(' ')} should be refused\n${result.stdout}`).not.toBe(0);
  expect(result.stderr).toContain(
    "is forbidden: ValidatingAdmissionPolicy 'website-operator-leader-fencing' with binding 'website-operator-leader-fencing' denied request: stale fencing epoch",
  );
  return result.stderr;
}

/**
 * Kubeconfigs beside the server's: `admin` (the server's), `pod-a` and `pod-b` (the operator's
 * ServiceAccount with a pod-bound token's extra), `legacy` (the ServiceAccount without it, as a
 * Secret token authenticates), `other` (another ServiceAccount of the namespace, from pod A).
 */
function kubeconfigs(): void {
  const admin = parse(readFileSync(join(dir, 'kubeconfig-admin'), 'utf8')) as {
    users: { name: string; user: Record<string, unknown> }[];
  };
  const as = (username: string, pod?: string): string => {
    const [user] = admin.users;
    const extra =
      pod === undefined ? {} : { 'as-user-extra': { 'authentication.kubernetes.io/pod-name': [pod] } };
    return stringify({ ...admin, users: [{ ...user, user: { ...user?.user, as: username, ...extra } }] });
  };
  writeFileSync(join(dir, 'kubeconfig-pod-a'), as(SA, POD_A));
  writeFileSync(join(dir, 'kubeconfig-pod-b'), as(SA, POD_B));
  writeFileSync(join(dir, 'kubeconfig-legacy'), as(SA));
  writeFileSync(join(dir, 'kubeconfig-other'), as(`system:serviceaccount:${NS}:default`, POD_A));
}

const lease = (holder: string): string =>
  stringify({
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: { name: LEASE, namespace: NS },
    spec: { holderIdentity: holder, leaseDurationSeconds: 15, leaseTransitions: 0 },
  });

beforeAll(async () => {
  mkdirSync(PROJECTS, { recursive: true });
  dir = mkdtempSync(join(PROJECTS, 'fencing-'));
  cpSync(FIXTURE, dir, { recursive: true });
  const parsed = parseCommand(['manifests']);
  if (parsed.command !== 'manifests') throw new Error('not manifests');
  const io = { out: () => {}, err: () => {}, stopped: new Promise<never>(() => {}) };
  expect(await runManifests(parsed, io, dir)).toBe(0);
  const process = spawnConverge(dir, ['serve', '--port', '0', '--kubeconfig', join(dir, 'kubeconfig-admin')]);
  serve = process;
  await waitFor(
    'the serving line',
    () => (process.stdout().includes('serving Kubernetes API at') ? true : undefined),
    process.output,
  );
  kubeconfigs();
  const applied = await kubectl('admin', ['apply', '--server-side', '-k', join(dir, 'config')]);
  expect(applied, applied.stderr).toMatchObject({ code: 0, stderr: '' });
  expect(applied.stdout).toContain(
    'validatingadmissionpolicy.admissionregistration.k8s.io/website-operator-leader-fencing serverside-applied',
  );
  await ok('admin', ['wait', '--for=condition=established', 'crd/websites.example.converge.dev']);
});

afterAll(async () => {
  if (serve !== undefined && serve.child.exitCode === null && serve.child.signalCode === null) {
    serve.child.kill('SIGTERM');
    await serve.exited;
  }
  if (dir !== '') rmSync(dir, { recursive: true, force: true });
});

describe('the generated leader fencing policy on converge serve', () => {
  it('lets any pod write while there is no Lease (the first acquisition), then the pods write the Lease', async () => {
    await ok('pod-b', ['create', 'service', 'clusterip', 'before-lease', '-n', 'default', '--tcp=80:80']);
    // Leases are never fenced: every replica's elector must write the lock.
    await ok('pod-a', ['create', '-f', '-'], lease(POD_A));
    expect(
      await ok('admin', ['get', 'lease', LEASE, '-n', NS, '-o', 'jsonpath={.spec.holderIdentity}']),
    ).toBe(POD_A);
  });

  it('the holder writes; another pod of the operator is refused on every verb and the status subresource', async () => {
    await ok('pod-a', ['create', 'service', 'clusterip', 'by-holder', '-n', 'default', '--tcp=80:80']);
    const create = await fenced('pod-b', [
      'create',
      'service',
      'clusterip',
      'by-stale',
      '-n',
      'default',
      '--tcp=80:80',
    ]);
    expect(create).toContain(`stale fencing epoch: pod ${POD_B} does not hold the Lease ${NS}/${LEASE}`);
    expect(create).toContain(`(its holder is ${POD_A})`);
    await fenced('pod-b', ['delete', 'service', 'by-holder', '-n', 'default']);
    await ok('admin', ['create', '-f', '-'], website('site'));
    const patch = ['patch', 'website', 'site', '-n', 'default', '--type=merge'];
    await fenced('pod-b', [...patch, '-p', '{"spec":{"domain":"b.example.com"}}']);
    await fenced('pod-b', [...patch, '--subresource=status', '-p', '{"status":{"ready":true}}']);
    await ok('pod-a', [...patch, '--subresource=status', '-p', '{"status":{"ready":true}}']);
    // Events are recorded by every replica.
    await ok('pod-b', ['create', '-f', '-'], event('from-b'));
  });

  it('once the Lease moved, the former holder is the one refused', async () => {
    await ok('pod-b', [
      'patch',
      'lease',
      LEASE,
      '-n',
      NS,
      '--type=merge',
      '-p',
      `{"spec":{"holderIdentity":"${POD_B}"}}`,
    ]);
    await ok('pod-b', ['delete', 'service', 'by-holder', '-n', 'default']);
    const stale = await fenced('pod-a', ['delete', 'service', 'before-lease', '-n', 'default']);
    expect(stale).toContain(
      `stale fencing epoch: pod ${POD_A} does not hold the Lease ${NS}/${LEASE} (its holder is ${POD_B})`,
    );
    // A released Lease (holderIdentity '') fences every pod.
    await ok('pod-b', [
      'patch',
      'lease',
      LEASE,
      '-n',
      NS,
      '--type=merge',
      '-p',
      '{"spec":{"holderIdentity":""}}',
    ]);
    const released = await fenced('pod-b', ['delete', 'service', 'before-lease', '-n', 'default']);
    expect(released).toContain('(nobody holds it)');
    await ok('pod-a', [
      'patch',
      'lease',
      LEASE,
      '-n',
      NS,
      '--type=merge',
      '-p',
      `{"spec":{"holderIdentity":"${POD_A}"}}`,
    ]);
  });

  it('over HTTP: Impersonate-Extra with the key percent-encoded; the 403 Status decodes to a FencedError', async () => {
    const refused = await call('DELETE', '/api/v1/namespaces/default/services/before-lease', {
      'impersonate-user': SA,
      'impersonate-extra-authentication.kubernetes.io%2Fpod-name': POD_B,
    });
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ kind: 'Status', code: 403, reason: 'Forbidden' });
    const error = errorFromStatus(refused.body as Status, refused.status);
    expect(error).toBeInstanceOf(FencedError);
    expect(error.message).toContain(`(its holder is ${POD_A})`);
    const allowed = await call('GET', '/api/v1/namespaces/default/services/before-lease', {
      'impersonate-user': SA,
      'impersonate-extra-authentication.kubernetes.io%2Fpod-name': POD_B,
    });
    expect(allowed.status).toBe(200);
  });

  it('does not touch other users, other ServiceAccounts, or tokens that name no pod', async () => {
    await ok('admin', ['create', 'service', 'clusterip', 'by-admin', '-n', 'default', '--tcp=80:80']);
    await ok('admin', [
      'create',
      'rolebinding',
      'default-edits',
      '-n',
      'default',
      '--clusterrole=website-operator-manager-role',
      `--serviceaccount=${NS}:default`,
    ]);
    await ok('other', ['delete', 'service', 'by-admin', '-n', 'default']);
    // A token not bound to a pod (a legacy Secret token): the policy cannot tell, and lets it through.
    await ok('legacy', ['create', 'service', 'clusterip', 'by-legacy', '-n', 'default', '--tcp=80:80']);
    await ok('legacy', ['delete', 'service', 'by-legacy', '-n', 'default']);
  });
});

/** One HTTPS request to the server as its admin (the admin kubeconfig's token and CA), with `headers`. */
function call(
  method: string,
  path: string,
  headers: Record<string, string>,
): Promise<{ status: number; body: unknown }> {
  const config = parse(readFileSync(join(dir, 'kubeconfig-admin'), 'utf8')) as {
    clusters: { cluster: { server: string; 'certificate-authority-data': string } }[];
    users: { user: { token: string } }[];
  };
  const cluster = config.clusters[0]?.cluster;
  return new Promise((resolve, reject) => {
    const req = request(
      new URL(path, cluster?.server),
      {
        method,
        ca: Buffer.from(cluster?.['certificate-authority-data'] ?? '', 'base64'),
        headers: { authorization: `Bearer ${config.users[0]?.user.token}`, ...headers },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          text += chunk;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

function website(name: string): string {
  const [crd] = parseAllDocuments(
    readFileSync(join(dir, 'config/crd/websites.example.converge.dev.yaml'), 'utf8'),
  ).map((d) => d.toJS() as { spec: { versions: { name: string }[] } });
  return stringify({
    apiVersion: `example.converge.dev/${crd?.spec.versions[0]?.name}`,
    kind: 'Website',
    metadata: { name, namespace: 'default' },
    spec: { domain: 'a.example.com' },
  });
}

function event(name: string): string {
  return stringify({
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { name, namespace: 'default' },
    involvedObject: { kind: 'Service', name: 'by-holder', namespace: 'default' },
    reason: 'Tested',
    message: 'from a standby',
    type: 'Normal',
  });
}
