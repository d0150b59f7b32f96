import { describe, expect } from 'vitest';
import {
  AlreadyExistsError,
  InvalidError,
  isAlreadyExists,
  isNotFound,
  NotFoundError,
} from '../../backend/index.ts';
import { check, expectCauseOn, expectRejects, TIMESTAMP, withMeta } from './helpers.ts';
import type { SuiteContext } from './options.ts';
import { configMap, NS, NS_B, type SuiteConfigMap, type SuiteWidget, suiteTypes, widget } from './types.ts';

const { configMap: CM, widget: WIDGET } = suiteTypes;

/** Create and get: server-set metadata, names, NotFound and AlreadyExists. */
export function defineCreateTests(ctx: SuiteContext): void {
  describe('create and get', () => {
    check(
      ctx,
      'create sets uid, creationTimestamp and resourceVersion, and get returns the stored object',
      async ({ backend }) => {
        const created = await backend.create<SuiteConfigMap>(
          CM,
          configMap('cm-a', { a: '1' }, { labels: { app: 'web' } }),
        );
        expect(created.metadata.uid).toEqual(expect.any(String));
        expect(created.metadata.uid).not.toBe('');
        expect(created.metadata.creationTimestamp).toMatch(TIMESTAMP);
        expect(created.metadata.resourceVersion).toEqual(expect.any(String));
        expect(created.metadata.resourceVersion).not.toBe('');
        expect(created.metadata).toMatchObject({ name: 'cm-a', namespace: NS, labels: { app: 'web' } });
        expect(created.metadata.deletionTimestamp).toBeUndefined();
        expect(created.data).toEqual({ a: '1' });
        const got = await backend.get<SuiteConfigMap>(CM, { namespace: NS, name: 'cm-a' });
        expect(got).toEqual(created);
      },
    );

    check(
      ctx,
      'every returned object carries apiVersion and kind, also when the caller left them out',
      async ({ backend }) => {
        const { apiVersion: _a, kind: _k, ...bare } = configMap('cm-bare', { a: '1' });
        const created = await backend.create(CM, bare);
        expect(created).toMatchObject({ apiVersion: 'v1', kind: 'ConfigMap' });
        const stored = await backend.create(WIDGET, widget('w-a'));
        expect(stored).toMatchObject({ apiVersion: 'suite.converge.dev/v1', kind: 'Widget' });
        expect(await backend.get(CM, { namespace: NS, name: 'cm-bare' })).toMatchObject({
          apiVersion: 'v1',
          kind: 'ConfigMap',
        });
        const list = await backend.list(CM);
        for (const item of list.items) expect(item).toMatchObject({ apiVersion: 'v1', kind: 'ConfigMap' });
      },
    );

    check(
      ctx,
      'create ignores uid, creationTimestamp, deletionTimestamp and generation sent by the client',
      async ({ backend }) => {
        const sent = withMeta(widget('w-a'), {
          uid: 'client-chosen-uid',
          creationTimestamp: '2001-02-03T04:05:06Z',
          deletionTimestamp: '2001-02-03T04:05:06Z',
          generation: 7,
        });
        const created = await backend.create<SuiteWidget>(WIDGET, sent);
        expect(created.metadata.uid).not.toBe('client-chosen-uid');
        expect(created.metadata.creationTimestamp).not.toBe('2001-02-03T04:05:06Z');
        expect(created.metadata.deletionTimestamp).toBeUndefined();
        expect(created.metadata.generation).toBe(1);
      },
    );

    check(
      ctx,
      'get of a missing object rejects with NotFoundError (instanceof and isNotFound)',
      async ({ backend }) => {
        const error = await expectRejects(
          backend.get(CM, { namespace: NS, name: 'missing' }),
          NotFoundError,
          'get',
        );
        expect(isNotFound(error)).toBe(true);
        expect(error.status).toBe(404);
      },
    );

    check(
      ctx,
      'create of an existing name rejects with AlreadyExistsError and keeps the stored object',
      async ({ backend }) => {
        const first = await backend.create(CM, configMap('cm-a', { a: '1' }));
        const error = await expectRejects(
          backend.create(CM, configMap('cm-a', { a: '2' })),
          AlreadyExistsError,
          'second create',
        );
        expect(isAlreadyExists(error)).toBe(true);
        expect(await backend.get(CM, { namespace: NS, name: 'cm-a' })).toEqual(first);
      },
    );

    check(ctx, 'the same name in another namespace is another object', async ({ backend }) => {
      const a = await backend.create(CM, configMap('cm-a', { n: 'a' }));
      const b = await backend.create(CM, configMap('cm-a', { n: 'b' }, { namespace: NS_B }));
      expect(b.metadata.uid).not.toBe(a.metadata.uid);
      expect(await backend.get(CM, { namespace: NS_B, name: 'cm-a' })).toEqual(b);
    });

    check(
      ctx,
      'create with a name that is not a DNS-1123 subdomain rejects with InvalidError with a cause on metadata.name',
      async ({ backend }) => {
        const error = await expectRejects(
          backend.create(CM, configMap('Not_A-Valid.Name!')),
          InvalidError,
          'create with an invalid name',
        );
        expectCauseOn(error.causes, 'metadata.name');
        await expectRejects(
          backend.get(CM, { namespace: NS, name: 'Not_A-Valid.Name!' }),
          NotFoundError,
          'get',
        );
      },
    );

    check(
      ctx,
      'create without name and generateName rejects with InvalidError with a cause on metadata.name',
      async ({ backend }) => {
        const error = await expectRejects(backend.create(CM, configMap(undefined)), InvalidError, 'create');
        expectCauseOn(error.causes, 'metadata.name');
      },
    );

    check(ctx, 'generateName produces a unique name with that prefix', async ({ backend }) => {
      const made = [];
      for (let i = 0; i < 3; i++) {
        made.push(await backend.create(CM, configMap(undefined, { i: String(i) }, { generateName: 'gen-' })));
      }
      const generated = made.map((o) => o.metadata.name ?? '');
      for (const name of generated) {
        expect(name.startsWith('gen-')).toBe(true);
        expect(name.length).toBeGreaterThan('gen-'.length);
      }
      expect(new Set(generated).size).toBe(3);
      for (const object of made) {
        expect(await backend.get(CM, { namespace: NS, name: object.metadata.name ?? '' })).toEqual(object);
      }
    });

    check(ctx, 'an object created again after deletion gets a new uid', async ({ backend }) => {
      const first = await backend.create(CM, configMap('cm-a'));
      await backend.delete(CM, { namespace: NS, name: 'cm-a' });
      const second = await backend.create(CM, configMap('cm-a'));
      expect(second.metadata.uid).not.toBe(first.metadata.uid);
    });
  });
}
