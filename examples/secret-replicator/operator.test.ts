import { Manager } from '@converge/runtime';
import { VirtualClock } from '@converge/runtime/testing';
import { Store } from '@converge/store';
import { describe, expect, it } from 'vitest';
import secretReplicator, {
  namespaceType,
  REPLICA_OF,
  REPLICATE,
  type Secret,
  secretType,
} from './operator.ts';

async function until(clock: VirtualClock, check: () => Promise<boolean>): Promise<boolean> {
  for (let i = 0; i < 400; i++) {
    if (await check()) return true;
    await clock.advance(25);
  }
  return false;
}

describe('Secret replicator on the store', () => {
  it('copies annotated Secrets into every namespace, follows changes, undoes edits to replicas, and removes replicas of deleted sources', async () => {
    const clock = new VirtualClock({ startMs: Date.UTC(2026, 0, 1) });
    const store = new Store({ clock, types: [namespaceType, secretType] });
    for (const name of ['default', 'team-a', 'team-b'])
      await store.create(namespaceType, { metadata: { name } });
    await store.create<Secret>(secretType, {
      metadata: { name: 'registry', namespace: 'default', annotations: { [REPLICATE]: 'true' } },
      type: 'Opaque',
      data: { token: 'djE=' },
    });
    await store.create<Secret>(secretType, {
      metadata: { name: 'private', namespace: 'default' },
      data: { x: 'eA==' },
    });
    const manager = new Manager({ clock, backend: store });
    secretReplicator(manager);
    const abort = new AbortController();
    const running = manager.start(abort.signal);
    const replica = async (ns: string) => {
      try {
        return await store.get<Secret>(secretType, { namespace: ns, name: 'registry' });
      } catch {
        return undefined;
      }
    };
    expect(
      await until(
        clock,
        async () =>
          (await replica('team-a'))?.data?.token === 'djE=' &&
          (await replica('team-b'))?.data?.token === 'djE=',
      ),
    ).toBe(true);
    expect((await replica('team-a'))?.metadata.labels?.[REPLICA_OF]).toBe('registry');
    expect((await store.list(secretType, { namespace: 'team-a' })).items.map((s) => s.metadata.name)).toEqual(
      ['registry'],
    );

    // A namespace created later gets the copy; a source change reaches every replica.
    await store.create(namespaceType, { metadata: { name: 'team-c' } });
    const source = await store.get<Secret>(secretType, { namespace: 'default', name: 'registry' });
    await store.update<Secret>(secretType, { ...source, data: { token: 'djI=' } });
    expect(
      await until(
        clock,
        async () =>
          (await replica('team-c'))?.data?.token === 'djI=' &&
          (await replica('team-a'))?.data?.token === 'djI=',
      ),
    ).toBe(true);

    // An edit to a replica is undone.
    const edited = (await replica('team-b')) as Secret;
    await store.update<Secret>(secretType, { ...edited, data: { token: 'aGFja2Vk' } });
    expect(await until(clock, async () => (await replica('team-b'))?.data?.token === 'djI=')).toBe(true);

    // Deleting the source removes every replica.
    await store.delete(secretType, { namespace: 'default', name: 'registry' });
    expect(
      await until(
        clock,
        async () => (await replica('team-a')) === undefined && (await replica('team-c')) === undefined,
      ),
    ).toBe(true);
    abort.abort();
    await running;
    await store.close();
  });
});
