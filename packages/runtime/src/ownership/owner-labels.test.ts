import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type ResourceType, resourceType } from '../backend/index.ts';
import { createCache } from '../cache/index.ts';
import { AlreadyOwnedError, InvalidOwnerError } from '../client/index.ts';
import { OptionsError } from '../errors.ts';
import type { KubeObject, ObjectKey } from '../object/index.ts';
import { parseLabelSelector } from '../selector/index.ts';
import {
  isOwnedBy,
  OWNER_KEY_LABEL,
  OWNER_KIND_LABEL,
  OWNER_UID_ANNOTATION,
  ownedByKindSelector,
  ownedBySelector,
  ownerLabels,
  ownerOf,
  removeOwnerLabels,
  setOwnerLabels,
} from './index.ts';

const websiteType = resourceType({
  group: 'example.com',
  version: 'v1',
  kind: 'Website',
  plural: 'websites',
  namespaced: true,
});
const clusterType = resourceType({
  group: 'example.com',
  version: 'v1',
  kind: 'Tenant',
  plural: 'tenants',
  namespaced: false,
});
const coreType = resourceType({
  group: '',
  version: 'v1',
  kind: 'Secret',
  plural: 'secrets',
  namespaced: true,
});

const LABEL_VALUE = /^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
const isValidLabelValue = (v: string): boolean => v.length <= 63 && LABEL_VALUE.test(v);
const HASHED = /^h-[a-z2-7]{40}$/;

const site = (namespace: string, name: string, uid?: string): KubeObject => ({
  apiVersion: 'example.com/v1',
  kind: 'Website',
  metadata: { namespace, name, ...(uid === undefined ? {} : { uid }) },
});
const configMap = (extra: Partial<KubeObject['metadata']> = {}): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'cm', namespace: 'other', ...extra },
});

// --- arbitraries ---------------------------------------------------------------------------------

const dnsLabel = fc.stringMatching(/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/);
const dnsSubdomain = fc
  .array(dnsLabel, { minLength: 1, maxLength: 8 })
  .map((parts) => parts.join('.'))
  .filter((name) => name.length <= 253);
/** Names a non-Kubernetes backend might accept: anything non-empty without '/'. */
const looseName = fc
  .string({ minLength: 1, maxLength: 80, unit: 'grapheme' })
  .filter((s) => !s.includes('/'));
const kind = fc.stringMatching(/^[A-Z][A-Za-z0-9]{0,70}$/);
const group = fc.oneof(fc.constant(''), dnsSubdomain);

interface Owner {
  readonly type: ResourceType;
  readonly object: KubeObject;
}
const owner: fc.Arbitrary<Owner> = fc
  .record({
    kind,
    group,
    namespaced: fc.boolean(),
    namespace: dnsLabel,
    name: fc.oneof(dnsSubdomain, looseName),
    uid: fc.option(fc.uuid(), { nil: undefined }),
  })
  .map(({ kind, group, namespaced, namespace, name, uid }) => ({
    type: resourceType({ group, version: 'v1', kind, plural: 'things', namespaced }),
    object: {
      metadata: {
        name,
        ...(namespaced ? { namespace } : {}),
        ...(uid === undefined ? {} : { uid }),
      },
    },
  }));

const keyOf = (o: Owner): ObjectKey => ({
  namespace: o.object.metadata.namespace ?? '',
  name: o.object.metadata.name ?? '',
});

