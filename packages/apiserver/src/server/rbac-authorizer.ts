import type { Clock, KubeObject, Logger, ResourceType } from '@converge/runtime';
import type { Store } from '@converge/store';
import {
  type CompiledRule,
  compileRule,
  type PolicyRule,
  type RuleRequest,
  readRule,
  ruleAllows,
} from './rbac-rules.ts';
import type { ResourceRegistry } from './resource-registry.ts';

/**
 * The RBAC authorizer of kube-apiserver (`plugin/pkg/auth/authorizer/rbac` over
 * `pkg/registry/rbac/validation`'s rule resolver), over an in-memory index of the stored Roles,
 * ClusterRoles, RoleBindings and ClusterRoleBindings kept up to date by watching the store (as
 * kube-apiserver's informers do). A decision visits the ClusterRoleBindings, then the RoleBindings
 * of the request's namespace, that name the user, one of its groups or (the user being
 * `system:serviceaccount:NS:NAME`) its ServiceAccount; bindings are indexed by subject so no
 * binding of anyone else is looked at. A binding whose role does not exist grants nothing (its
 * error becomes the denial's reason, `RBAC: clusterrole.rbac.authorization.k8s.io "x" not found`).
 * Aggregated ClusterRoles are read as stored (the aggregation controller fills their rules).
 */

/** The user as RBAC matches it. */
export interface RbacUser {
  readonly username: string;
  readonly groups: readonly string[];
}

interface Subject {
  readonly kind: string;
  readonly name: string;
  readonly namespace: string;
}

interface Binding {
  readonly name: string;
  /** '' for a ClusterRoleBinding. */
  readonly namespace: string;
  readonly roleKind: string;
  readonly roleName: string;
  readonly subjects: readonly Subject[];
  /** The subject keys this binding is indexed under. */
  readonly keys: readonly string[];
}

/** Which of the four RBAC kinds an object is. */
export type RbacKind = 'Role' | 'ClusterRole' | 'RoleBinding' | 'ClusterRoleBinding';

const RBAC_GROUP = 'rbac.authorization.k8s.io';
const PLURALS: Readonly<Record<RbacKind, string>> = {
  Role: 'roles',
  ClusterRole: 'clusterroles',
  RoleBinding: 'rolebindings',
  ClusterRoleBinding: 'clusterrolebindings',
};
const SA_PREFIX = 'system:serviceaccount:';
const RESTART_DELAY_MS = 1_000;

function str(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

function record(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};
}

/** The index key of a subject in a binding of `namespace` ('' for a ClusterRoleBinding); undefined: matches nobody. */
function subjectKey(subject: Subject, bindingNamespace: string): string | undefined {
  switch (subject.kind) {
    case 'User':
      return `u:${subject.name}`;
    case 'Group':
      return `g:${subject.name}`;
    case 'ServiceAccount': {
      // a RoleBinding's ServiceAccount without a namespace is one of the binding's namespace
      const namespace = subject.namespace === '' ? bindingNamespace : subject.namespace;
      return namespace === '' ? undefined : `u:${SA_PREFIX}${namespace}:${subject.name}`;
    }
    default:
      return undefined;
  }
}

function userKeys(user: RbacUser): string[] {
  return [`u:${user.username}`, ...user.groups.map((g) => `g:${g}`)];
}

function readBinding(object: KubeObject): Binding {
  const raw = object as unknown as Record<string, unknown>;
  const namespace = object.metadata.namespace ?? '';
  const roleRef = record(raw.roleRef);
  const subjects = (Array.isArray(raw.subjects) ? raw.subjects : []).map((s) => {
    const subject = record(s);
    return { kind: str(subject.kind), name: str(subject.name), namespace: str(subject.namespace) };
  });
  const keys = new Set<string>();
  for (const subject of subjects) {
    const key = subjectKey(subject, namespace);
    if (key !== undefined) keys.add(key);
  }
  return {
    name: object.metadata.name ?? '',
    namespace,
    roleKind: str(roleRef.kind),
    roleName: str(roleRef.name),
    subjects,
    keys: [...keys],
  };
}

