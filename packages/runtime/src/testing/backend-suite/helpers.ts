import { expect, it } from 'vitest';
import type { BackendError, ResourceType, StatusCause } from '../../backend/index.ts';
import type { KubeObject, ObjectMeta } from '../../object/index.ts';
import { type BackendHarness, type Capability, capabilityReasons, type SuiteContext } from './options.ts';
import { suiteTypes } from './types.ts';

/** What a test needs beyond the basic contract. */
export interface CheckOptions {
  readonly needs?: readonly Capability[];
  /** The test needs `harness.compact()`. */
  readonly compact?: boolean;
  /** Timeout of this test in ms (default the suite's). */
  readonly timeoutMs?: number;
}

/** The test body: gets a fresh harness, which is closed afterwards. */
export type CheckBody = (
  harness: BackendHarness & { readonly compact: () => Promise<void> },
) => Promise<void>;

/**
 * Declares one conformance test. Skipped, with the reason in its title, when the backend lacks a
 * capability it needs. The body runs against a fresh backend that is always closed afterwards.
 */
export function check(ctx: SuiteContext, title: string, body: CheckBody, options: CheckOptions = {}): void {
  const missing = (options.needs ?? []).filter((c) => !ctx.capabilities[c]).map((c) => capabilityReasons[c]);
  const timeout = options.timeoutMs ?? ctx.timeoutMs;
  if (missing.length > 0) {
    it.skip(`${title} (skipped: ${missing.join('; ')})`, () => {});
    return;
  }
  if (options.compact === true) {
    // Whether the harness can compact is only known once it exists; probe per test.
    it(title, { timeout }, async (testContext) => {
      await withBackend(ctx, async (harness) => {
        const compact = harness.compact?.bind(harness);
        if (compact === undefined) {
          testContext.skip(capabilityReasons.compact);
          return;
        }
        await body({ backend: harness.backend, close: () => harness.close(), compact });
      });
    });
    return;
  }
  it(title, { timeout }, () =>
    withBackend(ctx, (harness) =>
      body({
        backend: harness.backend,
        close: () => harness.close(),
        compact: () => Promise.reject(new Error('this test did not declare that it compacts')),
      }),
    ),
  );
}

/** The types a test backend serves: all suite types the backend can serve. */
export function servedTypes(ctx: SuiteContext): readonly ResourceType[] {
  const types = [suiteTypes.configMap, suiteTypes.widget];
  if (ctx.capabilities.clusterScoped) types.push(suiteTypes.clusterWidget);
  return types;
}

/** Makes a fresh backend, runs `body` and always closes it. */
export async function withBackend(
  ctx: SuiteContext,
  body: (harness: BackendHarness) => Promise<void>,
): Promise<void> {
  const harness = await ctx.makeBackend(servedTypes(ctx));
  try {
    await body(harness);
  } finally {
    await harness.close();
  }
}

/** Resolves with `promise`, or fails the test after `ms` naming `what` it was waiting for. */
export async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Polls `condition` until it returns true; fails the test after `ms` naming `what`. */
export async function eventually(ms: number, what: string, condition: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + ms;
  let delay = 20;
  let lastError: unknown;
  for (;;) {
    try {
      if (await condition()) return;
      lastError = undefined;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() >= deadline) {
      const suffix = lastError === undefined ? '' : ` (last error: ${String(lastError)})`;
      throw new Error(`timed out after ${ms} ms waiting until ${what}${suffix}`);
    }
    await new Promise((resolve) => setTimeout(resolve, delay));
    delay = Math.min(delay * 2, 200);
  }
}

/** Expects `promise` to reject with an instance of `errorClass` and returns the error. */
export async function expectRejects<E extends BackendError>(
  promise: Promise<unknown>,
  errorClass: abstract new (...args: never[]) => E,
  what: string,
): Promise<E> {
  let result: unknown;
  try {
    result = await promise;
  } catch (error) {
    expect(error, `${what}: expected ${errorClass.name}`).toBeInstanceOf(errorClass);
    return error as E;
  }
  return expect.fail(`${what}: expected ${errorClass.name}, but it succeeded with ${JSON.stringify(result)}`);
}

/** Expects one of the causes of an Invalid error to name `field`. */
export function expectCauseOn(causes: readonly StatusCause[], field: string): void {
  expect(
    causes.map((c) => c.field),
    `the InvalidError should have a cause on ${field}`,
  ).toContain(field);
}

const DECIMAL = /^(0|[1-9][0-9]*)$/;

/**
 * Compares two resourceVersions as revisions. Controllers treat resourceVersions as opaque; the
 * suite orders them only to check the ordering guarantees, which needs every Converge backend's
 * resourceVersion to be a decimal revision (etcd's, the store's, a KV stream sequence).
 */
export function compareRevisions(a: string | undefined, b: string | undefined): number {
  for (const rv of [a, b]) {
    expect(rv, 'ordering checks need resourceVersions that are decimal revisions').toMatch(DECIMAL);
  }
  const x = BigInt(a as string);
  const y = BigInt(b as string);
  return x < y ? -1 : x > y ? 1 : 0;
}

/** The resourceVersion of a stored object (fails the test if it has none). */
export function rv(object: KubeObject): string {
  const value = object.metadata.resourceVersion;
  expect(value, `${object.metadata.name} should carry a resourceVersion`).toEqual(expect.any(String));
  return value as string;
}

/** A copy of `object` with metadata fields replaced (`undefined` removes a field). */
export function withMeta<T extends KubeObject>(
  object: T,
  changes: { [K in keyof ObjectMeta]?: ObjectMeta[K] | undefined },
): T {
  const metadata: Record<string, unknown> = { ...object.metadata };
  for (const [key, value] of Object.entries(changes)) {
    if (value === undefined) delete metadata[key];
    else metadata[key] = value;
  }
  return { ...object, metadata: metadata as ObjectMeta };
}

/** A copy of `object` with top-level fields replaced. */
export function withFields<T extends KubeObject>(object: T, fields: Partial<Omit<T, 'metadata'>>): T {
  return { ...object, ...fields };
}

/** Names of objects, sorted. */
export function names(objects: readonly KubeObject[]): string[] {
  return objects.map((o) => o.metadata.name ?? '').sort();
}

/** `namespace/name` of each object, in the given order. */
export function keys(objects: readonly KubeObject[]): string[] {
  return objects.map((o) => `${o.metadata.namespace ?? ''}/${o.metadata.name ?? ''}`);
}

/** RFC 3339 with seconds precision in UTC, as `metav1.Time` serialises. */
export const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/;

/** A deep copy through JSON, for snapshots a backend cannot share memory with. */
export function snapshot<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}
