import { describe, expect, it } from 'vitest';
import { InternalError, NotFoundError } from '../backend/index.ts';
import { OptionsError } from '../errors.ts';
import { FinalizerPatchError, InvalidFinalizerError } from './errors.ts';
import type { FinalizerPatchClient } from './finalizer-patcher.ts';
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
import { OpinionatedWatcher, type OpinionatedWatcherOptions } from './opinionated-watcher.ts';

describe('OpinionatedWatcher construction (§2.2, H1)', () => {
  it('without a type or a client it throws an OptionsError (app-sdk: "schema/client cannot be nil")', () => {
    const client = new MockPatchClient(undefined);
    expect(() => new OpinionatedWatcher({ client } as unknown as OpinionatedWatcherOptions)).toThrow(
      OptionsError,
    );
    expect(
      () => new OpinionatedWatcher({ type: widgetType } as unknown as OpinionatedWatcherOptions),
    ).toThrow(OptionsError);
  });

  it('the default finalizer is operator.<version>.<kind>.<group> and the in-progress one wip.<version>.<kind>.<group>', () => {
    const { watcher } = withWip(undefined);
    expect(watcher.finalizer).toBe(FINAL);
    expect(watcher.inProgressFinalizer).toBe(WIP);
    expect(v0910(undefined).watcher.inProgressFinalizer).toBeUndefined();
  });

  it('a finalizer string or supplier replaces the default', () => {
    const client = new MockPatchClient(undefined);
    expect(
      new OpinionatedWatcher({ type: widgetType, client, finalizer: 'example.com/cleanup' }).finalizer,
    ).toBe('example.com/cleanup');
    const supplied = new OpinionatedWatcher({
      type: widgetType,
      client,
      finalizer: (type) => `${type.group}/${type.plural}`,
    });
    expect(supplied.finalizer).toBe('example.com/widgets');
  });

  it('a supplied finalizer longer than 63 characters is an InvalidFinalizerError at construction', () => {
    const client = new MockPatchClient(undefined);
    const long = `operator.v1.${'A'.repeat(40)}.example.com`;
    let caught: unknown;
    try {
      new OpinionatedWatcher({ type: widgetType, client, finalizer: () => long });
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(InvalidFinalizerError);
    expect(caught).toMatchObject({
      code: 'CONVERGE_ERR_WATCHER_INVALID_FINALIZER',
      option: 'finalizer',
      finalizer: long,
    });
  });

  it('the 63-character limit applies to the name part after the "/", as Kubernetes validates it', () => {
    const client = new MockPatchClient(undefined);
    const prefixed = `${'a'.repeat(60)}.example.com/${'n'.repeat(63)}`;
    expect(new OpinionatedWatcher({ type: widgetType, client, finalizer: prefixed }).finalizer).toBe(
      prefixed,
    );
    expect(
      () => new OpinionatedWatcher({ type: widgetType, client, finalizer: `example.com/${'n'.repeat(64)}` }),
    ).toThrow(InvalidFinalizerError);
  });

  it('a default that would be too long (a long kind and group) is refused too, naming the option', () => {
    const client = new MockPatchClient(undefined);
    const type = {
      ...widgetType,
      kind: 'AVeryLongKindNameForTesting',
      group: 'some.longer.group.example.com',
    };
    expect(() => new OpinionatedWatcher({ type, client })).toThrow(
      /invalid finalizer "operator\.v1\.AVeryLong/,
    );
    expect(() => new OpinionatedWatcher({ type, client, finalizer: 'example.com/x' })).toThrow(
      /invalid inProgressFinalizer "wip\.v1\.AVeryLong/,
    );
    expect(
      new OpinionatedWatcher({ type, client, finalizer: 'example.com/x', inProgressFinalizer: false })
        .finalizer,
    ).toBe('example.com/x');
  });

  it('an empty finalizer, one with invalid characters and a supplier that throws are InvalidFinalizerErrors', () => {
    const client = new MockPatchClient(undefined);
    expect(() => new OpinionatedWatcher({ type: widgetType, client, finalizer: () => '' })).toThrow(
      InvalidFinalizerError,
    );
    expect(() => new OpinionatedWatcher({ type: widgetType, client, finalizer: 'has space' })).toThrow(
      InvalidFinalizerError,
    );
    const boom = new Error('boom');
    let caught: unknown;
    try {
      new OpinionatedWatcher({
        type: widgetType,
        client,
        finalizer: () => {
          throw boom;
        },
      });
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(InvalidFinalizerError);
    expect((caught as Error).cause).toBe(boom);
  });

  it('the core group gives operator.<version>.<kind>, because a trailing "." is not a valid finalizer', () => {
    const client = new MockPatchClient(undefined);
    const configMaps = { ...widgetType, group: '', kind: 'ConfigMap', plural: 'configmaps' };
    const watcher = new OpinionatedWatcher({ type: configMaps, client });
    expect(watcher.finalizer).toBe('operator.v1.ConfigMap');
    expect(watcher.inProgressFinalizer).toBe('wip.v1.ConfigMap');
  });

  it('takes the runtime Client or any Backend as its client (both satisfy FinalizerPatchClient)', async () => {
    const { FakeBackend } = await import('../testing/index.ts');
    const { Client } = await import('../client/index.ts');
    const backend = new FakeBackend();
    const clients: FinalizerPatchClient[] = [backend, new Client({ backend })];
    for (const client of clients) {
      expect(new OpinionatedWatcher({ type: widgetType, client }).finalizer).toBe(FINAL);
    }
  });

  it('an in-progress finalizer equal to the finalizer is refused', () => {
    const client = new MockPatchClient(undefined);
    expect(() => new OpinionatedWatcher({ type: widgetType, client, inProgressFinalizer: FINAL })).toThrow(
      OptionsError,
    );
  });
});

describe('OpinionatedWatcher.wrap (§2.2)', () => {
  it('wrap(w, false) calls w.add, w.update and w.delete but never w.sync', async () => {
    const inner = recordingHandlers();
    const wrapped = OpinionatedWatcher.wrap(inner, false);
    const object = widget();
    await wrapped.add?.(object, context());
    await wrapped.update?.(object, object, context());
    await wrapped.delete?.(object, context());
    expect(wrapped.sync).toBeUndefined();
    expect(inner.methods()).toEqual(['add', 'update', 'delete']);
  });

  it('wrap(w, true) makes sync call w.add', async () => {
    const inner = recordingHandlers();
    const wrapped = OpinionatedWatcher.wrap(inner, true);
    await wrapped.sync?.(widget(), context());
    expect(inner.methods()).toEqual(['add']);
  });

  it('wrap(undefined) gives handlers that do nothing, and missing handler methods succeed', async () => {
    expect(OpinionatedWatcher.wrap(undefined, true)).toEqual({});
    const client = new MockPatchClient(widget());
    const watcher = new OpinionatedWatcher({ type: widgetType, client, inProgressFinalizer: false });
    await watcher.add(widget(), context());
    expect(client.stored?.metadata.finalizers).toEqual([FINAL]);
  });

  it('a wrapped sync through the opinionated watcher: the start-up relist calls w.add only when syncToAdd', async () => {
    const object = widget({ finalizers: [FINAL] });
    for (const syncToAdd of [false, true]) {
      const inner = recordingHandlers();
      const client = new MockPatchClient(object);
      const watcher = new OpinionatedWatcher({
        type: widgetType,
        client,
        handlers: OpinionatedWatcher.wrap(inner, syncToAdd),
      });
      await watcher.add(object, context());
      expect(inner.methods()).toEqual(syncToAdd ? ['add'] : []);
      expect(client.writes).toEqual([]);
    }
  });
});

describe('OpinionatedWatcher.add (§2.2 Add, v0.9.10 without the in-progress finalizer)', () => {
  it('Add step 2: being deleted without our finalizer calls nothing and patches nothing', async () => {
    const object = widget({ deletionTimestamp: deleting, finalizers: ['other.example.com/x'] });
    const { client, handlers, watcher } = v0910(object);
    await watcher.add(object, context());
    expect(handlers.calls).toEqual([]);
    expect(client.writes).toEqual([]);
  });

  it('Add step 2: being deleted with our finalizer calls delete, then removes the finalizer', async () => {
    const object = widget({ deletionTimestamp: deleting, finalizers: ['other.example.com/x', FINAL] });
    const { client, handlers, watcher } = v0910(object);
    await watcher.add(object, context());
    expect(handlers.methods()).toEqual(['delete']);
    expect(client.patches).toEqual([
      [
        { op: 'replace', path: '/metadata/resourceVersion', value: '1' },
        { op: 'add', path: '/metadata/finalizers', value: ['other.example.com/x'] },
      ],
    ]);
    expect(client.stored?.metadata.finalizers).toEqual(['other.example.com/x']);
  });

  it('Add step 2 (H4): a failing delete handler returns its error and the finalizer is not removed', async () => {
    const object = widget({ deletionTimestamp: deleting, finalizers: [FINAL] });
    const { client, handlers, watcher } = v0910(object, ['delete']);
    await expect(watcher.add(object, context())).rejects.toThrow('delete failed');
    expect(handlers.methods()).toEqual(['delete']);
    expect(client.writes).toEqual([]);
  });

  it('Add step 2: removing the last finalizer lets the object go', async () => {
    const object = widget({ deletionTimestamp: deleting, finalizers: [FINAL] });
    const { client, watcher } = v0910(object);
    await watcher.add(object, context());
    expect(client.stored).toBeUndefined();
  });

  it('Add step 2: a failing removal patch is a FinalizerPatchError with the cause', async () => {
    const object = widget({ deletionTimestamp: deleting, finalizers: [FINAL] });
    const { client, watcher } = v0910(object);
    const cause = new InternalError('etcd is down');
    client.fail('patch', cause);
    const error = await watcher.add(object, context()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(FinalizerPatchError);
    expect(error).toMatchObject({
      code: 'CONVERGE_ERR_WATCHER_FINALIZER_PATCH_FAILED',
      operation: 'remove',
      key: { namespace: 'default', name: 'w' },
      cause,
    });
  });

  it('Add step 3 (H3): an object that already carries our finalizer calls sync only (the start-up relist), no patch', async () => {
    const object = widget({ finalizers: [FINAL] });
    const { client, handlers, watcher } = v0910(object);
    await watcher.add(object, context());
    expect(handlers.methods()).toEqual(['sync']);
    expect(client.writes).toEqual([]);
  });

  it('Add step 3: a failing sync returns its error', async () => {
    const object = widget({ finalizers: [FINAL] });
    const { client, watcher } = v0910(object, ['sync']);
    await expect(watcher.add(object, context())).rejects.toThrow('sync failed');
    expect(client.writes).toEqual([]);
  });

  it('Add step 4 (H2): a new object calls add, then adds the finalizer guarded by its resourceVersion', async () => {
    const object = widget();
    const { client, handlers, watcher } = v0910(object);
    await watcher.add(object, context());
    expect(handlers.methods()).toEqual(['add']);
    expect(client.patches).toEqual([
      [
        { op: 'replace', path: '/metadata/resourceVersion', value: '1' },
        { op: 'add', path: '/metadata/finalizers', value: [FINAL] },
      ],
    ]);
  });

  it('Add step 4: next to other finalizers ours is appended', async () => {
    const object = widget({ finalizers: ['other.example.com/x'] });
    const { client, watcher } = v0910(object);
    await watcher.add(object, context());
    expect(client.patches[0]).toContainEqual({
      op: 'add',
      path: '/metadata/finalizers',
      value: ['other.example.com/x', FINAL],
    });
    expect(client.stored?.metadata.finalizers).toEqual(['other.example.com/x', FINAL]);
  });

  it('Add step 4 (H2): a failing add returns its error and patches nothing', async () => {
    const object = widget();
    const { client, watcher } = v0910(object, ['add']);
    await expect(watcher.add(object, context())).rejects.toThrow('add failed');
    expect(client.writes).toEqual([]);
  });

  it('Add step 4 (H2): a failing finalizer patch is a FinalizerPatchError ("error adding finalizer")', async () => {
    const object = widget();
    const { client, handlers, watcher } = v0910(object);
    client.fail('patch', new InternalError('boom'));
    const error = await watcher.add(object, context()).catch((e: unknown) => e);
    expect(handlers.methods()).toEqual(['add']);
    expect(error).toBeInstanceOf(FinalizerPatchError);
    expect(error).toMatchObject({ operation: 'add', finalizer: FINAL });
    expect((error as Error).message).toMatch(
      /^adding finalizer "operator\.v1\.Widget\.example\.com" of default\/w failed/,
    );
  });

  it('Add step 4: an object deleted after add but before its finalizer is not an error (logged: delete will not run)', async () => {
    const object = widget();
    const { client, handlers, watcher } = v0910(object);
    client.fail('patch', new NotFoundError('gone'));
    await watcher.add(object, context());
    expect(handlers.methods()).toEqual(['add']);
  });
});

describe('OpinionatedWatcher.update (§2.2 Update, v0.9.10 without the in-progress finalizer)', () => {
  it('Update step 2 (H5): generation > 0 unchanged calls nothing (status writes and resyncs)', async () => {
    const old = widget({ finalizers: [FINAL] });
    const updated = widget({ finalizers: [FINAL], resourceVersion: '2' });
    const { client, handlers, watcher } = v0910(updated);
    await watcher.update(old, updated, context());
    await watcher.update(updated, updated, context()); // a resync
    expect(handlers.calls).toEqual([]);
    expect(client.writes).toEqual([]);
  });

  it('Update step 2 (F1): with generation 0 or absent every update passes', async () => {
    const old = widget({ finalizers: [FINAL], generation: 0 });
    const updated = widget({ finalizers: [FINAL], generation: 0, resourceVersion: '2' });
    const { handlers, watcher } = v0910(updated);
    await watcher.update(old, updated, context());
    const noGeneration = widget({ finalizers: [FINAL], generation: undefined });
    await watcher.update(noGeneration, noGeneration, context());
    expect(handlers.methods()).toEqual(['update', 'update']);
  });

  it('Update step 3 (H5, decided): missing our finalizer calls add and adds the finalizer, but not update', async () => {
    const old = widget();
    const updated = widget({ generation: 2, resourceVersion: '2' });
    const { client, handlers, watcher } = v0910(updated);
    await watcher.update(old, updated, context());
    expect(handlers.methods()).toEqual(['add']);
    expect(client.patches).toEqual([
      [
        { op: 'replace', path: '/metadata/resourceVersion', value: '2' },
        { op: 'add', path: '/metadata/finalizers', value: [FINAL] },
      ],
    ]);
  });

  it('Update step 3: a failing add returns its error, patches nothing and calls nothing else', async () => {
    const old = widget();
    const updated = widget({ generation: 2, resourceVersion: '2' });
    const { client, handlers, watcher } = v0910(updated, ['add']);
    await expect(watcher.update(old, updated, context())).rejects.toThrow('add failed');
    expect(handlers.methods()).toEqual(['add']);
    expect(client.writes).toEqual([]);
  });

  it('Update step 4 (H4): a deletionTimestamp without our finalizer calls nothing', async () => {
    const old = widget();
    const updated = widget({
      generation: 2,
      deletionTimestamp: deleting,
      finalizers: ['other.example.com/x'],
    });
    const { client, handlers, watcher } = v0910(updated);
    await watcher.update(old, updated, context());
    expect(handlers.calls).toEqual([]);
    expect(client.writes).toEqual([]);
  });

  it('Update step 4 (H4): a deletionTimestamp with our finalizer calls delete, then removes the finalizer', async () => {
    const old = widget({ finalizers: [FINAL] });
    const updated = widget({
      generation: 2,
      resourceVersion: '2',
      deletionTimestamp: deleting,
      finalizers: [FINAL],
    });
    const { client, handlers, watcher } = v0910(updated);
    await watcher.update(old, updated, context());
    expect(handlers.methods()).toEqual(['delete']);
    expect(client.patches).toEqual([
      [
        { op: 'replace', path: '/metadata/resourceVersion', value: '2' },
        { op: 'add', path: '/metadata/finalizers', value: [] },
      ],
    ]);
    expect(client.stored).toBeUndefined();
  });

  it('Update step 4 (H4): a failing delete keeps the finalizer', async () => {
    const old = widget({ finalizers: [FINAL] });
    const updated = widget({ generation: 2, deletionTimestamp: deleting, finalizers: [FINAL] });
    const { client, watcher } = v0910(updated, ['delete']);
    await expect(watcher.update(old, updated, context())).rejects.toThrow('delete failed');
    expect(client.writes).toEqual([]);
    expect(client.stored?.metadata.finalizers).toEqual([FINAL]);
  });

  it('Update step 5 (H5): the update that only added our finalizer calls nothing', async () => {
    const old = widget({ generation: 0 });
    const updated = widget({ generation: 0, resourceVersion: '2', finalizers: [FINAL] });
    const { client, handlers, watcher } = v0910(updated);
    await watcher.update(old, updated, context());
    expect(handlers.calls).toEqual([]);
    expect(client.writes).toEqual([]);
  });

  it('Update step 5: an update that added our finalizer and changed the generation is a real change: update runs', async () => {
    const old = widget();
    const updated = widget({ generation: 2, resourceVersion: '3', finalizers: [FINAL] });
    const { handlers, watcher } = v0910(updated);
    await watcher.update(old, updated, context());
    expect(handlers.methods()).toEqual(['update']);
  });

  it('Update step 6: any other update calls update(old, new) and returns its error', async () => {
    const old = widget({ finalizers: [FINAL] });
    const updated = widget({ generation: 2, resourceVersion: '2', finalizers: [FINAL] });
    const { client, handlers, watcher } = v0910(updated, ['update']);
    await expect(watcher.update(old, updated, context())).rejects.toThrow('update failed');
    expect(handlers.calls).toEqual([{ method: 'update', object: updated }]);
    expect(client.writes).toEqual([]);
  });
});

describe('OpinionatedWatcher.delete (§2.2 Delete, H6)', () => {
  it('a delete event calls nothing, whatever the object carries', async () => {
    const { client, handlers, watcher } = v0910(undefined);
    for (const object of [
      widget(),
      widget({ finalizers: [FINAL] }),
      widget({ deletionTimestamp: deleting, finalizers: [FINAL] }),
    ]) {
      watcher.delete(object, context());
    }
    expect(handlers.calls).toEqual([]);
    expect(client.writes).toEqual([]);
    expect(client.gets).toBe(0);
  });
});
