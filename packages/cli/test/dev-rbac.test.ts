/**
 * `converge dev --as-service-account` (real processes, real kubectl): an operator that updates
 * Deployments it only watches, without declaring `update`, gets the API server's 403 naming the
 * verb, resource, group and its ServiceAccount, and does not converge; the same operator with the
 * declaration converges. The admin kubeconfig stays all-powerful throughout.
 */
import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:https';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { type ConvergeProcess, now, sleep, spawnConverge, WAIT_MS, waitFor, within } from './processes.ts';

const exec = promisify(execFile);
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const FIXTURE = fileURLToPath(new URL('./fixtures/dev-rbac/', import.meta.url));
/** Below the repository (its ignored `.converge/`), so the fixture's `@converge/*` imports resolve. */
const PROJECTS = join(ROOT, '.converge', 'test-projects');
const SA = 'system:serviceaccount:deploy-toucher-system:deploy-toucher';
/** The 403 kube-apiserver's RBAC authorizer gives, as pino's JSON log line escapes it. */
const FORBIDDEN =
  'deployments.apps \\"web\\" is forbidden: User \\"system:serviceaccount:deploy-toucher-system:deploy-toucher\\" cannot update resource \\"deployments\\" in API group \\"apps\\" in the namespace \\"default\\"';

const processes: ConvergeProcess[] = [];
const dirs: string[] = [];

