import { describe, expect, it } from 'vitest';
import { OptionsError } from '../errors.ts';
import { done } from '../reconcile/index.ts';
import { settle } from '../testing/index.ts';
import { object, setup, widgetKind } from './test-support.ts';

describe('DynamicController.serve with metadataOnly', () => {
  it('watches the kind metadata-only: handlers read PartialObjectMetadata from the cache, never a body', async () => {
    const { backend, stop, controller } = setup();
    const kind = widgetKind(1);
    for (const name of ['a', 'b']) backend.set(kind, object(kind, name));
    const run = controller.start(stop.signal);
    const seen: object[] = [];
    await controller.serve(
      kind,
      (request, { cache }) => {
        const cached = cache.get(request);
        if (cached !== undefined) seen.push(cached);
        return done();
      },
      { metadataOnly: true },
    );
    await settle();
    expect(seen).toHaveLength(2);
    for (const cached of seen) {
      expect(Object.keys(cached).sort()).toEqual(['apiVersion', 'kind', 'metadata']);
      expect(cached).toMatchObject({ apiVersion: 'example.com/v1', kind: 'Widget1' });
    }
    expect(backend.watchCalls.every((call) => call.metadataOnly === true)).toBe(true);
    stop.abort();
    await run;
  });

  it('moves a kind served again without metadataOnly to the full informer', async () => {
    const { backend, stop, controller } = setup();
    const kind = widgetKind(1);
    backend.set(kind, object(kind, 'a'));
    const run = controller.start(stop.signal);
    const seen: object[] = [];
    const handler = (
      request: { namespace: string; name: string },
      { cache }: { cache: { get(k: object): object | undefined } },
    ) => {
      const cached = cache.get(request);
      if (cached !== undefined) seen.push(cached);
      return done();
    };
    await controller.serve(kind, handler, { metadataOnly: true });
    await settle();
    await controller.serve(kind, handler);
    await settle();
    expect(seen.at(-1)).toHaveProperty('spec');
    expect(seen[0]).not.toHaveProperty('spec');
    stop.abort();
    await run;
  });

  it('refuses a metadataOnly that is not a boolean', async () => {
    const { controller } = setup();
    await expect(
      controller.serve(widgetKind(1), () => done(), { metadataOnly: 'yes' as unknown as boolean }),
    ).rejects.toBeInstanceOf(OptionsError);
  });
});
