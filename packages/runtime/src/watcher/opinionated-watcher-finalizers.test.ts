import { describe, expect, it } from 'vitest';
import { ConflictError, InternalError, NotFoundError } from '../backend/index.ts';
import type { KubeObject } from '../object/index.ts';
import { VirtualClock } from '../testing/index.ts';
import { FinalizerPatchError } from './errors.ts';
import {
  context,
  DELETING as deleting,
  FINAL,
  MockPatchClient,
  recordingHandlers,
  v0910,
  WIP,
  widget,
  widgetType,
  withWip,
} from './opinionated-test-support.ts';
import { OpinionatedWatcher } from './opinionated-watcher.ts';

describe('OpinionatedWatcher finalizer patches (H7: resourceVersion preconditions and conflict retries)', () => {
  it('on a conflict it reads the object again and retries after attempt·1 s + up to 500 ms on the clock', async () => {
    const clock = new VirtualClock();
    const object = widget();
    const client = new MockPatchClient(object);
    const patchTimes: number[] = [];
    const patch = client.patch.bind(client);
    client.patch = (...args) => {
      patchTimes.push(clock.now());
      return patch(...args);
    };
    client.fail('patch', new ConflictError('c'), new ConflictError('c'), new ConflictError('c'));
    const watcher = new OpinionatedWatcher({ type: widgetType, client, inProgressFinalizer: false, clock });
    const done = watcher.add(object, context());
    await clock.runAll();
    await done;
    expect(patchTimes).toHaveLength(4);
    expect(client.gets).toBe(3);
    const waits = patchTimes.slice(1).map((t, i) => t - (patchTimes[i] as number));
    expect(waits[0]).toBeGreaterThanOrEqual(0);
    expect(waits[0]).toBeLessThan(500);
    expect(waits[1]).toBeGreaterThanOrEqual(1000);
    expect(waits[1]).toBeLessThan(1500);
    expect(waits[2]).toBeGreaterThanOrEqual(2000);
    expect(waits[2]).toBeLessThan(2500);
    expect(client.stored?.metadata.finalizers).toEqual([FINAL]);
  });

  it('after 3 conflict retries it gives up with a FinalizerPatchError whose cause is the ConflictError', async () => {
    const clock = new VirtualClock();
    const object = widget({ deletionTimestamp: deleting, finalizers: [FINAL] });
    const client = new MockPatchClient(object);
    const conflicts = Array.from({ length: 4 }, () => new ConflictError('c'));
    client.fail('patch', ...conflicts);
    const watcher = new OpinionatedWatcher({ type: widgetType, client, clock });
    const done = watcher.add(object, context()).catch((e: unknown) => e);
    await clock.runAll();
    const error = await done;
    expect(error).toBeInstanceOf(FinalizerPatchError);
    expect((error as Error).cause).toBe(conflicts[3]);
    expect(client.writes).toHaveLength(4);
    expect(client.gets).toBe(3);
    expect(client.stored?.metadata.finalizers).toEqual([FINAL]);
  });

  it('conflictRetries: 0 fails on the first conflict without reading', async () => {
    const object = widget();
    const client = new MockPatchClient(object).fail('patch', new ConflictError('c'));
    const watcher = new OpinionatedWatcher({
      type: widgetType,
      client,
      inProgressFinalizer: false,
      conflictRetries: 0,
    });
    await expect(watcher.add(object, context())).rejects.toBeInstanceOf(FinalizerPatchError);
    expect(client.gets).toBe(0);
  });

  it('a retry recomputes the patch from the fresh object (a list another writer shortened: 409, not 422)', async () => {
    const clock = new VirtualClock();
    const object = widget({ deletionTimestamp: deleting, finalizers: ['a.example.com/x', FINAL] });
    const client = new MockPatchClient(object);
    // Someone else removes their finalizer between our read and our patch.
    client.write({ ...object, metadata: { ...object.metadata, finalizers: [FINAL] } });
    const watcher = new OpinionatedWatcher({ type: widgetType, client, clock });
    const done = watcher.add(object, context());
    await clock.runAll();
    await done;
    expect(client.patches).toEqual([
      [
        { op: 'replace', path: '/metadata/resourceVersion', value: '1' },
        { op: 'add', path: '/metadata/finalizers', value: ['a.example.com/x'] },
      ],
      [
        { op: 'replace', path: '/metadata/resourceVersion', value: '2' },
        { op: 'add', path: '/metadata/finalizers', value: [] },
      ],
    ]);
    expect(client.stored).toBeUndefined();
  });

  it('removing a finalizer that is already gone (seen on the re-read) succeeds without another patch', async () => {
    const clock = new VirtualClock();
    const object = widget({ deletionTimestamp: deleting, finalizers: [FINAL, 'a.example.com/x'] });
    const client = new MockPatchClient(object);
    client.write({ ...object, metadata: { ...object.metadata, finalizers: ['a.example.com/x'] } });
    const handlers = recordingHandlers();
    const watcher = new OpinionatedWatcher({ type: widgetType, client, handlers, clock });
    const done = watcher.add(object, context());
    await clock.runAll();
    await done;
    expect(handlers.methods()).toEqual(['delete']);
    expect(client.writes).toHaveLength(1);
  });

  it('removing a finalizer from an object that is gone (NotFound on the patch or the re-read) succeeds', async () => {
    const clock = new VirtualClock();
    const object = widget({ deletionTimestamp: deleting, finalizers: [FINAL] });
    const gone = new MockPatchClient(undefined);
    await new OpinionatedWatcher({ type: widgetType, client: gone, clock }).add(object, context());
    expect(gone.writes).toHaveLength(1);
    const vanishing = new MockPatchClient(object)
      .fail('patch', new ConflictError('c'))
      .fail('get', new NotFoundError('gone'));
    const done = new OpinionatedWatcher({ type: widgetType, client: vanishing, clock }).add(
      object,
      context(),
    );
    await clock.runAll();
    await done;
    expect(vanishing.gets).toBe(1);
  });

  it('a re-read that fails otherwise is a FinalizerPatchError with that cause', async () => {
    const clock = new VirtualClock();
    const object = widget({ deletionTimestamp: deleting, finalizers: [FINAL] });
    const cause = new InternalError('down');
    const client = new MockPatchClient(object).fail('patch', new ConflictError('c')).fail('get', cause);
    const done = new OpinionatedWatcher({ type: widgetType, client, clock })
      .add(object, context())
      .catch((e: unknown) => e);
    await clock.runAll();
    expect(await done).toMatchObject({ operation: 'remove', cause });
  });

  it('the sleep between conflict retries ends with the handler signal (AbortedError, no further patch)', async () => {
    const clock = new VirtualClock();
    const object = widget();
    const client = new MockPatchClient(object).fail('patch', new ConflictError('c'), new ConflictError('c'));
    const controller = new AbortController();
    const watcher = new OpinionatedWatcher({ type: widgetType, client, inProgressFinalizer: false, clock });
    const done = watcher.add(object, context(controller.signal)).catch((e: unknown) => e);
    await clock.advance(600); // first retry (≤ 500 ms) happened; the second waits ≥ 1 s
    controller.abort();
    expect(await done).toMatchObject({ code: 'CONVERGE_ERR_ABORTED' });
    expect(client.writes).toHaveLength(2);
  });

  it('without a resourceVersion (an object that never came from a backend) a patch is guarded by a test of the list', async () => {
    const object = widget({ resourceVersion: undefined, deletionTimestamp: deleting, finalizers: [FINAL] });
    const { client, watcher } = v0910(object);
    await watcher.add(object, context());
    expect(client.patches).toEqual([
      [
        { op: 'test', path: '/metadata/finalizers', value: [FINAL] },
        { op: 'add', path: '/metadata/finalizers', value: [] },
      ],
    ]);
  });
});

