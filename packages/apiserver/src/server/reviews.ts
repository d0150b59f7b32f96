/**
 * The review kinds: nothing is stored, the answer is the request with `status` filled (201).
 * `authorization.k8s.io/v1` SelfSubjectAccessReview, SubjectAccessReview, LocalSubjectAccessReview
 * (decided by {@link authorize} over the server's RBAC authorizer) and SelfSubjectRulesReview
 * ({@link rulesFor}: the caller's rules in the namespace);
 * `authentication.k8s.io/v1` SelfSubjectReview (the caller) and TokenReview (the server's token and
 * the ServiceAccount tokens it issued), as `pkg/registry/authorization/*` and
 * `pkg/registry/authentication/*` answer them.
 */
import { BadRequestError, InvalidError, isNotFound, type StatusCause } from '@converge/runtime';
import { groupVersion, type JsonObject } from './api-resource.ts';
import { ADMIN_USER, requestAuth } from './auth.ts';
import { authorize, type RequestAttributes, rulesFor, type UserInfo } from './authorize.ts';
import type { RequestContext } from './context.ts';
import { checkIdentity, readObjectBody } from './object-io.ts';
import { writeValue } from './respond.ts';
import { BodyReader } from './review-body.ts';
import { API_AUDIENCES, serviceAccountUser, tokenKeys, verifyToken } from './service-account-token.ts';

const REVIEW_GROUPS: ReadonlySet<string> = new Set(['authorization.k8s.io', 'authentication.k8s.io']);

/** Whether a resource is one of the review kinds this file answers. */
export function isReview(ctx: Pick<RequestContext, 'resource'>): boolean {
  return REVIEW_GROUPS.has(ctx.resource.group) && ctx.resource.verbs.length === 1;
}

function invalid(kind: string, group: string, causes: StatusCause[]): InvalidError {
  const text = causes.map((c) => `${c.field}: ${c.message}`).join(', ');
  const list = causes.length > 1 ? `[${text}]` : text;
  return new InvalidError(`${kind}.${group} "" is invalid: ${list}`, {
    details: { group, kind, causes },
  });
}

function wireUser(user: UserInfo): JsonObject {
  const out: JsonObject = { username: user.username };
  if (user.uid !== undefined && user.uid !== '') out.uid = user.uid;
  if (user.groups.length > 0) out.groups = [...user.groups];
  if (user.extra !== undefined && Object.keys(user.extra).length > 0) out.extra = user.extra;
  return out;
}

/** Reads `spec.resourceAttributes` / `spec.nonResourceAttributes` (the SubjectAccessReviewSpec shape). */
function accessAttributes(read: BodyReader, spec: JsonObject): RequestAttributes | StatusCause[] {
  const ra = read.object(spec, 'resourceAttributes', 'ResourceAttributes', 'spec.resourceAttributes');
  const nra = read.object(
    spec,
    'nonResourceAttributes',
    'NonResourceAttributes',
    'spec.nonResourceAttributes',
  );
  if (ra !== undefined && nra !== undefined) {
    return [
      {
        field: 'spec.nonResourceAttributes',
        reason: 'FieldValueInvalid',
        message: `Invalid value: ${JSON.stringify(`&${JSON.stringify(nra)}`)}: cannot be specified in combination with resourceAttributes`,
      },
    ];
  }
  if (ra === undefined && nra === undefined) {
    return [
      {
        field: 'spec.resourceAttributes',
        reason: 'FieldValueInvalid',
        message:
          'Invalid value: "null": exactly one of nonResourceAttributes or resourceAttributes must be specified',
      },
    ];
  }
  if (nra !== undefined) {
    const s = (k: string): string =>
      read.string(nra, k, 'NonResourceAttributes', `spec.nonResourceAttributes.${k}`);
    return { resourceRequest: false, verb: s('verb'), path: s('path') };
  }
  const s = (k: string): string => read.string(ra, k, 'ResourceAttributes', `spec.resourceAttributes.${k}`);
  return {
    resourceRequest: true,
    verb: s('verb'),
    group: s('group'),
    version: s('version'),
    resource: s('resource'),
    subresource: s('subresource'),
    namespace: s('namespace'),
    name: s('name'),
  };
}

function accessStatus(ctx: RequestContext, user: UserInfo, attributes: RequestAttributes): JsonObject {
  const decision = authorize(user, attributes, ctx.server.rbac, true);
  const status: JsonObject = { allowed: decision.allowed };
  if (decision.denied) status.denied = true;
  if (decision.reason !== '') status.reason = decision.reason;
  return status;
}

/** The user a SubjectAccessReview names (`spec.user`, `spec.groups`, `spec.uid`, `spec.extra`). */
function specUser(read: BodyReader, spec: JsonObject): UserInfo | StatusCause[] {
  const username = read.string(spec, 'user', 'SubjectAccessReviewSpec', 'spec.user');
  const groups = read.strings(spec, 'groups', 'SubjectAccessReviewSpec', 'spec.groups');
  const uid = read.string(spec, 'uid', 'SubjectAccessReviewSpec', 'spec.uid');
  if (username === '' && groups.length === 0) {
    return [
      {
        field: 'spec.user',
        reason: 'FieldValueInvalid',
        message: 'Invalid value: "": at least one of user or group must be specified',
      },
    ];
  }
  return { username, groups, ...(uid === '' ? {} : { uid }) };
}