describe('ownerLabels', () => {
  it('encodes kind.group and namespace_name, and keeps the full kind, key and uid in annotations', () => {
    expect(ownerLabels(websiteType, site('default', 'blog', 'u-1'))).toEqual({
      labels: { [OWNER_KIND_LABEL]: 'Website.example.com', [OWNER_KEY_LABEL]: 'default_blog' },
      annotations: {
        [OWNER_KIND_LABEL]: 'Website.example.com',
        [OWNER_KEY_LABEL]: 'default/blog',
        [OWNER_UID_ANNOTATION]: 'u-1',
      },
    });
    expect(ownerLabels(clusterType, { metadata: { name: 'acme.corp' } }).labels).toEqual({
      [OWNER_KIND_LABEL]: 'Tenant.example.com',
      [OWNER_KEY_LABEL]: 'acme.corp',
    });
    expect(ownerLabels(coreType, { metadata: { namespace: 'ns', name: 's' } }).labels[OWNER_KIND_LABEL]).toBe(
      'Secret',
    );
  });

  it('hashes a key that is too long, contains a separator, or looks like a hash', () => {
    const long = ownerLabels(websiteType, site('default', 'a'.repeat(60)));
    expect(long.labels[OWNER_KEY_LABEL]).toMatch(HASHED);
    expect(long.annotations[OWNER_KEY_LABEL]).toBe(`default/${'a'.repeat(60)}`);
    expect(ownerLabels(websiteType, site('default', 'has_underscore')).labels[OWNER_KEY_LABEL]).toMatch(
      HASHED,
    );
    const hashLike = `h-${'a'.repeat(40)}`;
    const hashed = ownerLabels(clusterType, { metadata: { name: hashLike } }).labels[OWNER_KEY_LABEL];
    expect(hashed).toMatch(HASHED);
    expect(hashed).not.toBe(hashLike);
    // Hashing is deterministic.
    expect(ownerLabels(websiteType, site('default', 'a'.repeat(60))).labels).toEqual(long.labels);
  });

  it('hashes a kind whose kind.group is longer than 63 characters', () => {
    const type = resourceType({ ...websiteType, group: `${'g'.repeat(50)}.example.com` });
    const { labels, annotations } = ownerLabels(type, { metadata: { namespace: 'n', name: 'x' } });
    expect(labels[OWNER_KIND_LABEL]).toMatch(HASHED);
    expect(annotations[OWNER_KIND_LABEL]).toBe(`Website.${'g'.repeat(50)}.example.com`);
    expect(ownedByKindSelector(type)).toBe(`${OWNER_KIND_LABEL}=${labels[OWNER_KIND_LABEL]}`);
  });

  it('rejects owners that cannot be recorded with typed errors', () => {
    expect(() => ownerLabels(websiteType, { metadata: { namespace: 'n' } })).toThrow(InvalidOwnerError);
    expect(() => ownerLabels(websiteType, { metadata: { namespace: 'n', name: 'a/b' } })).toThrow(
      InvalidOwnerError,
    );
    expect(() => ownerLabels(websiteType, { metadata: { name: 'no-namespace' } })).toThrow(/namespaced/);
    expect(() => ownerLabels(clusterType, { metadata: { namespace: 'n', name: 't' } })).toThrow(
      /cluster-scoped/,
    );
    expect(() => ownerLabels(websiteType, { kind: 'Blog', metadata: { namespace: 'n', name: 'x' } })).toThrow(
      /not a Website/,
    );
    expect(() =>
      ownerLabels(websiteType, { apiVersion: 'other.io/v1', metadata: { namespace: 'n', name: 'x' } }),
    ).toThrow(/not in group/);
    expect(() => ownerLabels(websiteType, null as unknown as KubeObject)).toThrow(InvalidOwnerError);
    expect(() => ownerLabels({ ...websiteType, kind: 'website' }, site('n', 'x'))).toThrow(OptionsError);
    expect(() => ownedByKindSelector({ kind: 'Website', group: 7 as unknown as string })).toThrow(
      OptionsError,
    );
  });

  it('property: every owner gives valid label values, and a round trip through ownerOf gives it back', () => {
    fc.assert(
      fc.property(owner, ({ type, object }) => {
        const { labels, annotations } = ownerLabels(type, object);
        expect(Object.values(labels).every(isValidLabelValue)).toBe(true);
        const owned = setOwnerLabels(configMap(), type, object);
        const uid = object.metadata.uid;
        const expected = {
          group: type.group,
          kind: type.kind,
          key: { namespace: object.metadata.namespace ?? '', name: object.metadata.name },
          ...(uid === undefined ? {} : { uid }),
        };
        expect(ownerOf(owned)).toEqual(expected);
        // Without annotations, the labels alone decode unless a value was hashed.
        const labelsOnly = { ...owned, metadata: { ...owned.metadata, annotations: {} } };
        const hashed = Object.values(labels).some((v) => HASHED.test(v));
        const { uid: _, ...withoutUid } = expected;
        expect(ownerOf(labelsOnly)).toEqual(hashed ? undefined : withoutUid);
        expect(annotations[OWNER_KEY_LABEL]).toBe(
          expected.key.namespace === ''
            ? expected.key.name
            : `${expected.key.namespace}/${expected.key.name}`,
        );
      }),
      { numRuns: 500 },
    );
  });

  it('property: Kubernetes names (namespaces up to 63, names up to 253) give valid values', () => {
    fc.assert(
      fc.property(dnsLabel, dnsSubdomain, (namespace, name) => {
        const { labels } = ownerLabels(websiteType, site(namespace, name));
        expect(Object.values(labels).every(isValidLabelValue)).toBe(true);
        const plain = `${namespace}_${name}`;
        expect(labels[OWNER_KEY_LABEL]).toEqual(plain.length <= 63 ? plain : expect.stringMatching(HASHED));
      }),
      { numRuns: 500 },
    );
  });

  it('property: distinct owners give distinct label pairs unless hashed, and always distinct annotations', () => {
    fc.assert(
      fc.property(owner, owner, (a, b) => {
        const sameOwner =
          a.type.kind === b.type.kind &&
          a.type.group === b.type.group &&
          keyOf(a).namespace === keyOf(b).namespace &&
          keyOf(a).name === keyOf(b).name;
        fc.pre(!sameOwner);
        const la = ownerLabels(a.type, a.object);
        const lb = ownerLabels(b.type, b.object);
        const pair = (m: typeof la) => `${m.labels[OWNER_KIND_LABEL]} ${m.labels[OWNER_KEY_LABEL]}`;
        const full = (m: typeof la) => `${m.annotations[OWNER_KIND_LABEL]} ${m.annotations[OWNER_KEY_LABEL]}`;
        expect(full(la)).not.toBe(full(lb));
        // Even with hashing a collision would need a SHA-256 prefix collision; without it, none is possible.
        expect(pair(la)).not.toBe(pair(lb));
        // And a labelled object records exactly its own owner.
        const owned = setOwnerLabels(configMap(), a.type, a.object);
        expect(isOwnedBy(owned, a.type, keyOf(a))).toBe(true);
        expect(isOwnedBy(owned, b.type, keyOf(b))).toBe(false);
      }),
      { numRuns: 500 },
    );
  });

  it('property: distinct short keys never collide in their plain label values (the namespace_name split is injective)', () => {
    const part = fc.stringMatching(/^[a-z0-9]([-a-z0-9.]{0,8}[a-z0-9])?$/);
    const key = fc.record({ namespace: fc.oneof(fc.constant(''), part), name: part });
    fc.assert(
      fc.property(key, key, (a, b) => {
        fc.pre(a.namespace !== b.namespace || a.name !== b.name);
        const value = (k: ObjectKey) => ownedBySelector(clusterType, k).split(`${OWNER_KEY_LABEL}=`)[1];
        expect(value(a)).not.toMatch(HASHED);
        expect(value(a)).not.toBe(value(b));
      }),
      { numRuns: 1000 },
    );
  });
});

