/**
 * `converge why` against a real `converge dev` (one per file) running an operator whose reconcile
 * of ConfigMap default/x fails and whose default/loop writes itself in a loop: the address recorded
 * while dev serves, the answer in text and JSON (the hot loop and its chain; none for the failing
 * key), and exit 1 with the reason once dev has stopped (the record removed with it).
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WhyAnswer } from '../src/index.ts';
import { main } from '../src/index.ts';
import { type ConvergeProcess, spawnConverge, waitFor, within } from './processes.ts';

const OPERATOR = fileURLToPath(new URL('./fixtures/why/operator.ts', import.meta.url));

let dir: string;
let dev: ConvergeProcess;
let metricsUrl: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'converge-why-'));
  dev = spawnConverge(dir, ['dev', OPERATOR, '--port', '0', '--data-dir', join(dir, 'data')]);
  metricsUrl = (
    await waitFor(
      'the operations line',
      () => /^converge: metrics at (\S+)\/metrics /m.exec(dev.stdout()) ?? undefined,
      dev.output,
    )
  )[1] as string;
});

afterAll(async () => {
  if (dev !== undefined && dev.child.exitCode === null) {
    dev.child.kill('SIGKILL');
    await dev.exited;
  }
  rmSync(dir, { recursive: true, force: true });
});

const record = (): string => join(dir, '.converge', 'operations.json');

/** Asks `url` (a /debug/keys?key= address) every 100 ms until one of its keys passes `ok` (at most 30 s). */
async function poll(url: string, ok: (key: { state: string; hotLoop?: unknown }) => boolean): Promise<void> {
  type Doc = { controllers: { keys: { state: string; hotLoop?: unknown }[] }[] };
  let last = '';
  for (let i = 0; i < 300; i++) {
    last = await (await fetch(url)).text();
    if ((JSON.parse(last) as Doc).controllers.some((c) => c.keys.some(ok))) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`no key of ${url} passed in 30 s; the last answer: ${last}`);
}

/** Runs `converge why …args` as a real process in the dev's directory. */
async function why(...args: string[]): Promise<{ code: number | null; out: string; err: string }> {
  const p = spawnConverge(dir, ['why', ...args]);
  const exit = await within('converge why to exit', p.exited, p.output);
  return { code: exit.code, out: p.stdout(), err: p.stderr() };
}

describe('converge why with converge dev', () => {
  it('dev records its metrics address in .converge/operations.json while it serves', async () => {
    await waitFor('the record', () => (existsSync(record()) ? true : undefined), dev.output);
    expect(JSON.parse(readFileSync(record(), 'utf8'))).toMatchObject({
      url: metricsUrl,
      pid: dev.child.pid,
      command: 'dev',
    });
  });

  it('prints the failing key: state, causes, attempts, last error, next retry; exit 0', async () => {
    // Until the first failure is in backoff (a minute: it stays there while converge why asks).
    await poll(`${metricsUrl}/debug/keys?key=default/x`, (k) => k.state === 'backoff');
    const { code, out, err } = await why('configmap/x', '-n', 'default');
    expect({ code, err }).toEqual({ code: 0, err: '' });
    const lines = out.split('\n');
    expect(lines[0]).toMatch(new RegExp(`^configmap default/x \\(asked ${metricsUrl} at \\d{4}-.*Z\\)$`));
    expect(lines[2]).toBe('controller configmap: backoff');
    expect(out).toMatch(/^ {2}causes: {7}.*retry/m);
    expect(out).toContain('  attempts:     1 failed since it last succeeded');
    expect(out).toContain('  last error:   cannot reconcile x: the template\\n"<b>" is missing (Error, at 2');
    expect(out).toMatch(/^ {2}next retry: {3}in (5\d|60)\.\d s \(\d{4}-\d\d-\d\dT[\d:.]+Z\)$/m);
    expect(out).toContain('  hot loop:     no');
  });

  it('prints a hot loop with its chain, as the runtime flagged it', async () => {
    const loop = `${metricsUrl}/debug/keys?key=default/loop`;
    await poll(loop, (k) => k.hotLoop !== undefined);
    const { code, out, err } = await why('ConfigMap/loop');
    expect({ code, err }).toEqual({ code: 0, err: '' });
    expect(out).toMatch(/^controller configmap: (running|queued)$/m);
    expect(out).toMatch(/^ {2}chain: {8}modified ConfigMap default\/loop@\d+ via for:ConfigMap$/m);
    expect(out).toMatch(
      /^ {16}← written by reconcile configmap-\w+ of controller configmap \(default\/loop\)/m,
    );
    expect(out).toMatch(
      /^ {2}hot loop: {5}YES since \d{4}-[\d-]+T[\d:.]+Z, \d+ self-caused runs: its reconciles are caused by its own writes$/m,
    );
    expect(out).toMatch(/^ {2}loop: {9}\S/m);
  });

  it('--json parses (a plural in capitals finds it too); an object no controller holds is idle, exit 0', async () => {
    const { code, out } = await why('ConfigMaps/x', '--json');
    expect(code).toBe(0);
    const answer = JSON.parse(out) as WhyAnswer;
    expect(answer).toMatchObject({
      operator: metricsUrl,
      object: { resource: 'ConfigMaps', namespace: 'default', name: 'x' },
      idle: false,
      keys: [
        {
          controller: 'configmap',
          matchesKind: true,
          key: { key: 'default/x', state: 'backoff', attempts: 1, lastError: { name: 'Error' } },
        },
      ],
    });
    expect(answer.controllers).toContain('configmap');
    // In this process, with the address: default/ok reconciled fine.
    const lines: string[] = [];
    const io = {
      out: (l: string) => lines.push(l),
      err: (l: string) => lines.push(l),
      stopped: Promise.resolve(),
    };
    expect(await main(['why', 'configmap/ok', '--address', metricsUrl], io)).toBe(0);
    expect(lines[1]).toBe(
      'No controller has it queued: it is idle (the last reconcile by configmap succeeded and nothing changed since), or it does not exist.',
    );
  });

  it('after dev stops: the record is gone, and converge why exits 1 saying how to start one', async () => {
    dev.child.kill('SIGTERM');
    await within('converge dev to stop', dev.exited, dev.output);
    expect(existsSync(record())).toBe(false);
    const { code, out, err } = await why('configmap/x');
    expect({ code, out }).toEqual({ code: 1, out: '' });
    expect(err).toMatch(
      /^converge: no operator to ask: no \.converge\/operations\.json here .*start one in this directory, or pass --address URL .*\(CONVERGE_ERR_CLI_OPERATOR_UNREACHABLE\)\n$/,
    );
    // The address it had: nothing listens there any more.
    const lines: string[] = [];
    const io = {
      out: (l: string) => lines.push(l),
      err: (l: string) => lines.push(l),
      stopped: Promise.resolve(),
    };
    expect(await main(['why', 'configmap/x', '--address', metricsUrl], io)).toBe(1);
    expect(lines[0]).toBe(
      `converge: no operator answers at ${metricsUrl} (connection refused): start the operator (converge dev, or converge run --metrics-bind-address ADDRESS), or pass --address URL (CONVERGE_ERR_CLI_OPERATOR_UNREACHABLE)`,
    );
  });
});
