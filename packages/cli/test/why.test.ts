/**
 * `converge why`, and issue 31's Must show, against a real `converge dev` (one per file) running
 * two operator modules: one whose reconcile of ConfigMap default/x fails and whose default/loop
 * writes itself in a loop, and one that converges (it writes its Secret default/settled once).
 * Shown: the address recorded while dev serves; the hot loop and its chain in the warning, the
 * metric, `/debug/keys?state=hotloop`, `converge why` and the dashboard in Chromium, none of them
 * for the converging operator; the answer for a failing key in text and JSON; and exit 1 with the
 * reason once dev has stopped (the record removed with it). The dashboard part is skipped, saying
 * why, only where Chromium is absent and cannot be installed.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type Chromium,
  chromiumMissing,
  launchChromium,
  openPage,
} from '../../../test/dashboard/chromium.ts';
import type { WhyAnswer } from '../src/index.ts';
import { main } from '../src/index.ts';
import { type ConvergeProcess, pollFor, spawnConverge, WAIT_MS, waitFor, within } from './processes.ts';

const OPERATOR = fileURLToPath(new URL('./fixtures/why/operator.ts', import.meta.url));
const CONVERGING = fileURLToPath(new URL('./fixtures/why/converging.ts', import.meta.url));
/** A link of the loop's chain: the write of its own reconcile. */
const WRITTEN_BY_LOOP = /^written by reconcile configmap-\w+ of controller configmap \(default\/loop\)/;

const missing = chromiumMissing();
let dir: string;
let dev: ConvergeProcess;
let metricsUrl: string;
let chromium: Promise<Chromium> | undefined;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'converge-why-'));
  // The browser for the dashboard starts while dev does (awaited there, or closed in afterAll).
  chromium = missing === undefined ? launchChromium() : undefined;
  chromium?.catch(() => {});
  dev = spawnConverge(dir, ['dev', OPERATOR, CONVERGING, '--port', '0', '--data-dir', join(dir, 'data')]);
  metricsUrl = (
    await waitFor(
      'the operations line',
      () => /^converge: metrics at (\S+)\/metrics /m.exec(dev.stdout()) ?? undefined,
      dev.output,
    )
  )[1] as string;
});

afterAll(async () => {
  await (await chromium?.catch(() => undefined))?.close();
  if (dev !== undefined && dev.child.exitCode === null) {
    dev.child.kill('SIGKILL');
    await dev.exited;
  }
  rmSync(dir, { recursive: true, force: true });
});

const record = (): string => join(dir, '.converge', 'operations.json');

/** A `/debug/keys` document, as far as these tests read it. */
interface Keys {
  controllers: {
    name: string;
    hotLoopKeys: number;
    keys: { key: string; state: string; hotLoop?: { selfCausedRuns: number; chain: string[] } }[];
  }[];
}

/** Asks `url` (a /debug/keys address) until one of its keys passes `ok`; returns that answer. */
function poll(url: string, ok: (key: Keys['controllers'][number]['keys'][number]) => boolean): Promise<Keys> {
  return pollFor(
    `a key of ${url} to pass`,
    async () => {
      const doc = (await (await fetch(url)).json()) as Keys;
      return doc.controllers.some((c) => c.keys.some(ok)) ? doc : undefined;
    },
    dev.output,
  );
}

const scrape = async (): Promise<string> => (await fetch(`${metricsUrl}/metrics`)).text();

/** The JSON log lines of `text` (dev logs JSON to a stderr that is no terminal). */
function logLines(text: string): Record<string, unknown>[] {
  const lines: Record<string, unknown>[] = [];
  for (const line of text.split('\n')) {
    if (!line.startsWith('{')) continue;
    try {
      lines.push(JSON.parse(line) as Record<string, unknown>);
    } catch {
      // Cut: the first line by the kept tail, or the last by the pipe.
    }
  }
  return lines;
}

/** Runs `converge why …args` as a real process in the dev's directory. */
async function why(...args: string[]): Promise<{ code: number | null; out: string; err: string }> {
  const p = spawnConverge(dir, ['why', ...args]);
  const exit = await within('converge why to exit', p.exited, p.output);
  return { code: exit.code, out: p.stdout(), err: p.stderr() };
}

