import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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
import { applyKindCrds, projectModules } from '../dev-kinds.ts';

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
      expect(await applyKindCrds(server, wired(server, gadget(10)))).toEqual([
        { name: 'gadgets.dev.example.com', outcome: 'created' },
      ]);
      expect(server.store.types().some((t) => t.plural === 'gadgets' && t.group === 'dev.example.com')).toBe(
        true,
      );
      // Again (a restart over the same data dir) with another schema: the stored CRD is brought up to date.
      expect(await applyKindCrds(server, wired(server, gadget(20)))).toEqual([
        { name: 'gadgets.dev.example.com', outcome: 'updated' },
      ]);
      // And once more with the same schema: nothing to do.
      expect(await applyKindCrds(server, wired(server, gadget(20)))).toEqual([
        { name: 'gadgets.dev.example.com', outcome: 'unchanged' },
      ]);
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

describe('converge dev without a module', () => {
  it("runs the modules package.json's converge.module names; none named, undefined (the bundled examples)", () => {
    const dir = mkdtempSync(join(tmpdir(), 'converge-project-modules-'));
    try {
      expect(projectModules(dir)).toBeUndefined();
      const cases: [manifest: string, modules: readonly string[] | undefined][] = [
        ['{"converge":{"module":"src/operator.ts"}}', ['src/operator.ts']],
        ['{"converge":{"module":["a.ts","b.ts"]}}', ['a.ts', 'b.ts']],
        ['{"converge":{"module":[]}}', undefined],
        ['{"converge":{"module":3}}', undefined],
        ['{"name":"x"}', undefined],
        ['{', undefined],
      ];
      for (const [manifest, modules] of cases) {
        writeFileSync(join(dir, 'package.json'), manifest);
        expect(projectModules(dir), manifest).toEqual(modules);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
