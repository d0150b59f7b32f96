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

/** RBAC objects over a vocabulary of namespaces and names (small: objects are often rewritten). */
function objects(
  namespaces: readonly string[],
  roleNames: readonly string[],
  bindingNames: readonly string[],
): fc.Arbitrary<Obj> {
  return fc.oneof(
    fc.record({
      kind: fc.constant<RbacKind>('ClusterRole'),
      namespace: fc.constant(''),
      name: fc.constantFrom(...roleNames),
      rules,
    }),
    fc.record({
      kind: fc.constant<RbacKind>('Role'),
      namespace: fc.constantFrom(...namespaces),
      name: fc.constantFrom(...roleNames),
      rules,
    }),
    fc.record({
      kind: fc.constant<RbacKind>('ClusterRoleBinding'),
      namespace: fc.constant(''),
      name: fc.constantFrom(...bindingNames),
      roleRef: fc.record({
        kind: fc.constantFrom('ClusterRole', 'Role'),
        name: fc.constantFrom(...roleNames),
      }),
      subjects: fc.array(subject, { maxLength: 3 }),
    }),
    fc.record({
      kind: fc.constant<RbacKind>('RoleBinding'),
      namespace: fc.constantFrom(...namespaces),
      name: fc.constantFrom(...bindingNames),
      roleRef: fc.record({
        kind: fc.constantFrom('ClusterRole', 'Role'),
        name: fc.constantFrom(...roleNames),
      }),
      subjects: fc.array(subject, { maxLength: 3 }),
    }),
  );
}
const object = objects(NAMESPACES, ROLE_NAMES, BINDING_NAMES);

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

  it('writes applied at once by the server are not undone by a lagging watch (resourceVersion guard)', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            object: objects(['n1'], ['r1'], ['b1']),
            deleted: fc.boolean(),
            sync: fc.boolean(),
            lag: fc.nat(3),
          }),
          {
            maxLength: 25,
          },
        ),
        user,
        fc.array(request, { minLength: 1, maxLength: 5 }),
        (steps, u, requests) => {
          const index = new RbacAuthorizer();
          // the store's event log: each write gets the next resourceVersion
          const log: { type: 'ADDED' | 'MODIFIED' | 'DELETED'; object: Obj; stored: KubeObject }[] = [];
          const live = new Set<string>();
          // what the index must hold: per object, the newest write it was given (by either path)
          const newest = new Map<string, { rv: number; object: Obj | undefined }>();
          const see = (o: Obj, rv: number, deleted: boolean) => {
            const key = `${o.kind}/${o.namespace}/${o.name}`;
            if ((newest.get(key)?.rv ?? 0) < rv) newest.set(key, { rv, object: deleted ? undefined : o });
          };
          let delivered = 0;
          const deliver = (upTo: number) => {
            for (; delivered < upTo; delivered++) {
              const e = log[delivered] as (typeof log)[number];
              index.apply(e.object.kind, e.type, e.stored);
              see(e.object, delivered + 1, e.type === 'DELETED');
            }
          };
          // every user of the vocabulary with every group: sees every binding and every rule it grants
          const check = () => {
            const state = [...newest.values()].flatMap((v) => (v.object === undefined ? [] : [v.object]));
            for (const username of USERNAMES)
              for (const ns of ['', ...NAMESPACES]) {
                const everyone = { username, groups: USER_GROUPS };
                expect(canonical(index.rulesFor(everyone, ns).rules)).toEqual(
                  canonical(refRules(state, everyone, ns)),
                );
              }
            for (const r of requests) {
              const namespace = r.resourceRequest ? r.namespace : '';
              const expected = refRules(state, u, namespace).some((rule) => refRuleAllows(rule, r));
              expect(index.authorize(u, namespace, r).allowed, JSON.stringify({ r, u })).toBe(expected);
            }
          };
          for (const { object: o, deleted, sync, lag } of steps) {
            const key = `${o.kind}/${o.namespace}/${o.name}`;
            if (deleted && !live.has(key)) continue;
            const k = toKube(o);
            const rv = log.length + 1;
            const stored = { ...k, metadata: { ...k.metadata, resourceVersion: String(rv) } } as KubeObject;
            log.push({ type: deleted ? 'DELETED' : live.has(key) ? 'MODIFIED' : 'ADDED', object: o, stored });
            if (deleted) live.delete(key);
            else live.add(key);
            // the server applies its own create/update at once; the watch trails by `lag` events
            if (sync && !deleted) {
              index.written('rbac.authorization.k8s.io', o.kind, stored);
              see(o, rv, false);
            }
            deliver(Math.max(delivered, log.length - lag));
            check();
          }
          deliver(log.length);
          check();
        },
      ),
      { numRuns: 1000 },
    );
  });

  it('a stale watch event does not revert a newer write applied by the server', () => {
    const index = new RbacAuthorizer();
    const clusterRole = (verbs: string[]) =>
      toKube({
        kind: 'ClusterRole',
        namespace: '',
        name: 'r1',
        rules: [{ verbs, apiGroups: [''], resources: ['pods'] }],
      });
    const at = (object: KubeObject, rv: string) =>
      ({ ...object, metadata: { ...object.metadata, resourceVersion: rv } }) as KubeObject;
    index.apply(
      'ClusterRoleBinding',
      'ADDED',
      at(
        toKube({
          kind: 'ClusterRoleBinding',
          namespace: '',
          name: 'b',
          roleRef: { kind: 'ClusterRole', name: 'r1' },
          subjects: [{ kind: 'User', name: 'alice' }],
        }),
        '1',
      ),
    );
    index.written('rbac.authorization.k8s.io', 'ClusterRole', at(clusterRole(['list']), '3'));
    index.apply('ClusterRole', 'ADDED', at(clusterRole(['get']), '2'));
    const alice = { username: 'alice', groups: [] };
    expect(index.rulesFor(alice, '').rules).toEqual([
      { verbs: ['list'], apiGroups: [''], resources: ['pods'] },
    ]);
    index.apply('ClusterRole', 'MODIFIED', at(clusterRole(['list']), '3'));
    index.apply('ClusterRole', 'DELETED', at(clusterRole(['list']), '4'));
    expect(index.rulesFor(alice, '')).toEqual({
      rules: [],
      errors: ['clusterrole.rbac.authorization.k8s.io "r1" not found'],
    });
    // objects of other groups are not RBAC's
    index.written('apps', 'ClusterRole', at(clusterRole(['*']), '5'));
    expect(index.rulesFor(alice, '').rules).toEqual([]);
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
