/**
 * The dashboard in a real browser: Debian's Chromium driven by playwright-core, against an
 * operations server on 127.0.0.1:0 serving a real Manager over the in-process store. One browser
 * for the file. It shows a failing key's last error, renders a key named `<script>…` as text (no
 * dialog, no script element, no CSP violation), and highlights a hot loop. The same page served by a
 * real `converge dev` whose operator hot-loops is checked in packages/cli/test/why.test.ts.
 *
 * Skipped, saying why, only when /usr/bin/chromium is absent and `apt-get install chromium` fails.
 * `CONVERGE_UPDATE_SCREENSHOTS=1` also writes docs/guide/images/dashboard.png.
 */
import { copyFileSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { type InstrumentableController, Metrics, OperationsServer } from '@converge/metrics';
import {
  Controller,
  type ControllerKeyInfo,
  done,
  type KubeObject,
  Manager,
  namespaceType,
  requeueAfter,
  resourceType,
  type Source,
} from '@converge/runtime';
import { Store } from '@converge/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Chromium, chromiumMissing, launchChromium, openPage } from './chromium.ts';

const missing = chromiumMissing();

const widgets = resourceType({
  group: 'example.com',
  version: 'v1',
  kind: 'Widget',
  plural: 'widgets',
  namespaced: true,
});

const gadgets = resourceType({
  group: 'example.com',
  version: 'v1',
  kind: 'Gadget',
  plural: 'gadgets',
  namespaced: true,
});

const XSS_KEY = '<script>alert(1)</script>';
const XSS_ERROR = 'bad <img src=x onerror=alert(2)> input';

/** A controller of string keys fed by hand, for a key no Kubernetes name could be. */
function handFed(name: string): { controller: Controller<string>; push: (key: string) => void } {
  let push: (key: string) => void = () => {};
  const source: Source<string> = {
    name: 'hand',
    start(signal, queue) {
      push = (key) => queue.add(key, { cause: { type: 'manual', source: 'test' } });
      return new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
    },
  };
  const controller = new Controller<string>({
    name,
    sources: [source],
    reconciler: async (key) => {
      if (key === XSS_KEY) throw new Error(XSS_ERROR);
      return requeueAfter(60_000);
    },
  });
  return { controller, push: (key) => push(key) };
}

/** A controller with no queue whose one key is flagged as a hot loop (the runtime's `inspect` shape). */
function hotLooping(): InstrumentableController {
  const key: ControllerKeyInfo<unknown> & { hotLoop: unknown } = {
    key: 'default/loopy',
    id: 'default/loopy',
    partition: '',
    queued: true,
    processing: false,
    dirty: false,
    priority: 0,
    requeues: 0,
    causes: { causes: [{ type: 'modified', source: 'widgets' }], dropped: 0 },
    state: 'queued',
    hotLoop: {
      since: Date.now() - 42_000,
      selfCausedRuns: 1_350,
      chain: [
        'Widget default/loopy changed, written by reconcile 7f3c of controller pingpong',
        'which ran because Widget default/loopy changed (generation 4)',
      ],
    },
  };
  return {
    name: 'pingpong',
    maxConcurrentReconciles: 2,
    observe: () => {},
    queueGauges: () => ({
      unfinishedWorkMs: 0,
      longestRunningMs: 0,
      depthByPriority: [{ priority: 0, size: 1 }],
    }),
    inspect: () => [key],
  };
}

function widget(name: string): KubeObject {
  return { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { namespace: 'default', name } };
}

describe.skipIf(missing !== undefined)('the dashboard in Chromium', () => {
  let chromium: Chromium;
  let url: string;
  const stop = new AbortController();
  let running: Promise<void>;
  let createGadget: () => Promise<void>;

  beforeAll(async () => {
    // A fresh profile (--user-data-dir) per run, launched while the manager starts.
    const launching = launchChromium();
    const store = new Store({ types: [namespaceType, widgets, gadgets] });
    await store.create(namespaceType, { metadata: { name: 'default' } });
    const manager = new Manager({ backend: store });
    const websites = manager.controller(widgets).complete(async (key) => {
      if (key.name === 'broken') throw new Error('database password rejected for user "web"');
      return done();
    });
    // A real hot loop once a Gadget exists: each run rewrites an annotation of its own Gadget (no
    // generation change), whose event runs it again.
    const spinners = manager
      .controller(gadgets)
      .named('spinner')
      .complete(async (key) => {
        await new Promise((resolve) => setTimeout(resolve, 50));
        const g = await manager.client.get(gadgets, key);
        const n = Number(g.metadata.annotations?.['example.com/n'] ?? '0') + 1;
        await manager.client.update(gadgets, {
          ...g,
          metadata: { ...g.metadata, annotations: { 'example.com/n': String(n) } },
        });
        return done();
      });
    createGadget = () => store.create(gadgets, { ...widget('spinner'), kind: 'Gadget' }).then(() => {});
    const hand = handFed('by-hand');
    manager.add(hand.controller);
    const metrics = new Metrics({ defaultMetrics: false })
      .instrument(manager)
      .instrument(websites)
      .instrument(spinners)
      .instrument(hand.controller)
      .instrument(hotLooping());
    const server = new OperationsServer({
      metrics,
      probes: manager,
      metricsBindAddress: '127.0.0.1:0',
      healthProbeBindAddress: '0',
      dashboard: true,
    });
    manager.add(server, { group: 'servers' });
    running = manager.start(stop.signal);
    await server.whenListening();
    url = `${server.url('debug')}/`;
    for (const name of ['web', 'api', 'broken']) await store.create(widgets, widget(name));
    hand.push(XSS_KEY);
    hand.push('default/later');
    chromium = await launching;
  });

  afterAll(async () => {
    await chromium?.close();
    stop.abort();
    await running;
  });

  const open = () => openPage(chromium.browser, url);

  it("shows a failing key's last error and a key named <script> as text within 5 s", async () => {
    const started = Date.now();
    const { page, dialogs, violations } = await open();
    const broken = page.locator('tr[data-key="default/broken"]');
    await broken.locator('td.error').waitFor({ timeout: 5_000 });
    expect(await broken.locator('td.error').textContent()).toContain(
      'database password rejected for user "web"',
    );
    const xss = page.locator('tr.key').filter({ has: page.locator('td.name', { hasText: XSS_KEY }) });
    await xss.waitFor({ timeout: 5_000 });
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(await xss.locator('td.name').textContent()).toBe(XSS_KEY);
    expect(await xss.locator('td.error div').first().textContent()).toBe(XSS_ERROR);
    // Nothing the data says became markup: one script (the page's own), no img, no dialog.
    expect(await page.evaluate(() => document.querySelectorAll('script').length)).toBe(1);
    expect(await page.evaluate(() => document.querySelectorAll('img').length)).toBe(0);
    expect(await page.locator('#status').textContent()).toBe('live');
    expect(await page.locator('#summary tr').count()).toBe(4);
    expect(dialogs).toEqual([]);
    expect(violations).toEqual([]);
    await page.close();
  });

  it('shows a real hot loop, with its chain, within 5 s of it starting', async () => {
    const { page, dialogs, violations } = await open();
    const started = Date.now();
    await createGadget();
    const row = page.locator('tr.key.hot[data-key="default/spinner"]');
    await row.waitFor({ timeout: 5_000 });
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(await row.locator('.badge').textContent()).toBe('HOT LOOP');
    expect((await row.locator('ol.chain li').allTextContents()).join(' ')).toContain('spinner');
    expect(await page.locator('#summary tr.hot td.name').allTextContents()).toContain('spinner');
    expect(dialogs).toEqual([]);
    expect(violations).toEqual([]);
    await page.close();
  });

  it('highlights a hot loop: the banner, the row and its chain', async () => {
    const { page, dialogs, violations } = await open();
    const row = page.locator('tr.key.hot[data-key="default/loopy"]');
    await row.waitFor({ timeout: 5_000 });
    expect(await row.locator('.badge').textContent()).toBe('HOT LOOP');
    // The inline style applies (its hash is in the CSP): the row is marked.
    expect(await row.evaluate((tr) => getComputedStyle(tr).boxShadow)).not.toBe('none');
    expect(await row.locator('ol.chain li').allTextContents()).toEqual([
      'Widget default/loopy changed, written by reconcile 7f3c of controller pingpong',
      'which ran because Widget default/loopy changed (generation 4)',
    ]);
    expect(await page.locator('#hotbanner').isVisible()).toBe(true);
    expect(await page.locator('#hotbanner').textContent()).toMatch(
      /Hot loop: (1 key keeps|2 keys keep) reconciling/,
    );
    expect(await page.locator('#summary tr.hot td.name').allTextContents()).toContain('pingpong');
    // The state filter pages through hot loops only.
    await page.locator('#state').selectOption('hotloop');
    await page.locator('tr.key[data-key="default/broken"]').waitFor({ state: 'detached', timeout: 5_000 });
    expect(await page.locator('tr.key:not(.hot)').count()).toBe(0);

    await page.locator('#state').selectOption('');
    await page.locator('tr.key[data-key="default/broken"]').waitFor({ timeout: 5_000 });
    // Rates come from the second snapshot of any stream on: wait for the spinner's.
    await page.waitForFunction(
      () =>
        [...document.querySelectorAll('#summary tr')].some(
          (tr) => tr.children[0]?.textContent === 'spinner' && Number(tr.children[4]?.textContent) > 0,
        ),
      undefined,
      { timeout: 5_000 },
    );
    const shot = join(chromium.profile, 'dashboard.png');
    await page.screenshot({ path: shot });
    const png = readFileSync(shot);
    expect(png.subarray(1, 4).toString()).toBe('PNG');
    expect(statSync(shot).size).toBeLessThan(200_000);
    if (process.env.CONVERGE_UPDATE_SCREENSHOTS === '1')
      copyFileSync(shot, new URL('../../docs/guide/images/dashboard.png', import.meta.url));
    expect(dialogs).toEqual([]);
    expect(violations).toEqual([]);
    await page.close();
  });
});