function describeSubject(subject: Subject, bindingNamespace: string): string {
  if (subject.kind === 'ServiceAccount')
    return `${subject.kind} ${JSON.stringify(`${subject.name}/${subject.namespace === '' ? bindingNamespace : subject.namespace}`)}`;
  return `${subject.kind} ${JSON.stringify(subject.name)}`;
}

/** `ClusterRoleBinding "x" of ClusterRole "y" to Group "z"`, as the authorizer's allow reason names its source. */
function describeBinding(binding: Binding, user: RbacUser): string {
  const keys = new Set(userKeys(user));
  const subject = binding.subjects.find((s) => {
    const key = subjectKey(s, binding.namespace);
    return key !== undefined && keys.has(key);
  });
  const who = subject === undefined ? '' : ` to ${describeSubject(subject, binding.namespace)}`;
  const kind = binding.namespace === '' ? 'ClusterRoleBinding' : 'RoleBinding';
  const name = binding.namespace === '' ? binding.name : `${binding.name}/${binding.namespace}`;
  return `${kind} ${JSON.stringify(name)} of ${binding.roleKind} ${JSON.stringify(binding.roleName)}${who}`;
}

/** utilerrors.NewAggregate(...).Error(): one message as is, several (deduplicated) in brackets. */
export function aggregateErrors(errors: readonly string[]): string {
  const unique = [...new Set(errors)];
  return unique.length === 1 ? (unique[0] as string) : `[${unique.join(', ')}]`;
}

/** A rule visitor: return false to stop. */
type Visitor = (rule: CompiledRule, binding: Binding) => boolean;

/** The RBAC answer for one request: allowed (with its source) or not (with the errors met). */
export interface RbacDecision {
  readonly allowed: boolean;
  /** `RBAC: allowed by …`, or `RBAC: <errors>` when denied with errors, else ''. */
  readonly reason: string;
}

/** What the store's RBAC objects grant, indexed for per-request decisions. */
export class RbacAuthorizer {
  readonly #clusterRoles = new Map<string, readonly CompiledRule[]>();
  readonly #roles = new Map<string, readonly CompiledRule[]>();
  readonly #clusterBindings = new Map<string, Binding>();
  readonly #roleBindings = new Map<string, Binding>();
  /** subject key → ClusterRoleBinding names. */
  readonly #clusterIndex = new Map<string, Set<string>>();
  /** namespace → subject key → RoleBinding keys (`ns/name`). */
  readonly #namespaceIndex = new Map<string, Map<string, Set<string>>>();

  /** The resourceVersion applied per object (`Kind/ns/name`): older events are stale. */
  readonly #versions = new Map<string, number>();

