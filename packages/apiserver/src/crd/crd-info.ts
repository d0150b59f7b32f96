/**
 * What the server needs to serve a CRD: its names, scope and, per version, the schema,
 * subresources, printer columns and selectable fields, plus the {@link ResourceType}s to register.
 */
import type { ResourceType } from '@converge/runtime';
import { defaultCrd } from './crd-defaults.ts';
import { CrdInvalidError } from './errors.ts';
import type { CustomResourceDefinition, StructuralSchema } from './types.ts';
import { validateCrd } from './validate-crd.ts';

/** A printer column as the Table engine uses it (`priority` defaulted to 0). */
export interface PrinterColumn {
  readonly name: string;
  /** `integer`, `number`, `string`, `boolean` or `date`. */
  readonly type: string;
  readonly format?: string;
  readonly description?: string;
  /** 0 for the default view; higher only with `-o wide`. */
  readonly priority: number;
  readonly jsonPath: string;
}

/** One version of a CRD, ready to serve. */
export interface CrdVersionInfo {
  readonly name: string;
  readonly served: boolean;
  readonly storage: boolean;
  readonly deprecated: boolean;
  readonly deprecationWarning?: string;
  readonly schema: StructuralSchema | undefined;
  readonly statusSubresource: boolean;
  readonly scale?: {
    readonly specReplicasPath: string;
    readonly statusReplicasPath: string;
    readonly labelSelectorPath?: string;
  };
  /** The declared columns, or kube's default `Age` column when none are declared. */
  readonly printerColumns: readonly PrinterColumn[];
  /** JSONPaths usable in field selectors (besides `metadata.name` and `metadata.namespace`). */
  readonly selectableFields: readonly string[];
}

/** The names of a CRD with kube's defaults filled in. */
export interface CrdNames {
  readonly plural: string;
  readonly singular: string;
  readonly kind: string;
  readonly listKind: string;
  readonly shortNames: readonly string[];
  readonly categories: readonly string[];
}

/** Everything {@link crdInfo} reports. */
export interface CrdInfo {
  readonly name: string;
  readonly group: string;
  readonly names: CrdNames;
  readonly scope: 'Namespaced' | 'Cluster';
  /** All versions, in Kubernetes' version priority (v2 > v1 > v1beta2 > v1alpha1 > others). */
  readonly versions: readonly CrdVersionInfo[];
  readonly storageVersion: string | undefined;
}

/** kube's default column when a version declares none. */
export const DEFAULT_PRINTER_COLUMNS: readonly PrinterColumn[] = Object.freeze([
  Object.freeze({
    name: 'Age',
    type: 'date',
    description:
      'CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata',
    priority: 0,
    jsonPath: '.metadata.creationTimestamp',
  }),
]);

const KUBE_VERSION = /^v([1-9][0-9]*)(?:(alpha|beta)([1-9][0-9]*))?$/;

/**
 * Kubernetes' version priority (`version.CompareKubeAwareVersionStrings`): negative when `a` comes
 * first. GA before beta before alpha, higher numbers first, non-Kubernetes names last, alphabetically.
 *
 * @example
 * ['v1beta1', 'v2', 'v1', 'foo'].sort(compareKubeVersions); // ['v2', 'v1', 'v1beta1', 'foo']
 */
export function compareKubeVersions(a: string, b: string): number {
  const ma = KUBE_VERSION.exec(a);
  const mb = KUBE_VERSION.exec(b);
  if (ma === null || mb === null) {
    if (ma !== null) return -1;
    if (mb !== null) return 1;
    return a < b ? -1 : a > b ? 1 : 0;
  }
  const rank = (m: RegExpExecArray): number => (m[2] === undefined ? 3 : m[2] === 'beta' ? 2 : 1);
  if (rank(ma) !== rank(mb)) return rank(mb) - rank(ma);
  if (Number(ma[1]) !== Number(mb[1])) return Number(mb[1]) - Number(ma[1]);
  return Number(mb[3] ?? 0) - Number(ma[3] ?? 0);
}

const checked = new WeakSet<object>();
const infos = new WeakMap<object, CrdInfo>();

