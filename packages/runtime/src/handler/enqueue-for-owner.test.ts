import { describe, expect, it } from 'vitest';
import { OptionsError } from '../errors.ts';
import type { ObjectKey, ObjectMeta, OwnerReference } from '../object/index.ts';
import { Priority } from '../workqueue/index.ts';
import { type EnqueueForOwnerOptions, enqueueForOwner } from './enqueue-for-owner.ts';
import type { RequestQueue } from './handler.ts';

interface Pod {
  readonly metadata: ObjectMeta;
}

const ref = (apiVersion: string, kind: string, name: string, controller?: boolean): OwnerReference => ({
  apiVersion,
  kind,
  name,
  uid: `uid-${name}`,
  ...(controller === undefined ? {} : { controller }),
});

const pod = (owners: OwnerReference[], namespace = 'ns'): Pod => ({
  metadata: { name: 'p', namespace, ownerReferences: owners },
});

function run(
  options: EnqueueForOwnerOptions,
  ...events: Parameters<ReturnType<typeof enqueueForOwner<Pod>>['handle']>[0][]
) {
  const adds: { request: ObjectKey; priority: number | undefined }[] = [];
  const queue: RequestQueue<ObjectKey> = {
    add: (request, o) => adds.push({ request, priority: o?.priority }),
    addAfter: () => expect.fail('handlers never delay'),
  };
  const handler = enqueueForOwner<Pod>(options);
  for (const event of events) handler.handle(event, queue);
  return adds;
}

const replicaSet = { ownerKind: 'ReplicaSet', ownerGroup: 'apps' } as const;

