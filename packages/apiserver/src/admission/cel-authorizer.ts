/**
 * Kubernetes' CEL authorization library (`k8s.io/apiserver/pkg/cel/library/authz.go`), as
 * ValidatingAdmissionPolicies and webhook `matchConditions` see it: `authorizer` checks what the
 * requesting user may do — `authorizer.group(g).resource(r)[.subresource(s)][.namespace(ns)]
 * [.name(n)].check(verb)` and `authorizer.path(p).check(verb)` answer a Decision with `allowed()`,
 * `reason()`, `errored()` and `error()`; `authorizer.serviceAccount(ns, name)` checks for that
 * ServiceAccount instead. `authorizer.requestResource` is the check of the request's own resource
 * (group, resource, subresource, namespace and name). The decision comes from the server's
 * authorizer ({@link Authorize}), the one every request goes through.
 */
import { type Environment, EvaluationError } from '@marcbachmann/cel-js';
import type { AdmissionAttributes, UserInfo } from './types.ts';

/** What one check asks, as kube's `authorizer.Attributes` (API version `*`). */
export type AuthorizationCheck =
  | {
      readonly resourceRequest: true;
      readonly verb: string;
      readonly group: string;
      readonly version: '*';
      readonly resource: string;
      readonly subresource: string;
      readonly namespace: string;
      readonly name: string;
    }
  | { readonly resourceRequest: false; readonly verb: string; readonly path: string };

/** Decides one check for one user: allowed, or not (with the authorizer's reason, often ''). */
export type Authorize = (
  user: UserInfo,
  check: AuthorizationCheck,
) => { readonly allowed: boolean; readonly reason: string };

/** Without a server authorizer (admission driven directly): no opinion on anything. */
const NO_OPINION: Authorize = () => ({ allowed: false, reason: '' });

/** `authorizer` (kubernetes.authorization.Authorizer): checks made as `user`. */
export class CelAuthorizer {
  readonly user: UserInfo;
  readonly authorize: Authorize;
  /** `authorizer.requestResource`: set on the request's own authorizer only. */
  requestResource: CelResourceCheck | undefined;

  constructor(user: UserInfo, authorize: Authorize = NO_OPINION) {
    this.user = user;
    this.authorize = authorize;
  }
}

/** `authorizer.path(p)` (kubernetes.authorization.PathCheck). */
export class CelPathCheck {
  readonly authorizer: CelAuthorizer;
  readonly path: string;

  constructor(authorizer: CelAuthorizer, path: string) {
    this.authorizer = authorizer;
    this.path = path;
  }
}

/** `authorizer.group(g)` (kubernetes.authorization.GroupCheck). */
export class CelGroupCheck {
  readonly authorizer: CelAuthorizer;
  readonly group: string;

  constructor(authorizer: CelAuthorizer, group: string) {
    this.authorizer = authorizer;
    this.group = group;
  }
}

interface ResourceParts {
  readonly resource: string;
  readonly subresource: string;
  readonly namespace: string;
  readonly name: string;
}

/** `….resource(r)` and its refinements (kubernetes.authorization.ResourceCheck); immutable. */
export class CelResourceCheck {
  readonly group: CelGroupCheck;
  readonly parts: ResourceParts;

  constructor(group: CelGroupCheck, parts: ResourceParts) {
    this.group = group;
    this.parts = parts;
  }

  with(change: Partial<ResourceParts>): CelResourceCheck {
    return new CelResourceCheck(this.group, { ...this.parts, ...change });
  }
}

/** The answer of a check (kubernetes.authorization.Decision). */
export class CelDecision {
  readonly allowed: boolean;
  readonly reason: string;
  /** The authorizer's error, '' when none. */
  readonly error: string;

  constructor(allowed: boolean, reason: string, error = '') {
    this.allowed = allowed;
    this.reason = reason;
    this.error = error;
  }
}