describe('setOwnerLabels, removeOwnerLabels, ownerOf', () => {
  it('returns a copy, keeps other labels and annotations, and refreshes the uid for the same owner', () => {
    const original = configMap({ labels: { app: 'web' }, annotations: { note: 'x' } });
    const owned = setOwnerLabels(original, websiteType, site('default', 'blog', 'u-1'));
    expect(original.metadata.labels).toEqual({ app: 'web' });
    expect(owned.metadata.labels).toMatchObject({ app: 'web', [OWNER_KEY_LABEL]: 'default_blog' });
    expect(owned.metadata.annotations).toMatchObject({ note: 'x', [OWNER_UID_ANNOTATION]: 'u-1' });
    const adopted = setOwnerLabels(owned, websiteType, site('default', 'blog', 'u-2'));
    expect(ownerOf(adopted)?.uid).toBe('u-2');
    const withoutUid = setOwnerLabels(owned, websiteType, site('default', 'blog'));
    expect(withoutUid.metadata.annotations?.[OWNER_UID_ANNOTATION]).toBeUndefined();
  });

  it('refuses to record a second owner', () => {
    const owned = setOwnerLabels(configMap(), websiteType, site('default', 'blog'));
    expect(() => setOwnerLabels(owned, websiteType, site('default', 'shop'))).toThrow(AlreadyOwnedError);
    expect(() => setOwnerLabels(owned, clusterType, { metadata: { name: 'blog' } })).toThrow(
      AlreadyOwnedError,
    );
    const moved = setOwnerLabels(removeOwnerLabels(owned), websiteType, site('default', 'shop'));
    expect(ownerOf(moved)?.key).toEqual({ namespace: 'default', name: 'shop' });
  });

  it('removeOwnerLabels drops exactly the owner labels and annotations', () => {
    const original = configMap({ labels: { app: 'web' }, annotations: { note: 'x' } });
    const owned = setOwnerLabels(original, websiteType, site('default', 'blog', 'u'));
    const removed = removeOwnerLabels(owned);
    expect(removed.metadata.labels).toEqual({ app: 'web' });
    expect(removed.metadata.annotations).toEqual({ note: 'x' });
    expect(ownerOf(removed)).toBeUndefined();
    expect(removeOwnerLabels(original)).toBe(original);
  });

  it('ownerOf ignores objects without both labels, or whose labels and annotations disagree', () => {
    expect(ownerOf(configMap())).toBeUndefined();
    expect(ownerOf(configMap({ labels: { [OWNER_KIND_LABEL]: 'Website.example.com' } }))).toBeUndefined();
    const owned = setOwnerLabels(configMap(), websiteType, site('default', 'blog'));
    const tampered = {
      ...owned,
      metadata: {
        ...owned.metadata,
        annotations: { ...owned.metadata.annotations, [OWNER_KEY_LABEL]: 'default/shop' },
      },
    };
    expect(ownerOf(tampered)).toBeUndefined();
    const relabelled = {
      ...owned,
      metadata: { ...owned.metadata, labels: { ...owned.metadata.labels, [OWNER_KIND_LABEL]: 'Other' } },
    };
    expect(ownerOf(relabelled)).toBeUndefined();
    for (const bad of ['', 'lower', 'Kind.', 'a_b_c']) {
      expect(
        ownerOf(configMap({ labels: { [OWNER_KIND_LABEL]: bad, [OWNER_KEY_LABEL]: bad } })),
      ).toBeUndefined();
    }
    expect(
      ownerOf(configMap({ labels: { [OWNER_KIND_LABEL]: 'Tenant.example.com', [OWNER_KEY_LABEL]: 'acme' } })),
    ).toEqual({ group: 'example.com', kind: 'Tenant', key: { namespace: '', name: 'acme' } });
  });

  it('isOwnedBy compares kind, key and, when both are known, uid', () => {
    const owned = setOwnerLabels(configMap(), websiteType, site('default', 'blog', 'u-1'));
    expect(isOwnedBy(owned, websiteType, site('default', 'blog', 'u-1'))).toBe(true);
    expect(isOwnedBy(owned, websiteType, site('default', 'blog'))).toBe(true);
    expect(isOwnedBy(owned, websiteType, site('default', 'blog', 'u-2'))).toBe(false);
    expect(isOwnedBy(owned, { group: 'other.io', kind: 'Website' }, site('default', 'blog'))).toBe(false);
    expect(isOwnedBy(owned, websiteType, { namespace: 'default', name: 'shop' })).toBe(false);
  });
});