describe('OpinionatedWatcher in-progress finalizer (H7, v0.32; on by default)', () => {
  it('a new object gets the in-progress finalizer before add, then it becomes the finalizer in one patch', async () => {
    const object = widget();
    const { client, handlers, watcher } = withWip(object);
    await watcher.add(object, context());
    expect(handlers.methods()).toEqual(['add']);
    expect(handlers.calls[0]?.object.metadata.finalizers).toEqual([WIP]);
    expect(client.patches).toEqual([
      [
        { op: 'replace', path: '/metadata/resourceVersion', value: '1' },
        { op: 'add', path: '/metadata/finalizers', value: [WIP] },
      ],
      [
        { op: 'replace', path: '/metadata/resourceVersion', value: '2' },
        { op: 'add', path: '/metadata/finalizers', value: [FINAL] },
      ],
    ]);
    expect(client.stored?.metadata.finalizers).toEqual([FINAL]);
  });

  it('a failing add leaves the in-progress finalizer, so a deletion waits and then runs delete', async () => {
    const object = widget();
    const { client, handlers, watcher } = withWip(object, ['add']);
    await expect(watcher.add(object, context())).rejects.toThrow('add failed');
    expect(client.stored?.metadata.finalizers).toEqual([WIP]);
    const held = client.stored as KubeObject;
    client.deleteObject();
    expect(client.stored?.metadata.deletionTimestamp).toBe(deleting);
    await watcher.update(held, client.stored as KubeObject, context());
    expect(handlers.methods()).toEqual(['add', 'delete']);
    expect(client.stored).toBeUndefined();
  });

  it('without it (v0.9.10) the same deletion removes the object at once and delete never runs', async () => {
    const object = widget();
    const { client, handlers, watcher } = v0910(object, ['add']);
    await expect(watcher.add(object, context())).rejects.toThrow('add failed');
    const last = client.stored as KubeObject;
    client.deleteObject();
    expect(client.stored).toBeUndefined();
    watcher.delete(last, context());
    expect(handlers.methods()).toEqual(['add']);
  });

  it('sync removes a stale in-progress finalizer next to the finalizer', async () => {
    const object = widget({ finalizers: [WIP, FINAL] });
    const { client, handlers, watcher } = withWip(object);
    await watcher.add(object, context());
    expect(handlers.methods()).toEqual(['sync']);
    expect(client.stored?.metadata.finalizers).toEqual([FINAL]);
  });

  it('an add of an object holding only the in-progress finalizer (an add that never succeeded) calls add again', async () => {
    const object = widget({ finalizers: [WIP] });
    const { client, handlers, watcher } = withWip(object);
    await watcher.add(object, context());
    expect(handlers.methods()).toEqual(['add']);
    expect(client.writes).toHaveLength(1);
    expect(client.stored?.metadata.finalizers).toEqual([FINAL]);
  });

  it('being deleted with only the in-progress finalizer calls delete and removes it; with both, both go in one patch', async () => {
    for (const finalizers of [[WIP], [WIP, FINAL]]) {
      const object = widget({ deletionTimestamp: deleting, finalizers });
      const { client, handlers, watcher } = withWip(object);
      await watcher.add(object, context());
      expect(handlers.methods()).toEqual(['delete']);
      expect(client.writes).toHaveLength(1);
      expect(client.stored).toBeUndefined();
    }
  });

  it('the echo of its own in-progress patch (same generation) after a successful add calls nothing', async () => {
    const object = widget();
    const { client, handlers, watcher } = withWip(object);
    const events: [KubeObject | undefined, KubeObject | undefined][] = [];
    client.onChange = (old, now) => events.push([old, now]);
    await watcher.add(object, context());
    for (const [old, now] of events) await watcher.update(old as KubeObject, now as KubeObject, context());
    expect(handlers.methods()).toEqual(['add']);
    expect(client.writes).toHaveLength(2);
  });

  it('the echo of its own in-progress patch after a failed add calls add again (a retry dropped by the dequeue policy is not lost)', async () => {
    const object = widget();
    const { client, handlers, watcher } = withWip(object, ['add']);
    const events: [KubeObject | undefined, KubeObject | undefined][] = [];
    client.onChange = (old, now) => events.push([old, now]);
    await expect(watcher.add(object, context())).rejects.toThrow('add failed');
    handlers.failing.clear();
    const [old, now] = events[0] as [KubeObject, KubeObject];
    await watcher.update(old, now, context());
    expect(handlers.methods()).toEqual(['add', 'add']);
    expect(client.stored?.metadata.finalizers).toEqual([FINAL]);
  });

  it('a same-generation update of a deleting object whose finalizer is already removed calls nothing (no second delete)', async () => {
    const object = widget({
      generation: 2,
      deletionTimestamp: deleting,
      finalizers: [FINAL, 'a.example.com/x'],
    });
    const { client, handlers, watcher } = withWip(object);
    await watcher.add(object, context());
    expect(client.stored?.metadata.finalizers).toEqual(['a.example.com/x']);
    // A stale event from before our removal: another write to the deleting object.
    const stale = widget({
      generation: 2,
      resourceVersion: '1',
      deletionTimestamp: deleting,
      finalizers: [FINAL, 'b'],
    });
    await watcher.update(object, stale, context());
    expect(handlers.methods()).toEqual(['delete']);
  });

  it('a same-generation update of a deleting object still holding our finalizer (delete failed before) calls delete again', async () => {
    const object = widget({
      generation: 2,
      deletionTimestamp: deleting,
      finalizers: [FINAL, 'a.example.com/x'],
    });
    const { client, handlers, watcher } = withWip(object, ['delete']);
    await expect(watcher.add(object, context())).rejects.toThrow('delete failed');
    handlers.failing.clear();
    const next = client.write({ ...object, metadata: { ...object.metadata, finalizers: [FINAL] } });
    await watcher.update(object, next, context());
    expect(handlers.methods()).toEqual(['delete', 'delete']);
    expect(client.stored).toBeUndefined();
  });

  it('deletion starting while add runs: the in-progress finalizer stays (no 422 from adding one) and delete runs next', async () => {
    const clock = new VirtualClock();
    const object = widget();
    const client = new MockPatchClient(object);
    const handlers = recordingHandlers();
    handlers.add = (o) => {
      handlers.calls.push({ method: 'add', object: o });
      client.deleteObject();
    };
    const watcher = new OpinionatedWatcher({ type: widgetType, client, handlers, clock });
    const done = watcher.add(object, context());
    await clock.runAll();
    await done;
    expect(client.stored?.metadata.finalizers).toEqual([WIP]);
    const stored = client.stored as KubeObject;
    await watcher.update(object, stored, context());
    expect(handlers.methods()).toEqual(['add', 'delete']);
    expect(client.stored).toBeUndefined();
  });

  it('an object deleted before the in-progress patch lands calls nothing', async () => {
    const object = widget();
    const { client, handlers, watcher } = withWip(undefined);
    await watcher.add(object, context());
    expect(handlers.calls).toEqual([]);
    expect(client.writes).toHaveLength(1);
  });
});
