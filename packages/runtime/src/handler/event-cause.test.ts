import { describe, expect, it } from 'vitest';
import type { ObjectEvent } from '../event/index.ts';
import type { KubeObject, ObjectKey } from '../object/index.ts';
import type { AddOptions, Cause } from '../workqueue/index.ts';
import { enqueueForObject } from './enqueue-for-object.ts';
import { enqueueForOwner } from './enqueue-for-owner.ts';
import { enqueueFromMapFunction } from './enqueue-from-map-function.ts';
import { causeObjectOf, eventCause, eventCauseFor } from './event-cause.ts';
import type { RequestQueue } from './handler.ts';
import { handlerFuncs } from './handler-funcs.ts';

const pod = (name: string, rv: string, owner?: string): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: {
    name,
    namespace: 'ns',
    uid: `uid-${name}`,
    resourceVersion: rv,
    ...(owner === undefined
      ? {}
      : {
          ownerReferences: [
            { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: owner, uid: `uid-${owner}`, controller: true },
          ],
        }),
  },
});

const ref = { kind: 'Pod', namespace: 'ns', name: 'p', uid: 'uid-p' };

function recorder<R>(): { adds: { request: R; cause: Cause | undefined }[]; queue: RequestQueue<R> } {
  const adds: { request: R; cause: Cause | undefined }[] = [];
  const push = (request: R, options?: AddOptions): void => {
    adds.push({ request, cause: options?.cause });
  };
  return { adds, queue: { add: push, addAfter: (request, _d, options) => push(request, options) } };
}

describe('eventCause', () => {
  it('maps each event type to its cause, with the flags of the event and a reference to the object', () => {
    const p1 = pod('p', '1');
    const p2 = pod('p', '2');
    const cases: [ObjectEvent<KubeObject>, Cause][] = [
      [
        { type: 'create', object: p1 },
        { type: 'added', object: { ...ref, resourceVersion: '1' } },
      ],
      [
        { type: 'create', object: p1, isInInitialList: true },
        { type: 'added', initialList: true, object: { ...ref, resourceVersion: '1' } },
      ],
      [
        { type: 'update', oldObject: p1, object: p2 },
        { type: 'modified', object: { ...ref, resourceVersion: '2' } },
      ],
      [
        { type: 'update', oldObject: p2, object: p2, isResync: true },
        { type: 'resync', object: { ...ref, resourceVersion: '2' } },
      ],
      [
        { type: 'delete', object: p2 },
        { type: 'deleted', object: { ...ref, resourceVersion: '2' } },
      ],
      [
        { type: 'delete', object: p2, finalStateUnknown: true },
        { type: 'deleted', finalStateUnknown: true, object: { ...ref, resourceVersion: '2' } },
      ],
      [
        { type: 'delete', object: p2, purged: true },
        { type: 'deleted', purged: true, object: { ...ref, resourceVersion: '2' } },
      ],
      [
        { type: 'generic', object: p2 },
        { type: 'generic', object: { ...ref, resourceVersion: '2' } },
      ],
    ];
    for (const [event, cause] of cases) expect(eventCause(event)).toEqual(cause);
  });

  it('carries the source and the secondary mark when asked, and is frozen', () => {
    const cause = eventCause({ type: 'create', object: pod('p', '1') }, { source: 'pods', secondary: true });
    expect(cause).toMatchObject({ type: 'added', source: 'pods', secondary: true });
    expect(Object.isFrozen(cause) && Object.isFrozen(cause.object)).toBe(true);
  });

  it('references an object by identity only: no spec, labels or status, and nothing for plain items', () => {
    const object = {
      ...pod('p', '3'),
      spec: { big: 'x'.repeat(1000) },
      metadata: { ...pod('p', '3').metadata, labels: { a: 'b' } },
    };
    expect(causeObjectOf(object)).toEqual({ ...ref, resourceVersion: '3' });
    expect(causeObjectOf({ metadata: { name: 'n', namespace: '' } })).toEqual({ name: 'n' });
    expect(causeObjectOf({ id: 'vm-1' })).toBeUndefined();
    expect(causeObjectOf('vm-1')).toBeUndefined();
    expect(eventCause({ type: 'create', object: { id: 'vm-1' } })).toEqual({ type: 'added' });
  });

  it('eventCauseFor marks a request secondary when it does not name the event object', () => {
    const event: ObjectEvent<KubeObject> = { type: 'create', object: pod('p', '1') };
    expect(eventCauseFor(event, { namespace: 'ns', name: 'p' }).secondary).toBeUndefined();
    expect(eventCauseFor(event, 'ns/p').secondary).toBeUndefined();
    expect(eventCauseFor(event, { namespace: 'ns', name: 'owner' }).secondary).toBe(true);
    expect(eventCauseFor(event, { namespace: 'other', name: 'p' }).secondary).toBe(true);
    expect(eventCauseFor(event, 'owner').secondary).toBe(true);
    // Items without metadata: nothing to compare, not secondary.
    expect(eventCauseFor({ type: 'create', object: { id: 1 } }, 'anything').secondary).toBeUndefined();
  });
});

