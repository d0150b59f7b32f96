import { join } from 'node:path';
import type { KubeObject } from '@converge/runtime';
import { StoreCorruptError } from '../errors.ts';
import { fsyncDir, type StoreFileSystem, writeAll } from './file-system.ts';
import {
  type ByteSource,
  FrameReader,
  fileSource,
  frame,
  SNAPSHOT_MAGIC,
  SNAPSHOT_MAGIC_V2,
} from './record-codec.ts';

/** Every current object of every type at one revision. */
export interface SnapshotData {
  readonly revision: number;
  /** Objects per type id. */
  readonly types: ReadonlyMap<string, Iterable<KubeObject>>;
}

/** What {@link readSnapshot} found. */
export interface SnapshotScan {
  readonly revision: number;
  readonly objects: number;
  readonly bytes: number;
}

/** Name of the snapshot in the data directory. */
export const SNAPSHOT_FILE = 'snapshot';

/** Bytes buffered before a write call while a snapshot is written. */
const WRITE_BUFFER_BYTES = 1 << 20;

/**
 * Writes a snapshot atomically — to `snapshot.tmp`, one record per object between a header and a
 * trailer that counts them, fsync, rename over `snapshot`, fsync the directory — so a crash leaves
 * either the old or the new snapshot, never a mix. Streams: memory is bounded by one object plus a
 * megabyte of buffer. Returns the snapshot's size in bytes.
 */
export function writeSnapshot(fsys: StoreFileSystem, dir: string, data: SnapshotData): number {
  const tmp = join(dir, `${SNAPSHOT_FILE}.tmp`);
  const fd = fsys.openSync(tmp, 'w', 0o600);
  let bytes = 0;
  try {
    let pending: Buffer[] = [];
    let pendingBytes = 0;
    const push = (buffer: Buffer): void => {
      pending.push(buffer);
      pendingBytes += buffer.length;
      if (pendingBytes >= WRITE_BUFFER_BYTES) flush();
    };
    const flush = (): void => {
      const out = Buffer.concat(pending);
      writeAll(fsys, fd, out);
      bytes += out.length;
      pending = [];
      pendingBytes = 0;
    };
    push(SNAPSHOT_MAGIC_V2);
    push(frame(Buffer.from(JSON.stringify({ v: 2, r: data.revision }), 'utf8')));
    let count = 0;
    for (const [t, objects] of data.types) {
      for (const o of objects) {
        push(frame(Buffer.from(JSON.stringify({ t, o }), 'utf8')));
        count++;
      }
    }
    push(frame(Buffer.from(JSON.stringify({ end: count }), 'utf8')));
    flush();
    fsys.fsyncSync(fd);
  } catch (error) {
    fsys.closeSync(fd);
    fsys.rmSync(tmp, { force: true });
    throw error;
  }
  fsys.closeSync(fd);
  fsys.renameSync(tmp, join(dir, SNAPSHOT_FILE));
  fsyncDir(fsys, dir);
  return bytes;
}

/**
 * Streams the snapshot in `dir`, calling `onObject` for each object; undefined if there is none.
 * Any damage is a {@link StoreCorruptError} (a snapshot is replaced atomically, so even a cut-short
 * one is damage); objects read before the damage were already passed to `onObject`.
 */
export function readSnapshot(
  fsys: StoreFileSystem,
  dir: string,
  onObject: (typeId: string, object: KubeObject) => void,
): SnapshotScan | undefined {
  const file = join(dir, SNAPSHOT_FILE);
  let fd: number;
  try {
    fd = fsys.openSync(file, 'r');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  try {
    const source = fileSource(fsys, fd, fsys.fstatSync(fd).size);
    const magic = source.read(0, SNAPSHOT_MAGIC_V2.length);
    if (magic.equals(SNAPSHOT_MAGIC_V2)) return readV2(source, file, onObject);
    if (magic.equals(SNAPSHOT_MAGIC)) return readV1(source, file, onObject);
    throw new StoreCorruptError(file, 0, 'not a store snapshot (bad magic)');
  } finally {
    fsys.closeSync(fd);
  }
}

function readV2(
  source: ByteSource,
  file: string,
  onObject: (typeId: string, object: KubeObject) => void,
): SnapshotScan {
  const reader = new FrameReader(source);
  let offset = SNAPSHOT_MAGIC_V2.length;
  let revision: number | undefined;
  let count = 0;
  for (;;) {
    if (offset >= source.size)
      throw new StoreCorruptError(file, offset, 'snapshot is cut short (no trailer)');
    const read = reader.read(offset);
    if (read.kind !== 'record') {
      throw new StoreCorruptError(file, offset, `snapshot is damaged: ${read.reason}`);
    }
    const body = parse(read.payload, file, offset);
    if (revision === undefined) {
      const { v, r } = body;
      if (v !== 2 || typeof r !== 'number' || !Number.isSafeInteger(r) || r < 0) {
        throw new StoreCorruptError(file, offset, 'snapshot header has no revision');
      }
      revision = r;
    } else if ('end' in body) {
      if (body.end !== count) {
        throw new StoreCorruptError(
          file,
          offset,
          `snapshot trailer counts ${String(body.end)} objects, read ${count}`,
        );
      }
      if (read.next !== source.size)
        throw new StoreCorruptError(file, read.next, 'bytes after the snapshot trailer');
      return { revision, objects: count, bytes: source.size };
    } else {
      const { t, o } = body;
      if (typeof t !== 'string' || t === '' || !isObjectWithMeta(o)) {
        throw new StoreCorruptError(file, offset, 'snapshot object is malformed');
      }
      onObject(t, o);
      count++;
    }
    offset = read.next;
  }
}

/** The first snapshot format: one record holding every object (data directories of older versions). */
function readV1(
  source: ByteSource,
  file: string,
  onObject: (typeId: string, object: KubeObject) => void,
): SnapshotScan {
  const read = new FrameReader(source).read(SNAPSHOT_MAGIC.length);
  if (read.kind !== 'record' || read.next !== source.size) {
    throw new StoreCorruptError(file, SNAPSHOT_MAGIC.length, 'snapshot is damaged or truncated');
  }
  const { r, types } = parse(read.payload, file, SNAPSHOT_MAGIC.length);
  if (
    typeof r !== 'number' ||
    !Number.isSafeInteger(r) ||
    r < 0 ||
    typeof types !== 'object' ||
    types === null
  ) {
    throw new StoreCorruptError(file, SNAPSHOT_MAGIC.length, 'snapshot has no revision or types');
  }
  let count = 0;
  for (const [id, objects] of Object.entries(types)) {
    if (!Array.isArray(objects) || !objects.every(isObjectWithMeta)) {
      throw new StoreCorruptError(file, SNAPSHOT_MAGIC.length, `snapshot objects of ${id} are malformed`);
    }
    for (const object of objects) onObject(id, object);
    count += objects.length;
  }
  return { revision: r, objects: count, bytes: source.size };
}

function parse(payload: Buffer, file: string, offset: number): Record<string, unknown> {
  let body: unknown;
  try {
    body = JSON.parse(payload.toString('utf8'));
  } catch (cause) {
    throw new StoreCorruptError(file, offset, 'snapshot record is not JSON', { cause });
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new StoreCorruptError(file, offset, 'snapshot record is not an object');
  }
  return body as Record<string, unknown>;
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
