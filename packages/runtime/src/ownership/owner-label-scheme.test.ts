import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { resourceType } from '../backend/index.ts';
import { AlreadyOwnedError } from '../client/index.ts';
import { OptionsError } from '../errors.ts';
import type { KubeObject } from '../object/index.ts';
import {
  convergeOwnerLabels,
  enqueueForLabelOwner,
  isOwnedBy,
  kumoriOwnerLabels,
  type OwnerLabelScheme,
  ownedByKindSelector,
  ownedBySelector,
  ownerLabels,
  ownerOf,
  removeOwnerLabels,
  setOwnerLabels,
} from './index.ts';

const applicationType = resourceType({
  group: 'kumori.example.com',
  version: 'v1',
  kind: 'Application',
  plural: 'applications',
  namespaced: true,
});
const solutionType = resourceType({
  group: 'kumori.example.com',
  version: 'v1',
  kind: 'Solution',
  plural: 'solutions',
  namespaced: false,
});
const app = (namespace: string, name: string, uid?: string): KubeObject => ({
  metadata: { namespace, name, ...(uid === undefined ? {} : { uid }) },
});
const secondary = (labels: Record<string, string>, annotations?: Record<string, string>): KubeObject => ({
  metadata: {
    name: 'cm',
    namespace: 'default',
    labels,
    ...(annotations === undefined ? {} : { annotations }),
  },
});

const LABEL_VALUE = /^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;

describe('kumoriOwnerLabels', () => {
  it("writes Kumori's kumori/ownerkind (the kind alone) and kumori/ownerkey, in labels and annotations, with no uid", () => {
    expect(ownerLabels(applicationType, app('default', 'hello', 'u-1'), kumoriOwnerLabels)).toEqual({
      labels: { 'kumori/ownerkind': 'Application', 'kumori/ownerkey': 'default_hello' },
      annotations: { 'kumori/ownerkind': 'Application', 'kumori/ownerkey': 'default/hello' },
    });
    expect(ownerLabels(solutionType, { metadata: { name: 'shop' } }, kumoriOwnerLabels).labels).toEqual({
      'kumori/ownerkind': 'Solution',
      'kumori/ownerkey': 'shop',
    });
    expect(ownedBySelector(applicationType, { namespace: 'default', name: 'hello' }, kumoriOwnerLabels)).toBe(
      'kumori/ownerkind=Application,kumori/ownerkey=default_hello',
    );
  });

  it('reads objects labelled only with labels, as well as with labels and annotations, and matches the kind in any group', () => {
    const labelsOnly = secondary({ 'kumori/ownerkind': 'Application', 'kumori/ownerkey': 'default_hello' });
    expect(ownerOf(labelsOnly, kumoriOwnerLabels)).toEqual({
      kind: 'Application',
      key: { namespace: 'default', name: 'hello' },
    });
    const flat = secondary({ 'kumori/ownerkind': 'Solution', 'kumori/ownerkey': 'shop' });
    expect(ownerOf(flat, kumoriOwnerLabels)).toEqual({
      kind: 'Solution',
      key: { namespace: '', name: 'shop' },
    });
    expect(
      isOwnedBy(labelsOnly, applicationType, { namespace: 'default', name: 'hello' }, kumoriOwnerLabels),
    ).toBe(true);
    const elsewhere = { ...applicationType, group: 'other.example.com' };
    expect(isOwnedBy(labelsOnly, elsewhere, { namespace: 'default', name: 'hello' }, kumoriOwnerLabels)).toBe(
      true,
    );
    expect(
      isOwnedBy(labelsOnly, solutionType, { namespace: 'default', name: 'hello' }, kumoriOwnerLabels),
    ).toBe(false);
    // Converge's default scheme does not see Kumori's labels, nor Kumori's scheme Converge's.
    expect(ownerOf(labelsOnly)).toBeUndefined();
    expect(
      ownerOf(setOwnerLabels(labelsOnly, applicationType, app('default', 'hello')), kumoriOwnerLabels),
    ).toEqual(ownerOf(labelsOnly, kumoriOwnerLabels));
    // A Kind.group value is not a kind alone: unowned as far as this scheme goes.
    expect(
      ownerOf(
        secondary({ 'kumori/ownerkind': 'Application.kumori.example.com', 'kumori/ownerkey': 'x' }),
        kumoriOwnerLabels,
      ),
    ).toBeUndefined();
  });

  it('enqueues the owner of a Kumori-labelled object, and only for the handler configured with the scheme', () => {
    const added: unknown[] = [];
    const queue = { add: (r: unknown) => added.push(r), addAfter: () => {}, addRateLimited: () => {} };
    const object = secondary({ 'kumori/ownerkind': 'Application', 'kumori/ownerkey': 'default_hello' });
    const event = { type: 'delete' as const, object };
    enqueueForLabelOwner({ ownerType: applicationType }).handle(event, queue as never);
    expect(added).toEqual([]);
    enqueueForLabelOwner({ ownerType: applicationType, ownerLabels: kumoriOwnerLabels }).handle(
      event,
      queue as never,
    );
    expect(added).toEqual([{ namespace: 'default', name: 'hello' }]);
  });

  it('refuses a second owner and removes exactly its own labels', () => {
    const owned = setOwnerLabels(
      secondary({ keep: 'me' }),
      applicationType,
      app('default', 'a'),
      kumoriOwnerLabels,
    );
    expect(() => setOwnerLabels(owned, applicationType, app('default', 'b'), kumoriOwnerLabels)).toThrow(
      AlreadyOwnedError,
    );
    const both = setOwnerLabels(owned, applicationType, app('default', 'a', 'u-1'));
    const stripped = removeOwnerLabels(both, kumoriOwnerLabels);
    expect(stripped.metadata.labels).toEqual({
      keep: 'me',
      'converge.dev/owner-kind': 'Application.kumori.example.com',
      'converge.dev/owner-key': 'default_a',
    });
    expect(Object.keys(stripped.metadata.annotations ?? {}).sort()).toEqual([
      'converge.dev/owner-key',
      'converge.dev/owner-kind',
      'converge.dev/owner-uid',
    ]);
  });
});

