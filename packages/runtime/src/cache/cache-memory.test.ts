import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../object/index.ts';
import { createCache } from './index.ts';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/** Lets WeakRefs created in earlier turns be cleared, then collects. */
async function collect(): Promise<void> {
  for (let i = 0; i < 3; i++) {
    await new Promise((resolve) => setImmediate(resolve));
    gc();
  }
}

function owned(name: string, owner: string): KubeObject {
  return {
    metadata: {
      name,
      namespace: `ns-${name}`,
      ownerReferences: [{ apiVersion: 'v1', kind: 'X', name: owner, uid: owner }],
    },
  };
}

describe('cache memory', () => {
  it('retains nothing of a deleted object: the object, its namespace entry and its index entries are collectable', async () => {
    const { reader, writer } = createCache({
      indexes: { owner: (o) => o.metadata.ownerReferences?.map((r) => r.uid) ?? [] },
    });
    let refs: WeakRef<KubeObject>[] = [];
    (() => {
      const objects = [owned('a', 'u1'), owned('b', 'u2')];
      refs = objects.map((o) => new WeakRef(o));
      for (const object of objects) writer.apply({ type: 'ADDED', object });
      writer.apply({ type: 'DELETED', object: owned('a', 'u1') });
    })();
    await collect();
    expect(refs[0]?.deref()).toBeUndefined();
    expect(refs[1]?.deref()).toBeDefined();
    expect(reader.stats()).toEqual({
      objects: 1,
      namespaces: 1,
      indexes: { owner: { values: 1, objects: 1 } },
    });
  });

  it('retains nothing of objects a relist dropped or replaced', async () => {
    const { reader, writer } = createCache({
      indexes: { owner: (o) => o.metadata.ownerReferences?.map((r) => r.uid) ?? [] },
    });
    let refs: WeakRef<KubeObject>[] = [];
    (() => {
      const objects = [owned('a', 'u1'), owned('b', 'u2')];
      refs = objects.map((o) => new WeakRef(o));
      writer.replace(objects, '1');
      writer.replace([owned('c', 'u3'), { ...owned('b', 'u4') }], '2');
    })();
    await collect();
    expect(refs.map((r) => r.deref())).toEqual([undefined, undefined]);
    expect(reader.stats()).toEqual({
      objects: 2,
      namespaces: 2,
      indexes: { owner: { values: 2, objects: 2 } },
    });
  });

  it('keeps a cached object reachable (the control that shows the collection above is real)', async () => {
    const { writer } = createCache();
    let ref: WeakRef<KubeObject> | undefined;
    (() => {
      const object = owned('kept', 'u');
      ref = new WeakRef(object);
      writer.apply({ type: 'ADDED', object });
    })();
    await collect();
    expect(ref?.deref()).toBeDefined();
  });
});
