import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type Backend, isNotFound, type ResourceType } from '../backend/index.ts';
import { InformerRegistry } from '../informer/index.ts';
import type { KubeObject, ObjectKey } from '../object/index.ts';
import { ReferenceBackend, suiteTypes } from '../testing/backend-suite/index.ts';
import { VirtualClock } from '../testing/index.ts';
import { OrphanCollector, ownerOf, removeOwnerLabels, setOwnerLabels } from './index.ts';

const { widget: widgetType, configMap: configMapType } = suiteTypes;
const OWNERS = 3;
/** Deletions and collector rounds seen over all runs: the property must exercise both. */
const seen = { deleted: 0, conflicts: 0 };
const SECONDARIES = 5;

type Mutation =
  | { readonly kind: 'createOwner'; readonly owner: number }
  | { readonly kind: 'deleteOwner'; readonly owner: number }
  | { readonly kind: 'putSecondary'; readonly secondary: number; readonly owner: number }
  | { readonly kind: 'deleteSecondary'; readonly secondary: number };
type Step =
  | Mutation
  | { readonly kind: 'settle'; readonly ms: number }
  /** A collector round; `racing` mutations run inside it, before its owner reads and deletes. */
  | { readonly kind: 'round'; readonly racing: readonly Mutation[] };

const ownerIndex = fc.integer({ min: 0, max: OWNERS - 1 });
const secondaryIndex = fc.integer({ min: 0, max: SECONDARIES - 1 });
const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ kind: fc.constant('createOwner' as const), owner: ownerIndex }),
  fc.record({ kind: fc.constant('deleteOwner' as const), owner: ownerIndex }),
  fc.record({ kind: fc.constant('putSecondary' as const), secondary: secondaryIndex, owner: ownerIndex }),
  fc.record({ kind: fc.constant('deleteSecondary' as const), secondary: secondaryIndex }),
);
const step: fc.Arbitrary<Step> = fc.oneof(
  { arbitrary: mutation, weight: 4 },
  {
    arbitrary: fc.record({ kind: fc.constant('settle' as const), ms: fc.integer({ min: 0, max: 300 }) }),
    weight: 2,
  },
  {
    arbitrary: fc.record({
      kind: fc.constant('round' as const),
      racing: fc.array(mutation, { maxLength: 4 }),
    }),
    weight: 2,
  },
);

const ownerKey = (i: number): ObjectKey => ({ namespace: 'suite-a', name: `w${i}` });
const secondaryKey = (j: number): ObjectKey => ({ namespace: 'kube', name: `c${j}` });

async function exists(backend: Backend, type: ResourceType, key: ObjectKey): Promise<KubeObject | undefined> {
  try {
    return await backend.get(type, key);
  } catch (error) {
    if (isNotFound(error)) return undefined;
    throw error;
  }
}

/**
 * `ownerLagMs` delays every owner watch event but bookmarks, so the owner cache trails the secondary cache and
 * the collector meets owners that exist but are not cached yet.
 */
