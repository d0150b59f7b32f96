import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { decodeKvLease } from '@converge/nats';
import { type KV, Kvm } from '@nats-io/kv';
import { connect } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sharedNatsUrl, uniqueSuffix } from '../../nats/src/test-harness.ts';

const exec = promisify(execFile);
const bin = fileURLToPath(new URL('../bin/converge.js', import.meta.url));
const example = (f: string) =>
  fileURLToPath(new URL(`../../../examples/configmap-generator/${f}`, import.meta.url));
const children: ChildProcess[] = [];
let dir: string;
let kubeconfig: string;
let server: ChildProcess;

function spawnConverge(args: string[]): { child: ChildProcess; output: () => string } {
  const child = spawn(process.execPath, [bin, ...args], {
    cwd: dir,
    env: { ...process.env, CONVERGE_HEALTH_PROBE_BIND_ADDRESS: '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let out = '';
  child.stdout?.on('data', (c: Buffer) => {
    out += c.toString();
  });
  child.stderr?.on('data', (c: Buffer) => {
    out += c.toString();
  });
  return { child, output: () => out };
}

async function waitFor<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function kubectl(...args: string[]): Promise<string> {
  const { stdout } = await exec('kubectl', ['--kubeconfig', kubeconfig, '--request-timeout=30s', ...args], {
    timeout: 90_000,
  });
  return stdout;
}

const holder = async (): Promise<string | undefined> => {
  const h = await kubectl(
    'get',
    'lease',
    'cmg-operator',
    '-n',
    'default',
    '-o',
    'jsonpath={.spec.holderIdentity}',
  );
  return h === '' ? undefined : h;
};

const exited = (child: ChildProcess): Promise<number | null> =>
  new Promise((resolve) =>
    child.exitCode !== null ? resolve(child.exitCode) : child.once('exit', (code) => resolve(code)),
  );

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'converge-run-'));
  kubeconfig = join(dir, 'kubeconfig');
  const s = spawnConverge(['serve', '--port', '0', '--kubeconfig', kubeconfig]);
  server = s.child;
  await waitFor('the server', async () => (s.output().includes('serving Kubernetes API') ? true : undefined));
  await kubectl('apply', '-f', example('manifests/crd.yaml'));
  await kubectl(
    'wait',
    '--for=condition=Established',
    'crd/configmapgenerators.examples.converge.dev',
    '--timeout=60s',
  );
});

afterAll(async () => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
  await exited(server);
  rmSync(dir, { recursive: true, force: true });
});

