/**
 * `converge store check|repair`: reads or repairs a store data directory offline, through the
 * store's own reader, so what check calls healthy is what the server loads.
 *
 * The data directory's lock: `repair` writes, so it takes the lock as a store does and refuses a
 * directory a running server has open (StoreLockedError, exit 1). `check` writes nothing, so it
 * reads without the lock — it is how to look at a directory while its server runs — and warns
 * that what it read may be a moment old (a write being appended can look like a torn tail).
 */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { checkDataDir, type DataDirLockState, type DataDirReport, repairDataDir } from '@converge/store';
import type { StoreArgs } from './store-args.ts';

/** Where output goes. */
export interface StoreIo {
  readonly out: (line: string) => void;
  readonly err: (line: string) => void;
}

/**
 * The store's own folder: DIR itself when it holds store files, else DIR/store (the layout of
 * `converge serve --data-dir DIR`).
 */
export function storeDir(dir: string): string {
  const full = resolve(dir);
  const own = ['manifest.json', 'log', 'snapshot'].some((name) => existsSync(join(full, name)));
  return !own && existsSync(join(full, 'store')) ? join(full, 'store') : full;
}

/** Runs check or repair; returns the exit code (check: 0 healthy, 1 damaged). */
export function runStore(args: StoreArgs, io: StoreIo): number {
  const dir = storeDir(args.dataDir);
  if (args.verb === 'check') {
    const report = checkDataDir(dir);
    if (args.json) io.out(JSON.stringify(report, null, 2));
    else describe(report, io);
    const inUse = inUseBy(report.lock);
    if (inUse !== undefined)
      io.err(
        `converge store: WARNING: ${dir} is in use: ${inUse}; read without its lock, so this may be a moment old and a write being appended can show as a torn tail`,
      );
    if (!report.healthy)
      io.err(
        `converge store: damaged; 'converge store repair --data-dir ${args.dataDir}' keeps what is readable`,
      );
    return report.healthy ? 0 : 1;
  }
  const result = repairDataDir(dir);
  if (args.json) {
    io.out(JSON.stringify(result, null, 2));
    return 0;
  }
  const previous = result.tookOverLockOf;
  if (previous !== undefined)
    io.out(`lock: took over the lock of process ${previous.pid} on host ${previous.hostname}, which is gone`);
  describe(result.before, io);
  if (!result.repaired) {
    io.out('nothing to repair');
    return 0;
  }
  for (const d of result.before.damage) {
    io.out(
      d.offset === undefined
        ? `dropped: ${d.file}: ${d.reason}`
        : `dropped: ${d.file} from byte ${d.offset} (${d.droppedBytes} bytes): ${d.reason}`,
    );
  }
  io.out(`repaired: kept ${result.liveObjects} objects at revision ${result.revision}`);
  io.out(`the damaged files are in ${result.backupDir}`);
  if (result.fencesLost)
    io.out(
      "fence marks: lost with the damaged fences file; each fenced owner raises its mark again when it next announces, and until then a stale owner's write is not refused",
    );
  return 0;
}

function describe(report: DataDirReport, io: StoreIo): void {
  io.out(`data directory: ${report.dataDir}`);
  const { snapshot, log, torn } = report;
  io.out(
    snapshot === undefined
      ? 'snapshot: none'
      : `snapshot: ${snapshot.bytes} bytes, revision ${snapshot.revision}, ${snapshot.objects} objects`,
  );
  io.out(
    log === undefined
      ? 'log: none'
      : `log: ${log.bytes} bytes, ${log.records} records after revision ${log.base}${log.lastRevision === undefined ? '' : ` (last revision ${log.lastRevision})`}`,
  );
  io.out(
    `live: ${report.liveObjects} objects, ${report.liveBytes} bytes of JSON, revision ${report.revision}`,
  );
  if (report.fences.length > 0) {
    const marks = report.fences.map((f) => `${f.name} (epoch ${f.epoch}, ${f.holder})`).join(', ');
    io.out(`fence marks: ${report.fences.length}: ${marks}`);
  }
  if (torn !== undefined) {
    io.out(
      `torn tail: ${torn.bytes} bytes at byte ${torn.offset} (${torn.reason}); dropped at the next start: it was never acknowledged`,
    );
  }
  if (report.lock.state === 'stale') {
    const { pid, hostname } = report.lock.holder;
    io.out(`lock: left by process ${pid} on host ${hostname}, which is gone; the next start takes it over`);
  }
  for (const path of report.looseModes)
    io.out(`mode: ${path} is readable by other users (tightened to 0700/0600 at the next start)`);
  for (const d of report.damage) {
    io.out(`damage: ${d.file}${d.offset === undefined ? '' : ` at byte ${d.offset}`}: ${d.reason}`);
  }
  io.out(report.healthy ? 'healthy' : 'damaged');
}

/** Who has the directory open, as a lock says it (undefined: nobody, or a process that is gone). */
function inUseBy(lock: DataDirLockState): string | undefined {
  switch (lock.state) {
    case 'held':
    case 'other-host':
      return `locked by process ${lock.holder.pid} on host ${lock.holder.hostname} (started ${lock.holder.startedAt})`;
    case 'unreadable':
      return `its LOCK file cannot be read (${lock.reason})`;
    case 'free':
    case 'stale':
      return undefined;
  }
}
