/**
 * The real kubectl against the embedded API server's RBAC: `kubectl auth can-i` (with `--as` /
 * `--as-group` impersonation by the admin, and `--list`), and kubectl get/label/scale/delete run as
 * a ServiceAccount with its own token, printing the cluster's Forbidden text.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiServer, createApiServer } from '../../packages/apiserver/src/server/api-server.ts';
import { type KubectlResult, runKubectl } from '../../packages/apiserver/src/server/kubectl-support.ts';
import { eventually } from './support.ts';

let dir: string;
let server: ApiServer;
let kubeconfig: string;

function kubectl(args: readonly string[], input?: string): Promise<KubectlResult> {
  return runKubectl('kubectl', kubeconfig, join(dir, 'cache'), args, input === undefined ? {} : { input });
}

async function ok(args: readonly string[]): Promise<string> {
  const result = await kubectl(args);
  expect(result.code, `kubectl ${args.join(' ')}\n${result.stderr}`).toBe(0);
  return result.stdout;
}

/** Polls `kubectl auth can-i …` until it prints `answer`. */
function canI(args: readonly string[], answer: 'yes' | 'no'): Promise<true> {
  return eventually(`can-i ${args.join(' ')} → ${answer}`, async () => {
    const result = await kubectl(['auth', 'can-i', ...args]);
    return result.stdout.trim() === answer ? true : undefined;
  });
}

const BOT = 'system:serviceaccount:ops:bot';

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'converge-rbac-kubectl-'));
  kubeconfig = join(dir, 'kubeconfig');
  server = createApiServer({ kubeconfigPath: kubeconfig });
  await server.listen();
  await ok(['create', 'namespace', 'ops']);
  await ok(['-n', 'ops', 'create', 'serviceaccount', 'bot']);
  await ok(['-n', 'ops', 'create', 'deployment', 'web', '--image=nginx']);
});
afterAll(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('kubectl under RBAC', () => {
  it('a ServiceAccount token: Forbidden as a cluster prints it, then allowed by a Role and RoleBinding made with kubectl', async () => {
    const token = (await ok(['-n', 'ops', 'create', 'token', 'bot'])).trim();
    const asBot = ['--token', token, '-n', 'ops'];
    const denied = await kubectl([...asBot, 'get', 'deployments']);
    expect(denied.code).toBe(1);
    expect(denied.stderr.trim()).toBe(
      `Error from server (Forbidden): deployments.apps is forbidden: User "${BOT}" cannot list resource "deployments" in API group "apps" in the namespace "ops"`,
    );
    expect(
      (await kubectl(['auth', 'can-i', 'update', 'deployments', '-n', 'ops', `--as=${BOT}`])).stdout,
    ).toBe('no\n');

    await ok([
      '-n',
      'ops',
      'create',
      'role',
      'deployer',
      '--verb=get,list,watch,update,patch',
      '--resource=deployments.apps',
    ]);
    await ok(['-n', 'ops', 'create', 'rolebinding', 'bot', '--role=deployer', '--serviceaccount=ops:bot']);
    await canI(['update', 'deployments', '-n', 'ops', `--as=${BOT}`], 'yes');

    expect(await ok([...asBot, 'get', 'deployments', '-o', 'name'])).toBe('deployment.apps/web\n');
    expect(await ok([...asBot, 'label', 'deployment', 'web', 'tier=front'])).toContain('labeled');
    const del = await kubectl([...asBot, 'delete', 'deployment', 'web']);
    expect(del.stderr.trim()).toBe(
      `Error from server (Forbidden): deployments.apps "web" is forbidden: User "${BOT}" cannot delete resource "deployments" in API group "apps" in the namespace "ops"`,
    );
    const scale = await kubectl([...asBot, 'scale', 'deployment', 'web', '--replicas=2']);
    expect(scale.code).toBe(1);
    expect(scale.stderr).toMatch(
      new RegExp(
        `deployments.apps "web" is forbidden: User "${BOT}" cannot (patch|update) resource "deployments/scale" in API group "apps" in the namespace "ops"`,
      ),
    );
    expect(
      (await kubectl(['auth', 'can-i', 'get', 'deployments', '-n', 'default', `--as=${BOT}`])).stdout,
    ).toBe('no\n');
  });

  it('kubectl auth can-i --list shows the rules the ServiceAccount holds in the namespace', async () => {
    await ok(['-n', 'ops', 'create', 'serviceaccount', 'lister']);
    await ok([
      '-n',
      'ops',
      'create',
      'role',
      'cm-one',
      '--verb=get',
      '--resource=configmaps',
      '--resource-name=settings',
    ]);
    await ok([
      '-n',
      'ops',
      'create',
      'rolebinding',
      'lister',
      '--role=cm-one',
      '--serviceaccount=ops:lister',
    ]);
    const as = '--as=system:serviceaccount:ops:lister';
    await canI(['get', 'configmaps/settings', '-n', 'ops', as], 'yes');
    const list = await ok(['auth', 'can-i', '--list', '-n', 'ops', as]);
    const lines = list.split('\n').map((l) => l.trim().split(/\s+/).join(' '));
    expect(lines).toContain('configmaps [] [settings] [get]');
    expect(lines).toContain('selfsubjectaccessreviews.authorization.k8s.io [] [] [create]');
    expect(lines).toContain('[/api/*] [] [get]');
    expect(list).not.toContain('deployments');
    expect((await kubectl(['auth', 'can-i', 'get', 'configmaps/other', '-n', 'ops', as])).stdout).toBe(
      'no\n',
    );
  });

  it('--as / --as-group: a group bound to the bootstrap view role reads pods, not secrets', async () => {
    const as = ['-n', 'ops', '--as=alice', '--as-group=devs'];
    expect((await kubectl(['auth', 'can-i', 'list', 'pods', ...as])).stdout).toBe('no\n');
    await ok(['-n', 'ops', 'create', 'rolebinding', 'devs', '--clusterrole=view', '--group=devs']);
    await canI(['list', 'pods', ...as], 'yes');
    expect((await kubectl(['auth', 'can-i', 'list', 'secrets', ...as])).stdout).toBe('no\n');
    expect(
      (await kubectl(['auth', 'can-i', 'list', 'pods', '-n', 'default', '--as=alice', '--as-group=devs']))
        .stdout,
    ).toBe('no\n');
    // the admin may do everything
    expect(await ok(['auth', 'can-i', '*', '*', '--all-namespaces'])).toBe('yes\n');
  });
});
