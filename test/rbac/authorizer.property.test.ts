/**
 * Property tests of the RBAC authorizer: after any sequence of stored, changed and deleted Roles,
 * ClusterRoles and bindings, the indexed authorizer decides every request as a plain reference
 * model written here (a scan of every binding and rule, after kube's RBAC semantics) does, and
 * lists the same rules; the escalation check never lets a role grant what its writer lacks.
 */
import type { KubeObject } from '@converge/runtime';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { RbacAuthorizer, type RbacKind } from '../../packages/apiserver/src/server/rbac-authorizer.ts';
import { escalationMessage } from '../../packages/apiserver/src/server/rbac-escalation.ts';
import {
  compileRule,
  type PolicyRule,
  type RuleRequest,
  ruleAllows,
} from '../../packages/apiserver/src/server/rbac-rules.ts';

// ---- the reference model -------------------------------------------------------------------

interface Rule {
  verbs: string[];
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
}
interface Subject {
  kind: string;
  name: string;
  namespace?: string;
}
interface Obj {
  kind: RbacKind;
  namespace: string;
  name: string;
  rules?: Rule[];
  roleRef?: { kind: string; name: string };
  subjects?: Subject[];
}
interface User {
  username: string;
  groups: string[];
}
type Request =
  | {
      resourceRequest: true;
      verb: string;
      group: string;
      resource: string;
      subresource: string;
      name: string;
      namespace: string;
    }
  | { resourceRequest: false; verb: string; path: string };

function refRuleAllows(rule: Rule, request: Request): boolean {
  const verb = rule.verbs.includes('*') || rule.verbs.includes(request.verb);
  if (!request.resourceRequest) {
    const urls = rule.nonResourceURLs ?? [];
    return (
      verb &&
      urls.some(
        (u) =>
          u === '*' || u === request.path || (u.endsWith('*') && request.path.startsWith(u.slice(0, -1))),
      )
    );
  }
  const groups = rule.apiGroups ?? [];
  const combined =
    request.subresource === '' ? request.resource : `${request.resource}/${request.subresource}`;
  const resource = (rule.resources ?? []).some(
    (r) => r === '*' || r === combined || (request.subresource !== '' && r === `*/${request.subresource}`),
  );
  const names = rule.resourceNames ?? [];
  return (
    verb &&
    (groups.includes('*') || groups.includes(request.group)) &&
    resource &&
    (names.length === 0 || names.includes(request.name))
  );
}

function refApplies(user: User, subject: Subject, bindingNamespace: string): boolean {
  if (subject.kind === 'User') return subject.name === user.username;
  if (subject.kind === 'Group') return user.groups.includes(subject.name);
  if (subject.kind === 'ServiceAccount') {
    const ns =
      subject.namespace !== undefined && subject.namespace !== '' ? subject.namespace : bindingNamespace;
    return ns !== '' && user.username === `system:serviceaccount:${ns}:${subject.name}`;
  }
  return false;
}

/** Every rule the user holds in `namespace`: a scan of all bindings. */
function refRules(state: readonly Obj[], user: User, namespace: string): Rule[] {
  const out: Rule[] = [];
  const find = (kind: RbacKind, ns: string, name: string) =>
    state.find((o) => o.kind === kind && o.namespace === ns && o.name === name);
  for (const b of state) {
    const isCluster = b.kind === 'ClusterRoleBinding';
    if (!isCluster && !(b.kind === 'RoleBinding' && namespace !== '' && b.namespace === namespace)) continue;
    if (!(b.subjects ?? []).some((s) => refApplies(user, s, b.namespace))) continue;
    const ref = b.roleRef ?? { kind: '', name: '' };
    const role =
      ref.kind === 'ClusterRole'
        ? find('ClusterRole', '', ref.name)
        : ref.kind === 'Role'
          ? find('Role', b.namespace, ref.name)
          : undefined;
    out.push(...(role?.rules ?? []));
  }
  return out;
}

// ---- arbitraries ---------------------------------------------------------------------------

const NAMESPACES = ['n1', 'n2'];
const VERBS = ['get', 'list', 'update', 'delete', '*'];
const GROUPS = ['', 'apps', '*'];
const RESOURCES = ['pods', 'deployments', 'pods/log', 'deployments/scale', '*/status', '*', 'pods/*'];
const NAMES = ['a', 'b'];
const URLS = ['/x', '/x/*', '/y', '/x/y', '*'];
const USERNAMES = ['alice', 'bob', 'system:serviceaccount:n1:sa', 'system:serviceaccount:n2:sa'];
const USER_GROUPS = ['devs', 'ops', 'system:serviceaccounts', 'system:serviceaccounts:n1'];
const ROLE_NAMES = ['r1', 'r2', 'r3'];
const BINDING_NAMES = ['b1', 'b2', 'b3'];

