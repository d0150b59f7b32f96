import { type Logger, noopLogger } from '@converge/runtime';
import { invocationOf } from '../match-policy.ts';
import type { AdmissionAttributes, JsonObject } from '../types.ts';
import {
  applyActions,
  type Denial,
  POLICY_AUDIT_CHANNEL,
  type PolicyAuditEvent,
  publishAudit,
} from './audit.ts';
import { type CompiledPolicy, compilePolicy } from './compile.ts';
import { PolicyDeniedError } from './errors.ts';
import { evaluatePolicy, namespaceObjectOf } from './evaluate.ts';
import { resourcesMatch } from './matching.ts';
import {
  collectParams,
  ParamConfigurationError,
  type ParamResolver,
  type ParamSource,
  paramSourceOf,
} from './params.ts';
import type { BindingSpec, PolicySpec } from './types.ts';

/** Options of {@link PolicyAdmission}. */
export interface PolicyAdmissionOptions {
  /** Every stored ValidatingAdmissionPolicy (read again after {@link PolicyAdmission.invalidate}). */
  readonly listPolicies: () => Promise<readonly JsonObject[]>;
  /** Every stored ValidatingAdmissionPolicyBinding (idem). */
  readonly listBindings: () => Promise<readonly JsonObject[]>;
  /** A Namespace as stored, or null when it does not exist (`namespaceObject`, `namespaceSelector`). */
  readonly namespace: (name: string) => Promise<JsonObject | null>;
  /** Where `paramKind` objects are read (on each request: params are never cached). */
  readonly params: ParamResolver;
  /** Receives each request's audit annotations besides {@link POLICY_AUDIT_CHANNEL}. */
  readonly onAudit?: (event: PolicyAuditEvent) => void;
  readonly logger?: Logger;
}

interface Loaded {
  readonly name: string;
  readonly spec: PolicySpec;
  readonly compiled: CompiledPolicy;
  readonly bindings: readonly { readonly name: string; readonly spec: BindingSpec }[];
}

const POLICY_RESOURCES = new Set([
  'validatingadmissionpolicies',
  'validatingadmissionpolicybindings',
  'mutatingadmissionpolicies',
  'mutatingadmissionpolicybindings',
]);

/** Writes of policies and bindings are never checked by policies (webhook configurations are). */
function isPolicyResource(attributes: AdmissionAttributes): boolean {
  const { group, resource } = attributes.resource;
  return group === 'admissionregistration.k8s.io' && POLICY_RESOURCES.has(resource);
}

function nameOf(object: JsonObject): string {
  return String((object.metadata as { name?: unknown } | undefined)?.name ?? '');
}

