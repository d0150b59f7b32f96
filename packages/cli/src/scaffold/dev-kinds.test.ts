import { createApiServer } from '@converge/apiserver';
import { defineKind, Type } from '@converge/kube';
import {
  type CustomResourceDefinition,
  configMapType,
  customResourceDefinitionType,
  done,
  Manager,
} from '@converge/runtime';
import { describe, expect, it } from 'vitest';
import { applyKindCrds } from '../dev-kinds.ts';

const gadget = (maxLength: number) =>
  defineKind({
    group: 'dev.example.com',
    version: 'v1',
    kind: 'Gadget',
    spec: Type.Object({ size: Type.String({ maxLength }) }),
  });

/** A manager over `server`'s store with one controller for `kind` (never started). */
function wired(server: ReturnType<typeof createApiServer>, kind: ReturnType<typeof gadget>): Manager {
  const manager = new Manager({ backend: server.store });
  manager
    .controller(kind.type)
    .owns(configMapType)
    .complete(async () => done());
  return manager;
}

describe('converge dev: the CRDs of the kinds a module wires', () => {
  it('are created and served before the operators start, and follow a changed schema', async () => {
    const server = createApiServer({ port: 0, insecure: true });
    await server.listen();
    try {
      expect(await applyKindCrds(server, wired(server, gadget(10)))).toEqual(['gadgets.dev.example.com']);
      expect(server.store.types().some((t) => t.plural === 'gadgets' && t.group === 'dev.example.com')).toBe(
        true,
      );
      // Again (a restart over the same data dir) with another schema: the stored CRD is brought up to date.
      expect(await applyKindCrds(server, wired(server, gadget(20)))).toEqual(['gadgets.dev.example.com']);
      const crd = await server.store.get<CustomResourceDefinition>(customResourceDefinitionType, {
        namespace: '',
        name: 'gadgets.dev.example.com',
      });
      const schema = crd.spec.versions[0]?.schema?.openAPIV3Schema;
      expect(schema?.properties?.spec?.properties?.size?.maxLength).toBe(20);
    } finally {
      await server.close();
    }
  });

  it('a module wiring only built-in kinds applies none', async () => {
    const server = createApiServer({ port: 0, insecure: true });
    const manager = new Manager({ backend: server.store });
    manager.controller(configMapType).complete(async () => done());
    expect(await applyKindCrds(server, manager)).toEqual([]);
  });
});
