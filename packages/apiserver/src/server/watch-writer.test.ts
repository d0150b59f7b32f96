import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { WatchWriter } from './watch-writer.ts';

/** A response that records writes; `full` makes every write report a full socket buffer. */
class RecordingResponse extends EventEmitter {
  readonly writes: string[] = [];
  ending: string | undefined;
  writableNeedDrain = false;
  writableEnded = false;
  destroyed = false;
  full = false;

  write(chunk: string): boolean {
    this.writes.push(chunk);
    if (this.full) this.writableNeedDrain = true;
    return !this.full;
  }

  end(chunk: string): void {
    this.ending = chunk;
    this.writableEnded = true;
  }

  drain(): void {
    this.writableNeedDrain = false;
    this.emit('drain');
  }
}

function writerFor(res: RecordingResponse, batchChars = 100): WatchWriter {
  return new WatchWriter(res as unknown as ServerResponse, batchChars);
}

function nextTurn(): Promise<void> {
  return new Promise<void>((resolve) => setImmediate(resolve));
}

/** Whether `promise` settled within one event-loop turn. */
async function settlesWithinATurn(promise: Promise<void>): Promise<boolean> {
  let settled = false;
  void promise.then(() => {
    settled = true;
  });
  await nextTurn();
  return settled;
}

describe('WatchWriter', () => {
  it('writes the lines of one event-loop turn as one chunk at the end of that turn', async () => {
    const res = new RecordingResponse();
    const writer = writerFor(res);
    expect(writer.push('a\n')).toBeUndefined();
    expect(writer.push('b\n')).toBeUndefined();
    expect(res.writes).toEqual([]);
    await nextTurn();
    expect(res.writes).toEqual(['a\nb\n']);
    expect(writer.push('c\n')).toBeUndefined();
    await nextTurn();
    expect(res.writes).toEqual(['a\nb\n', 'c\n']);
  });

  it('writes a full batch at once, then has the caller wait one turn before producing more', async () => {
    const res = new RecordingResponse();
    const writer = writerFor(res, 10);
    expect(writer.push('12345\n')).toBeUndefined();
    const wait = writer.push('67890\n');
    expect(res.writes).toEqual(['12345\n67890\n']);
    expect(wait).toBeInstanceOf(Promise);
    await wait;
    // The flush scheduled with the first line finds nothing left to write.
    expect(res.writes).toHaveLength(1);
  });

  it('honours backpressure: after a batch fills the socket, the caller waits for drain', async () => {
    const res = new RecordingResponse();
    res.full = true;
    const writer = writerFor(res, 4);
    const wait = writer.push('abcd\n') as Promise<void>;
    expect(res.writes).toEqual(['abcd\n']);
    expect(await settlesWithinATurn(wait)).toBe(false);
    res.full = false;
    res.drain();
    await wait;
  });

  it('asks the caller to wait while an end-of-turn flush left the socket over its high-water mark', async () => {
    const res = new RecordingResponse();
    res.full = true;
    const writer = writerFor(res);
    expect(writer.push('a\n')).toBeUndefined();
    await nextTurn();
    expect(res.writes).toEqual(['a\n']);
    const wait = writer.push('b\n');
    expect(wait).toBeInstanceOf(Promise);
    expect(await settlesWithinATurn(wait as Promise<void>)).toBe(false);
    res.full = false;
    res.drain();
    await wait;
    expect(res.writes).toEqual(['a\n', 'b\n']);
  });

  it('flush writes the pending lines now; end sends them with the end and nothing after', async () => {
    const res = new RecordingResponse();
    const writer = writerFor(res);
    expect(writer.push('a\n')).toBeUndefined();
    writer.flush();
    expect(res.writes).toEqual(['a\n']);
    writer.flush();
    expect(res.writes).toEqual(['a\n']);
    expect(writer.push('b\n')).toBeUndefined();
    writer.end();
    expect(res.ending).toBe('b\n');
    expect(writer.push('c\n')).toBeUndefined();
    await nextTurn();
    expect(res.writes).toEqual(['a\n']);
  });

  it('writes nothing to a destroyed response', async () => {
    const res = new RecordingResponse();
    const writer = writerFor(res);
    expect(writer.push('a\n')).toBeUndefined();
    res.destroyed = true;
    await nextTurn();
    writer.end();
    expect(res.writes).toEqual([]);
    expect(res.ending).toBeUndefined();
  });
});
