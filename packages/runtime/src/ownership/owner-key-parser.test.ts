import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { OptionsError } from '../errors.ts';
import { Manager } from '../manager/index.ts';
import type { KubeObject, ObjectKey } from '../object/index.ts';
import { done } from '../reconcile/index.ts';
import { ReferenceBackend, suiteTypes } from '../testing/backend-suite/index.ts';
import { MemoryLogger, VirtualClock } from '../testing/index.ts';
import {
  collectOrphans,
  kumoriOwnerLabels,
  type OwnerLabelScheme,
  ownerLabels,
  ownerOf,
  parseOwnerKey,
  setOwnerLabels,
} from './index.ts';

const { widget: widgetType, configMap: configMapType } = suiteTypes;
const ns = 'suite-a';

/** A ConfigMap labelled with a Kumori owner key in a format Converge does not write: a bare name. */
function bareKeyLabelled(name: string, ownerKey: string, annotate = false): KubeObject {
  const owned = { 'kumori/ownerkind': 'Widget', 'kumori/ownerkey': ownerKey };
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, namespace: 'kube', labels: owned, ...(annotate ? { annotations: owned } : {}) },
  };
}

/** Kumori's labels, reading a bare name as a Widget of namespace `ns`. */
const bareNames: OwnerLabelScheme = {
  ...kumoriOwnerLabels,
  parseKey: (value, source) =>
    /^[-a-z0-9.]+$/.test(value) ? { namespace: ns, name: value } : parseOwnerKey(value, source),
};

async function setup(scheme: OwnerLabelScheme) {
  const clock = new VirtualClock({ startMs: Date.UTC(2026, 0, 1) });
  const logger = new MemoryLogger();
  const primaries = new ReferenceBackend({ types: [widgetType], clock, name: 'nats' });
  const secondaries = new ReferenceBackend({ types: [configMapType], clock, name: 'kube' });
  await primaries.create(widgetType, {
    apiVersion: 'suite.converge.dev/v1',
    kind: 'Widget',
    metadata: { name: 'w1', namespace: ns },
    spec: {},
  });
  await secondaries.create(configMapType, bareKeyLabelled('w1-config', 'w1'));
  await secondaries.create(configMapType, bareKeyLabelled('ghost-config', 'ghost', true));
  const manager = new Manager({ clock, backend: primaries, logger });
  const calls: ObjectKey[] = [];
  manager
    .controller(widgetType)
    .owns(configMapType, { backend: secondaries, ownerLabels: scheme })
    .complete((key) => {
      calls.push(key);
      return done();
    });
  const collector = collectOrphans(manager, {
    ownerType: widgetType,
    secondaries: [{ type: configMapType, backend: secondaries }],
    ownerLabels: scheme,
    intervalMs: 1_000,
  });
  const settle = async (ms = 400) => {
    for (let left = ms; left > 0; left -= 10) await clock.advance(10);
  };
  const names = async () => (await secondaries.list(configMapType)).items.map((o) => o.metadata.name).sort();
  const abort = new AbortController();
  const run = manager.start(abort.signal);
  await settle();
  return {
    collector,
    logger,
    secondaries,
    calls,
    settle,
    names,
    stop: async () => {
      abort.abort();
      await run;
    },
  };
}

