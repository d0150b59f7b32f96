/**
 * Helpers of the RBAC tests: a served embedded API server with its cluster defaults (bootstrap
 * roles), ServiceAccounts with tokens minted by TokenRequest, and polling with a deadline (the
 * authorizer follows the store's watch, so a new binding takes effect a moment after it is stored,
 * as in a cluster).
 */
import { expect } from 'vitest';
import {
  startTestServer,
  type TestRequest,
  type TestResponse,
  type TestServer,
} from '../../packages/apiserver/src/server/test-support.ts';

export const ADMIN_TOKEN = 'rbac-admin-token';

/** A server with the bootstrap policy and the admin token {@link ADMIN_TOKEN}. */
export function startRbacServer(): Promise<TestServer> {
  return startTestServer({ token: ADMIN_TOKEN, clusterDefaults: true });
}

/** Sends a request as admin and expects `status`. */
export async function admin(
  server: TestServer,
  path: string,
  init: TestRequest & { expect?: number } = {},
): Promise<TestResponse> {
  const res = await server.request(path, init);
  if (init.expect !== undefined)
    expect(res.status, `${init.method ?? 'GET'} ${path}: ${res.text}`).toBe(init.expect);
  return res;
}

/** Creates a namespace (if missing) and a ServiceAccount in it; resolves with a token for it. */
export async function serviceAccount(server: TestServer, namespace: string, name: string): Promise<string> {
  const ns = await server.request('/api/v1/namespaces', {
    method: 'POST',
    body: { metadata: { name: namespace } },
  });
  expect([201, 409], ns.text).toContain(ns.status);
  await admin(server, `/api/v1/namespaces/${namespace}/serviceaccounts`, {
    method: 'POST',
    body: { metadata: { name } },
    expect: 201,
  });
  const res = await admin(server, `/api/v1/namespaces/${namespace}/serviceaccounts/${name}/token`, {
    method: 'POST',
    body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 3600 } },
    expect: 201,
  });
  return (res.json as { status: { token: string } }).status.token;
}

/** Polls `probe` every 10 ms until it returns something other than undefined; fails after `timeoutMs`. */
export async function eventually<T>(
  what: string,
  probe: () => Promise<T | undefined>,
  timeoutMs = 30_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** Waits until `path` answers `token` with a status other than 403 (`allowed`) or exactly 403 (denied). */
export function until(
  server: TestServer,
  token: string,
  path: string,
  allowed: boolean,
  init: TestRequest = {},
): Promise<TestResponse> {
  return eventually(`${init.method ?? 'GET'} ${path} ${allowed ? 'allowed' : 'denied'}`, async () => {
    const res = await server.request(path, { ...init, token });
    return (res.status !== 403) === allowed ? res : undefined;
  });
}

/** A Role or ClusterRole body (optionally labelled). */
export function role(
  name: string,
  rules: readonly Record<string, unknown>[],
  labels?: Record<string, string>,
): Record<string, unknown> {
  return { metadata: { name, ...(labels === undefined ? {} : { labels }) }, rules };
}

/** A RoleBinding or ClusterRoleBinding body. */
export function binding(
  name: string,
  roleRef: { readonly kind: 'Role' | 'ClusterRole'; readonly name: string },
  subjects: readonly Record<string, unknown>[],
): Record<string, unknown> {
  return {
    metadata: { name },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', ...roleRef },
    subjects,
  };
}

export const RBAC = '/apis/rbac.authorization.k8s.io/v1';