  /**
   * Applies one watch event (ADDED and MODIFIED replace, DELETED removes). An event older than
   * what was applied for the same object is ignored, so a write applied at once by the server
   * ({@link RbacAuthorizer.written}) is not undone by the watch catching up.
   */
  apply(kind: RbacKind, type: 'ADDED' | 'MODIFIED' | 'DELETED', object: KubeObject): void {
    const namespace = object.metadata.namespace ?? '';
    const name = object.metadata.name ?? '';
    const key = `${namespace}/${name}`;
    const deleted = type === 'DELETED';
    const version = Number(object.metadata.resourceVersion ?? '');
    const versionKey = `${kind}/${key}`;
    if (Number.isFinite(version) && version > 0) {
      if ((this.#versions.get(versionKey) ?? 0) > version) return;
      if (deleted) this.#versions.delete(versionKey);
      else this.#versions.set(versionKey, version);
    }
    switch (kind) {
      case 'ClusterRole':
      case 'Role': {
        const map = kind === 'Role' ? this.#roles : this.#clusterRoles;
        const at = kind === 'Role' ? key : name;
        if (deleted) map.delete(at);
        else map.set(at, rulesOf(object).map(compileRule));
        return;
      }
      case 'ClusterRoleBinding':
        this.#unindex(this.#clusterBindings.get(name), this.#clusterIndex, name);
        this.#clusterBindings.delete(name);
        if (!deleted) {
          const binding = readBinding(object);
          this.#clusterBindings.set(name, binding);
          this.#index(binding, this.#clusterIndex, name);
        }
        return;
      case 'RoleBinding': {
        let index = this.#namespaceIndex.get(namespace);
        if (index === undefined) {
          index = new Map();
          this.#namespaceIndex.set(namespace, index);
        }
        this.#unindex(this.#roleBindings.get(key), index, key);
        this.#roleBindings.delete(key);
        if (!deleted) {
          const binding = readBinding(object);
          this.#roleBindings.set(key, binding);
          this.#index(binding, index, key);
        }
        if (index.size === 0) this.#namespaceIndex.delete(namespace);
        return;
      }
    }
  }

  /**
   * A write this server just stored: applied now, so the writer's next request sees it (the
   * watch, which applies it again, lags a moment behind). Objects of other groups are ignored.
   */
  written(group: string, kind: string, object: KubeObject): void {
    if (group !== RBAC_GROUP || !Object.hasOwn(PLURALS, kind)) return;
    this.apply(kind as RbacKind, 'MODIFIED', object);
  }

  /** Replaces every object of one kind (after a relist). */
  replace(kind: RbacKind, objects: readonly KubeObject[]): void {
    for (const key of [...this.#versions.keys()]) if (key.startsWith(`${kind}/`)) this.#versions.delete(key);
    const current =
      kind === 'Role'
        ? [...this.#roles.keys()]
        : kind === 'ClusterRole'
          ? [...this.#clusterRoles.keys()].map((n) => `/${n}`)
          : kind === 'RoleBinding'
            ? [...this.#roleBindings.keys()]
            : [...this.#clusterBindings.keys()].map((n) => `/${n}`);
    for (const key of current) {
      const slash = key.indexOf('/');
      const metadata = { namespace: key.slice(0, slash), name: key.slice(slash + 1) };
      this.apply(kind, 'DELETED', { apiVersion: `${RBAC_GROUP}/v1`, kind, metadata } as KubeObject);
    }
    for (const object of objects) this.apply(kind, 'ADDED', object);
  }

  #index(binding: Binding, index: Map<string, Set<string>>, at: string): void {
    for (const key of binding.keys) {
      let set = index.get(key);
      if (set === undefined) {
        set = new Set();
        index.set(key, set);
      }
      set.add(at);
    }
  }

  #unindex(binding: Binding | undefined, index: Map<string, Set<string>>, at: string): void {
    if (binding === undefined) return;
    for (const key of binding.keys) {
      const set = index.get(key);
      set?.delete(at);
      if (set?.size === 0) index.delete(key);
    }
  }

  /** `GetRoleReferenceRules`: the rules of a binding's role, or the lister's error. */
  #roleRules(binding: Binding): readonly CompiledRule[] | string {
    switch (binding.roleKind) {
      case 'Role':
        return (
          this.#roles.get(`${binding.namespace}/${binding.roleName}`) ??
          `role.${RBAC_GROUP} ${JSON.stringify(binding.roleName)} not found`
        );
      case 'ClusterRole':
        return (
          this.#clusterRoles.get(binding.roleName) ??
          `clusterrole.${RBAC_GROUP} ${JSON.stringify(binding.roleName)} not found`
        );
      default:
        return `unsupported role reference kind: ${JSON.stringify(binding.roleKind)}`;
    }
  }

  /** The rules of the role a binding in `namespace` refers to, or the lister's error (`… not found`). */
  roleRefRules(kind: string, name: string, namespace: string): readonly PolicyRule[] | string {
    const rules = this.#roleRules({
      name: '',
      namespace,
      roleKind: kind,
      roleName: name,
      subjects: [],
      keys: [],
    });
    return typeof rules === 'string' ? rules : rules.map((r) => r.rule);
  }

  /** `VisitRulesFor`: ClusterRoleBindings, then the namespace's RoleBindings, that apply to `user`. */
  #visit(user: RbacUser, namespace: string, visitor: Visitor, errors: string[]): void {
    const keys = userKeys(user);
    const seen = new Set<string>();
    const visitBinding = (binding: Binding | undefined, at: string): boolean => {
      if (binding === undefined || seen.has(at)) return true;
      seen.add(at);
      const rules = this.#roleRules(binding);
      if (typeof rules === 'string') {
        errors.push(rules);
        return true;
      }
      for (const rule of rules) if (!visitor(rule, binding)) return false;
      return true;
    };
    for (const key of keys)
      for (const name of this.#clusterIndex.get(key) ?? [])
        if (!visitBinding(this.#clusterBindings.get(name), `/${name}`)) return;
    if (namespace === '') return;
    const index = this.#namespaceIndex.get(namespace);
    if (index === undefined) return;
    for (const key of keys)
      for (const at of index.get(key) ?? []) if (!visitBinding(this.#roleBindings.get(at), at)) return;
  }

  /**
   * Whether the user's bindings allow the request in `namespace` ('' for cluster-scoped and
   * non-resource requests); `explain`: name the granting binding in the reason.
   */
  authorize(user: RbacUser, namespace: string, request: RuleRequest, explain = false): RbacDecision {
    let source: Binding | undefined;
    const errors: string[] = [];
    this.#visit(
      user,
      namespace,
      (rule, binding) => {
        if (!ruleAllows(rule, request)) return true;
        source = binding;
        return false;
      },
      errors,
    );
    // the allow reason (which binding granted it) is for access reviews, not the request path
    if (source !== undefined)
      return { allowed: true, reason: explain ? `RBAC: allowed by ${describeBinding(source, user)}` : '' };
    return { allowed: false, reason: errors.length === 0 ? '' : `RBAC: ${aggregateErrors(errors)}` };
  }

  /** `RulesFor`: every rule the user holds in `namespace`, and the errors met (missing roles). */
  rulesFor(user: RbacUser, namespace: string): { rules: PolicyRule[]; errors: string[] } {
    const rules: PolicyRule[] = [];
    const errors: string[] = [];
    this.#visit(
      user,
      namespace,
      (rule) => {
        rules.push(rule.rule);
        return true;
      },
      errors,
    );
    return { rules, errors };
  }

  /**
   * Lists the four kinds into the index, then follows their watches until `signal` aborts (a watch
   * that ends or fails is reopened after a relist). Resolves once the first lists are in.
   */
  async start(options: {
    readonly store: Store;
    readonly registry: ResourceRegistry;
    readonly clock: Clock;
    readonly logger: Logger;
    readonly signal: AbortSignal;
  }): Promise<void> {
    for (const kind of Object.keys(PLURALS) as RbacKind[]) {
      const type = options.registry.lookup(RBAC_GROUP, 'v1', PLURALS[kind])?.storage;
      if (type === undefined) continue;
      const listed = await this.#relist(options.store, kind, type);
      void this.#follow(options, kind, type, listed);
    }
  }

  async #relist(store: Store, kind: RbacKind, type: ResourceType): Promise<string> {
    const list = await store.list(type);
    this.replace(kind, list.items);
    return list.resourceVersion;
  }

  async #follow(
    options: {
      readonly store: Store;
      readonly clock: Clock;
      readonly logger: Logger;
      readonly signal: AbortSignal;
    },
    kind: RbacKind,
    type: ResourceType,
    listedAt: string,
  ): Promise<void> {
    const { store, clock, logger, signal } = options;
    let resourceVersion: string | undefined = listedAt;
    while (!signal.aborted) {
      try {
        if (resourceVersion === undefined) resourceVersion = await this.#relist(store, kind, type);
        for await (const event of store.watch(type, { signal, resourceVersion })) {
          if (event.type === 'BOOKMARK') continue;
          this.apply(kind, event.type, event.object);
        }
      } catch (error) {
        if (signal.aborted) return;
        logger.debug({ err: error, kind }, 'RBAC authorizer: watch failed; relisting');
        await clock.sleep(RESTART_DELAY_MS, signal).catch(() => undefined);
      }
      // a watch that ended (or failed) misses nothing: the relist replaces the kind's objects
      resourceVersion = undefined;
    }
  }
}

function rulesOf(object: KubeObject): PolicyRule[] {
  const raw = (object as unknown as Record<string, unknown>).rules;
  return (Array.isArray(raw) ? raw : []).map(readRule);
}