afterEach(async () => {
  for (const p of processes.splice(0)) {
    if (p.child.exitCode === null && p.child.signalCode === null) {
      p.child.kill('SIGTERM');
      await within('converge dev to stop', p.exited, p.output);
    }
  }
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function project(): string {
  mkdirSync(PROJECTS, { recursive: true });
  const dir = mkdtempSync(join(PROJECTS, 'dev-rbac-'));
  dirs.push(dir);
  cpSync(FIXTURE, dir, { recursive: true });
  return dir;
}

async function kubectl(kubeconfig: string, ...args: string[]): Promise<string> {
  const { stdout } = await exec('kubectl', ['--kubeconfig', kubeconfig, '--request-timeout=20s', ...args], {
    timeout: 30_000,
  });
  return stdout;
}

/** Starts `converge dev --as-service-account …` in `dir`; resolves once its workers run, with the kubeconfig. */
async function dev(
  dir: string,
  ...modules: string[]
): Promise<{ process: ConvergeProcess; kubeconfig: string }> {
  const p = spawnConverge(dir, ['dev', '--as-service-account', ...modules]);
  processes.push(p);
  const kubeconfig = await waitFor(
    'converge dev to serve',
    () => /serving Kubernetes API at \S+ \(kubeconfig: (.+)\)/.exec(p.stdout())?.[1],
    p.output,
  );
  await waitFor(
    'the operators to start',
    () => (p.output().includes('"Starting workers"') ? true : undefined),
    p.output,
  );
  return { process: p, kubeconfig };
}

/** Polls `probe` until it resolves to a non-empty string; throws after WAIT_MS with `context()`. */
async function eventually(
  what: string,
  probe: () => Promise<string>,
  context: () => string,
): Promise<string> {
  const deadline = now() + WAIT_MS;
  for (;;) {
    const value = await probe();
    if (value !== '') return value;
    if (now() > deadline) throw new Error(`timed out after ${WAIT_MS} ms waiting for ${what}\n${context()}`);
    await sleep(50);
  }
}

async function touchedBy(kubeconfig: string): Promise<string> {
  return kubectl(
    kubeconfig,
    'get',
    'deployment',
    'web',
    '-n',
    'default',
    '-o',
    'jsonpath={.metadata.annotations.example\\.converge\\.dev/touched-by}',
  );
}

describe('converge dev --as-service-account', () => {
  it('an update the RBAC does not grant fails with the cluster 403, and converges once declared', async () => {
    const dir = project();
    const first = await dev(dir);
    expect(first.process.stdout()).toContain(
      `converge: operators run as ServiceAccount deploy-toucher-system/deploy-toucher (${SA})`,
    );
    // The generated RBAC is in the server: the ServiceAccount may watch Deployments but not update them.
    const can = (verb: string) =>
      kubectl(first.kubeconfig, 'auth', 'can-i', verb, 'deployments.apps', '-n', 'default', '--as', SA).then(
        (out) => out.trim(),
        (error: { stdout?: string }) => (error.stdout ?? '').trim(),
      );
    expect(await can('watch')).toBe('yes');
    expect(await can('update')).toBe('no');
    await kubectl(first.kubeconfig, 'create', 'deployment', 'web', '--image=nginx', '-n', 'default');
    await kubectl(
      first.kubeconfig,
      'create',
      'configmap',
      'touch-web',
      '-n',
      'default',
      '--from-literal=deployment=web',
    );
    await waitFor(
      'the 403',
      () => (first.process.output().includes(FORBIDDEN) ? true : undefined),
      first.process.output,
    );
    expect(first.process.output()).toContain('"type":"ForbiddenError"');
    expect(await touchedBy(first.kubeconfig)).toBe('');
    first.process.child.kill('SIGTERM');
    expect((await within('converge dev to stop', first.process.exited, first.process.output)).code).toBe(0);

    // The same operator declaring manager.permissions.require(deploymentType, ['update']).
    const second = await dev(dir, 'src/operator-declared.ts');
    expect(await can('update')).toBe('yes');
    expect(
      await eventually(
        'the Deployment to be annotated',
        () => touchedBy(second.kubeconfig),
        second.process.output,
      ),
    ).toBe('touch-web');
    expect(second.process.output()).not.toContain('ForbiddenError');
  });

  it("runs the operators over HTTP, so the server's fault rules reach their requests", async () => {
    const dir = project();
    const { process: p, kubeconfig } = await dev(dir, 'src/operator-declared.ts');
    expect(p.stdout()).not.toContain('the operators here use the store in process');
    await kubectl(kubeconfig, 'create', 'deployment', 'web', '--image=nginx', '-n', 'default');
    // Every update of a Deployment fails with a 500, twice, then the rule is spent.
    const rule = await faultAdmin(kubeconfig, {
      type: 'failRatio',
      pathPattern: '/apis/apps/v1/namespaces/default/deployments/*',
      methods: ['PUT', 'PATCH'],
      ratio: 1,
      status: 500,
      times: 2,
    });
    expect(rule.status).toBe(201);
    await kubectl(
      kubeconfig,
      'create',
      'configmap',
      'touch-web',
      '-n',
      'default',
      '--from-literal=deployment=web',
    );
    expect(await eventually('the Deployment to be annotated', () => touchedBy(kubeconfig), p.output)).toBe(
      'touch-web',
    );
    // The operator's own requests met the rule: its reconciles failed with the injected 500 first.
    expect(p.output()).toContain('"type":"InternalError"');
    const rules = await faultAdmin(kubeconfig);
    // Spent after its two failures, which the counters record.
    expect(rules.body).toMatchObject({ kind: 'FaultRuleList', items: [], counters: { failed: { 500: 2 } } });
  });
});

/** A request to the fault admin endpoint of the server `kubeconfig` names, with its own token beside it. */
async function faultAdmin(kubeconfig: string, rule?: object): Promise<{ status: number; body: unknown }> {
  const config = parse(readFileSync(kubeconfig, 'utf8')) as {
    clusters: { cluster: { server: string; 'certificate-authority-data': string } }[];
  };
  const cluster = config.clusters[0]?.cluster;
  if (cluster === undefined) throw new Error(`${kubeconfig} has no cluster`);
  const token = readFileSync(join(dirname(kubeconfig), 'fault-admin-token'), 'utf8').trim();
  return new Promise((resolve, reject) => {
    const req = request(
      new URL('/converge/faults', cluster.server),
      {
        method: rule === undefined ? 'GET' : 'POST',
        ca: Buffer.from(cluster['certificate-authority-data'], 'base64'),
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        timeout: 30_000,
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (chunk: string) => {
          text += chunk;
        });
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, body: text === '' ? undefined : JSON.parse(text) }),
        );
      },
    );
    req.on('error', reject);
    req.end(rule === undefined ? undefined : JSON.stringify(rule));
  });
}