/** Runs `converge why …args` in this process (a process of its own costs a second on a loaded machine). */
async function whyHere(...args: string[]): Promise<{ code: number; lines: string[] }> {
  const lines: string[] = [];
  const io = {
    out: (l: string) => lines.push(l),
    err: (l: string) => lines.push(l),
    stopped: Promise.resolve(),
  };
  return { code: await main(['why', ...args], io), lines };
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

  it("issue 31's Must show: the warning, the metric, /debug/keys, converge why and the dashboard in Chromium all show the hot loop and its chain; the converging operator shows none", async () => {
    // /debug/keys?state=hotloop: the looping key, and only it.
    const hot = await poll(`${metricsUrl}/debug/keys?state=hotloop`, (k) => k.hotLoop !== undefined);
    expect(hot.controllers.map((c) => [c.name, c.hotLoopKeys, c.keys.map((k) => k.key)])).toEqual([
      ['configmap', 1, ['default/loop']],
      ['secret', 0, []],
    ]);
    const flagged = hot.controllers[0]?.keys[0]?.hotLoop;
    expect(flagged?.selfCausedRuns).toBeGreaterThanOrEqual(10);
    expect(flagged?.chain).toContainEqual(expect.stringMatching(WRITTEN_BY_LOOP));

    // The warning, once, with the chain; none for the converging operator.
    const warnings = await waitFor(
      'the hot loop warning',
      () => {
        const found = logLines(dev.stderr()).filter((l) => l.msg === 'Hot loop detected');
        return found.length > 0 ? found : undefined;
      },
      dev.output,
    );
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({
      level: 'warn',
      controller: 'configmap',
      namespace: 'default',
      name: 'loop',
      selfCausedRuns: 10,
    });
    expect(warnings[0]?.chain).toContainEqual(expect.stringMatching(WRITTEN_BY_LOOP));

    // The converging operator wrote its Secret once, ran once more on the echo, and holds no key.
    const metrics = await pollFor(
      'the converging operator to settle',
      async () => {
        const text = await scrape();
        const doc = (await (await fetch(`${metricsUrl}/debug/keys?controller=secret`)).json()) as Keys;
        const ran = /^controller_runtime_reconcile_total\{controller="secret",result="success"\} [2-9]/m;
        return doc.controllers[0]?.keys.length === 0 && ran.test(text) ? text : undefined;
      },
      dev.output,
    );
    expect(metrics).toMatch(
      /^controller_runtime_reconcile_total\{controller="secret",result="success"\} 2$/m,
    );
    expect(metrics).toMatch(/^converge_hot_loop_keys\{controller="configmap"\} 1$/m);
    expect(metrics).toMatch(/^converge_hot_loop_keys\{controller="secret"\} 0$/m);
    expect(metrics).toMatch(/^converge_self_caused_reconciles_total\{controller="configmap"\} ([1-9]\d+)$/m);

    // converge why: the loop with its chain, marked; the converging operator's Secret idle.
    const loop = await why('ConfigMap/loop');
    expect({ code: loop.code, err: loop.err }).toEqual({ code: 0, err: '' });
    expect(loop.out).toMatch(/^controller configmap: (running|queued)$/m);
    expect(loop.out).toMatch(/^ {2}chain: {8}modified ConfigMap default\/loop@\d+ via for:ConfigMap$/m);
    expect(loop.out).toMatch(
      /^ {16}← written by reconcile configmap-\w+ of controller configmap \(default\/loop\)/m,
    );
    expect(loop.out).toMatch(
      /^ {2}hot loop: {5}YES since \d{4}-[\d-]+T[\d:.]+Z, \d+ self-caused runs: its reconciles are caused by its own writes$/m,
    );
    expect(loop.out).toMatch(/^ {2}loop: {9}\S/m);
    const calm = await whyHere('secret/settled', '--address', metricsUrl);
    expect(calm.code).toBe(0);
    expect(calm.lines[1]).toBe(
      'No controller has it queued: it is idle (the last reconcile by secret succeeded and nothing changed since), or it does not exist.',
    );

    // The dashboard in Chromium.
    if (chromium === undefined) return;
    const { page, dialogs, violations } = await openPage((await chromium).browser, `${metricsUrl}/`);
    const row = page.locator('tr.key.hot[data-key="default/loop"]');
    await row.waitFor({ timeout: WAIT_MS });
    // Read at once: each snapshot rebuilds the rows, and the key leaves the queue between its runs.
    const shown = await row.evaluate((tr) => ({
      badge: tr.querySelector('.badge')?.textContent,
      chain: [...tr.querySelectorAll('ol.chain li')].map((li) => li.textContent ?? ''),
    }));
    expect(shown.badge).toBe('HOT LOOP');
    expect(shown.chain).toContainEqual(expect.stringMatching(WRITTEN_BY_LOOP));
    expect(await page.locator('#hotbanner').textContent()).toBe(
      'Hot loop: 1 key keeps reconciling because of its own writes (highlighted below)',
    );
    const summary = await page.locator('#summary tr').evaluateAll((rows) =>
      rows.map((tr) => ({
        name: tr.children[0]?.textContent,
        hot: tr.classList.contains('hot'),
        reconciles: Number(tr.children[8]?.textContent),
        hotLoops: tr.children[10]?.textContent,
      })),
    );
    expect(summary).toEqual([
      { name: 'configmap', hot: true, reconciles: expect.any(Number), hotLoops: '1' },
      { name: 'secret', hot: false, reconciles: 2, hotLoops: '0' },
    ]);
    expect(await page.locator('tr.key.hot:not([data-key="default/loop"])').count()).toBe(0);
    const secret = page.locator('#controllers section', { has: page.locator('h2', { hasText: /^secret$/ }) });
    expect(await secret.locator('p.muted').last().textContent()).toBe(
      'no keys waiting, running or backing off',
    );
    expect(dialogs).toEqual([]);
    expect(violations).toEqual([]);
    await page.close();
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
    const ok = await whyHere('configmap/ok', '--address', metricsUrl);
    expect(ok.code).toBe(0);
    expect(ok.lines[1]).toBe(
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
    const refused = await whyHere('configmap/x', '--address', metricsUrl);
    expect(refused.code).toBe(1);
    expect(refused.lines[0]).toBe(
      `converge: no operator answers at ${metricsUrl} (connection refused): start the operator (converge dev, or converge run --metrics-bind-address ADDRESS), or pass --address URL (CONVERGE_ERR_CLI_OPERATOR_UNREACHABLE)`,
    );
  });
});