describe('selectors', () => {
  it('select what a kind and what one owner owns, in a cache', () => {
    const { reader, writer } = createCache<KubeObject>({ name: 'cms' });
    const objects = [
      setOwnerLabels(configMap({ name: 'a' }), websiteType, site('default', 'blog')),
      setOwnerLabels(configMap({ name: 'b' }), websiteType, site('default', 'shop')),
      setOwnerLabels(configMap({ name: 'c' }), clusterType, { metadata: { name: 'blog' } }),
      configMap({ name: 'd', labels: { app: 'web' } }),
    ];
    writer.replace(objects, '1');
    const names = (selector: string) =>
      reader
        .list({ labelSelector: selector })
        .map((o) => o.metadata.name)
        .sort();
    expect(ownedByKindSelector(websiteType)).toBe('converge.dev/owner-kind=Website.example.com');
    expect(names(ownedByKindSelector(websiteType))).toEqual(['a', 'b']);
    expect(names(ownedBySelector(websiteType, { namespace: 'default', name: 'blog' }))).toEqual(['a']);
    expect(names(ownedBySelector(clusterType, { metadata: { name: 'blog' } }))).toEqual(['c']);
    expect(() => parseLabelSelector(ownedBySelector(websiteType, site('x', 'y'.repeat(200))))).not.toThrow();
    expect(() => ownedBySelector(websiteType, { namespace: 'x', name: '' })).toThrow(InvalidOwnerError);
  });
});
