/**
 * Work done once for all the test processes of a run that need it (packing the tarballs,
 * installing an old Node): the first caller takes a lock folder holding its pid and does it, the
 * others wait until it is done; a lock left by a process that died is taken over.
 */
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { alive } from '../scripts/alive.ts';

const POLL_MS = 250;

/**
 * Makes sure `done()` holds: returns at once if it does, else runs `make` under the lock folder
 * `lock` (one process at a time), or waits for the process that holds it. Throws after
 * `timeoutMs` of waiting, or with `make`'s own error.
 */
export async function onceAcrossProcesses(
  lock: string,
  done: () => boolean,
  make: () => Promise<void>,
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (done()) return;
    try {
      mkdirSync(lock);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      // Another process is at it: wait for it, or take over if it died (no pid yet: just made).
      const holder = Number(readdirSync(lock)[0] ?? Number.NaN);
      if (Number.isInteger(holder) && !alive(holder)) rmSync(lock, { recursive: true, force: true });
      else if (Date.now() > deadline)
        throw new Error(`waited ${timeoutMs} ms for the process holding ${lock}`);
      else await sleep(POLL_MS);
      continue;
    }
    try {
      writeFileSync(`${lock}/${process.pid}`, '');
      if (!done()) await make();
      return;
    } finally {
      rmSync(lock, { recursive: true, force: true });
    }
  }
}
