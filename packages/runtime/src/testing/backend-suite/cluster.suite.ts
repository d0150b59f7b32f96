import { describe, expect } from 'vitest';
import { BadRequestError, NotFoundError } from '../../backend/index.ts';
import { check, expectRejects, names, withMeta } from './helpers.ts';
import type { SuiteContext } from './options.ts';
import { clusterWidget, NS, type SuiteWidget, suiteTypes } from './types.ts';
import { watching } from './watch-reader.ts';

const { clusterWidget: CLUSTER } = suiteTypes;

/** Cluster-scoped kinds. */
export function defineClusterTests(ctx: SuiteContext): void {
  const needs = { needs: ['clusterScoped'] } as const;
  describe('cluster-scoped kind', () => {
    check(
      ctx,
      'a cluster-scoped object is created, read, listed, watched, updated and deleted without a namespace',
      async ({ backend }) => {
        const list = await backend.list(CLUSTER);
        await watching<SuiteWidget>(
          backend,
          CLUSTER,
          { resourceVersion: list.resourceVersion },
          ctx.waitMs,
          async (watch) => {
            const created = await backend.create<SuiteWidget>(CLUSTER, clusterWidget('cw-a', { size: 1 }));
            expect(created.metadata.namespace ?? '').toBe('');
            expect(created.metadata.generation).toBe(1);
            const key = { namespace: '', name: 'cw-a' };
            expect(await backend.get(CLUSTER, key)).toEqual(created);
            expect(await watch.expect('ADDED', 'cw-a')).toEqual(created);
            await backend.create(CLUSTER, clusterWidget('cw-b'));
            expect(names((await backend.list(CLUSTER)).items)).toEqual(['cw-a', 'cw-b']);
            const updated = await backend.update<SuiteWidget>(CLUSTER, { ...created, spec: { size: 2 } });
            expect(updated.metadata.generation).toBe(2);
            expect(await backend.delete(CLUSTER, key)).toEqual({ status: 'deleted' });
            await expectRejects(backend.get(CLUSTER, key), NotFoundError, 'get after delete');
            await watch.expect('ADDED', 'cw-b');
            await watch.expect('MODIFIED', 'cw-a');
            await watch.expect('DELETED', 'cw-a');
          },
        );
      },
      needs,
    );

    check(
      ctx,
      'creating a cluster-scoped object with a namespace rejects with BadRequestError',
      async ({ backend }) => {
        await expectRejects(
          backend.create(CLUSTER, withMeta(clusterWidget('cw-a'), { namespace: NS })),
          BadRequestError,
          'create with a namespace',
        );
        await expectRejects(backend.get(CLUSTER, { namespace: '', name: 'cw-a' }), NotFoundError, 'get');
      },
      needs,
    );
  });
}
