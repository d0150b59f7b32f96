import type { ApiResource } from './api-resource.ts';

const KUBE_VERSION = /^v([1-9][0-9]*)(?:(alpha|beta)([1-9][0-9]*))?$/;

/**
 * Orders versions as Kubernetes prefers them: GA before beta before alpha, higher numbers first,
 * then versions that are not Kubernetes-like, alphabetically (`v2, v1, v1beta2, v1beta1, v1alpha1, foo`).
 */
export function compareKubeVersions(a: string, b: string): number {
  const ma = KUBE_VERSION.exec(a);
  const mb = KUBE_VERSION.exec(b);
  if (ma === null || mb === null) {
    if (ma !== null) return -1;
    if (mb !== null) return 1;
    return a < b ? -1 : a > b ? 1 : 0;
  }
  const rank = (m: RegExpExecArray): number => (m[2] === undefined ? 2 : m[2] === 'beta' ? 1 : 0);
  if (rank(ma) !== rank(mb)) return rank(mb) - rank(ma);
  if (ma[1] !== mb[1]) return Number(mb[1]) - Number(ma[1]);
  return Number(mb[3] ?? 0) - Number(ma[3] ?? 0);
}

/** One served API group with its versions, preferred first. */
export interface ApiGroup {
  readonly name: string;
  readonly versions: readonly { readonly version: string; readonly resources: readonly ApiResource[] }[];
}

/** The order of built-in groups in discovery (as kube-apiserver lists them); others follow by name. */
const GROUP_ORDER = [
  '',
  'apiregistration.k8s.io',
  'apps',
  'events.k8s.io',
  'authentication.k8s.io',
  'authorization.k8s.io',
  'autoscaling',
  'batch',
  'certificates.k8s.io',
  'networking.k8s.io',
  'policy',
  'rbac.authorization.k8s.io',
  'storage.k8s.io',
  'admissionregistration.k8s.io',
  'apiextensions.k8s.io',
  'scheduling.k8s.io',
  'coordination.k8s.io',
  'node.k8s.io',
  'discovery.k8s.io',
  'flowcontrol.apiserver.k8s.io',
];

function groupRank(name: string): number {
  const index = GROUP_ORDER.indexOf(name);
  return index < 0 ? GROUP_ORDER.length : index;
}

/**
 * The served resources, by group/version/plural, each added by an owner (`builtin`, or a CRD's
 * name) so a CRD's versions can be replaced or removed together. `generation` increases on every
 * change, so discovery and OpenAPI documents can be cached per generation.
 */
export class ResourceRegistry {
  readonly #byOwner = new Map<string, readonly ApiResource[]>();
  #index = new Map<string, ApiResource>();
  #groups: ApiGroup[] = [];
  #generation = 0;

  /** Increases whenever the served resources change. */
  get generation(): number {
    return this.#generation;
  }

  /** Replaces everything `owner` serves with `resources`. */
  set(owner: string, resources: readonly ApiResource[]): void {
    if (resources.length === 0) this.#byOwner.delete(owner);
    else this.#byOwner.set(owner, resources);
    this.#rebuild();
  }

  /** Stops serving everything `owner` serves. */
  remove(owner: string): void {
    if (this.#byOwner.delete(owner)) this.#rebuild();
  }

  /** The resource at group/version/plural. */
  lookup(group: string, version: string, plural: string): ApiResource | undefined {
    return this.#index.get(`${group}/${version}/${plural}`);
  }

  /** The resource of a group/version/kind. */
  byKind(group: string, version: string, kind: string): ApiResource | undefined {
    for (const resource of this.#index.values()) {
      if (resource.group === group && resource.version === version && resource.kind === kind) return resource;
    }
    return undefined;
  }

  /** Whether some resource is served in `group` / `group/version`. */
  hasGroupVersion(group: string, version?: string): boolean {
    const found = this.#groups.find((g) => g.name === group);
    return (
      found !== undefined && (version === undefined || found.versions.some((v) => v.version === version))
    );
  }

  /** Every resource. */
  all(): ApiResource[] {
    return [...this.#index.values()];
  }

  /** The groups in discovery order; versions preferred first; resources by plural. */
  groups(): readonly ApiGroup[] {
    return this.#groups;
  }

  #rebuild(): void {
    const index = new Map<string, ApiResource>();
    for (const resources of this.#byOwner.values()) {
      for (const resource of resources) {
        const key = `${resource.group}/${resource.version}/${resource.plural}`;
        if (!index.has(key)) index.set(key, resource);
      }
    }
    const byGroup = new Map<string, Map<string, ApiResource[]>>();
    for (const resource of index.values()) {
      let versions = byGroup.get(resource.group);
      if (versions === undefined) {
        versions = new Map();
        byGroup.set(resource.group, versions);
      }
      const list = versions.get(resource.version) ?? [];
      list.push(resource);
      versions.set(resource.version, list);
    }
    this.#groups = [...byGroup.entries()]
      .sort(([a], [b]) => groupRank(a) - groupRank(b) || (a < b ? -1 : a > b ? 1 : 0))
      .map(([name, versions]) => ({
        name,
        versions: [...versions.entries()]
          .sort(([a], [b]) => compareKubeVersions(a, b))
          .map(([version, resources]) => ({
            version,
            resources: resources.sort((x, y) => (x.plural < y.plural ? -1 : x.plural > y.plural ? 1 : 0)),
          })),
      }));
    this.#index = index;
    this.#generation++;
  }
}