describe('owner keys in another format', () => {
  it('are logged once per object and counted by the collector, and never collected, when the scheme cannot read them', async () => {
    const t = await setup(kumoriOwnerLabels);
    try {
      await t.settle(3_000); // three more rounds
      expect(t.collector.stats().rounds).toBeGreaterThanOrEqual(3);
      expect(await t.names()).toEqual(['ghost-config', 'w1-config']);
      expect(t.collector.stats()).toMatchObject({ deleted: 0, unparseableOwners: 2 });
      const warnings = t.logger.records.filter(
        (r) => r.message === 'Owner labels not understood; object never collected',
      );
      expect(warnings.map((r) => r.fields.name).sort()).toEqual(['ghost-config', 'w1-config']);
      expect(warnings[0]?.fields).toMatchObject({ kind: 'ConfigMap', ownerKind: 'Widget' });
    } finally {
      await t.stop();
    }
  });

  it('are read with parseKey: the owner is enqueued on changes, objects of a gone owner collected, of a live owner kept', async () => {
    const t = await setup(bareNames);
    try {
      expect(await t.names()).toEqual(['w1-config']);
      expect(t.collector.stats()).toMatchObject({ deleted: 1, unparseableOwners: 0 });
      const before = t.calls.length;
      const cm = await t.secondaries.get(configMapType, { namespace: 'kube', name: 'w1-config' });
      await t.secondaries.update(configMapType, { ...cm, data: { edited: 'yes' } } as KubeObject);
      await t.settle();
      expect(t.calls.slice(before)).toEqual([{ namespace: ns, name: 'w1' }]);
    } finally {
      await t.stop();
    }
  });

  it('parseKey replaces the key reading: the annotation names the key, a label that parses must agree, a parser that throws or returns junk reads as no owner', () => {
    const labelled = (labels: Record<string, string>, annotations?: Record<string, string>): KubeObject => ({
      metadata: { name: 'x', labels, ...(annotations === undefined ? {} : { annotations }) },
    });
    const kind = { 'kumori/ownerkind': 'Widget' };
    expect(ownerOf(labelled({ ...kind, 'kumori/ownerkey': 'w1' }), bareNames)).toEqual({
      kind: 'Widget',
      key: { namespace: ns, name: 'w1' },
    });
    // The default reading takes a bare name for a cluster-scoped owner.
    expect(ownerOf(labelled({ ...kind, 'kumori/ownerkey': 'w1' }), kumoriOwnerLabels)?.key).toEqual({
      namespace: '',
      name: 'w1',
    });
    // Converge's own format still reads through the fallback.
    const widget = { metadata: { name: 'w2', namespace: ns } } as KubeObject;
    const mine = setOwnerLabels({ metadata: { name: 'cm' } } as KubeObject, widgetType, widget, bareNames);
    expect(ownerOf(mine, bareNames)?.key).toEqual({ namespace: ns, name: 'w2' });
    // Label and annotation naming different owners: no owner.
    expect(
      ownerOf(
        labelled({ ...kind, 'kumori/ownerkey': 'w1' }, { ...kind, 'kumori/ownerkey': 'w2' }),
        bareNames,
      ),
    ).toBeUndefined();
    for (const parseKey of [
      () => {
        throw new Error('no');
      },
      () => 'w1' as unknown as ObjectKey,
      () => ({ namespace: ns, name: '' }),
      () => ({ namespace: 'a/b', name: 'w1' }),
      () => undefined,
    ]) {
      expect(
        ownerOf(labelled({ ...kind, 'kumori/ownerkey': 'w1' }), { ...kumoriOwnerLabels, parseKey }),
      ).toBeUndefined();
    }
  });

  it('whatever the labels and whatever a parser returns or throws, ownerOf never throws and names a well-formed key or no owner', () => {
    const text = fc.oneof(fc.string({ maxLength: 20 }), fc.constantFrom('w1', 'a_b', 'a/b', 'h-abc', ''));
    const parsed = fc.oneof(
      fc.record({
        throws: fc.anything({
          withNullPrototype: true,
          withBigInt: true,
          withDate: true,
          withMap: true,
          withSet: true,
          withTypedArray: true,
          withSparseArray: true,
        }),
      }),
      fc.record({
        returns: fc.anything({
          withNullPrototype: true,
          withBigInt: true,
          withDate: true,
          withMap: true,
          withSet: true,
          withTypedArray: true,
          withSparseArray: true,
        }),
      }),
      fc.record({ returns: fc.record({ namespace: text, name: text }) }),
    );
    fc.assert(
      fc.property(text, fc.option(text), fc.option(text), parsed, (key, kind, annotation, outcome) => {
        const parseKey = () => {
          if ('throws' in outcome) throw outcome.throws;
          return outcome.returns as ObjectKey;
        };
        const object: KubeObject = {
          metadata: {
            name: 'x',
            labels: { 'kumori/ownerkind': kind ?? 'Widget', 'kumori/ownerkey': key },
            ...(annotation === null ? {} : { annotations: { 'kumori/ownerkey': annotation } }),
          },
        };
        for (const scheme of [kumoriOwnerLabels, { ...kumoriOwnerLabels, parseKey }]) {
          const owner = ownerOf(object, scheme);
          if (owner === undefined) continue;
          expect(typeof owner.key.name).toBe('string');
          expect(owner.key.name).not.toBe('');
          expect(owner.key.name).not.toContain('/');
          expect(typeof owner.key.namespace).toBe('string');
          expect(owner.key.namespace).not.toContain('/');
        }
      }),
      { numRuns: 500 },
    );
  });

  it('parseOwnerKey reads what ownerLabels writes, and nothing hashed', () => {
    const widget = { metadata: { name: 'w1', namespace: ns } } as KubeObject;
    const { labels, annotations } = ownerLabels(widgetType, widget);
    expect(parseOwnerKey(labels['converge.dev/owner-key'] ?? '', 'label')).toEqual({
      namespace: ns,
      name: 'w1',
    });
    expect(parseOwnerKey(annotations['converge.dev/owner-key'] ?? '', 'annotation')).toEqual({
      namespace: ns,
      name: 'w1',
    });
    const long = { metadata: { name: 'n'.repeat(60), namespace: ns } } as KubeObject;
    expect(parseOwnerKey(ownerLabels(widgetType, long).labels['converge.dev/owner-key'] ?? '', 'label')).toBe(
      undefined,
    );
  });

  it('parseKey must be a function: anything else is an OptionsError', () => {
    expect(() => ownerOf({ metadata: {} }, { ...kumoriOwnerLabels, parseKey: 'bare' as never })).toThrow(
      OptionsError,
    );
  });
});