describe('converge run against a served API, two processes with leader election', () => {
  const timing = ['--lease-duration-ms', '3000', '--renew-deadline-ms', '2000', '--retry-period-ms', '500'];
  const replica = (id: string) =>
    spawnConverge([
      'run',
      example('operator.ts'),
      '--kubeconfig',
      kubeconfig,
      '--leader-elect',
      '--lease-name',
      'cmg-operator',
      '--identity',
      id,
      ...timing,
      ...['--metrics-bind-address', '127.0.0.1:0', '--health-probe-bind-address', '127.0.0.1:0'],
    ]);

  /** The operations endpoints a replica printed at start. */
  const endpoints = (r: { output: () => string }) =>
    waitFor('the operations line', async () => {
      const m = /converge: metrics at (\S+)\/metrics .*health probes at (\S+)\/healthz/.exec(r.output());
      return m === null ? undefined : { metrics: m[1] as string, health: m[2] as string };
    });
  const scrape = async (url: string): Promise<string> => (await fetch(`${url}/metrics`)).text();

  it('exactly one replica leads and reconciles; kill -9 of the leader hands over once the lease expired; SIGTERM releases at once', async () => {
    const a = replica('replica-a');
    await waitFor('replica-a to lead', async () => ((await holder()) === 'replica-a' ? true : undefined));
    const b = replica('replica-b');
    await waitFor('replica-b to start', async () =>
      b.output().includes('running operator') ? true : undefined,
    );

    await kubectl('apply', '-f', example('manifests/sample.yaml'));
    await waitFor('the ConfigMaps', async () =>
      (await kubectl('get', 'cm', '-n', 'default', '-o', 'name')).includes('greetings-1') ? true : undefined,
    );
    // The standby never took the lease meanwhile.
    expect(await holder()).toBe('replica-a');
    // Leadership and reconciles in each replica's metrics; the standby is ready (its caches are warm).
    const [atA, atB] = [await endpoints(a), await endpoints(b)];
    await waitFor('the leader to count its reconciles', async () =>
      /^controller_runtime_reconcile_total\{controller="configmap-generator",result="success"\} [1-9]/m.test(
        await scrape(atA.metrics),
      )
        ? true
        : undefined,
    );
    expect(await scrape(atA.metrics)).toMatch(/^leader_election_master_status\{name="cmg-operator"\} 1$/m);
    const standby = await scrape(atB.metrics);
    expect(standby).toMatch(/^leader_election_master_status\{name="cmg-operator"\} 0$/m);
    expect(standby).toMatch(
      /^controller_runtime_reconcile_total\{controller="configmap-generator",result="success"\} 0$/m,
    );
    await waitFor('the standby to be ready', async () =>
      (await fetch(`${atB.health}/readyz`)).status === 200 ? true : undefined,
    );

    // kill -9: no release; the standby waits for the lease to expire on its own clock.
    const killedAt = Date.now();
    a.child.kill('SIGKILL');
    await waitFor('replica-b to lead', async () => ((await holder()) === 'replica-b' ? true : undefined));
    // Not before the lease expired (3 s after the last renew, which is at most one retry period
    // before the kill). No upper bound on a clock: on a loaded machine the standby's next retry is
    // late by whatever the scheduler makes it; the wait above is the hang detector.
    expect(Date.now() - killedAt).toBeGreaterThanOrEqual(2_000);

    // The new leader reconciles: a spec change is followed.
    await kubectl(
      'patch',
      'configmapgenerators.examples.converge.dev',
      'greetings',
      '-n',
      'default',
      '--type=merge',
      '-p',
      '{"spec":{"copies":3}}',
    );
    await waitFor('a third ConfigMap', async () =>
      (await kubectl('get', 'cm', '-n', 'default', '-o', 'name')).includes('greetings-2') ? true : undefined,
    );

    // SIGTERM with release-on-cancel: a new standby takes over within about one retry period.
    const c = replica('replica-c');
    await waitFor('replica-c to start', async () =>
      c.output().includes('running operator') ? true : undefined,
    );
    b.child.kill('SIGTERM');
    expect(await exited(b.child)).toBe(0);
    // Released before exit: the lease has no holder (or the standby already took it), so the
    // standby takes over at its next retry instead of waiting 3 s for expiry.
    expect([undefined, 'replica-c']).toContain(await holder());
    await waitFor('replica-c to lead', async () => ((await holder()) === 'replica-c' ? true : undefined));
    c.child.kill('SIGTERM');
    expect(await exited(c.child)).toBe(0);
  }, 90_000);

  it('fails with a clear message and exit code 2 without a module', async () => {
    const r = spawnConverge(['run', '--kubeconfig', kubeconfig]);
    expect(await exited(r.child)).toBe(2);
    expect(r.output()).toMatch(/at least one operator module/);
  });
});

