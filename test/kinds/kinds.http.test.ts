/**
 * Random kinds through the embedded API server over HTTP, as a client creates them: the CRD that
 * `crdsOf` generates is created (201) and served, and every value TypeBox accepts is created as an
 * object (201) and read back unchanged.
 */
import { crdsOf, defineKind, Type } from '@converge/kube';
import fc from 'fast-check';
import { Value } from 'typebox/value';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiServer, createApiServer } from '../../packages/apiserver/src/server/api-server.ts';
import { generated } from './arbitraries.ts';
import { call as callServer, served as servedBy } from './http.ts';

let server: ApiServer;
const call = (method: string, path: string, body?: unknown) => callServer(server, method, path, body);
const served = (path: string) => servedBy(server, path);

beforeAll(async () => {
  server = createApiServer({});
  await server.listen();
});

afterAll(async () => {
  await server.close();
});

describe('random kinds over HTTP', () => {
  it('creates the generated CRD and objects of every value TypeBox accepts, stored unchanged', async () => {
    let n = 0;
    const cases = generated(3).chain((g) =>
      fc.tuple(fc.constant(g.schema), fc.array(g.values, { minLength: 1, maxLength: 3 })),
    );
    await fc.assert(
      fc.asyncProperty(cases, async ([schema, values]) => {
        n += 1;
        const kindName = `Gadget${n}`;
        const spec = Type.Object({ field: schema });
        const kind = defineKind({ group: 'example.com', version: 'v1', kind: kindName, spec, status: spec });
        const [crd] = crdsOf([kind]);
        const created = await call('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', crd);
        expect(created.status, JSON.stringify(created.body)).toBe(201);
        const collection = `/apis/example.com/v1/namespaces/default/${kind.type.plural}`;
        await served(collection);
        for (const [i, value] of values.entries()) {
          expect(Value.Check(spec, { field: value })).toBe(true);
          const object = {
            apiVersion: 'example.com/v1',
            kind: kindName,
            metadata: { name: `g${i}`, namespace: 'default' },
            spec: { field: value },
          };
          const response = await call('POST', `${collection}?fieldValidation=Strict`, object);
          expect(response.status, JSON.stringify(response.body)).toBe(201);
          // As sent: JSON has no -0 (a value TypeBox accepts), so the wire form is what is stored.
          expect((response.body as { spec: unknown }).spec).toEqual(JSON.parse(JSON.stringify(object.spec)));
        }
      }),
      { numRuns: 25 },
    );
  }, 120_000);
});
