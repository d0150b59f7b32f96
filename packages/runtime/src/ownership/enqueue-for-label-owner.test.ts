import { describe, expect, it } from 'vitest';
import { resourceType } from '../backend/index.ts';
import { OptionsError } from '../errors.ts';
import type { ObjectEvent } from '../event/index.ts';
import type { RequestQueue } from '../handler/index.ts';
import type { KubeObject, ObjectKey } from '../object/index.ts';
import { Priority } from '../workqueue/index.ts';
import { enqueueForLabelOwner, OWNER_KEY_LABEL, OWNER_KIND_LABEL, setOwnerLabels } from './index.ts';

const websiteType = resourceType({
  group: 'example.com',
  version: 'v1',
  kind: 'Website',
  plural: 'websites',
  namespaced: true,
});
const tenantType = resourceType({
  group: 'example.com',
  version: 'v1',
  kind: 'Tenant',
  plural: 'tenants',
  namespaced: false,
});

const secondary = (name = 'cm'): KubeObject => ({ metadata: { name, namespace: 'kube-ns' } });
const ownedBy = (
  type: typeof websiteType,
  namespace: string,
  name: string,
  object = secondary(),
): KubeObject =>
  setOwnerLabels(object, type, { metadata: { name, ...(namespace === '' ? {} : { namespace }) } });

function run(options: Parameters<typeof enqueueForLabelOwner>[0], ...events: ObjectEvent<KubeObject>[]) {
  const adds: { request: ObjectKey; priority: number | undefined }[] = [];
  const queue: RequestQueue<ObjectKey> = {
    add: (request, o) => adds.push({ request, priority: o?.priority }),
    addAfter: () => expect.fail('handlers never delay'),
  };
  const handler = enqueueForLabelOwner<KubeObject>(options);
  for (const event of events) handler.handle(event, queue);
  return adds;
}

describe('enqueueForLabelOwner', () => {
  it('maps create, update and delete of an owned object to its owner, wherever the object lives', () => {
    const cm = ownedBy(websiteType, 'sites', 'blog');
    const blog = { namespace: 'sites', name: 'blog' };
    expect(run({ ownerType: websiteType }, { type: 'create', object: cm })).toEqual([
      { request: blog, priority: undefined },
    ]);
    expect(run({ ownerType: websiteType }, { type: 'delete', object: cm, finalStateUnknown: true })).toEqual([
      { request: blog, priority: undefined },
    ]);
    expect(run({ ownerType: websiteType }, { type: 'generic', object: cm })).toEqual([
      { request: blog, priority: undefined },
    ]);
  });

  it('wakes both owners when an update moves the object, and one when it does not', () => {
    const before = ownedBy(websiteType, 'sites', 'blog');
    const after = ownedBy(websiteType, 'sites', 'shop');
    expect(run({ ownerType: websiteType }, { type: 'update', oldObject: before, object: after })).toEqual([
      { request: { namespace: 'sites', name: 'blog' }, priority: undefined },
      { request: { namespace: 'sites', name: 'shop' }, priority: undefined },
    ]);
    expect(
      run({ ownerType: websiteType }, { type: 'update', oldObject: before, object: before }),
    ).toHaveLength(1);
  });

  it('ignores objects without owner labels, owned by another kind, or with undecodable labels', () => {
    const plain = secondary();
    const tenantOwned = ownedBy(tenantType, '', 'acme');
    const hashedWithoutAnnotations: KubeObject = {
      metadata: {
        name: 'x',
        labels: { [OWNER_KIND_LABEL]: 'Website.example.com', [OWNER_KEY_LABEL]: `h-${'a'.repeat(40)}` },
      },
    };
    expect(
      run(
        { ownerType: websiteType },
        { type: 'create', object: plain },
        { type: 'create', object: tenantOwned },
        { type: 'create', object: hashedWithoutAnnotations },
      ),
    ).toEqual([]);
  });

  it('decodes hashed labels through the annotations, and cluster-scoped owners have namespace ""', () => {
    const long = 'n'.repeat(100);
    expect(
      run({ ownerType: websiteType }, { type: 'create', object: ownedBy(websiteType, 'sites', long) }),
    ).toEqual([{ request: { namespace: 'sites', name: long }, priority: undefined }]);
    expect(
      run({ ownerType: tenantType }, { type: 'create', object: ownedBy(tenantType, '', 'acme') }),
    ).toEqual([{ request: { namespace: '', name: 'acme' }, priority: undefined }]);
  });

  it('adds initial-list creates and resyncs at low priority, unless a priority is given', () => {
    const cm = ownedBy(websiteType, 'sites', 'blog');
    expect(
      run(
        { ownerType: websiteType },
        { type: 'create', object: cm, isInInitialList: true },
        { type: 'update', oldObject: cm, object: cm, isResync: true },
      ).map((a) => a.priority),
    ).toEqual([Priority.low, Priority.low]);
    expect(
      run({ ownerType: websiteType, priority: 7 }, { type: 'create', object: cm, isInInitialList: true })[0]
        ?.priority,
    ).toBe(7);
  });

  it('rejects bad options', () => {
    expect(() => enqueueForLabelOwner(undefined as never)).toThrow(OptionsError);
    expect(() => enqueueForLabelOwner({ ownerType: { group: '', kind: 'lower' } })).toThrow(OptionsError);
    expect(() => enqueueForLabelOwner({ ownerType: websiteType, priority: Number.NaN })).toThrow(
      OptionsError,
    );
  });
});
