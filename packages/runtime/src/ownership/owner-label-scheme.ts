import { OptionsError } from '../errors.ts';
import type { ObjectKey } from '../object/index.ts';

/** Label (and annotation) naming the owner's kind: `Kind.group`, or `Kind` for the core group. */
export const OWNER_KIND_LABEL = 'converge.dev/owner-kind';
/** Label (and annotation) naming the owner's key: see `ownerLabels` for the encoding. */
export const OWNER_KEY_LABEL = 'converge.dev/owner-key';
/** Annotation holding the owner's uid, when the owner has one. */
export const OWNER_UID_ANNOTATION = 'converge.dev/owner-uid';

/**
 * How the owner's kind is written: `Kind.group` (`Website.example.com`; `Secret` for the core
 * group), or the kind alone (`Website`), as Kumori's controller runtime compares it with the kind
 * string it was created with.
 */
export type OwnerKindFormat = 'Kind.group' | 'Kind';

/**
 * Reads the owner's key from the key label (`source: 'label'`) or the key annotation
 * (`'annotation'`) as another program wrote it: the key (namespace '' for a cluster-scoped owner),
 * or undefined when `value` is not one. {@link parseOwnerKey} is Converge's own reading, to fall
 * back on for objects Converge labelled.
 */
export type OwnerKeyParser = (value: string, source: 'label' | 'annotation') => ObjectKey | undefined;

/**
 * Where an object records its owner: the label and annotation names, and how the kind is
 * written. The values are encoded the same way whatever the names (see `ownerLabels`): the kind
 * label holds the kind in `kindFormat`, the key label `namespace_name` (or `name` for a
 * cluster-scoped owner), each hashed (`h-…`) when it would not be a valid label value; the
 * annotations hold the full kind, the full key (`namespace/name`) and, when `uidAnnotation` is
 * set, the owner's uid.
 *
 * Ready-made: {@link convergeOwnerLabels} (the default everywhere) and {@link kumoriOwnerLabels}.
 *
 * @example
 * const mine: OwnerLabelScheme = { kindLabel: 'acme.io/owner-kind', keyLabel: 'acme.io/owner-key' };
 * setOwnerLabels(configMap, websiteType, site, mine);
 */
export interface OwnerLabelScheme {
  /** The label naming the owner's kind (a valid label key). */
  readonly kindLabel: string;
  /** The label naming the owner's key (a valid label key, not `kindLabel`). */
  readonly keyLabel: string;
  /** The annotation keeping the full kind. Default: `kindLabel`. */
  readonly kindAnnotation?: string;
  /** The annotation keeping the full key. Default: `keyLabel`. */
  readonly keyAnnotation?: string;
  /** The annotation keeping the owner's uid. Default: none (the uid is not recorded). */
  readonly uidAnnotation?: string;
  /**
   * How the kind is written. Default `Kind.group`. With `Kind`, objects record no group: an
   * owner of that kind in any group matches them.
   */
  readonly kindFormat?: OwnerKindFormat;
  /**
   * How to read the key label and annotation, for objects another program labelled in its own
   * format. Default: Converge's ({@link parseOwnerKey}: `namespace_name` or `name` in the label,
   * `namespace/name` in the annotation, hashed labels checked against the annotation). When given
   * it replaces that reading: the annotation, when there is one, names the key (and a label that
   * parses must name the same one); otherwise the label does. Writing (`setOwnerLabels`) still uses
   * Converge's format, so a parser should accept it too (fall back on {@link parseOwnerKey}).
   *
   * @example
   * // Kumori keys that are bare names of primaries in namespace 'default'; Converge's own otherwise:
   * const scheme: OwnerLabelScheme = {
   *   ...kumoriOwnerLabels,
   *   parseKey: (value, source) =>
   *     /^[-a-z0-9.]+$/.test(value) ? { namespace: 'default', name: value } : parseOwnerKey(value, source),
   * };
   */
  readonly parseKey?: OwnerKeyParser;
}

/** An {@link OwnerLabelScheme} with its defaults filled in and checked (itself a scheme). */
export interface ResolvedOwnerLabelScheme extends OwnerLabelScheme {
  readonly kindAnnotation: string;
  readonly keyAnnotation: string;
  readonly kindFormat: OwnerKindFormat;
}

/**
 * Converge's owner labels, the default of every ownership function and option:
 * `converge.dev/owner-kind` (`Kind.group`), `converge.dev/owner-key`, and the annotations of the
 * same names plus `converge.dev/owner-uid`.
 *
 * @example
 * ownedByKindSelector(websiteType, convergeOwnerLabels); // 'converge.dev/owner-kind=Website.example.com'
 */
export const convergeOwnerLabels: OwnerLabelScheme = Object.freeze({
  kindLabel: OWNER_KIND_LABEL,
  keyLabel: OWNER_KEY_LABEL,
  uidAnnotation: OWNER_UID_ANNOTATION,
  kindFormat: 'Kind.group',
});