async function runScenario(steps: readonly Step[], ownerLagMs: number): Promise<void> {
  const clock = new VirtualClock({ startMs: Date.UTC(2026, 0, 1) });
  const owners = new ReferenceBackend({ types: [widgetType], clock, name: 'owners' });
  const secondaries = new ReferenceBackend({ types: [configMapType], clock, name: 'secondaries' });
  const lastUid = new Map<number, string>();
  const racing: Mutation[] = [];
  const violations: string[] = [];

  const apply = async (m: Mutation): Promise<void> => {
    switch (m.kind) {
      case 'createOwner': {
        if ((await exists(owners, widgetType, ownerKey(m.owner))) !== undefined) return;
        const created = await owners.create<KubeObject>(widgetType, {
          apiVersion: 'suite.converge.dev/v1',
          kind: 'Widget',
          metadata: { ...ownerKey(m.owner) },
        });
        lastUid.set(m.owner, created.metadata.uid ?? '');
        return;
      }
      case 'deleteOwner':
        if ((await exists(owners, widgetType, ownerKey(m.owner))) !== undefined) {
          await owners.delete(widgetType, ownerKey(m.owner));
        }
        return;
      case 'putSecondary': {
        // Labelled with the owner's current incarnation, or with a gone (or never seen) one.
        const live = await exists(owners, widgetType, ownerKey(m.owner));
        const owner = live ?? {
          metadata: { ...ownerKey(m.owner), uid: lastUid.get(m.owner) ?? `never-${m.owner}` },
        };
        const current = await exists(secondaries, configMapType, secondaryKey(m.secondary));
        if (current === undefined) {
          const skeleton = { apiVersion: 'v1', kind: 'ConfigMap', metadata: secondaryKey(m.secondary) };
          await secondaries.create(configMapType, setOwnerLabels(skeleton, widgetType, owner));
        } else {
          await secondaries.update(
            configMapType,
            setOwnerLabels(removeOwnerLabels(current), widgetType, owner),
          );
        }
        return;
      }
      case 'deleteSecondary':
        if ((await exists(secondaries, configMapType, secondaryKey(m.secondary))) !== undefined) {
          await secondaries.delete(configMapType, secondaryKey(m.secondary));
        }
        return;
    }
  };
  const race = async (): Promise<void> => {
    const next = racing.shift();
    if (next !== undefined) await apply(next);
  };

  // What the collector sees: racing mutations land just before each owner read and each delete,
  // and every delete that succeeds is checked against the owners at that very moment.
  const ownerView = new Proxy(owners, {
    get(target, prop, receiver) {
      if (prop === 'watch') {
        return (...args: Parameters<Backend['watch']>) => ({
          async *[Symbol.asyncIterator]() {
            for await (const event of target.watch(...args)) {
              if (ownerLagMs > 0 && event.type !== 'BOOKMARK') await clock.sleep(ownerLagMs, args[1]?.signal);
              yield event;
            }
          },
        });
      }
      if (prop === 'get') {
        return async (...args: Parameters<Backend['get']>) => {
          await race();
          return target.get(...args);
        };
      }
      const value = Reflect.get(target, prop, receiver) as unknown;
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
  const secondaryView = new Proxy(secondaries, {
    get(target, prop, receiver) {
      if (prop === 'delete') {
        return async (...args: Parameters<Backend['delete']>) => {
          await race();
          const before = await exists(target, args[0], args[1]);
          const result = await target.delete(...args);
          const recorded = before === undefined ? undefined : ownerOf(before);
          if (recorded === undefined) {
            violations.push(`deleted ${args[1].name} without a recorded owner`);
          } else {
            const owner = await exists(owners, widgetType, recorded.key);
            if (owner !== undefined && owner.metadata.uid === recorded.uid) {
              violations.push(`deleted ${args[1].name} while its owner ${recorded.key.name} exists`);
            }
          }
          return result;
        };
      }
      const value = Reflect.get(target, prop, receiver) as unknown;
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });

  const informers = new InformerRegistry({ clock, resyncPeriodMs: 0 });
  const collector = new OrphanCollector({
    informers,
    ownerType: widgetType,
    ownerBackend: ownerView,
    secondaries: [{ type: configMapType, backend: secondaryView }],
    clock,
  });
  const stop = new AbortController();
  const running = informers.start(stop.signal);
  const advance = async (ms: number) => {
    for (let left = ms; left > 0; left -= 10) await clock.advance(Math.min(10, left));
  };
  try {
    await advance(100);
    for (const s of steps) {
      if (s.kind === 'settle') await advance(s.ms);
      else if (s.kind === 'round') {
        racing.splice(0, racing.length, ...s.racing);
        const round = await collector.collect();
        seen.deleted += round.deleted.length;
        seen.conflicts += round.conflicts;
        racing.length = 0;
      } else await apply(s);
    }
    expect(violations).toEqual([]);

    // Once the caches caught up, one quiet round removes every orphan and nothing else.
    await advance(300 + 40 * ownerLagMs);
    await collector.collect();
    expect(violations).toEqual([]);
    for (const object of (await secondaries.list(configMapType)).items) {
      const recorded = ownerOf(object);
      const owner = recorded === undefined ? undefined : await exists(owners, widgetType, recorded.key);
      expect(owner?.metadata.uid, `${object.metadata.name} survived without its owner`).toBe(recorded?.uid);
    }
  } finally {
    stop.abort();
    await running;
  }
}

describe('OrphanCollector (property)', () => {
  it('never deletes a secondary whose owner exists at the time of the delete, and collects every orphan once caches caught up', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(step, { minLength: 1, maxLength: 40 }),
        fc.constantFrom(0, 0, 30, 120, 400),
        (steps, ownerLagMs) => runScenario(steps, ownerLagMs),
      ),
      { numRuns: 100 },
    );
    expect(seen.deleted).toBeGreaterThan(0);
  });
});
