/**
 * `converge dev` with its operations endpoints, as a real process: the startup line names them,
 * Prometheus scrapes controller-runtime's metrics of the bundled examples, the probes answer, and
 * its logs (stderr is a pipe here) are JSON lines with the reconcile fields.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ConvergeProcess, spawnConverge, waitFor, within } from './processes.ts';

const exec = promisify(execFile);
const SAMPLE = fileURLToPath(
  new URL('../../../examples/configmap-generator/manifests/sample.yaml', import.meta.url),
);

let dir: string;
let dev: ConvergeProcess;
let metricsUrl: string;
let healthUrl: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'converge-operations-'));
  dev = spawnConverge(
    dir,
    [
      'dev',
      ...['--port', '0', '--data-dir', join(dir, 'data'), '--kubeconfig', join(dir, 'kubeconfig')],
      ...['--metrics-bind-address', '127.0.0.1:0', '--health-probe-bind-address', '127.0.0.1:0'],
      ...['--log-level', 'debug'],
    ],
    // No NATS and no PostgreSQL: those two examples are left out at once.
    { NATS_URL: 'nats://127.0.0.1:1', PGHOST: '127.0.0.1', PGPORT: '1', PGCONNECT_TIMEOUT: '1' },
  );
  const line = await waitFor(
    'the operations line',
    () =>
      /^converge: metrics at (\S+)\/metrics .*health probes at (\S+)\/healthz/m.exec(dev.stdout()) ??
      undefined,
    dev.output,
  );
  metricsUrl = line[1] as string;
  healthUrl = line[2] as string;
});

afterAll(async () => {
  if (dev !== undefined) {
    dev.child.kill('SIGTERM');
    await within('converge dev to stop', dev.exited, dev.output);
  }
  rmSync(dir, { recursive: true, force: true });
});

async function get(url: string): Promise<{ status: number; text: string }> {
  const res = await fetch(url);
  return { status: res.status, text: await res.text() };
}

/** Calls `probe` every 100 ms until `ok` holds of its value (at most 15 s); returns the last value. */
async function poll<T>(probe: () => Promise<T>, ok: (value: T) => boolean): Promise<T> {
  let value = await probe();
  for (let i = 0; !ok(value) && i < 150; i++) {
    await new Promise((r) => setTimeout(r, 100));
    value = await probe();
  }
  return value;
}

/** The JSON lines of stderr (the first kept line may be cut: skipped). */
function jsonLines(text: string): Record<string, unknown>[] {
  return text
    .split('\n')
    .slice(1)
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

/** The values of `label` over the samples of `metric` in a text exposition. */
function labelValues(text: string, metric: string, label: string): Set<string> {
  const values = new Set<string>();
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${metric}{`)) continue;
    const match = new RegExp(`[{,]${label}="([^"]*)"`).exec(line);
    if (match?.[1] !== undefined) values.add(match[1]);
  }
  return values;
}

describe('converge dev operations endpoints', () => {
  it('prints both addresses on loopback, on ports of their own', () => {
    expect(metricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(healthUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(metricsUrl).not.toBe(healthUrl);
  });

  it('/readyz turns ok once the caches synced, /healthz is ok, and /metrics is not on the probe port', async () => {
    const readyz = await poll(
      () => get(`${healthUrl}/readyz?verbose`),
      (r) => r.status === 200,
    );
    expect(readyz.status).toBe(200);
    expect(readyz.text).toContain('[+]caches-synced ok');
    expect(readyz.text).toContain('readyz check passed');
    expect(await get(`${healthUrl}/healthz`)).toEqual({ status: 200, text: 'ok' });
    expect((await get(`${healthUrl}/metrics`)).status).toBe(404);
  });

  it('/metrics has every bundled controller, and a reconcile of the sample in controller_runtime_reconcile_total', async () => {
    const kubeconfig = join(dir, 'kubeconfig');
    await exec('kubectl', ['--kubeconfig', kubeconfig, '--request-timeout=30s', 'apply', '-f', SAMPLE], {
      timeout: 90_000,
    });
    const { text } = await poll(
      () => get(`${metricsUrl}/metrics`),
      (r) =>
        labelValues(r.text, 'controller_runtime_reconcile_total', 'controller').has('configmap-generator'),
    );
    expect(text).toMatch(
      /^controller_runtime_reconcile_total\{controller="configmap-generator",result="success"\} [1-9]\d*$/m,
    );
    expect(text).toContain('# TYPE controller_runtime_reconcile_time_seconds histogram');
    expect(text).toMatch(/^workqueue_adds_total\{name="configmap-generator"/m);
    const controllers = labelValues(text, 'controller_runtime_max_concurrent_reconciles', 'controller');
    for (const name of ['configmap-generator', 'replicaset', 'secret-replicator', 'website', 'runtime-kinds'])
      expect(controllers).toContain(name);
    const keys = (await (await fetch(`${metricsUrl}/debug/keys`)).json()) as {
      controllers: { name: string }[];
    };
    expect(keys.controllers.map((c) => c.name)).toEqual(expect.arrayContaining(['configmap-generator']));
  });

  it('logs JSON lines on stderr (not a terminal), debug included, reconcile lines with controller, kind, namespace, name and reconcileId', async () => {
    const finished = await waitFor(
      'a debug line "Reconcile finished" of the sample',
      () =>
        jsonLines(dev.stderr()).find(
          (r) => r.msg === 'Reconcile finished' && r.controller === 'configmap-generator',
        ),
      dev.output,
    );
    expect(finished).toMatchObject({
      level: 'debug',
      kind: 'ConfigMapGenerator',
      namespace: expect.any(String),
      name: expect.any(String),
      reconcileId: expect.stringMatching(/^configmap-generator-/),
      result: expect.any(String),
      time: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    });
    // Every line of stderr after the cut is either converge's own message or a JSON log line.
    const lines = dev.stderr().split('\n').slice(1, -1);
    for (const l of lines) {
      if (l.startsWith('converge: ')) continue;
      expect(() => JSON.parse(l), l).not.toThrow();
    }
  });
});