const some = <T>(values: readonly T[]) =>
  fc.uniqueArray(fc.constantFrom(...values), { minLength: 1, maxLength: 3 });

const resourceRule: fc.Arbitrary<Rule> = fc.record(
  {
    verbs: some(VERBS),
    apiGroups: some(GROUPS),
    resources: some(RESOURCES),
    resourceNames: fc.uniqueArray(fc.constantFrom(...NAMES), { maxLength: 2 }),
  },
  { requiredKeys: ['verbs', 'apiGroups', 'resources'] },
);
const urlRule: fc.Arbitrary<Rule> = fc.record({ verbs: some(VERBS), nonResourceURLs: some(URLS) });
const rules = fc.array(fc.oneof(resourceRule, urlRule), { maxLength: 3 });

const subject: fc.Arbitrary<Subject> = fc.oneof(
  fc.record({ kind: fc.constant('User'), name: fc.constantFrom(...USERNAMES, 'sa') }),
  fc.record({ kind: fc.constant('Group'), name: fc.constantFrom(...USER_GROUPS) }),
  fc.record(
    {
      kind: fc.constant('ServiceAccount'),
      name: fc.constantFrom('sa', 'other'),
      namespace: fc.constantFrom('', ...NAMESPACES),
    },
    { requiredKeys: ['kind', 'name'] },
  ),
);

const object: fc.Arbitrary<Obj> = fc.oneof(
  fc.record({
    kind: fc.constant<RbacKind>('ClusterRole'),
    namespace: fc.constant(''),
    name: fc.constantFrom(...ROLE_NAMES),
    rules,
  }),
  fc.record({
    kind: fc.constant<RbacKind>('Role'),
    namespace: fc.constantFrom(...NAMESPACES),
    name: fc.constantFrom(...ROLE_NAMES),
    rules,
  }),
  fc.record({
    kind: fc.constant<RbacKind>('ClusterRoleBinding'),
    namespace: fc.constant(''),
    name: fc.constantFrom(...BINDING_NAMES),
    roleRef: fc.record({
      kind: fc.constantFrom('ClusterRole', 'Role'),
      name: fc.constantFrom(...ROLE_NAMES),
    }),
    subjects: fc.array(subject, { maxLength: 3 }),
  }),
  fc.record({
    kind: fc.constant<RbacKind>('RoleBinding'),
    namespace: fc.constantFrom(...NAMESPACES),
    name: fc.constantFrom(...BINDING_NAMES),
    roleRef: fc.record({
      kind: fc.constantFrom('ClusterRole', 'Role'),
      name: fc.constantFrom(...ROLE_NAMES),
    }),
    subjects: fc.array(subject, { maxLength: 3 }),
  }),
);

/** A store event: the object written, or deleted. */
const event = fc.record({ object, deleted: fc.boolean() });

const user: fc.Arbitrary<User> = fc.record({
  username: fc.constantFrom(...USERNAMES),
  groups: fc.uniqueArray(fc.constantFrom(...USER_GROUPS), { maxLength: 3 }),
});

const request: fc.Arbitrary<Request> = fc.oneof(
  fc.record({
    resourceRequest: fc.constant(true as const),
    verb: fc.constantFrom('get', 'list', 'update', 'delete', 'watch'),
    group: fc.constantFrom('', 'apps', 'batch'),
    resource: fc.constantFrom('pods', 'deployments', 'jobs'),
    subresource: fc.constantFrom('', 'log', 'scale', 'status', '*'),
    name: fc.constantFrom('', 'a', 'b', 'c'),
    namespace: fc.constantFrom('', ...NAMESPACES),
  }),
  fc.record({
    resourceRequest: fc.constant(false as const),
    verb: fc.constantFrom('get', 'post'),
    path: fc.constantFrom('/x', '/x/', '/x/y', '/x/y/z', '/y', '/yz', '/z'),
  }),
);

