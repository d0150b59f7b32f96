import { join } from 'node:path';
import { checkFence, type Fence } from '@converge/runtime';
import { StoreCorruptError } from '../errors.ts';
import { replaceFile, type StoreFileSystem } from './file-system.ts';
import { bufferSource, FrameReader, fileSource, frame } from './record-codec.ts';

/** Name of the file of fence marks in the data directory. */
export const FENCES_FILE = 'fences';
/** First bytes of the fences file. */
export const FENCES_MAGIC = Buffer.from('CVGFNC1\n', 'latin1');

/**
 * The fence marks a data directory holds: missing file, no marks (a directory from before fences
 * were kept, or one no owner ever fenced). A file that is there but does not read back whole is a
 * {@link StoreCorruptError}: starting without its marks would let a stale owner write again.
 */
export function readFences(fsys: StoreFileSystem, dir: string): Fence[] {
  const file = join(dir, FENCES_FILE);
  if (!fsys.existsSync(file)) return [];
  const fd = fsys.openSync(file, 'r');
  let data: Buffer;
  try {
    const size = fsys.fstatSync(fd).size;
    data = fileSource(fsys, fd, size).read(0, size);
  } finally {
    fsys.closeSync(fd);
  }
  return decodeFences(data, file);
}

/** The marks in the bytes of a fences file; a {@link StoreCorruptError} naming `file` if they are not whole. */
export function decodeFences(data: Buffer, file: string): Fence[] {
  if (data.length < FENCES_MAGIC.length || !data.subarray(0, FENCES_MAGIC.length).equals(FENCES_MAGIC))
    throw new StoreCorruptError(file, 0, 'not a fences file (bad magic)');
  const read = new FrameReader(bufferSource(data)).read(FENCES_MAGIC.length);
  // The file is replaced whole (a temporary file renamed over it), never appended to: a short or
  // failing record is damage, never a crash mid-write.
  if (read.kind !== 'record') throw new StoreCorruptError(file, FENCES_MAGIC.length, read.reason);
  if (read.next !== data.length)
    throw new StoreCorruptError(file, read.next, 'bytes after the record of marks');
  let body: unknown;
  try {
    body = JSON.parse(read.payload.toString('utf8'));
  } catch (error) {
    throw new StoreCorruptError(file, FENCES_MAGIC.length, 'the record of marks is not JSON', {
      cause: error,
    });
  }
  const marks = (body as { marks?: unknown } | null)?.marks;
  if (!Array.isArray(marks))
    throw new StoreCorruptError(file, FENCES_MAGIC.length, 'the record holds no list of marks');
  const names = new Set<string>();
  return marks.map((mark: unknown, i) => {
    const { name, holder, epoch } = (mark ?? {}) as Record<string, unknown>;
    const fence = { name, holder, epoch } as Fence;
    try {
      checkFence(fence);
    } catch (error) {
      throw new StoreCorruptError(
        file,
        FENCES_MAGIC.length,
        `mark ${i} is not a fence: ${(error as Error).message}`,
        {
          cause: error,
        },
      );
    }
    if (names.has(fence.name))
      throw new StoreCorruptError(
        file,
        FENCES_MAGIC.length,
        `two marks for the name ${JSON.stringify(fence.name)}`,
      );
    names.add(fence.name);
    return { name: fence.name, holder: fence.holder, epoch: fence.epoch };
  });
}

/** The bytes of a fences file holding `marks`. */
export function encodeFences(marks: readonly Fence[]): Buffer {
  const body = { marks: marks.map((m) => ({ name: m.name, holder: m.holder, epoch: m.epoch })) };
  return Buffer.concat([FENCES_MAGIC, frame(Buffer.from(JSON.stringify(body), 'utf8'))]);
}

/**
 * Replaces the fences file with `marks`, durably (see `replaceFile`): a crash at any step leaves
 * the old marks or the new ones whole. Throws what the file system throws (the old file is then
 * still in place).
 */
export function writeFences(fsys: StoreFileSystem, dir: string, marks: readonly Fence[]): void {
  replaceFile(fsys, dir, FENCES_FILE, encodeFences(marks));
}
