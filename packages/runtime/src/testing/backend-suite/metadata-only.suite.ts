import { describe, expect } from 'vitest';
import { apiVersionOf, type ResourceType } from '../../backend/index.ts';
import type { KubeObject } from '../../object/index.ts';
import { check, keys, names, rv } from './helpers.ts';
import type { SuiteContext } from './options.ts';
import {
  clusterWidget,
  configMap,
  NS,
  NS_B,
  type SuiteConfigMap,
  type SuiteWidget,
  suiteTypes,
  widget,
} from './types.ts';
import { watching } from './watch-reader.ts';

const { configMap: CM, widget: WIDGET, clusterWidget: CLUSTER_WIDGET } = suiteTypes;

/**
 * `object` holds only `apiVersion`, `kind` (the read kind's, not `meta.k8s.io/v1`
 * PartialObjectMetadata) and `metadata`, which is `full`'s when given.
 */
function expectMetadataOnly(object: KubeObject, type: ResourceType, full?: KubeObject): void {
  expect(Object.keys(object).sort(), 'a metadata-only object holds nothing but its metadata').toEqual([
    'apiVersion',
    'kind',
    'metadata',
  ]);
  expect({ apiVersion: object.apiVersion, kind: object.kind }, "the read kind's apiVersion and kind").toEqual(
    {
      apiVersion: apiVersionOf(type),
      kind: type.kind,
    },
  );
  if (full !== undefined) expect(object.metadata, 'the whole metadata of the object').toEqual(full.metadata);
}