describe('handlers give their adds the event cause', () => {
  it('enqueueForObject: the event cause, not secondary', () => {
    const { adds, queue } = recorder<ObjectKey>();
    enqueueForObject<KubeObject>().handle({ type: 'delete', object: pod('p', '4'), purged: true }, queue);
    expect(adds).toEqual([
      {
        request: { namespace: 'ns', name: 'p' },
        cause: { type: 'deleted', purged: true, object: { ...ref, resourceVersion: '4' } },
      },
    ]);
  });

  it('enqueueForOwner: the event cause marked secondary, naming the owned object, one cause for every owner', () => {
    const { adds, queue } = recorder<ObjectKey>();
    enqueueForOwner<KubeObject>({ ownerKind: 'ReplicaSet', ownerGroup: 'apps' }).handle(
      { type: 'update', oldObject: pod('p', '1', 'old-rs'), object: pod('p', '2', 'new-rs') },
      queue,
    );
    expect(adds.map((a) => a.request.name)).toEqual(['old-rs', 'new-rs']);
    expect(adds[0]?.cause).toEqual({
      type: 'modified',
      secondary: true,
      object: { ...ref, resourceVersion: '2' },
    });
    expect(adds[1]?.cause).toBe(adds[0]?.cause);
  });

  it('enqueueFromMapFunction: secondary by default, not with secondary: false', () => {
    const map = (o: KubeObject): ObjectKey[] => [{ namespace: 'ns', name: `${o.metadata.name}-parent` }];
    const event: ObjectEvent<KubeObject> = { type: 'create', object: pod('p', '1') };
    const a = recorder<ObjectKey>();
    enqueueFromMapFunction(map).handle(event, a.queue);
    expect(a.adds[0]?.cause).toMatchObject({ type: 'added', secondary: true });
    const b = recorder<ObjectKey>();
    enqueueFromMapFunction(map, { secondary: false }).handle(event, b.queue);
    expect(b.adds[0]?.cause).toEqual({ type: 'added', object: { ...ref, resourceVersion: '1' } });
  });

  it('handlerFuncs: adds without a cause get the event cause; a cause the callback passes wins', () => {
    const { adds, queue } = recorder<string>();
    const mine: Cause = { type: 'generic', secondary: true };
    handlerFuncs<KubeObject, string>({
      update: (_event, q) => {
        q.add('plain');
        q.addAfter('delayed', 10);
        q.add('own', { cause: mine });
      },
    }).handle({ type: 'update', oldObject: pod('p', '1'), object: pod('p', '2'), isResync: true }, queue);
    const resync = { type: 'resync', object: { ...ref, resourceVersion: '2' } };
    expect(adds).toEqual([
      { request: 'plain', cause: resync },
      { request: 'delayed', cause: resync },
      { request: 'own', cause: mine },
    ]);
  });
});
