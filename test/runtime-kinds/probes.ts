/**
 * What the runtime-kinds leak tests measure in their own process (not part of any package): live
 * heap after forced garbage collection, the timers armed and not yet fired or cleared (by who
 * armed them), and polling for what a real server forgets asynchronously.
 *
 * @module
 */
import { createHook } from 'node:async_hooks';
import { fileURLToPath } from 'node:url';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

let collector: (() => void) | undefined;

/**
 * The V8 garbage collector as a function, without starting node with `--expose-gc` (vitest's
 * workers are not): the flag is set at run time and a fresh context picks up the `gc` global.
 */
function gc(): () => void {
  if (collector === undefined) {
    setFlagsFromString('--expose-gc');
    collector = runInNewContext('gc') as () => void;
  }
  return collector;
}

/** `heapUsed` after three full collections (the later ones collect what finalizers released). */
export function heapAfterGc(): number {
  const collect = gc();
  for (let i = 0; i < 3; i++) collect();
  return process.memoryUsage().heapUsed;
}

/** Where the test runner's own timers come from (test deadlines, console batching, RPC). */
const RUNNER = /[\\/]node_modules[\\/](vitest|@vitest|tinypool|birpc|tinyspy)[\\/]/;

const HERE = fileURLToPath(import.meta.url);

/** True while this module arms a timer of its own (the polling of {@link eventually}). */
let ownTimer = false;

/** The first stack frame outside Node's own modules and this file: who armed the timer. */
function creator(stack: string | undefined): string {
  for (const line of (stack ?? '').split('\n').slice(1)) {
    if (!line.includes('node:') && !line.includes(HERE)) return line.trim();
  }
  return '(node)';
}

/** Live timers by the site that armed them (see {@link trackTimers}). */
export type TimerCensus = ReadonlyMap<string, number>;

/** A running count of live timers, by site. */
export interface TimerTracker {
  /** The timers alive now, by site. */
  census(): TimerCensus;
  /** Stops tracking. */
  stop(): void;
}

/**
 * Tracks the timers (`setTimeout`/`setInterval`, ref'ed or not) armed from now on, by the first
 * stack frame outside Node that armed them, leaving out the test runner's own (vitest's test
 * deadline and console batching come and go at any time) and this module's polling. A timer is
 * alive until it fires (for a timeout) or is cleared. `process.getActiveResourcesInfo()` would
 * count the runner's too, and only ref'ed ones.
 */
export function trackTimers(): TimerTracker {
  const live = new Map<number, string>();
  const hook = createHook({
    init(id, type) {
      if (type !== 'Timeout' || ownTimer) return;
      const where = creator(new Error().stack);
      if (!RUNNER.test(where)) live.set(id, where);
    },
    destroy(id) {
      live.delete(id);
    },
  });
  hook.enable();
  return {
    census: () => {
      const bySite = new Map<string, number>();
      for (const site of live.values()) bySite.set(site, (bySite.get(site) ?? 0) + 1);
      return bySite;
    },
    stop: () => hook.disable(),
  };
}

/**
 * The sites with more live timers in `now` than in `before`, with both counts: a timer armed by
 * what ran in between and still alive. Empty when every site is back to (or below) where it was.
 */
export function timersAdded(before: TimerCensus, now: TimerCensus): Record<string, string> {
  const added: Record<string, string> = {};
  for (const [site, count] of now) {
    const was = before.get(site) ?? 0;
    if (count > was) added[site] = `${was} -> ${count}`;
  }
  return added;
}

/**
 * Polls `check` every 20 ms until it returns true; throws with `what` and the last value `describe`
 * gives after `timeoutMs`. For what closes asynchronously over a real connection (a watch the
 * server still counts until its socket closed), never for a figure of time.
 */
export async function eventually(
  what: string,
  check: () => boolean | Promise<boolean>,
  describe: () => unknown = () => undefined,
  timeoutMs = 30_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) {
      throw new Error(`still waiting after ${timeoutMs} ms for ${what}: ${JSON.stringify(describe())}`);
    }
    await new Promise((resolve) => {
      ownTimer = true;
      setTimeout(resolve, 20);
      ownTimer = false;
    });
  }
}