describe('converge run with --lease-backend nats, two processes electing on a NATS KV lease', () => {
  const timing = ['--lease-duration-ms', '3000', '--renew-deadline-ms', '2000', '--retry-period-ms', '500'];
  const KEY = 'cmg-operator';
  let url: string;
  let bucket: string;

  beforeAll(async () => {
    url = await sharedNatsUrl();
    bucket = `run-test-${uniqueSuffix()}`;
  });

  const replica = (id: string) =>
    spawnConverge([
      'run',
      example('operator.ts'),
      '--kubeconfig',
      kubeconfig,
      '--leader-elect',
      ...['--lease-backend', 'nats', '--nats', url, '--lease-bucket', bucket, '--lease-name', KEY],
      '--identity',
      id,
      ...timing,
    ]);

  /** Runs `use` on the lease bucket (which the first replica creates), then deletes the bucket. */
  async function withBucket(use: (kv: () => Promise<KV>) => Promise<void>): Promise<void> {
    const connection = await connect({ servers: url });
    let opened: KV | undefined;
    try {
      await use(async () => {
        opened ??= await new Kvm(connection).open(bucket);
        return opened;
      });
    } finally {
      try {
        await (opened ?? (await new Kvm(connection).open(bucket))).destroy();
      } catch {
        // never created
      }
      await connection.close();
    }
  }

  const generator = (name: string, copies: number): string => {
    const file = join(dir, `${name}.json`);
    const object = {
      apiVersion: 'examples.converge.dev/v1alpha1',
      kind: 'ConfigMapGenerator',
      metadata: { name, namespace: 'default' },
      spec: { copies, data: { hello: 'nats' } },
    };
    writeFileSync(file, JSON.stringify(object));
    return file;
  };
  const configMaps = async () => await kubectl('get', 'cm', '-n', 'default', '-o', 'name');

  it('exactly one replica leads and reconciles; kill -9 of the leader hands over once the lease expired; SIGTERM releases at once; the KV lease counts the transitions', async () => {
    await withBucket(async (kv) => {
      const lease = async () => {
        const entry = await (await kv()).get(KEY);
        if (entry === null || entry.operation !== 'PUT') return undefined;
        return decodeKvLease(entry.value, { bucket, key: KEY, revision: entry.revision }).record;
      };
      const holder = async () => {
        const h = (await lease())?.holderIdentity;
        return h === '' ? undefined : h;
      };
      const a = replica('nats-a');
      await waitFor('nats-a to lead', async () => ((await holder()) === 'nats-a' ? true : undefined));
      expect(a.output()).toContain(`leader election on nats:${bucket}/${KEY} at ${url}`);
      const b = replica('nats-b');
      await waitFor('nats-b to start', async () =>
        b.output().includes('running operator') ? true : undefined,
      );

      await kubectl('apply', '-f', generator('relay', 2));
      await waitFor('the ConfigMaps', async () =>
        (await configMaps()).includes('relay-1') ? true : undefined,
      );
      expect(await holder()).toBe('nats-a');

      // kill -9: no release; the standby waits for the KV lease to expire on its own clock.
      const killedAt = Date.now();
      a.child.kill('SIGKILL');
      await waitFor('nats-b to lead', async () => ((await holder()) === 'nats-b' ? true : undefined));
      // Not before the KV lease expired; how late is the scheduler's (the wait is the hang detector).
      expect(Date.now() - killedAt).toBeGreaterThanOrEqual(2_000);

      await kubectl('apply', '-f', generator('relay', 3));
      await waitFor('a third ConfigMap', async () =>
        (await configMaps()).includes('relay-2') ? true : undefined,
      );

      // SIGTERM releases the KV lease: a new standby takes over within about one retry period.
      const c = replica('nats-c');
      await waitFor('nats-c to start', async () =>
        c.output().includes('running operator') ? true : undefined,
      );
      b.child.kill('SIGTERM');
      expect(await exited(b.child)).toBe(0);
      // Released before exit (no holder, or the standby already took it): no 3 s wait for expiry.
      expect([undefined, 'nats-c']).toContain(await holder());
      await waitFor('nats-c to lead', async () => ((await holder()) === 'nats-c' ? true : undefined));
      expect((await lease())?.leaderTransitions).toBe(2);

      // The last leader releases too, before it closes its NATS connection and exits.
      c.child.kill('SIGTERM');
      expect(await exited(c.child)).toBe(0);
      expect(await holder()).toBeUndefined();
      expect(c.output()).toContain('converge: stopped');
    });
  }, 90_000);

  it('fails with a typed error naming the URL when NATS is unreachable, and exit code 2 for an unknown --lease-backend', async () => {
    const unreachable = spawnConverge([
      'run',
      example('operator.ts'),
      '--kubeconfig',
      kubeconfig,
      '--leader-elect',
      ...['--lease-backend', 'nats', '--nats', 'nats://127.0.0.1:1'],
    ]);
    expect(await exited(unreachable.child)).toBe(1);
    expect(unreachable.output()).toMatch(
      /NATS is not reachable at nats:\/\/127\.0\.0\.1:1.*\(CONVERGE_ERR_CLI_NATS_UNREACHABLE\)/,
    );
    // the same for the backend --nats-backend gives the modules, with no leader election
    const backend = spawnConverge([
      'run',
      example('operator.ts'),
      '--kubeconfig',
      kubeconfig,
      ...['--nats-backend', '--nats', 'nats://127.0.0.1:1'],
    ]);
    expect(await exited(backend.child)).toBe(1);
    expect(backend.output()).toMatch(
      /NATS is not reachable at nats:\/\/127\.0\.0\.1:1.*\(CONVERGE_ERR_CLI_NATS_UNREACHABLE\)/,
    );

    const unknown = spawnConverge([
      'run',
      example('operator.ts'),
      '--kubeconfig',
      kubeconfig,
      '--leader-elect',
      ...['--lease-backend', 'etcd'],
    ]);
    expect(await exited(unknown.child)).toBe(2);
    expect(unknown.output()).toContain(
      'converge run: --lease-backend must be kubernetes or nats, got "etcd"',
    );
  });
});
