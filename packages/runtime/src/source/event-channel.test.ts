import { describe, expect, it, vi } from 'vitest';
import { AbortedError, OptionsError } from '../errors.ts';
import type { ObjectEvent } from '../event/index.ts';
import { MemoryLogger } from '../log/index.ts';
import { EventChannel } from './event-channel.ts';

describe('EventChannel', () => {
  it('emitted events reach every listener synchronously, in subscription order', () => {
    const channel = new EventChannel<string>();
    const seen: string[] = [];
    channel.subscribe((e) => seen.push(`1:${e.type}:${e.object}`));
    channel.subscribe((e) => seen.push(`2:${e.type}:${e.object}`));
    channel.emit({ type: 'generic', object: 'x' });
    expect(seen).toEqual(['1:generic:x', '2:generic:x']);
  });

  it('the shorthand methods emit the matching events with their flags', () => {
    const channel = new EventChannel<string>();
    const seen: ObjectEvent<string>[] = [];
    channel.subscribe((e) => seen.push(e));
    channel.create('a', { isInInitialList: true });
    channel.create('b');
    channel.update('a', 'a2', { isResync: true });
    channel.update('b', 'b2');
    channel.delete('a2', { finalStateUnknown: true });
    channel.delete('b2');
    channel.generic('c');
    expect(seen).toEqual([
      { type: 'create', object: 'a', isInInitialList: true },
      { type: 'create', object: 'b' },
      { type: 'update', oldObject: 'a', object: 'a2', isResync: true },
      { type: 'update', oldObject: 'b', object: 'b2' },
      { type: 'delete', object: 'a2', finalStateUnknown: true },
      { type: 'delete', object: 'b2' },
      { type: 'generic', object: 'c' },
    ]);
  });

  it('an unsubscribed listener gets nothing more, and unsubscribing twice is harmless', () => {
    const channel = new EventChannel<string>();
    const listener = vi.fn();
    const unsubscribe = channel.subscribe(listener);
    channel.generic('a');
    unsubscribe();
    unsubscribe();
    channel.generic('b');
    expect(listener).toHaveBeenCalledTimes(1);
    expect(channel.listenerCount).toBe(0);
  });

  it('events emitted while nobody listens are gone', () => {
    const channel = new EventChannel<string>();
    channel.generic('early');
    const listener = vi.fn();
    channel.subscribe(listener);
    expect(listener).not.toHaveBeenCalled();
  });

  it('a listener that throws is logged, reported and counted, and the others still get the event', () => {
    const logger = new MemoryLogger();
    const onListenerError = vi.fn();
    const channel = new EventChannel<string>({ logger, onListenerError });
    const boom = new Error('boom');
    channel.subscribe(() => {
      throw boom;
    });
    const second = vi.fn();
    channel.subscribe(second);
    expect(() => channel.generic('a')).not.toThrow();
    expect(second).toHaveBeenCalledOnce();
    expect(onListenerError).toHaveBeenCalledWith(boom, { type: 'generic', object: 'a' });
    expect(channel.listenerErrors).toBe(1);
    expect(logger.records).toContainEqual(
      expect.objectContaining({ level: 'error', message: 'Event listener failed' }),
    );
  });

  it('an onListenerError that throws is logged and swallowed', () => {
    const logger = new MemoryLogger();
    const channel = new EventChannel<string>({
      logger,
      onListenerError: () => {
        throw new Error('hook broke');
      },
    });
    channel.subscribe(() => {
      throw new Error('boom');
    });
    expect(() => channel.generic('a')).not.toThrow();
    expect(logger.records.map((r) => r.message)).toContain('onListenerError failed');
  });

  it('a listener added during an emit gets the next event, not the current one', () => {
    const channel = new EventChannel<string>();
    const late = vi.fn();
    channel.subscribe(() => {
      if (channel.listenerCount === 1) channel.subscribe(late);
    });
    channel.generic('first');
    channel.generic('second');
    expect(late.mock.calls.map((c) => (c[0] as ObjectEvent<string>).object)).toEqual(['second']);
  });

  it('a listener removed during an emit by an earlier listener does not get that event', () => {
    const channel = new EventChannel<string>();
    const removed = vi.fn();
    let unsubscribe = (): void => {};
    channel.subscribe(() => unsubscribe());
    unsubscribe = channel.subscribe(removed);
    channel.generic('a');
    expect(removed).not.toHaveBeenCalled();
  });

  it('is synced from the start by default', async () => {
    const channel = new EventChannel<string>();
    expect(channel.hasSynced()).toBe(true);
    await expect(channel.waitForSync(new AbortController().signal)).resolves.toBeUndefined();
  });

  it('with synced: false, waiting for sync lasts until markSynced', async () => {
    const channel = new EventChannel<string>({ synced: false });
    let synced = false;
    const wait = channel.waitForSync(new AbortController().signal).then(() => {
      synced = true;
    });
    await Promise.resolve();
    expect(synced).toBe(false);
    expect(channel.hasSynced()).toBe(false);
    channel.markSynced();
    channel.markSynced();
    await wait;
    expect(synced).toBe(true);
    expect(channel.hasSynced()).toBe(true);
  });

  it('waiting for sync rejects with an AbortedError when the signal aborts first', async () => {
    const channel = new EventChannel<string>({ synced: false });
    await expect(channel.waitForSync(AbortSignal.abort())).rejects.toBeInstanceOf(AbortedError);
  });

  it.each<[string, object]>([
    ['a non-boolean synced', { synced: 'yes' }],
    ['a non-function onListenerError', { onListenerError: 1 }],
    ['a logger without methods', { logger: { info: () => {} } }],
  ])('%s is rejected with an OptionsError', (_, options) => {
    expect(() => new EventChannel(options)).toThrow(OptionsError);
  });
});
