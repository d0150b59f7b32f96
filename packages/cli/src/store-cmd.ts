/**
 * `converge store check|repair`: reads or repairs a store data directory offline, through the
 * store's own reader, so what check calls healthy is what the server loads.
 */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { checkDataDir, type DataDirReport, repairDataDir } from '@converge/store';
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
  if (torn !== undefined) {
    io.out(
      `torn tail: ${torn.bytes} bytes at byte ${torn.offset} (${torn.reason}); dropped at the next start: it was never acknowledged`,
    );
  }
  for (const path of report.looseModes)
    io.out(`mode: ${path} is readable by other users (tightened to 0700/0600 at the next start)`);
  for (const d of report.damage) {
    io.out(`damage: ${d.file}${d.offset === undefined ? '' : ` at byte ${d.offset}`}: ${d.reason}`);
  }
  io.out(report.healthy ? 'healthy' : 'damaged');
}
