import { describe, expect, it } from 'vitest';
import { InternalError } from '../backend/index.ts';
import { OptionsError } from '../errors.ts';
import type { KubeObject } from '../object/index.ts';
import { FinalizerPatchError, InvalidFinalizerError } from './errors.ts';
import { OpinionatedReconciler, type OpinionatedReconcilerState } from './opinionated-reconciler.ts';
import { context, FINAL, MockPatchClient, widget, widgetType } from './opinionated-test-support.ts';
import { reconcileStateOf, withReconcileState } from './reconcile-state.ts';
import type { EventReconciler, ReconcileRequest, ReconcileResult, ResourceAction } from './types.ts';

const deleting = '2024-01-01T00:00:00Z';

interface Inner {
  readonly step: number;
}

/** A reconciler that records the requests it gets and answers from a script. */
function scripted(
  answer: (request: ReconcileRequest<KubeObject, Inner>) => ReconcileResult<Inner> | undefined = () =>
    undefined,
) {
  const requests: ReconcileRequest<KubeObject, Inner>[] = [];
  const reconciler: EventReconciler<KubeObject, Inner> = {
    reconcile(request) {
      requests.push(request);
      return answer(request);
    },
  };
  return { reconciler, requests, actions: (): ResourceAction[] => requests.map((r) => r.action) };
}

function setup(stored: KubeObject | undefined, answer?: Parameters<typeof scripted>[0]) {
  const client = new MockPatchClient(stored);
  const inner = scripted(answer);
  const opinionated = new OpinionatedReconciler<KubeObject, Inner>({
    type: widgetType,
    client,
    reconciler: inner.reconciler,
  });
  return { client, inner, opinionated };
}

function request(
  action: ResourceAction,
  object: KubeObject,
  state?: OpinionatedReconcilerState<Inner>,
): ReconcileRequest<KubeObject, OpinionatedReconcilerState<Inner>> {
  return { action, object, state };
}