describe('enqueueForOwner', () => {
  it('enqueues every owner of the kind and group, in the namespace of the object', () => {
    const adds = run(replicaSet, {
      type: 'create',
      object: pod([ref('apps/v1', 'ReplicaSet', 'a'), ref('apps/v1beta2', 'ReplicaSet', 'b')]),
    });
    expect(adds.map((a) => a.request)).toEqual([
      { namespace: 'ns', name: 'a' },
      { namespace: 'ns', name: 'b' },
    ]);
  });

  it('owners of another kind or another group are ignored', () => {
    const adds = run(replicaSet, {
      type: 'create',
      object: pod([
        ref('apps/v1', 'Deployment', 'd'),
        ref('example.com/v1', 'ReplicaSet', 'other-group'),
        ref('v1', 'ReplicaSet', 'core-group'),
      ]),
    });
    expect(adds).toEqual([]);
  });

  it('ownerApiVersion compares only the group, so any version of the owner matches', () => {
    const adds = run(
      { ownerKind: 'ReplicaSet', ownerApiVersion: 'apps/v1' },
      { type: 'create', object: pod([ref('apps/v1beta1', 'ReplicaSet', 'old-version')]) },
    );
    expect(adds.map((a) => a.request.name)).toEqual(['old-version']);
  });

  it('the core group is the empty group: apiVersion v1 matches ownerGroup ""', () => {
    const adds = run(
      { ownerKind: 'ConfigMap', ownerGroup: '' },
      {
        type: 'create',
        object: pod([ref('v1', 'ConfigMap', 'cm'), ref('apps/v1', 'ConfigMap', 'not-core')]),
      },
    );
    expect(adds.map((a) => a.request.name)).toEqual(['cm']);
    const byVersion = run(
      { ownerKind: 'ConfigMap', ownerApiVersion: 'v1' },
      { type: 'create', object: pod([ref('v1', 'ConfigMap', 'cm')]) },
    );
    expect(byVersion.map((a) => a.request.name)).toEqual(['cm']);
  });

  it('with onlyController only the reference marked controller is followed', () => {
    const adds = run(
      { ...replicaSet, onlyController: true },
      {
        type: 'create',
        object: pod([
          ref('apps/v1', 'ReplicaSet', 'not-controller'),
          ref('apps/v1', 'ReplicaSet', 'controller', true),
        ]),
      },
    );
    expect(adds.map((a) => a.request.name)).toEqual(['controller']);
  });

  it('with onlyController nothing is enqueued when the controller reference is of another kind', () => {
    const adds = run(
      { ...replicaSet, onlyController: true },
      {
        type: 'create',
        object: pod([ref('apps/v1', 'StatefulSet', 'sts', true), ref('apps/v1', 'ReplicaSet', 'rs', false)]),
      },
    );
    expect(adds).toEqual([]);
  });

  it('an update enqueues the owners of the old and the new object, each once', () => {
    const adds = run(replicaSet, {
      type: 'update',
      oldObject: pod([ref('apps/v1', 'ReplicaSet', 'before'), ref('apps/v1', 'ReplicaSet', 'both')]),
      object: pod([ref('apps/v1', 'ReplicaSet', 'both'), ref('apps/v1', 'ReplicaSet', 'after')]),
    });
    expect(adds.map((a) => a.request.name)).toEqual(['before', 'both', 'after']);
  });

  it('a tombstone still enqueues the owners of its last known state', () => {
    const adds = run(replicaSet, {
      type: 'delete',
      object: pod([ref('apps/v1', 'ReplicaSet', 'rs')]),
      finalStateUnknown: true,
    });
    expect(adds.map((a) => a.request)).toEqual([{ namespace: 'ns', name: 'rs' }]);
  });

  it('a cluster-scoped owner is enqueued without a namespace', () => {
    const adds = run(
      { ownerKind: 'Node', ownerGroup: '', ownerClusterScoped: true },
      { type: 'generic', object: pod([ref('v1', 'Node', 'node-1')], 'kube-system') },
    );
    expect(adds.map((a) => a.request)).toEqual([{ namespace: '', name: 'node-1' }]);
  });

  it('an object without owner references enqueues nothing', () => {
    expect(run(replicaSet, { type: 'create', object: { metadata: { name: 'lonely' } } })).toEqual([]);
  });

  it('a reference with an unparseable apiVersion is skipped and the others still count', () => {
    const adds = run(replicaSet, {
      type: 'create',
      object: pod([ref('apps/v1/extra', 'ReplicaSet', 'bad'), ref('apps/v1', 'ReplicaSet', 'good')]),
    });
    expect(adds.map((a) => a.request.name)).toEqual(['good']);
  });

  it('initial-list creates get low priority unless a priority option is given', () => {
    const object = pod([ref('apps/v1', 'ReplicaSet', 'rs')]);
    expect(run(replicaSet, { type: 'create', object, isInInitialList: true })[0]?.priority).toBe(
      Priority.low,
    );
    expect(
      run({ ...replicaSet, priority: 5 }, { type: 'create', object, isInInitialList: true })[0]?.priority,
    ).toBe(5);
    expect(run(replicaSet, { type: 'create', object })[0]?.priority).toBeUndefined();
  });

  it.each<[string, unknown]>([
    ['no options', undefined],
    ['an empty ownerKind', { ownerKind: '', ownerGroup: 'apps' }],
    ['a missing ownerKind', { ownerGroup: 'apps' }],
    ['neither ownerApiVersion nor ownerGroup', { ownerKind: 'ReplicaSet' }],
    [
      'both ownerApiVersion and ownerGroup',
      { ownerKind: 'ReplicaSet', ownerGroup: 'apps', ownerApiVersion: 'apps/v1' },
    ],
    ['an empty ownerApiVersion', { ownerKind: 'ReplicaSet', ownerApiVersion: '' }],
    ['an ownerApiVersion with two slashes', { ownerKind: 'ReplicaSet', ownerApiVersion: 'a/b/c' }],
    ['an ownerGroup with a slash', { ownerKind: 'ReplicaSet', ownerGroup: 'apps/v1' }],
    ['a non-boolean onlyController', { ownerKind: 'ReplicaSet', ownerGroup: 'apps', onlyController: 'yes' }],
    [
      'a non-boolean ownerClusterScoped',
      { ownerKind: 'ReplicaSet', ownerGroup: 'apps', ownerClusterScoped: 1 },
    ],
    ['a NaN priority', { ownerKind: 'ReplicaSet', ownerGroup: 'apps', priority: Number.NaN }],
  ])('%s is rejected with an OptionsError', (_, options) => {
    expect(() => enqueueForOwner(options as EnqueueForOwnerOptions)).toThrow(OptionsError);
  });
});