/** Throws {@link CrdInvalidError} unless `crd` passes validateCrd (results cached per object). */
export function checkedCrd(crd: CustomResourceDefinition): CustomResourceDefinition {
  if (typeof crd === 'object' && crd !== null && checked.has(crd)) return crd;
  const causes = validateCrd(crd);
  if (causes.length > 0) throw new CrdInvalidError(crd?.metadata?.name ?? '', causes);
  checked.add(crd);
  return crd;
}

function columnsOf(
  declared: CustomResourceDefinition['spec']['versions'][number]['additionalPrinterColumns'],
): readonly PrinterColumn[] {
  if (declared === undefined || declared.length === 0) return DEFAULT_PRINTER_COLUMNS;
  return declared.map((c) => ({
    name: c.name,
    type: c.type,
    ...(c.format === undefined ? {} : { format: c.format }),
    ...(c.description === undefined ? {} : { description: c.description }),
    priority: c.priority ?? 0,
    jsonPath: c.jsonPath,
  }));
}

/**
 * The served shape of a CRD (kube's defaults applied). Throws {@link CrdInvalidError} when the CRD
 * does not pass {@link validateCrd} (and {@link CrdDecodeError} when it cannot be decoded at all).
 *
 * @example
 * const info = crdInfo(crd);
 * info.versions.filter((v) => v.served).map((v) => v.name); // ['v1']
 */
export function crdInfo(crd: CustomResourceDefinition): CrdInfo {
  const hit = infos.get(crd);
  if (hit !== undefined) return hit;
  const d = defaultCrd(checkedCrd(crd));
  const names = d.spec.names;
  const versions = (d.spec.versions ?? []).map((v, i): CrdVersionInfo => {
    const scale = v.subresources?.scale;
    return {
      name: v.name,
      served: v.served === true,
      storage: v.storage === true,
      deprecated: v.deprecated === true,
      ...(v.deprecationWarning === undefined ? {} : { deprecationWarning: v.deprecationWarning }),
      schema: crd.spec.versions[i]?.schema?.openAPIV3Schema ?? undefined,
      statusSubresource: v.subresources?.status !== undefined && v.subresources.status !== null,
      ...(scale === undefined || scale === null
        ? {}
        : {
            scale: {
              specReplicasPath: scale.specReplicasPath,
              statusReplicasPath: scale.statusReplicasPath,
              ...(scale.labelSelectorPath ? { labelSelectorPath: scale.labelSelectorPath } : {}),
            },
          }),
      printerColumns: columnsOf(v.additionalPrinterColumns),
      selectableFields: (v.selectableFields ?? []).map((f) => f.jsonPath),
    };
  });
  versions.sort((a, b) => compareKubeVersions(a.name, b.name));
  const info: CrdInfo = {
    name: d.metadata.name ?? '',
    group: d.spec.group,
    names: {
      plural: names.plural,
      singular: names.singular ?? names.kind.toLowerCase(),
      kind: names.kind,
      listKind: names.listKind ?? `${names.kind}List`,
      shortNames: names.shortNames ?? [],
      categories: names.categories ?? [],
    },
    scope: d.spec.scope,
    versions,
    storageVersion: versions.find((v) => v.storage)?.name,
  };
  for (const v of versions) Object.freeze(v);
  Object.freeze(versions);
  Object.freeze(info);
  infos.set(crd, info);
  return info;
}

/**
 * One {@link ResourceType} per served version, in version priority: custom resources track
 * `generation`, need a resourceVersion on update, and have `status` as a subresource when declared.
 *
 * @example
 * for (const type of resourceTypesOf(crd)) store.registerType(type);
 */
export function resourceTypesOf(crd: CustomResourceDefinition): ResourceType[] {
  const info = crdInfo(crd);
  return info.versions
    .filter((v) => v.served)
    .map((v) =>
      Object.freeze({
        group: info.group,
        version: v.name,
        kind: info.names.kind,
        plural: info.names.plural,
        namespaced: info.scope === 'Namespaced',
        singular: info.names.singular,
        ...(info.names.shortNames.length > 0
          ? { shortNames: Object.freeze([...info.names.shortNames]) }
          : {}),
        statusSubresource: v.statusSubresource,
        generation: true,
        requireResourceVersionOnUpdate: true,
      }),
    );
}