/**
 * Kumori's owner labels (its `OwnerkindLabel`, `OwnerKeyLabel` and the annotations of the same
 * names): `kumori/ownerkind` holds the kind alone (Kumori compares it with its controller's kind
 * string), `kumori/ownerkey` the key. Kumori records no uid, so neither does this scheme: an owner
 * deleted and re-created under the same key keeps the objects of the old one, as in Kumori.
 *
 * Kumori's own encoding of the key is not public. This scheme writes it as Converge does
 * (`namespace_name` in the label, `namespace/name` in the annotation; a cluster-scoped owner is its
 * bare name in both), so a Kumori key that is a plain name (letters, digits, `-` and `.`, at most
 * 63 characters) reads back as the cluster-scoped owner of that name.
 *
 * @example
 * manager.controller(applicationType).owns(configMapType, { backend: kube, ownerLabels: kumoriOwnerLabels });
 * setOwnerLabels(configMap, applicationType, app, kumoriOwnerLabels);
 * // labels: { 'kumori/ownerkind': 'Application', 'kumori/ownerkey': 'default_hello' }
 */
export const kumoriOwnerLabels: OwnerLabelScheme = Object.freeze({
  kindLabel: 'kumori/ownerkind',
  keyLabel: 'kumori/ownerkey',
  kindFormat: 'Kind',
});

const NAME = /^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** Whether `key` is a Kubernetes qualified name (`[prefix/]name`), as label and annotation keys are. */
function isQualifiedName(key: string): boolean {
  const slash = key.indexOf('/');
  const name = slash < 0 ? key : key.slice(slash + 1);
  const prefix = slash < 0 ? undefined : key.slice(0, slash);
  if (prefix !== undefined && (prefix.length > 253 || !DNS_SUBDOMAIN.test(prefix))) return false;
  return name.length <= 63 && NAME.test(name);
}

const resolved = new WeakMap<OwnerLabelScheme, ResolvedOwnerLabelScheme>();

/**
 * Checks `scheme` (default {@link convergeOwnerLabels}) and fills in its defaults; throws an
 * OptionsError naming the field (prefixed with `field`). A scheme is read once and remembered:
 * treat it as immutable.
 */
export function resolveOwnerLabelScheme(
  scheme: OwnerLabelScheme = convergeOwnerLabels,
  field = 'ownerLabels',
): ResolvedOwnerLabelScheme {
  if (typeof scheme !== 'object' || scheme === null) {
    throw new OptionsError(field, scheme, 'an OwnerLabelScheme { kindLabel, keyLabel, … }');
  }
  const known = resolved.get(scheme);
  if (known !== undefined) return known;
  const key = (name: keyof OwnerLabelScheme, value: unknown): string => {
    if (typeof value !== 'string' || !isQualifiedName(value)) {
      throw new OptionsError(
        `${field}.${name}`,
        value,
        'a label or annotation key such as example.com/owner',
      );
    }
    return value;
  };
  const kindLabel = key('kindLabel', scheme.kindLabel);
  const keyLabel = key('keyLabel', scheme.keyLabel);
  if (keyLabel === kindLabel)
    throw new OptionsError(`${field}.keyLabel`, keyLabel, 'a key other than kindLabel');
  const kindAnnotation = key('kindAnnotation', scheme.kindAnnotation ?? kindLabel);
  const keyAnnotation = key('keyAnnotation', scheme.keyAnnotation ?? keyLabel);
  if (keyAnnotation === kindAnnotation) {
    throw new OptionsError(`${field}.keyAnnotation`, keyAnnotation, 'a key other than kindAnnotation');
  }
  const uidAnnotation =
    scheme.uidAnnotation === undefined ? undefined : key('uidAnnotation', scheme.uidAnnotation);
  if (uidAnnotation === kindAnnotation || uidAnnotation === keyAnnotation) {
    throw new OptionsError(
      `${field}.uidAnnotation`,
      uidAnnotation,
      'a key other than the kind and key annotations',
    );
  }
  const kindFormat = scheme.kindFormat ?? 'Kind.group';
  if (kindFormat !== 'Kind.group' && kindFormat !== 'Kind') {
    throw new OptionsError(`${field}.kindFormat`, kindFormat, "'Kind.group' or 'Kind'");
  }
  const parseKey = scheme.parseKey;
  if (parseKey !== undefined && typeof parseKey !== 'function') {
    throw new OptionsError(
      `${field}.parseKey`,
      parseKey,
      'a function (value, source) => ObjectKey | undefined',
    );
  }
  const result: ResolvedOwnerLabelScheme = Object.freeze({
    kindLabel,
    keyLabel,
    kindAnnotation,
    keyAnnotation,
    ...(uidAnnotation === undefined ? {} : { uidAnnotation }),
    kindFormat,
    ...(parseKey === undefined ? {} : { parseKey }),
  });
  resolved.set(scheme, result);
  resolved.set(result, result);
  return result;
}
