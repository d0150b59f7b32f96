import { describe, expect, it } from 'vitest';
import type { ObjectEvent } from '../event/index.ts';
import type { KubeObject, ObjectMeta } from '../object/index.ts';
import { annotationsChanged } from './annotations-changed.ts';
import { generationChanged } from './generation-changed.ts';
import { labelsChanged } from './labels-changed.ts';
import type { Predicate } from './predicate.ts';
import { resourceVersionChanged } from './resource-version-changed.ts';

const obj = (metadata: ObjectMeta): KubeObject => ({ metadata: { name: 'x', ...metadata } });
const update = (before: ObjectMeta, after: ObjectMeta): ObjectEvent<KubeObject> => ({
  type: 'update',
  oldObject: obj(before),
  object: obj(after),
});
const nonUpdates: ObjectEvent<KubeObject>[] = [
  { type: 'create', object: obj({ generation: 1 }) },
  { type: 'delete', object: obj({ generation: 1 }) },
  { type: 'delete', object: obj({ generation: 1 }), finalStateUnknown: true },
  { type: 'generic', object: obj({ generation: 1 }) },
];

describe.each<[string, () => Predicate<KubeObject>]>([
  ['generationChanged', generationChanged],
  ['resourceVersionChanged', resourceVersionChanged],
  ['labelsChanged', labelsChanged],
  ['annotationsChanged', annotationsChanged],
])('%s', (_, make) => {
  it('creates, deletes, tombstones and generic events always pass', () => {
    for (const event of nonUpdates) expect(make()(event)).toBe(true);
  });
});

describe('generationChanged', () => {
  const p = generationChanged();

  it('an update that changes the generation passes', () => {
    expect(p(update({ generation: 1 }, { generation: 2 }))).toBe(true);
  });

  it('an update that leaves the generation unchanged is filtered', () => {
    expect(p(update({ generation: 3, resourceVersion: '1' }, { generation: 3, resourceVersion: '2' }))).toBe(
      false,
    );
  });

  it('an update whose new object has generation 0 passes, because the kind does not track generation', () => {
    expect(p(update({ generation: 0 }, { generation: 0 }))).toBe(true);
  });

  it('an update between objects without a generation passes', () => {
    expect(p(update({}, {}))).toBe(true);
  });

  it('an update from a generation to none passes', () => {
    expect(p(update({ generation: 4 }, {}))).toBe(true);
  });
});

describe('resourceVersionChanged', () => {
  const p = resourceVersionChanged();

  it('an update with a new resourceVersion passes', () => {
    expect(p(update({ resourceVersion: '1' }, { resourceVersion: '2' }))).toBe(true);
  });

  it('a resync (same resourceVersion) is filtered', () => {
    expect(p(update({ resourceVersion: '7' }, { resourceVersion: '7' }))).toBe(false);
  });

  it('two objects without a resourceVersion count as unchanged', () => {
    expect(p(update({}, {}))).toBe(false);
  });
});

describe.each<[string, () => Predicate<KubeObject>, 'labels' | 'annotations']>([
  ['labelsChanged', labelsChanged, 'labels'],
  ['annotationsChanged', annotationsChanged, 'annotations'],
])('%s', (_, make, field) => {
  const p = make();
  const meta = (map: Record<string, string> | undefined): ObjectMeta =>
    map === undefined ? {} : { [field]: map };

  it('an update that adds, removes or changes an entry passes', () => {
    expect(p(update(meta({ a: '1' }), meta({ a: '1', b: '2' })))).toBe(true);
    expect(p(update(meta({ a: '1', b: '2' }), meta({ a: '1' })))).toBe(true);
    expect(p(update(meta({ a: '1' }), meta({ a: '2' })))).toBe(true);
    expect(p(update(meta({ a: '1' }), meta({ b: '1' })))).toBe(true);
  });

  it('an update with the same entries in another order is filtered', () => {
    expect(p(update(meta({ a: '1', b: '2' }), meta({ b: '2', a: '1' })))).toBe(false);
  });

  it('missing and empty maps are the same, so going from one to the other is filtered', () => {
    expect(p(update(meta(undefined), meta({})))).toBe(false);
    expect(p(update(meta({}), meta(undefined)))).toBe(false);
    expect(p(update(meta(undefined), meta({ a: '' })))).toBe(true);
  });

  it('a change elsewhere in the object is filtered', () => {
    expect(p(update({ ...meta({ a: '1' }), generation: 1 }, { ...meta({ a: '1' }), generation: 2 }))).toBe(
      false,
    );
  });
});
