import { closeSync, fsyncSync, openSync, readFileSync, renameSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import type { KubeObject } from '@converge/runtime';
import { StoreCorruptError } from '../errors.ts';
import { frame, readFrame, SNAPSHOT_MAGIC } from './record-codec.ts';

/** Every current object of every type at one revision. */
export interface SnapshotData {
  readonly revision: number;
  /** Objects per type id. */
  readonly types: ReadonlyMap<string, readonly KubeObject[]>;
}

/** Name of the snapshot in the data directory. */
export const SNAPSHOT_FILE = 'snapshot';

/** fsyncs a directory so a rename or a new file in it survives a crash. */
export function fsyncDir(dir: string): void {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * Writes a snapshot atomically: to `snapshot.tmp`, fsync, rename over `snapshot`, fsync the
 * directory. A crash leaves either the old or the new snapshot, never a mix.
 */
export function writeSnapshot(dir: string, data: SnapshotData): void {
  const types: Record<string, readonly KubeObject[]> = {};
  for (const [id, objects] of data.types) types[id] = objects;
  const payload = Buffer.from(JSON.stringify({ r: data.revision, types }), 'utf8');
  const tmp = join(dir, `${SNAPSHOT_FILE}.tmp`);
  const fd = openSync(tmp, 'w');
  try {
    writeAll(fd, SNAPSHOT_MAGIC);
    writeAll(fd, frame(payload));
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, join(dir, SNAPSHOT_FILE));
  fsyncDir(dir);
}

function writeAll(fd: number, buffer: Buffer): void {
  let written = 0;
  while (written < buffer.length) written += writeSync(fd, buffer, written, buffer.length - written);
}

/** Reads the snapshot in `dir`; undefined if there is none. Any damage is a {@link StoreCorruptError}. */
export function readSnapshot(dir: string): SnapshotData | undefined {
  const file = join(dir, SNAPSHOT_FILE);
  let data: Buffer;
  try {
    data = readFileSync(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  if (
    data.length < SNAPSHOT_MAGIC.length ||
    !data.subarray(0, SNAPSHOT_MAGIC.length).equals(SNAPSHOT_MAGIC)
  ) {
    throw new StoreCorruptError(file, 0, 'not a store snapshot (bad magic)');
  }
  const read = readFrame(data, SNAPSHOT_MAGIC.length);
  if (read.kind !== 'record' || read.next !== data.length) {
    throw new StoreCorruptError(file, SNAPSHOT_MAGIC.length, 'snapshot is damaged or truncated');
  }
  let body: unknown;
  try {
    body = JSON.parse(read.payload.toString('utf8'));
  } catch (cause) {
    throw new StoreCorruptError(file, SNAPSHOT_MAGIC.length, 'snapshot is not JSON', { cause });
  }
  const { r, types } = (body ?? {}) as { r?: unknown; types?: unknown };
  if (
    typeof r !== 'number' ||
    !Number.isSafeInteger(r) ||
    r < 0 ||
    typeof types !== 'object' ||
    types === null
  ) {
    throw new StoreCorruptError(file, SNAPSHOT_MAGIC.length, 'snapshot has no revision or types');
  }
  const map = new Map<string, readonly KubeObject[]>();
  for (const [id, objects] of Object.entries(types)) {
    if (!Array.isArray(objects) || !objects.every(isObjectWithMeta)) {
      throw new StoreCorruptError(file, SNAPSHOT_MAGIC.length, `snapshot objects of ${id} are malformed`);
    }
    map.set(id, objects);
  }
  return { revision: r, types: map };
}

function isObjectWithMeta(value: unknown): value is KubeObject {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const meta = (value as { metadata?: unknown }).metadata;
  return (
    typeof meta === 'object' &&
    meta !== null &&
    typeof (meta as { name?: unknown }).name === 'string' &&
    typeof (meta as { resourceVersion?: unknown }).resourceVersion === 'string'
  );
}