function decide(authorizer: CelAuthorizer, check: AuthorizationCheck): CelDecision {
  try {
    const { allowed, reason } = authorizer.authorize(authorizer.user, check);
    return new CelDecision(allowed, reason);
  } catch (error) {
    return new CelDecision(false, '', error instanceof Error ? error.message : String(error));
  }
}

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** `authorizer.serviceAccount(ns, name)`: the ServiceAccount's user (`ServiceAccountInfo.UserInfo`). */
function serviceAccount(authorizer: CelAuthorizer, namespace: string, name: string): CelAuthorizer {
  if (name.length > 253 || !DNS1123_SUBDOMAIN.test(name))
    throw new EvaluationError('Invalid service account name');
  if (namespace.length > 63 || !DNS1123_LABEL.test(namespace))
    throw new EvaluationError('Invalid service account namespace');
  const user: UserInfo = {
    username: `system:serviceaccount:${namespace}:${name}`,
    groups: ['system:serviceaccounts', `system:serviceaccounts:${namespace}`],
  };
  return new CelAuthorizer(user, authorizer.authorize);
}

function nonEmpty(value: string, what: string): string {
  if (value.trim() === '') throw new EvaluationError(`${what} must not be empty`);
  return value;
}

const AUTHORIZER = 'kubernetes.authorization.Authorizer';
const PATH_CHECK = 'kubernetes.authorization.PathCheck';
const GROUP_CHECK = 'kubernetes.authorization.GroupCheck';
const RESOURCE_CHECK = 'kubernetes.authorization.ResourceCheck';
const DECISION = 'kubernetes.authorization.Decision';

/** Registers the library's types and functions on `env` and declares `authorizer`. */
export function registerAuthorizerLibrary(env: Environment): void {
  // kube declares `authorizer.requestResource` as a variable of its own; here it is a field
  env.registerType(AUTHORIZER, { ctor: CelAuthorizer, fields: { requestResource: RESOURCE_CHECK } });
  env.registerType(PATH_CHECK, CelPathCheck);
  env.registerType(GROUP_CHECK, CelGroupCheck);
  env.registerType(RESOURCE_CHECK, CelResourceCheck);
  env.registerType(DECISION, CelDecision);
  env.registerFunction(
    `${AUTHORIZER}.path(string): ${PATH_CHECK}`,
    (a: CelAuthorizer, path: string) => new CelPathCheck(a, nonEmpty(path, 'path')),
  );
  env.registerFunction(
    `${AUTHORIZER}.group(string): ${GROUP_CHECK}`,
    (a: CelAuthorizer, group: string) => new CelGroupCheck(a, group),
  );
  env.registerFunction(`${AUTHORIZER}.serviceAccount(string, string): ${AUTHORIZER}`, serviceAccount);
  env.registerFunction(
    `${GROUP_CHECK}.resource(string): ${RESOURCE_CHECK}`,
    (g: CelGroupCheck, resource: string) =>
      new CelResourceCheck(g, {
        resource: nonEmpty(resource, 'resource'),
        subresource: '',
        namespace: '',
        name: '',
      }),
  );
  for (const part of ['subresource', 'namespace', 'name'] as const)
    env.registerFunction(
      `${RESOURCE_CHECK}.${part}(string): ${RESOURCE_CHECK}`,
      (r: CelResourceCheck, value: string) => r.with({ [part]: value }),
    );
  env.registerFunction(`${PATH_CHECK}.check(string): ${DECISION}`, (p: CelPathCheck, verb: string) =>
    decide(p.authorizer, { resourceRequest: false, verb, path: p.path }),
  );
  env.registerFunction(`${RESOURCE_CHECK}.check(string): ${DECISION}`, (r: CelResourceCheck, verb: string) =>
    decide(r.group.authorizer, {
      resourceRequest: true,
      verb,
      group: r.group.group,
      version: '*',
      ...r.parts,
    }),
  );
  env.registerFunction(`${DECISION}.allowed(): bool`, (d: CelDecision) => d.allowed);
  env.registerFunction(`${DECISION}.reason(): string`, (d: CelDecision) => d.reason);
  env.registerFunction(`${DECISION}.errored(): bool`, (d: CelDecision) => d.error !== '');
  env.registerFunction(`${DECISION}.error(): string`, (d: CelDecision) => d.error);
  env.registerVariable('authorizer', AUTHORIZER);
}

/** The `authorizer` value of one admission request (with its `requestResource`). */
export function authorizerVariables(attributes: AdmissionAttributes): Record<string, unknown> {
  const authorizer = new CelAuthorizer(attributes.userInfo, attributes.authorize);
  const requestResource = new CelResourceCheck(new CelGroupCheck(authorizer, attributes.resource.group), {
    resource: attributes.resource.resource,
    subresource: attributes.subResource,
    namespace: attributes.namespace,
    name: attributes.name,
  });
  authorizer.requestResource = requestResource;
  return { authorizer };
}
