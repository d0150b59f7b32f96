import { describe, expect } from 'vitest';
import { type Backend, isConflict, isNotFound, type ResourceType } from '../../backend/index.ts';
import type { ObjectKey } from '../../object/index.ts';
import { check, eventually, withMeta } from './helpers.ts';
import type { SuiteContext } from './options.ts';
import {
  configMap,
  NS,
  ownerRef,
  type SuiteConfigMap,
  type SuiteWidget,
  suiteTypes,
  widget,
} from './types.ts';

const { configMap: CM, widget: WIDGET } = suiteTypes;
const HOLD = 'suite.converge.dev/hold';
const OWNER = { namespace: NS, name: 'owner' };

async function isGone(backend: Backend, type: ResourceType, key: ObjectKey): Promise<boolean> {
  try {
    await backend.get(type, key);
    return false;
  } catch (error) {
    if (isNotFound(error)) return true;
    throw error;
  }
}

/** Removes one finalizer, retrying on conflicts with the collector's own writes. */
async function removeFinalizer(
  backend: Backend,
  type: ResourceType,
  key: ObjectKey,
  finalizer: string,
): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      const object = await backend.get(type, key);
      const finalizers = (object.metadata.finalizers ?? []).filter((f) => f !== finalizer);
      await backend.update(type, withMeta(object, { finalizers }));
      return;
    } catch (error) {
      if (isNotFound(error)) return;
      if (!isConflict(error) || attempt >= 20) throw error;
    }
  }
}

/** Owner-reference garbage collection with the three propagation policies. */
export function defineGcTests(ctx: SuiteContext): void {
  const gcWaitMs = Math.floor(ctx.timeoutMs * 0.6);
  describe('owner garbage collection', () => {
    check(
      ctx,
      'Background deletion of an owner deletes its dependents (eventually)',
      async ({ backend }) => {
        const owner = await backend.create<SuiteWidget>(WIDGET, widget('owner'));
        for (const name of ['dep-1', 'dep-2']) {
          await backend.create(CM, configMap(name, {}, { ownerReferences: [ownerRef(owner)] }));
        }
        await backend.create(CM, configMap('bystander'));
        expect(await backend.delete(WIDGET, OWNER, { propagationPolicy: 'Background' })).toEqual({
          status: 'deleted',
        });
        for (const name of ['dep-1', 'dep-2']) {
          await eventually(gcWaitMs, `dependent ${name} is deleted`, () =>
            isGone(backend, CM, { namespace: NS, name }),
          );
        }
        expect((await backend.get(CM, { namespace: NS, name: 'bystander' })).metadata.name).toBe('bystander');
      },
      { needs: ['ownerGc'] },
    );

    check(
      ctx,
      'Background deletion keeps a dependent that has another live owner and removes only the dangling reference',
      async ({ backend }) => {
        const owner = await backend.create<SuiteWidget>(WIDGET, widget('owner'));
        const other = await backend.create<SuiteWidget>(WIDGET, widget('other'));
        await backend.create(
          CM,
          configMap(
            'shared',
            {},
            { ownerReferences: [ownerRef(owner), ownerRef(other, { controller: false })] },
          ),
        );
        await backend.delete(WIDGET, OWNER);
        const key = { namespace: NS, name: 'shared' };
        await eventually(gcWaitMs, 'the dangling owner reference is removed', async () => {
          const refs = (await backend.get(CM, key)).metadata.ownerReferences ?? [];
          return refs.length === 1 && refs[0]?.uid === other.metadata.uid;
        });
      },
      { needs: ['ownerGc'] },
    );

    check(
      ctx,
      'Orphan deletion deletes the owner and leaves its dependents with the owner reference removed',
      async ({ backend }) => {
        const owner = await backend.create<SuiteWidget>(WIDGET, widget('owner'));
        await backend.create(
          CM,
          configMap(
            'dep-1',
            { keep: 'me' },
            { ownerReferences: [ownerRef(owner, { blockOwnerDeletion: true })] },
          ),
        );
        await backend.delete(WIDGET, OWNER, { propagationPolicy: 'Orphan' });
        await eventually(gcWaitMs, 'the orphaned owner is deleted', () => isGone(backend, WIDGET, OWNER));
        const dependent = await backend.get<SuiteConfigMap>(CM, { namespace: NS, name: 'dep-1' });
        expect(dependent.data).toEqual({ keep: 'me' });
        expect(dependent.metadata.ownerReferences ?? []).toEqual([]);
        expect(dependent.metadata.deletionTimestamp).toBeUndefined();
      },
      { needs: ['ownerGc'] },
    );

    check(
      ctx,
      'Foreground deletion keeps the owner, with the foregroundDeletion finalizer, until dependents with blockOwnerDeletion are gone',
      async ({ backend }) => {
        const owner = await backend.create<SuiteWidget>(WIDGET, widget('owner'));
        const depKey = { namespace: NS, name: 'dep-1' };
        await backend.create(
          CM,
          configMap(
            'dep-1',
            {},
            { ownerReferences: [ownerRef(owner, { blockOwnerDeletion: true })], finalizers: [HOLD] },
          ),
        );
        const result = await backend.delete<SuiteWidget>(WIDGET, OWNER, { propagationPolicy: 'Foreground' });
        if (result.status !== 'pending') return expect.fail('a Foreground delete should be pending');
        expect(result.object.metadata.finalizers).toContain('foregroundDeletion');
        expect(result.object.metadata.deletionTimestamp).toEqual(expect.any(String));
        await eventually(gcWaitMs, 'the blocking dependent is being deleted', async () => {
          return (await backend.get(CM, depKey)).metadata.deletionTimestamp !== undefined;
        });
        // The dependent cannot go (it has our finalizer), so the owner must still be there.
        const waiting = await backend.get<SuiteWidget>(WIDGET, OWNER);
        expect(waiting.metadata.finalizers).toContain('foregroundDeletion');
        expect(waiting.metadata.deletionTimestamp).toEqual(expect.any(String));
        await removeFinalizer(backend, CM, depKey, HOLD);
        await eventually(gcWaitMs, 'the dependent is deleted', () => isGone(backend, CM, depKey));
        await eventually(gcWaitMs, 'the owner is deleted', () => isGone(backend, WIDGET, OWNER));
      },
      { needs: ['ownerGc', 'finalizers'] },
    );
  });
}
