import { describe, expect } from 'vitest';
import { type Backend, BadRequestError } from '../../backend/index.ts';
import { check, compareRevisions, expectRejects, keys, names, rv } from './helpers.ts';
import type { SuiteContext } from './options.ts';
import { configMap, NS, NS_B, type SuiteConfigMap, suiteTypes, widget } from './types.ts';

const { configMap: CM, widget: WIDGET } = suiteTypes;

/** Seeds five ConfigMaps over two namespaces with varied labels, and one Widget. */
async function seed(backend: Backend): Promise<void> {
  await backend.create(CM, configMap('a1', {}, { labels: { app: 'web', tier: 'front' } }));
  await backend.create(CM, configMap('a2', {}, { labels: { app: 'web', tier: 'back' } }));
  await backend.create(CM, configMap('a3', {}, { labels: { app: 'db' } }));
  await backend.create(CM, configMap('b1', {}, { namespace: NS_B }));
  await backend.create(CM, configMap('b2', {}, { namespace: NS_B, labels: { app: 'web', tier: 'front' } }));
  await backend.create(WIDGET, widget('a1'));
}

/** Label selectors and the names of the seeded objects each one selects. */
const LABEL_CASES: readonly (readonly [selector: string, behaviour: string, expected: readonly string[]])[] =
  [
    ['app=web', '= selects objects with that value', ['a1', 'a2', 'b2']],
    ['app==web', '== is the same as =', ['a1', 'a2', 'b2']],
    ['app!=web', '!= selects other values and objects without the label', ['a3', 'b1']],
    ['tier in (front,back)', 'in selects any of the values', ['a1', 'a2', 'b2']],
    ['tier notin (front)', 'notin selects other values and objects without the label', ['a2', 'a3', 'b1']],
    ['tier', 'a bare key selects objects that have the label', ['a1', 'a2', 'b2']],
    ['!tier', '!key selects objects without the label', ['a3', 'b1']],
    ['app=web,tier!=front', 'a comma ANDs requirements', ['a2']],
  ];

/** Field selectors and the names they select. */
const FIELD_CASES: readonly (readonly [selector: string, expected: readonly string[]])[] = [
  ['metadata.name=a2', ['a2']],
  ['metadata.name==b1', ['b1']],
  [`metadata.namespace=${NS_B}`, ['b1', 'b2']],
  [`metadata.name!=a1,metadata.namespace=${NS}`, ['a2', 'a3']],
];

/** list: scopes, selectors and the list resourceVersion. */
export function defineListTests(ctx: SuiteContext): void {
  describe('list', () => {
    check(
      ctx,
      'list without options returns every object of the kind, in all namespaces, in key order',
      async ({ backend }) => {
        await seed(backend);
        const list = await backend.list(CM);
        expect(keys(list.items)).toEqual([`${NS}/a1`, `${NS}/a2`, `${NS}/a3`, `${NS_B}/b1`, `${NS_B}/b2`]);
        expect(list.continue).toBeUndefined();
        expect(names((await backend.list(WIDGET)).items)).toEqual(['a1']);
      },
    );

    check(ctx, 'list with a namespace returns only that namespace', async ({ backend }) => {
      await seed(backend);
      expect(names((await backend.list(CM, { namespace: NS })).items)).toEqual(['a1', 'a2', 'a3']);
      expect(names((await backend.list(CM, { namespace: NS_B })).items)).toEqual(['b1', 'b2']);
      expect((await backend.list(CM, { namespace: 'suite-none' })).items).toEqual([]);
    });

    for (const [selector, behaviour, expected] of LABEL_CASES) {
      check(ctx, `list with labelSelector "${selector}": ${behaviour}`, async ({ backend }) => {
        await seed(backend);
        expect(names((await backend.list(CM, { labelSelector: selector })).items)).toEqual(expected);
      });
    }

    check(ctx, 'list with a namespace and a label selector applies both', async ({ backend }) => {
      await seed(backend);
      const list = await backend.list(CM, { namespace: NS_B, labelSelector: 'app=web' });
      expect(names(list.items)).toEqual(['b2']);
    });

    check(ctx, 'list with an invalid label selector rejects with BadRequestError', async ({ backend }) => {
      await seed(backend);
      await expectRejects(
        backend.list(CM, { labelSelector: 'tier in (front' }),
        BadRequestError,
        'unclosed in (',
      );
      await expectRejects(
        backend.list(CM, { labelSelector: 'app=we b' }),
        BadRequestError,
        'space in a value',
      );
    });

    for (const [selector, expected] of FIELD_CASES) {
      check(
        ctx,
        `list with fieldSelector "${selector}" selects by metadata`,
        async ({ backend }) => {
          await seed(backend);
          expect(names((await backend.list(CM, { fieldSelector: selector })).items)).toEqual(expected);
        },
        { needs: ['fieldSelectors'] },
      );
    }

    check(
      ctx,
      'list with an unsupported field selector rejects with BadRequestError',
      async ({ backend }) => {
        await seed(backend);
        await expectRejects(
          backend.list(CM, { fieldSelector: 'spec.size=1' }),
          BadRequestError,
          'unknown field',
        );
      },
      { needs: ['fieldSelectors'] },
    );

    check(ctx, "the list resourceVersion is at least every item's resourceVersion", async ({ backend }) => {
      await seed(backend);
      const a1 = await backend.get<SuiteConfigMap>(CM, { namespace: NS, name: 'a1' });
      await backend.update(CM, { ...a1, data: { changed: 'yes' } });
      await backend.create(WIDGET, widget('later'));
      for (const options of [{}, { namespace: NS }, { labelSelector: 'app=web' }]) {
        const list = await backend.list(CM, options);
        expect(list.resourceVersion).toEqual(expect.any(String));
        for (const item of list.items)
          expect(compareRevisions(list.resourceVersion, rv(item))).toBeGreaterThanOrEqual(0);
      }
    });

    check(ctx, 'list of an empty kind returns no items and a resourceVersion', async ({ backend }) => {
      const list = await backend.list(CM);
      expect(list.items).toEqual([]);
      expect(list.resourceVersion).toEqual(expect.any(String));
    });
  });
}
