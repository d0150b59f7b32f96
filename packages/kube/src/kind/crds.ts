import type {
  CustomResourceDefinition,
  CustomResourceDefinitionNames,
  CustomResourceDefinitionVersion,
  CustomResourceSubresources,
} from '@converge/runtime';
import type { Kind } from './define-kind.ts';
import { KindConflictError } from './errors.ts';

/** The names of a kind as its CRD states them (`listKind` is the kind + `List`). */
function namesOf(kind: Kind): CustomResourceDefinitionNames {
  const { options, type } = kind;
  return {
    plural: type.plural,
    singular: type.singular ?? type.kind.toLowerCase(),
    kind: type.kind,
    listKind: `${type.kind}List`,
    ...(options.shortNames === undefined || options.shortNames.length === 0
      ? {}
      : { shortNames: [...options.shortNames] }),
    ...(options.categories === undefined || options.categories.length === 0
      ? {}
      : { categories: [...options.categories] }),
  };
}

function versionOf(kind: Kind): CustomResourceDefinitionVersion {
  const { options } = kind;
  const subresources: CustomResourceSubresources = {
    ...(options.status === undefined ? {} : { status: {} }),
    ...(options.scale === undefined ? {} : { scale: { ...options.scale } }),
  };
  return {
    name: kind.type.version,
    served: options.served ?? true,
    storage: options.storage ?? true,
    ...(options.deprecated === true ? { deprecated: true } : {}),
    ...(options.deprecationWarning === undefined ? {} : { deprecationWarning: options.deprecationWarning }),
    ...(Object.keys(subresources).length === 0 ? {} : { subresources }),
    ...(options.printerColumns === undefined || options.printerColumns.length === 0
      ? {}
      : { additionalPrinterColumns: options.printerColumns.map((c) => ({ ...c })) }),
    schema: { openAPIV3Schema: structuredClone(kind.schema) },
  };
}

function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

function crdOf(name: string, kinds: readonly Kind[]): CustomResourceDefinition {
  const [first] = kinds;
  if (first === undefined) throw new KindConflictError(name, 'no versions');
  const names = namesOf(first);
  const scope = first.type.namespaced ? 'Namespaced' : 'Cluster';
  const seen = new Set<string>();
  for (const kind of kinds) {
    const version = kind.type.version;
    if (seen.has(version)) throw new KindConflictError(name, `version ${version} is declared twice`);
    seen.add(version);
    if ((kind.type.namespaced ? 'Namespaced' : 'Cluster') !== scope)
      throw new KindConflictError(
        name,
        `version ${version} has a different scope than ${first.type.version}`,
      );
    if (!sameJson(namesOf(kind), names)) {
      throw new KindConflictError(
        name,
        `version ${version} has different names (kind, singular, shortNames, categories) than ${first.type.version}`,
      );
    }
  }
  const versions = kinds.map(versionOf);
  const storage = versions.filter((v) => v.storage);
  if (storage.length !== 1) {
    const which = storage.length === 0 ? 'none' : storage.map((v) => v.name).join(', ');
    throw new KindConflictError(name, `exactly one version must have storage: true (got ${which})`);
  }
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name },
    spec: { group: first.type.group, names, scope, versions },
  };
}

/**
 * The CustomResourceDefinitions of kinds: one per group and plural, with the versions of that
 * resource in the order the kinds are given (kube-apiserver orders them by preference when serving
 * discovery). Throws `KindConflictError` when the versions of one resource disagree on scope or
 * names, a version appears twice, or not exactly one version has `storage: true`. CRDs come in the
 * order their first kind is given; each call returns new objects.
 *
 * @example
 * const [crd] = crdsOf([websiteV1beta1, websiteV1]); // websites.example.com, versions v1beta1 and v1
 * writeFileSync('config/crd/websites.yaml', stringify(crd));
 */
export function crdsOf(kinds: readonly Kind[]): CustomResourceDefinition[] {
  const groups = new Map<string, Kind[]>();
  for (const kind of kinds) {
    const name = `${kind.type.plural}.${kind.type.group}`;
    const list = groups.get(name);
    if (list === undefined) groups.set(name, [kind]);
    else if (!list.includes(kind)) list.push(kind);
  }
  return [...groups].map(([name, list]) => crdOf(name, list));
}