function toKube(o: Obj): KubeObject {
  const kind = o.kind;
  const base = {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind,
    metadata: { name: o.name, ...(o.namespace === '' ? {} : { namespace: o.namespace }) },
  };
  if (kind === 'Role' || kind === 'ClusterRole') return { ...base, rules: o.rules } as unknown as KubeObject;
  return {
    ...base,
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', ...o.roleRef },
    subjects: o.subjects,
  } as unknown as KubeObject;
}

/** Replays the events into a fresh authorizer and into the reference's state (last write wins). */
function replay(events: readonly { object: Obj; deleted: boolean }[]): {
  index: RbacAuthorizer;
  state: Obj[];
} {
  const index = new RbacAuthorizer();
  const state = new Map<string, Obj>();
  for (const { object: o, deleted } of events) {
    const key = `${o.kind}/${o.namespace}/${o.name}`;
    const existed = state.has(key);
    if (deleted) {
      if (!existed) continue;
      state.delete(key);
      index.apply(o.kind, 'DELETED', toKube(o));
    } else {
      state.set(key, o);
      index.apply(o.kind, existed ? 'MODIFIED' : 'ADDED', toKube(o));
    }
  }
  return { index, state: [...state.values()] };
}

const canonical = (rs: readonly (Rule | PolicyRule)[]): string[] =>
  rs
    .map((r) =>
      JSON.stringify([
        r.verbs,
        r.apiGroups ?? [],
        r.resources ?? [],
        r.resourceNames ?? [],
        r.nonResourceURLs ?? [],
      ]),
    )
    .sort();

describe('RBAC authorizer against a reference model', () => {
  it('decides every request as a scan of every binding and rule does', () => {
    fc.assert(
      fc.property(
        fc.array(event, { maxLength: 25 }),
        user,
        fc.array(request, { minLength: 1, maxLength: 10 }),
        (events, u, requests) => {
          const { index, state } = replay(events);
          for (const r of requests) {
            const namespace = r.resourceRequest ? r.namespace : '';
            const expected = refRules(state, u, namespace).some((rule) => refRuleAllows(rule, r));
            expect(index.authorize(u, namespace, r).allowed, JSON.stringify({ r, u })).toBe(expected);
          }
        },
      ),
      { numRuns: 400 },
    );
  });

  it('lists the rules the reference finds, in any namespace', () => {
    fc.assert(
      fc.property(
        fc.array(event, { maxLength: 25 }),
        user,
        fc.constantFrom('', ...NAMESPACES),
        (events, u, ns) => {
          const { index, state } = replay(events);
          expect(canonical(index.rulesFor(u, ns).rules)).toEqual(canonical(refRules(state, u, ns)));
        },
      ),
      { numRuns: 300 },
    );
  });

  it('a single rule matches as RuleAllows does', () => {
    fc.assert(
      fc.property(fc.oneof(resourceRule, urlRule), request, (rule, r) => {
        expect(ruleAllows(compileRule(rule), r as RuleRequest)).toBe(refRuleAllows(rule, r));
      }),
      { numRuns: 2000 },
    );
  });
});

describe('escalation check', () => {
  it('a role passes only when every request it allows is allowed by the writer’s rules', () => {
    fc.assert(
      fc.property(
        rules,
        rules,
        fc.array(request, { minLength: 1, maxLength: 20 }),
        (held, requested, requests) => {
          const writer = { username: 'w', groups: [] };
          const message = escalationMessage(writer, held, [], requested);
          if (message !== undefined) {
            expect(message).toMatch(
              /^user "w" \(groups=\[\]\) is attempting to grant RBAC permissions not currently held:\n\{/,
            );
            return;
          }
          for (const r of requests)
            if (requested.some((rule) => refRuleAllows(rule, r)))
              expect(
                held.some((rule) => refRuleAllows(rule, r)),
                JSON.stringify(r),
              ).toBe(true);
        },
      ),
      { numRuns: 1000 },
    );
  });

  it('any role passes for a writer holding everything; a rule passes for a writer holding it', () => {
    const everything: Rule[] = [
      { verbs: ['*'], apiGroups: ['*'], resources: ['*'] },
      { verbs: ['*'], nonResourceURLs: ['*'] },
    ];
    fc.assert(
      fc.property(rules, (requested) => {
        const writer = { username: 'w', groups: ['g'] };
        expect(escalationMessage(writer, everything, [], requested)).toBeUndefined();
        expect(escalationMessage(writer, requested, [], requested)).toBeUndefined();
      }),
    );
  });
});
