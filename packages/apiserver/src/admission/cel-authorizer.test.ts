import { describe, expect, it } from 'vitest';
import { CostMeter, celEnvironment, compileCel, PER_CALL_LIMIT } from '../cel/index.ts';
import { type AuthorizationCheck, authorizerVariables, registerAuthorizerLibrary } from './cel-authorizer.ts';
import type { AdmissionAttributes, UserInfo } from './types.ts';

const env = celEnvironment();
registerAuthorizerLibrary(env);

/** Allows `get` of pods in `default` and of the path /healthz to `jane`; records every check and its user. */
function attributes(checks: AuthorizationCheck[], users: UserInfo[] = []): AdmissionAttributes {
  return {
    operation: 'CREATE',
    kind: { group: 'apps', version: 'v1', kind: 'Deployment' },
    resource: { group: 'apps', version: 'v1', resource: 'deployments' },
    subResource: 'scale',
    namespaced: true,
    namespace: 'default',
    name: 'web',
    object: null,
    oldObject: null,
    dryRun: false,
    options: {},
    userInfo: { username: 'jane', groups: ['devs'] },
    authorize: (user, check) => {
      checks.push(check);
      users.push(user);
      if (check.verb === 'explode') throw new Error('authorizer down');
      const allowed =
        user.username === 'jane' &&
        (check.resourceRequest
          ? check.resource === 'pods' && check.namespace === 'default' && check.verb === 'get'
          : check.path === '/healthz');
      return { allowed, reason: allowed ? 'granted' : 'no rule' };
    },
  };
}

function run(expression: string, checks: AuthorizationCheck[] = [], users: UserInfo[] = []): unknown {
  const program = compileCel(env, expression, undefined);
  if (!('evaluate' in program)) throw new Error(`${expression}: ${program.message}`);
  return program.evaluate(authorizerVariables(attributes(checks, users)), new CostMeter(PER_CALL_LIMIT));
}

describe('CEL authorizer library', () => {
  it('checks a resource as the requesting user, with the group, resource, namespace, name and subresource given', () => {
    const checks: AuthorizationCheck[] = [];
    expect(
      run("authorizer.group('').resource('pods').namespace('default').check('get').allowed()", checks),
    ).toBe(true);
    expect(run("authorizer.group('').resource('pods').namespace('other').check('get').allowed()")).toBe(
      false,
    );
    expect(run("authorizer.group('').resource('pods').namespace('default').check('get').reason()")).toBe(
      'granted',
    );
    run(
      "authorizer.group('apps').resource('deployments').subresource('scale').namespace('ns').name('n').check('update')",
      checks,
    );
    expect(checks).toEqual([
      {
        resourceRequest: true,
        verb: 'get',
        group: '',
        version: '*',
        resource: 'pods',
        subresource: '',
        namespace: 'default',
        name: '',
      },
      {
        resourceRequest: true,
        verb: 'update',
        group: 'apps',
        version: '*',
        resource: 'deployments',
        subresource: 'scale',
        namespace: 'ns',
        name: 'n',
      },
    ]);
  });

  it('checks a non-resource path; an empty path or resource is an evaluation error', () => {
    expect(run("authorizer.path('/healthz').check('get').allowed()")).toBe(true);
    expect(run("authorizer.path('/metrics').check('get').allowed()")).toBe(false);
    expect(() => run("authorizer.path(' ').check('get')")).toThrow('path must not be empty');
    expect(() => run("authorizer.group('').resource('').check('get')")).toThrow('resource must not be empty');
  });

  it('authorizer.requestResource is the check of the request itself', () => {
    const checks: AuthorizationCheck[] = [];
    expect(run("authorizer.requestResource.check('update').allowed()", checks)).toBe(false);
    expect(checks).toEqual([
      {
        resourceRequest: true,
        verb: 'update',
        group: 'apps',
        version: '*',
        resource: 'deployments',
        subresource: 'scale',
        namespace: 'default',
        name: 'web',
      },
    ]);
  });

  it('serviceAccount(ns, name) checks as that ServiceAccount; an invalid name is an error', () => {
    const users: UserInfo[] = [];
    const allowed = run(
      "authorizer.serviceAccount('default', 'robot').path('/healthz').check('get').allowed()",
      [],
      users,
    );
    expect(allowed).toBe(false); // the ServiceAccount is not jane
    expect(users).toEqual([
      {
        username: 'system:serviceaccount:default:robot',
        groups: ['system:serviceaccounts', 'system:serviceaccounts:default'],
      },
    ]);
    expect(() =>
      run("authorizer.serviceAccount('default', 'Not_Valid').group('').resource('pods').check('get')"),
    ).toThrow('Invalid service account name');
    expect(() =>
      run("authorizer.serviceAccount('a.b', 'robot').group('').resource('pods').check('get')"),
    ).toThrow('Invalid service account namespace');
  });

  it('a failing authorizer is a decision that errored, not an evaluation error', () => {
    expect(run("authorizer.path('/healthz').check('explode').errored()")).toBe(true);
    expect(run("authorizer.path('/healthz').check('explode').error()")).toBe('authorizer down');
    expect(run("authorizer.path('/healthz').check('explode').allowed()")).toBe(false);
    expect(run("authorizer.path('/healthz').check('get').errored()")).toBe(false);
    expect(run("authorizer.path('/healthz').check('get').error()")).toBe('');
  });
});