/** Metadata-only reads (`metadataOnly`): get, list, paginated list and watch return only metadata. */
export function defineMetadataOnlyTests(ctx: SuiteContext): void {
  describe('metadata only', () => {
    check(
      ctx,
      "get with metadataOnly returns only the object's apiVersion, kind and whole metadata",
      async ({ backend }) => {
        await backend.create(CM, configMap('m-a', { v: '1' }, { labels: { app: 'web' } }));
        const full = await backend.get<SuiteConfigMap>(CM, { namespace: NS, name: 'm-a' });
        const partial = await backend.get(CM, { namespace: NS, name: 'm-a' }, { metadataOnly: true });
        expectMetadataOnly(partial, CM, full);
        await backend.create(WIDGET, widget('m-w', { size: 3 }));
        const fullWidget = await backend.get<SuiteWidget>(WIDGET, { namespace: NS, name: 'm-w' });
        const partialWidget = await backend.get(
          WIDGET,
          { namespace: NS, name: 'm-w' },
          { metadataOnly: true },
        );
        expectMetadataOnly(partialWidget, WIDGET, fullWidget);
        expect(partialWidget.metadata.generation).toBe(1);
      },
    );

    check(
      ctx,
      'list with metadataOnly returns the same objects as a full list, each with only its metadata',
      async ({ backend }) => {
        await backend.create(CM, configMap('m-a', { v: '1' }, { labels: { app: 'web' } }));
        await backend.create(CM, configMap('m-b', { v: '2' }));
        await backend.create(CM, configMap('m-c', { v: '3' }, { namespace: NS_B, labels: { app: 'web' } }));
        const full = await backend.list<SuiteConfigMap>(CM);
        const partial = await backend.list(CM, { metadataOnly: true });
        expect(keys(partial.items)).toEqual(keys(full.items));
        for (const [i, item] of partial.items.entries()) expectMetadataOnly(item, CM, full.items[i]);
        expect(partial.continue).toBeUndefined();
        const selected = await backend.list(CM, {
          metadataOnly: true,
          namespace: NS,
          labelSelector: 'app=web',
        });
        expect(names(selected.items)).toEqual(['m-a']);
        for (const item of selected.items) expectMetadataOnly(item, CM);
      },
    );

    check(
      ctx,
      'a paginated list with metadataOnly returns every page as metadata, from one snapshot',
      async ({ backend }) => {
        for (const name of ['p-1', 'p-2', 'p-3', 'p-4', 'p-5'])
          await backend.create(CM, configMap(name, { name }));
        const first = await backend.list(CM, { metadataOnly: true, limit: 2 });
        expect(names(first.items)).toEqual(['p-1', 'p-2']);
        expect(first.continue).toBeDefined();
        await backend.create(CM, configMap('p-6'));
        const seen = [...first.items];
        let token = first.continue;
        while (token !== undefined && token !== '') {
          const page = await backend.list(CM, { metadataOnly: true, limit: 2, continue: token });
          seen.push(...page.items);
          token = page.continue;
        }
        expect(names(seen), 'the snapshot of the first page, not p-6').toEqual([
          'p-1',
          'p-2',
          'p-3',
          'p-4',
          'p-5',
        ]);
        for (const item of seen) expectMetadataOnly(item, CM);
      },
      { needs: ['pagination'] },
    );

    check(
      ctx,
      "a watch with metadataOnly sends ADDED, MODIFIED and DELETED with only metadata, DELETED at the deletion's resourceVersion",
      async ({ backend }) => {
        await backend.create(CM, configMap('w-a', { v: '1' }));
        const list = await backend.list(CM, { metadataOnly: true });
        await watching(
          backend,
          CM,
          { resourceVersion: list.resourceVersion, metadataOnly: true },
          ctx.waitMs,
          async (watch) => {
            const b = await backend.create<SuiteConfigMap>(CM, configMap('w-b', { v: '1' }));
            expectMetadataOnly(await watch.expect('ADDED', 'w-b'), CM, b);
            const a = await backend.get<SuiteConfigMap>(CM, { namespace: NS, name: 'w-a' });
            const a2 = await backend.update<SuiteConfigMap>(CM, { ...a, data: { v: '2' } });
            expectMetadataOnly(await watch.expect('MODIFIED', 'w-a'), CM, a2);
            await backend.delete(CM, { namespace: NS, name: 'w-b' });
            const gone = await watch.expect('DELETED', 'w-b');
            expectMetadataOnly(gone, CM);
            expect(gone.metadata.uid).toBe(b.metadata.uid);
            expect(BigInt(rv(gone)) > BigInt(rv(b)), "DELETED carries the deletion's resourceVersion").toBe(
              true,
            );
          },
        );
      },
    );

    check(
      ctx,
      'a watch with metadataOnly and sendInitialEvents sends the initial objects as metadata, then its end bookmark',
      async ({ backend }) => {
        const x = await backend.create<SuiteWidget>(WIDGET, widget('w-x', { size: 1 }));
        const y = await backend.create<SuiteWidget>(WIDGET, widget('w-y', { size: 2 }));
        await watching(
          backend,
          WIDGET,
          { sendInitialEvents: true, allowBookmarks: true, metadataOnly: true },
          ctx.waitMs,
          async (watch) => {
            const initial: KubeObject[] = [];
            for (;;) {
              const event = await watch.nextEvent('the initial events and their end bookmark');
              if (event.type === 'BOOKMARK') {
                if (event.initialEventsEnd === true) break;
                continue;
              }
              expect(event.type).toBe('ADDED');
              initial.push(event.object);
            }
            expect(names(initial)).toEqual(['w-x', 'w-y']);
            expectMetadataOnly(initial[0] as KubeObject, WIDGET, x);
            expectMetadataOnly(initial[1] as KubeObject, WIDGET, y);
            const x2 = await backend.update<SuiteWidget>(WIDGET, { ...x, spec: { size: 5 } });
            const modified = await watch.expect('MODIFIED', 'w-x');
            expectMetadataOnly(modified, WIDGET, x2);
            expect(modified.metadata.generation, 'metadata carries the new generation').toBe(2);
          },
        );
      },
    );

    check(
      ctx,
      'metadataOnly reads of a cluster-scoped kind return only metadata',
      async ({ backend }) => {
        const created = await backend.create<SuiteWidget>(CLUSTER_WIDGET, clusterWidget('c-1', { size: 4 }));
        const [item] = (await backend.list(CLUSTER_WIDGET, { metadataOnly: true })).items;
        expectMetadataOnly(item as KubeObject, CLUSTER_WIDGET, created);
        const got = await backend.get(CLUSTER_WIDGET, { namespace: '', name: 'c-1' }, { metadataOnly: true });
        expectMetadataOnly(got, CLUSTER_WIDGET, created);
      },
      { needs: ['clusterScoped'] },
    );
  });
}