describe('OpinionatedReconciler (app-sdk v0.10+, §2.7)', () => {
  it('uses the default finalizer and refuses an invalid one or a missing client', () => {
    const client = new MockPatchClient(undefined);
    expect(new OpinionatedReconciler({ type: widgetType, client }).finalizer).toBe(FINAL);
    expect(() => new OpinionatedReconciler({ type: widgetType, client, finalizer: 'x'.repeat(64) })).toThrow(
      InvalidFinalizerError,
    );
    expect(() => new OpinionatedReconciler({ type: widgetType, client, finalizer: '' })).toThrow(
      InvalidFinalizerError,
    );
    expect(() => new OpinionatedReconciler({ type: widgetType } as never)).toThrow(OptionsError);
  });

  it('a delete action is ignored: nothing delegated, nothing patched', async () => {
    const object = widget({ finalizers: [FINAL] });
    const { client, inner, opinionated } = setup(object);
    expect(await opinionated.reconcile(request('delete', object), context())).toBeUndefined();
    expect(inner.requests).toEqual([]);
    expect(client.writes).toEqual([]);
  });

  it('a deletionTimestamp with our finalizer is delegated as a delete action, then the finalizer is removed', async () => {
    const object = widget({ deletionTimestamp: deleting, finalizers: [FINAL] });
    const { client, inner, opinionated } = setup(object);
    await opinionated.reconcile(request('update', object), context());
    expect(inner.actions()).toEqual(['delete']);
    expect(client.writes).toHaveLength(1);
    expect(client.stored).toBeUndefined();
  });

  it('a failing delegated delete keeps the finalizer and throws its error', async () => {
    const object = widget({ deletionTimestamp: deleting, finalizers: [FINAL] });
    const { client, opinionated } = setup(object, () => {
      throw new Error('cleanup failed');
    });
    await expect(opinionated.reconcile(request('update', object), context())).rejects.toThrow(
      'cleanup failed',
    );
    expect(client.writes).toEqual([]);
  });

  it('a delegated delete that asks for a requeue keeps the finalizer until a later run succeeds', async () => {
    const object = widget({ deletionTimestamp: deleting, finalizers: [FINAL] });
    const { client, opinionated } = setup(object, () => ({ requeueAfterMs: 5000, state: { step: 1 } }));
    const result = await opinionated.reconcile(request('update', object), context());
    expect(result).toEqual({ requeueAfterMs: 5000, state: { inner: { step: 1 } } });
    expect(client.writes).toEqual([]);
  });

  it('a failed finalizer removal is recorded in the error state, so the retry only re-attempts the patch', async () => {
    const object = widget({ deletionTimestamp: deleting, finalizers: [FINAL] });
    const { client, inner, opinionated } = setup(object, () => ({ state: { step: 7 } }));
    client.fail('patch', new InternalError('down'));
    const error = await opinionated.reconcile(request('update', object), context()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(FinalizerPatchError);
    const carried = reconcileStateOf(error);
    expect(carried).toEqual({ carried: true, state: { inner: { step: 7 }, pendingFinalizer: 'remove' } });
    await opinionated.reconcile(
      request('update', object, carried.state as OpinionatedReconcilerState<Inner>),
      context(),
    );
    expect(inner.actions()).toEqual(['delete']);
    expect(client.stored).toBeUndefined();
  });

  it('a deletionTimestamp without our finalizer is ignored', async () => {
    const object = widget({ deletionTimestamp: deleting, finalizers: ['other.example.com/x'] });
    const { client, inner, opinionated } = setup(object);
    await opinionated.reconcile(request('update', object), context());
    await opinionated.reconcile(request('create', object), context());
    expect(inner.requests).toEqual([]);
    expect(client.writes).toEqual([]);
  });

  it('a create with our finalizer is delegated as a resync, nothing patched', async () => {
    const object = widget({ finalizers: [FINAL] });
    const { client, inner, opinionated } = setup(object);
    await opinionated.reconcile(request('create', object), context());
    expect(inner.actions()).toEqual(['resync']);
    expect(client.writes).toEqual([]);
  });

  it('a create without our finalizer is delegated, then the finalizer is added', async () => {
    const object = widget();
    const { client, inner, opinionated } = setup(object);
    await opinionated.reconcile(request('create', object), context());
    expect(inner.actions()).toEqual(['create']);
    expect(client.stored?.metadata.finalizers).toEqual([FINAL]);
  });

  it('a failing delegated create adds no finalizer', async () => {
    const object = widget();
    const { client, opinionated } = setup(object, () => {
      throw new Error('create failed');
    });
    await expect(opinionated.reconcile(request('create', object), context())).rejects.toThrow(
      'create failed',
    );
    expect(client.writes).toEqual([]);
  });

  it('a failed finalizer add after a successful create is retried alone (pendingFinalizer: add)', async () => {
    const object = widget();
    const { client, inner, opinionated } = setup(object);
    client.fail('patch', new InternalError('down'));
    const error = await opinionated.reconcile(request('create', object), context()).catch((e: unknown) => e);
    const carried = reconcileStateOf(error);
    expect(carried.state).toEqual({ inner: undefined, pendingFinalizer: 'add' });
    await opinionated.reconcile(
      request('create', object, carried.state as OpinionatedReconcilerState<Inner>),
      context(),
    );
    expect(inner.actions()).toEqual(['create']);
    expect(client.stored?.metadata.finalizers).toEqual([FINAL]);
  });

  it('an update without our finalizer adds it and is not delegated', async () => {
    const object = widget({ generation: 2 });
    const { client, inner, opinionated } = setup(object);
    expect(await opinionated.reconcile(request('update', object), context())).toBeUndefined();
    expect(inner.requests).toEqual([]);
    expect(client.stored?.metadata.finalizers).toEqual([FINAL]);
  });

  it('everything else is delegated as is: updates and resyncs with our finalizer, a resync without it', async () => {
    const object = widget({ finalizers: [FINAL] });
    const { client, inner, opinionated } = setup(object, () => ({ requeueAfterMs: 10 }));
    expect(await opinionated.reconcile(request('update', object), context())).toEqual({ requeueAfterMs: 10 });
    await opinionated.reconcile(request('resync', object), context());
    await opinionated.reconcile(request('resync', widget()), context());
    expect(inner.actions()).toEqual(['update', 'resync', 'resync']);
    expect(client.writes).toEqual([]);
  });

  it('the wrapped reconciler sees only its own state, and its error-carried state is wrapped in ours', async () => {
    const object = widget({ finalizers: [FINAL] });
    const { inner, opinionated } = setup(object, (r) => {
      throw withReconcileState(new Error('later'), { step: (r.state?.step ?? 0) + 1 });
    });
    const error = await opinionated
      .reconcile(request('update', object, { inner: { step: 4 } }), context())
      .catch((e: unknown) => e);
    expect(inner.requests[0]?.state).toEqual({ step: 4 });
    expect(reconcileStateOf(error)).toEqual({ carried: true, state: { inner: { step: 5 } } });
  });

  it('without a wrapped reconciler every delegated request succeeds and the finalizer logic still runs', async () => {
    const object = widget();
    const client = new MockPatchClient(object);
    const opinionated = new OpinionatedReconciler({ type: widgetType, client });
    await opinionated.reconcile({ action: 'create', object, state: undefined }, context());
    expect(client.stored?.metadata.finalizers).toEqual([FINAL]);
  });
});

describe('withReconcileState / reconcileStateOf', () => {
  it('an error carries the state it was given, even undefined; other values carry none', () => {
    const error = withReconcileState(new Error('x'), { a: 1 });
    expect(reconcileStateOf(error)).toEqual({ carried: true, state: { a: 1 } });
    expect(reconcileStateOf(withReconcileState(new Error('y'), undefined))).toEqual({
      carried: true,
      state: undefined,
    });
    for (const value of [new Error('plain'), 'text', null, undefined, 42]) {
      expect(reconcileStateOf(value)).toEqual({ carried: false, state: undefined });
    }
  });

  it('the state is invisible to JSON and enumeration (logs do not leak it)', () => {
    const error = withReconcileState(new Error('x'), { secret: 1 });
    expect(Object.keys(error)).toEqual([]);
    expect(JSON.stringify(error)).toBe('{}');
  });
});
