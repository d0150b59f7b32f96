import type { Clock } from '@converge/runtime';
import { VirtualClock } from '@converge/runtime/testing';
import fc from 'fast-check';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { FAULT_HEADER } from './fault-response.ts';
import { FAULT_STATUSES } from './fault-rules.ts';
import { startTestServer, type TestServer } from './test-support.ts';

/** A clock whose seeded random generator each property run replaces, so every run is repeatable. */
class ReseedableClock implements Clock {
  #clock = new VirtualClock({ startMs: Date.parse('2025-01-01T00:00:00Z') });
  reseed(seed: number): void {
    this.#clock = new VirtualClock({ startMs: this.#clock.now(), seed });
  }
  now(): number {
    return this.#clock.now();
  }
  setTimer(callback: () => void, delayMs: number): ReturnType<Clock['setTimer']> {
    return this.#clock.setTimer(callback, delayMs);
  }
  sleep(delayMs: number, signal?: AbortSignal): Promise<void> {
    return this.#clock.sleep(delayMs, signal);
  }
  random(): number {
    return this.#clock.random();
  }
}

const clock = new ReseedableClock();
let t: TestServer;
let run = 0;

beforeAll(async () => {
  t = await startTestServer({ clock });
});
afterEach(() => {
  t.server.faults.clear();
});
afterAll(async () => {
  await t.close();
});

/** Sends `n` GETs to `path` interleaved with GETs to `other`; returns the codes of the first. */
async function outcomes(path: string, other: string, n: number): Promise<number[]> {
  const codes: number[] = [];
  for (let i = 0; i < n; i++) {
    codes.push((await t.request(path)).status);
    expect((await t.request(other)).status).toBe(200);
  }
  return codes;
}

describe('faults.failRatio randomness', () => {
  it('fails a fraction of matching requests within binomial bounds, and never a request off its path', async () => {
    const n = 80;
    await fc.assert(
      fc.asyncProperty(
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.integer({ min: 1, max: 2 ** 31 - 1 }),
        async (ratio, seed) => {
          clock.reseed(seed);
          const rule = t.server.faults.failRatio({
            pathPattern: '/api/v1/namespaces/*/configmaps',
            ratio,
            status: 500,
          });
          try {
            const codes = await outcomes(
              '/api/v1/namespaces/default/configmaps',
              '/api/v1/namespaces/default/secrets',
              n,
            );
            expect(codes.every((c) => c === 200 || c === 500)).toBe(true);
            const failed = codes.filter((c) => c === 500).length;
            const sigma = Math.sqrt(n * ratio * (1 - ratio));
            expect(Math.abs(failed - n * ratio)).toBeLessThanOrEqual(4.5 * sigma + 1);
          } finally {
            rule.remove();
          }
        },
      ),
      { numRuns: 12 },
    );
  });

  it("draws from the server clock's random(): the same seed fails the same requests", async () => {
    const pattern = async (seed: number): Promise<number[]> => {
      clock.reseed(seed);
      const rule = t.server.faults.failRatio({ pathPattern: '/version', ratio: 0.5, status: 503 });
      try {
        return await outcomes('/version', '/healthz', 40);
      } finally {
        rule.remove();
      }
    };
    const first = await pattern(1234);
    expect(await pattern(1234)).toEqual(first);
    expect(first).toContain(503);
    expect(first).toContain(200);
    expect(await pattern(4321)).not.toEqual(first);
  });
});

type Op =
  | { readonly op: 'create'; readonly name: string; readonly value: string }
  | { readonly op: 'patch'; readonly name: string; readonly value: string }
  | { readonly op: 'delete'; readonly name: string };

const names = fc.constantFrom('a', 'b', 'c');
const value = fc.string({ maxLength: 4 });
const ops: fc.Arbitrary<Op[]> = fc.array(
  fc.oneof<fc.Arbitrary<Op>[]>(
    fc.record({ op: fc.constant('create' as const), name: names, value }),
    fc.record({ op: fc.constant('patch' as const), name: names, value }),
    fc.record({ op: fc.constant('delete' as const), name: names }),
  ),
  { minLength: 1, maxLength: 20 },
);

describe('injected failures and the store', () => {
  it('never corrupt it: a write failed before is not applied, one failed after is applied once', async () => {
    await fc.assert(
      fc.asyncProperty(
        ops,
        fc.constantFrom('before' as const, 'after' as const),
        fc.constantFrom(...FAULT_STATUSES),
        fc.integer({ min: 1, max: 2 ** 31 - 1 }),
        async (steps, phase, status, seed) => {
          clock.reseed(seed);
          const ns = `consistency-${run++}`;
          expect(
            (await t.request('/api/v1/namespaces', { method: 'POST', body: { metadata: { name: ns } } }))
              .status,
          ).toBe(201);
          const base = `/api/v1/namespaces/${ns}/configmaps`;
          t.server.faults.failRatio({
            pathPattern: `${base}/**`,
            methods: ['POST', 'PATCH', 'DELETE'],
            ratio: 0.5,
            status,
            phase,
          });
          const model = new Map<string, string>();
          for (const step of steps) {
            const exists = model.has(step.name);
            const succeeds = step.op === 'create' ? !exists : exists;
            const res =
              step.op === 'create'
                ? await t.request(base, {
                    method: 'POST',
                    body: { metadata: { name: step.name }, data: { v: step.value } },
                  })
                : step.op === 'patch'
                  ? await t.request(`${base}/${step.name}`, {
                      method: 'PATCH',
                      body: { data: { v: step.value } },
                      headers: { 'content-type': 'application/merge-patch+json' },
                    })
                  : await t.request(`${base}/${step.name}`, { method: 'DELETE' });
            const injected = res.headers[FAULT_HEADER.toLowerCase()] !== undefined;
            if (injected) expect(res.status).toBe(status);
            else expect(res.status < 300).toBe(succeeds);
            const applied = succeeds && (!injected || phase === 'after');
            if (applied && step.op === 'delete') model.delete(step.name);
            else if (applied && step.op !== 'delete') model.set(step.name, step.value);
          }
          t.server.faults.clear();
          const list = (await t.request(base)).json as {
            items: { metadata: { name: string }; data?: { v?: string } }[];
          };
          const stored = new Map(list.items.map((i) => [i.metadata.name, i.data?.v ?? '']));
          expect(stored).toEqual(model);
        },
      ),
      { numRuns: 20 },
    );
  });
});