/** Answers a POST to a review kind (the caller is authorized for `create` already). */
export async function handleReview(ctx: RequestContext): Promise<void> {
  const { resource } = ctx;
  const body = checkIdentity(ctx, await readObjectBody(ctx));
  const read = new BodyReader(resource.kind, resource.version);
  const spec = read.object(body, 'spec', `${resource.kind}Spec`, 'spec') ?? {};
  const { user, apiToken } = requestAuth(ctx.req);
  const metadata: JsonObject = { ...body.metadata, creationTimestamp: null };
  const answer = (status: JsonObject, echo: JsonObject = spec): void => {
    const out = { kind: resource.kind, apiVersion: groupVersion(resource), metadata, spec: echo, status };
    writeValue(ctx.res, 201, out, { pretty: ctx.pretty }, ctx.warnings);
  };
  switch (resource.kind) {
    case 'SelfSubjectAccessReview': {
      const attributes = accessAttributes(read, spec);
      if (Array.isArray(attributes)) throw invalid(resource.kind, resource.group, attributes);
      answer(accessStatus(ctx, user, attributes));
      return;
    }
    case 'SubjectAccessReview':
    case 'LocalSubjectAccessReview': {
      const local = resource.kind === 'LocalSubjectAccessReview';
      const attributes = accessAttributes(read, spec);
      const subject = specUser(read, spec);
      const causes = [
        ...(Array.isArray(subject) ? subject : []),
        ...(Array.isArray(attributes) ? attributes : []),
      ];
      if (local && !Array.isArray(attributes)) {
        const ra = spec.resourceAttributes as JsonObject | undefined;
        const ns = read.string(ra, 'namespace', 'ResourceAttributes', 'spec.resourceAttributes.namespace');
        if (!attributes.resourceRequest)
          causes.push({
            field: 'spec.nonResourceAttributes',
            reason: 'FieldValueInvalid',
            message: 'Invalid value: "": disallowed on this kind of request',
          });
        // ValidateLocalSubjectAccessReview: the spec's namespace must equal metadata.namespace
        else if (ns !== ctx.target.namespace)
          causes.push({
            field: 'spec.resourceAttributes.namespace',
            reason: 'FieldValueInvalid',
            message: `Invalid value: ${JSON.stringify(ns)}: must match metadata.namespace`,
          });
      }
      if (causes.length > 0 || Array.isArray(attributes) || Array.isArray(subject))
        throw invalid(resource.kind, resource.group, causes);
      answer(accessStatus(ctx, subject, attributes));
      return;
    }
    case 'SelfSubjectRulesReview': {
      const namespace = read.string(spec, 'namespace', 'SelfSubjectRulesReviewSpec', 'spec.namespace');
      if (namespace === '') throw new BadRequestError('no namespace on request');
      const rules = rulesFor(user, namespace, ctx.server.rbac);
      answer(
        {
          resourceRules: rules.resourceRules.map((r) => ({ ...r })),
          nonResourceRules: rules.nonResourceRules.map((r) => ({ ...r })),
          incomplete: rules.incomplete,
          ...(rules.evaluationError === '' ? {} : { evaluationError: rules.evaluationError }),
        },
        {},
      );
      return;
    }
    case 'SelfSubjectReview': {
      const out = {
        kind: resource.kind,
        apiVersion: groupVersion(resource),
        metadata,
        status: { userInfo: wireUser(user) },
      };
      writeValue(ctx.res, 201, out, { pretty: ctx.pretty }, ctx.warnings);
      return;
    }
    case 'TokenReview': {
      const token = read.string(spec, 'token', 'TokenReviewSpec', 'spec.token');
      const audiences = read.strings(spec, 'audiences', 'TokenReviewSpec', 'spec.audiences');
      if (token === '') throw new BadRequestError('token is required for TokenReview in authentication');
      answer(await tokenReviewStatus(ctx, apiToken, token, audiences));
      return;
    }
    default:
      throw new BadRequestError(`not a review kind: ${resource.kind}`);
  }
}

/** TokenReview: the admin token (audience-agnostic), or a ServiceAccount token whose account still exists. */
async function tokenReviewStatus(
  ctx: RequestContext,
  apiToken: string | undefined,
  token: string,
  requested: readonly string[],
): Promise<JsonObject> {
  const audiences = requested.length === 0 ? API_AUDIENCES : requested;
  const rejected = (error: string): JsonObject => (error === '' ? { user: {} } : { user: {}, error });
  if (apiToken !== undefined && token === apiToken) {
    const matched = audiences.filter((a) => API_AUDIENCES.includes(a));
    if (matched.length === 0) return rejected('');
    return { authenticated: true, user: wireUser(ADMIN_USER), audiences: matched };
  }
  const verdict = verifyToken(tokenKeys(apiToken), token, ctx.server.clock.now(), audiences);
  if (!verdict.ok) return rejected(verdict.error);
  const { claims } = verdict;
  const serviceAccounts = ctx.server.registry.lookup('', 'v1', 'serviceaccounts');
  if (serviceAccounts !== undefined) {
    try {
      const sa = await ctx.server.store.get(serviceAccounts.storage, {
        namespace: claims.namespace,
        name: claims.name,
      });
      if (claims.uid !== '' && sa.metadata.uid !== claims.uid) {
        return rejected(
          `[invalid bearer token, service account UID (${claims.uid}) does not match claim (${String(sa.metadata.uid)})]`,
        );
      }
    } catch (error) {
      if (!isNotFound(error)) throw error;
      return rejected(
        `[invalid bearer token, service account ${claims.namespace}/${claims.name} has been deleted]`,
      );
    }
  }
  return {
    authenticated: true,
    user: wireUser(serviceAccountUser(claims)),
    audiences: [...claims.audiences],
  };
}