function byName<T extends { name: string }>(a: T, b: T): number {
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

function specOf<T>(object: JsonObject): T {
  const spec = object.spec;
  return (typeof spec === 'object' && spec !== null ? spec : {}) as T;
}

/**
 * ValidatingAdmissionPolicies and their bindings, evaluated as kube-apiserver 1.32 does after
 * mutating admission and schema validation, before validating webhooks. Policies are compiled once
 * per change (uid and resourceVersion) and read again only after {@link invalidate}; params are
 * read on every request.
 *
 * Denials reject with {@link PolicyDeniedError}; `Warn` bindings add `Warning` headers through
 * `warn`; `Audit` bindings and `auditAnnotations` go to {@link POLICY_AUDIT_CHANNEL} and `onAudit`.
 *
 * @example
 * const policies = new PolicyAdmission({ listPolicies, listBindings, namespace, params });
 * await policies.validate(attributes, (text) => warnings.push(text));
 */
export class PolicyAdmission {
  readonly #options: PolicyAdmissionOptions;
  readonly #logger: Logger;
  readonly #compiled = new Map<string, { readonly version: string; readonly compiled: CompiledPolicy }>();
  #cached: Promise<readonly Loaded[]> | undefined;

  constructor(options: PolicyAdmissionOptions) {
    this.#options = options;
    this.#logger = options.logger ?? noopLogger;
  }

  /** Forgets the policies and bindings read (one of them was written). */
  invalidate(): void {
    this.#cached = undefined;
  }

  #load(): Promise<readonly Loaded[]> {
    if (this.#cached === undefined) {
      const read = this.#read();
      this.#cached = read;
      read.catch(() => {
        if (this.#cached === read) this.#cached = undefined;
      });
    }
    return this.#cached;
  }

  async #read(): Promise<readonly Loaded[]> {
    const [policies, bindings] = await Promise.all([
      this.#options.listPolicies(),
      this.#options.listBindings(),
    ]);
    const bound = new Map<string, { name: string; spec: BindingSpec }[]>();
    for (const binding of bindings) {
      const spec = specOf<BindingSpec>(binding);
      const policyName = typeof spec.policyName === 'string' ? spec.policyName : '';
      const list = bound.get(policyName) ?? [];
      list.push({ name: nameOf(binding), spec });
      bound.set(policyName, list);
    }
    const seen = new Set<string>();
    const loaded: Loaded[] = [];
    for (const policy of policies) {
      const name = nameOf(policy);
      seen.add(name);
      const spec = specOf<PolicySpec>(policy);
      const metadata = (policy.metadata ?? {}) as { uid?: unknown; resourceVersion?: unknown };
      const version = `${String(metadata.uid)}/${String(metadata.resourceVersion)}`;
      let entry = this.#compiled.get(name);
      if (entry === undefined || entry.version !== version) {
        entry = { version, compiled: compilePolicy(spec) };
        this.#compiled.set(name, entry);
      }
      const policyBindings = bound.get(name);
      if (policyBindings === undefined) continue;
      loaded.push({ name, spec, compiled: entry.compiled, bindings: policyBindings.sort(byName) });
    }
    for (const name of this.#compiled.keys()) if (!seen.has(name)) this.#compiled.delete(name);
    return loaded.sort(byName);
  }

  async #labels(name: string): Promise<Record<string, string>> {
    const namespace = await this.#options.namespace(name);
    return ((namespace?.metadata as { labels?: Record<string, string> } | undefined)?.labels ?? {}) as Record<
      string,
      string
    >;
  }

  /**
   * Evaluates the bound policies matching the request. Rejects with {@link PolicyDeniedError} for
   * the first denial; warnings go to `warn`.
   */
  async validate(attributes: AdmissionAttributes, warn: (text: string) => void): Promise<void> {
    if (isPolicyResource(attributes)) return;
    const policies = await this.#load();
    if (policies.length === 0) return;
    const labels = (name: string): Promise<Record<string, string>> => this.#labels(name);
    const denied: Denial[] = [];
    const annotations: Record<string, string> = {};
    let namespaceObject: Promise<JsonObject | null> | undefined;
    for (const policy of policies) {
      const matched = await resourcesMatch(policy.spec.matchConstraints, attributes, labels, false);
      if (matched === undefined) continue;
      const fail = policy.spec.failurePolicy !== 'Ignore';
      const configError = (message: string, binding: string | undefined): void => {
        if (!fail) return;
        const what = binding === undefined ? 'policy' : 'binding';
        denied.push({
          policy: policy.name,
          binding,
          message: `failed to configure ${what}: ${message}`,
          reason: undefined,
        });
      };
      let source: ParamSource | undefined;
      try {
        source = paramSourceOf(policy.spec, this.#options.params);
      } catch (error) {
        configError((error as Error).message, undefined);
        continue;
      }
      // matched in an equivalent version: the policy sees the objects converted to it
      let invocation: AdmissionAttributes;
      try {
        invocation = await invocationOf(attributes, matched);
      } catch (error) {
        configError(`failed to convert object version: ${(error as Error).message}`, undefined);
        continue;
      }
      const published = new Map<string, string[]>();
      for (const binding of policy.bindings) {
        if ((await resourcesMatch(binding.spec.matchResources, attributes, labels, true)) === undefined)
          continue;
        let params: readonly (JsonObject | null)[];
        try {
          params = await collectParams(source, binding.spec.paramRef, attributes.namespace);
        } catch (error) {
          if (!(error instanceof ParamConfigurationError)) throw error;
          configError(error.message, binding.name);
          continue;
        }
        if (params.length === 0) continue;
        namespaceObject ??= this.#namespaceObject(attributes);
        const namespace = await namespaceObject;
        const actions = Array.isArray(binding.spec.validationActions) ? binding.spec.validationActions : [];
        for (const param of params) {
          const result = evaluatePolicy(
            policy.compiled,
            { attributes: invocation, namespaceObject: namespace, params: param },
            fail,
          );
          for (const decision of result.failures) {
            applyActions(actions, policy.name, binding.name, decision, { denied, annotations, warn });
          }
          for (const decision of result.denials)
            denied.push({
              policy: policy.name,
              binding: binding.name,
              message: decision.message,
              reason: undefined,
            });
          for (const { key, value } of result.annotations) {
            const values = published.get(key) ?? [];
            if (!values.includes(value)) values.push(value);
            published.set(key, values);
          }
        }
      }
      for (const [key, values] of published) annotations[`${policy.name}/${key}`] = values.join(', ');
    }
    publishAudit(attributes, annotations, this.#options.onAudit);
    const first = denied[0];
    if (first !== undefined) {
      this.#logger.debug(
        { policy: first.policy, binding: first.binding },
        'ValidatingAdmissionPolicy denied request',
      );
      throw new PolicyDeniedError(attributes, first);
    }
  }

  /** `namespaceObject`: the request's Namespace (null for cluster-scoped requests and Namespaces themselves). */
  async #namespaceObject(attributes: AdmissionAttributes): Promise<JsonObject | null> {
    const { kind } = attributes;
    if (kind.group === '' && kind.version === 'v1' && kind.kind === 'Namespace') return null;
    if (attributes.namespace === '') return null;
    return namespaceObjectOf(await this.#options.namespace(attributes.namespace));
  }
}