describe('OwnerLabelScheme', () => {
  const custom: OwnerLabelScheme = {
    kindLabel: 'acme.io/owner-kind',
    keyLabel: 'acme.io/owner',
    kindAnnotation: 'acme.io/full-owner-kind',
    keyAnnotation: 'acme.io/full-owner',
    uidAnnotation: 'acme.io/owner-uid',
  };
  const schemes = fc.constantFrom<OwnerLabelScheme>(convergeOwnerLabels, kumoriOwnerLabels, custom);
  const dnsLabel = fc.stringMatching(/^[a-z0-9]([-a-z0-9]{0,20}[a-z0-9])?$/);
  const name = fc.oneof(
    dnsLabel,
    fc.string({ minLength: 1, maxLength: 90 }).filter((s) => !s.includes('/')),
  );

  it('property: in every scheme, label values are valid and ownerOf gives back the recorded owner', () => {
    fc.assert(
      fc.property(schemes, dnsLabel, name, fc.option(fc.uuid(), { nil: undefined }), (scheme, ns, n, uid) => {
        const owner = app(ns, n, uid);
        const { labels } = ownerLabels(applicationType, owner, scheme);
        expect(Object.values(labels).every((v) => v.length <= 63 && LABEL_VALUE.test(v))).toBe(true);
        const object = setOwnerLabels(secondary({}), applicationType, owner, scheme);
        const recorded = ownerOf(object, scheme);
        expect(recorded?.key).toEqual({ namespace: ns, name: n });
        expect(recorded?.kind).toBe('Application');
        expect(recorded?.group).toBe(scheme === kumoriOwnerLabels ? undefined : 'kumori.example.com');
        const recordsUid = scheme !== kumoriOwnerLabels && uid !== undefined;
        expect(recorded?.uid).toBe(recordsUid ? uid : undefined);
        expect(isOwnedBy(object, applicationType, owner, scheme)).toBe(true);
        expect(removeOwnerLabels(object, scheme).metadata).toEqual({
          ...secondary({}).metadata,
          annotations: {},
        });
      }),
    );
  });

  it('keeps a custom scheme in its own names, and its selector selects them', () => {
    const object = setOwnerLabels(secondary({}), applicationType, app('default', 'hello', 'u-9'), custom);
    expect(object.metadata.labels).toEqual({
      'acme.io/owner-kind': 'Application.kumori.example.com',
      'acme.io/owner': 'default_hello',
    });
    expect(object.metadata.annotations).toEqual({
      'acme.io/full-owner-kind': 'Application.kumori.example.com',
      'acme.io/full-owner': 'default/hello',
      'acme.io/owner-uid': 'u-9',
    });
    expect(ownedByKindSelector(applicationType, custom)).toBe(
      'acme.io/owner-kind=Application.kumori.example.com',
    );
  });

  it('rejects schemes whose names are not label keys or collide, with an OptionsError naming the field', () => {
    const bad: [OwnerLabelScheme, string][] = [
      [{ kindLabel: 'kumori/ownerkind' } as OwnerLabelScheme, 'ownerLabels.keyLabel'],
      [{ kindLabel: 'Bad Prefix/kind', keyLabel: 'k' }, 'ownerLabels.kindLabel'],
      [{ kindLabel: 'a/kind', keyLabel: 'a/kind' }, 'ownerLabels.keyLabel'],
      [{ kindLabel: 'a/kind', keyLabel: 'a/key', keyAnnotation: 'a/kind' }, 'ownerLabels.keyAnnotation'],
      [{ kindLabel: 'a/kind', keyLabel: 'a/key', uidAnnotation: 'a/key' }, 'ownerLabels.uidAnnotation'],
      [{ kindLabel: 'a/kind', keyLabel: 'a/key', kindFormat: 'kind' as never }, 'ownerLabels.kindFormat'],
    ];
    for (const [scheme, field] of bad) {
      expect(() => ownedByKindSelector(applicationType, scheme)).toThrow(OptionsError);
      try {
        ownedByKindSelector(applicationType, scheme);
      } catch (error) {
        expect((error as OptionsError).field).toBe(field);
      }
    }
    expect(() =>
      enqueueForLabelOwner({ ownerType: applicationType, ownerLabels: 'kumori' as never }),
    ).toThrow(OptionsError);
  });
});
