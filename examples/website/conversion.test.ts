/**
 * The Website's conversion as plain functions and through `hubAndSpoke`: v1beta1's extra
 * hostnames survive a trip through the stored v1alpha1, and nothing else changes on the way.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { EXTRA_HOSTNAMES_ANNOTATION, toV1alpha1, toV1beta1, websiteConverter } from './conversion.ts';
import type { Website, WebsiteV1beta1 } from './types.ts';

const V1ALPHA1 = 'examples.converge.dev/v1alpha1';
const V1BETA1 = 'examples.converge.dev/v1beta1';
const signal = new AbortController().signal;

const beta = (hostnames: string[], annotations?: Record<string, string>): WebsiteV1beta1 => ({
  apiVersion: V1BETA1,
  kind: 'Website',
  metadata: { name: 'home', namespace: 'default', ...(annotations === undefined ? {} : { annotations }) },
  spec: { hostnames, content: '<h1>home</h1>', replicas: 2 },
  status: { url: 'http://home.example.com', observedGeneration: 3 },
});

const hostname = fc.stringMatching(/^[a-z0-9]([-a-z0-9]{0,10}[a-z0-9])?(\.[a-z]{2,5}){1,2}$/);
const annotations = fc.option(
  fc.dictionary(fc.stringMatching(/^[a-z]{1,8}(\.io\/[a-z]{1,8})?$/), fc.string({ maxLength: 12 }), {
    minKeys: 1,
    maxKeys: 3,
  }),
  { nil: undefined },
);
const specExtras = fc.record(
  { replicas: fc.integer({ min: 0, max: 50 }), image: fc.string({ maxLength: 12 }) },
  { requiredKeys: [] },
);
const status = fc.option(fc.record({ url: fc.string(), observedGeneration: fc.nat() }), { nil: undefined });

const arbitraryV1beta1 = fc
  .record({
    hostnames: fc.uniqueArray(hostname, { minLength: 1, maxLength: 5 }),
    annotations,
    extras: specExtras,
    status,
  })
  .map(
    ({ hostnames, annotations, extras, status }): WebsiteV1beta1 => ({
      apiVersion: V1BETA1,
      kind: 'Website',
      metadata: { name: 'w', namespace: 'ns', uid: 'u', ...(annotations ? { annotations } : {}) },
      spec: { hostnames, content: 'c', ...extras },
      ...(status ? { status } : {}),
    }),
  );

const arbitraryV1alpha1 = fc
  .record({
    domain: hostname,
    more: fc.uniqueArray(hostname, { maxLength: 4 }),
    annotations,
    extras: specExtras,
    status,
  })
  .map(({ domain, more, annotations, extras, status }): Website => {
    const ours = more.length > 0 ? { [EXTRA_HOSTNAMES_ANNOTATION]: JSON.stringify(more) } : {};
    const all = { ...annotations, ...ours };
    return {
      apiVersion: V1ALPHA1,
      kind: 'Website',
      metadata: { name: 'w', namespace: 'ns', ...(Object.keys(all).length > 0 ? { annotations: all } : {}) },
      spec: { domain, content: 'c', ...extras },
      ...(status ? { status } : {}),
    };
  });

const convert = async (object: object, to: string) =>
  (await websiteConverter.convert(structuredClone(object) as never, to, signal)) as object;

describe('Website conversion', () => {
  it('v1beta1 → v1alpha1: the first hostname is the domain, the others go into the annotation', () => {
    const stored = toV1alpha1(beta(['home.example.com', 'www.home.example.com', 'home.example.org']));
    expect(stored).toEqual({
      apiVersion: V1ALPHA1,
      kind: 'Website',
      metadata: {
        name: 'home',
        namespace: 'default',
        annotations: { [EXTRA_HOSTNAMES_ANNOTATION]: '["www.home.example.com","home.example.org"]' },
      },
      spec: { domain: 'home.example.com', content: '<h1>home</h1>', replicas: 2 },
      status: { url: 'http://home.example.com', observedGeneration: 3 },
    });
  });

  it('v1alpha1 → v1beta1: one hostname and no annotation when there was only a domain', () => {
    const stored = toV1alpha1(beta(['home.example.com'], { team: 'web' }));
    expect(stored.metadata.annotations).toEqual({ team: 'web' });
    expect(toV1beta1(stored)).toEqual(beta(['home.example.com'], { team: 'web' }));
  });

  it('keeps an annotation that is not a list of hostnames, untouched, both ways', () => {
    for (const value of ['not json', '{"a":1}', '[1,2]']) {
      const stored: Website = {
        ...toV1alpha1(beta(['home.example.com'])),
        metadata: { name: 'home', annotations: { [EXTRA_HOSTNAMES_ANNOTATION]: value } },
      };
      const served = toV1beta1(stored);
      expect(served.spec.hostnames).toEqual(['home.example.com']);
      expect(served.metadata.annotations).toEqual({ [EXTRA_HOSTNAMES_ANNOTATION]: value });
      expect(toV1alpha1(served)).toEqual(stored);
    }
  });

  it('round-trips any v1beta1 Website through the stored version, losslessly (hubAndSpoke)', async () => {
    await fc.assert(
      fc.asyncProperty(arbitraryV1beta1, async (site) => {
        const stored = await convert(site, V1ALPHA1);
        expect(stored).toMatchObject({ apiVersion: V1ALPHA1, spec: { domain: site.spec.hostnames[0] } });
        expect(await convert({ ...stored, apiVersion: V1ALPHA1 }, V1BETA1)).toEqual(site);
      }),
    );
  });

  it('round-trips any v1alpha1 Website through v1beta1, losslessly (hubAndSpoke)', async () => {
    await fc.assert(
      fc.asyncProperty(arbitraryV1alpha1, async (site) => {
        const served = (await convert(site, V1BETA1)) as WebsiteV1beta1;
        expect(served.spec.hostnames[0]).toBe(site.spec.domain);
        expect(served.metadata.annotations?.[EXTRA_HOSTNAMES_ANNOTATION]).toBeUndefined();
        expect(await convert(served, V1ALPHA1)).toEqual(site);
      }),
    );
  });

  it('refuses a version it does not know, naming the hub and the spoke', async () => {
    await expect(convert(beta(['a.example.com']), 'examples.converge.dev/v2')).rejects.toThrow(
      'examples.converge.dev/v2 is neither the hub (examples.converge.dev/v1alpha1) nor a spoke (examples.converge.dev/v1beta1)',
    );
  });

  it('does not throw on a malformed spec: the API server validates what comes back', async () => {
    for (const spec of ['text', null, [1], { hostnames: 5 }, { domain: ['a'] }]) {
      for (const [from, to] of [
        [V1ALPHA1, V1BETA1],
        [V1BETA1, V1ALPHA1],
      ] as const) {
        const object = { apiVersion: from, kind: 'Website', metadata: { name: 'x' }, spec };
        await expect(convert(object, to)).resolves.toMatchObject({ apiVersion: to });
      }
    }
    await fc.assert(
      fc.asyncProperty(fc.jsonValue(), fc.constantFrom(V1ALPHA1, V1BETA1), async (spec, from) => {
        const to = from === V1ALPHA1 ? V1BETA1 : V1ALPHA1;
        const object = { apiVersion: from, kind: 'Website', metadata: { name: 'x' }, spec };
        await expect(convert(object, to)).resolves.toBeDefined();
      }),
    );
  });
});
