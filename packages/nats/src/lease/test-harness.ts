/**
 * Helpers for the KV lease lock tests (not part of the published package): unique buckets on a
 * real server, electors that log when they start and stop leading, and bounded polling.
 *
 * @internal
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { LeaderElector } from '@converge/runtime';
import { type KV, Kvm } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/nats-core';
import { connect } from '@nats-io/transport-node';
import fc from 'fast-check';
import { uniqueSuffix } from '../test-harness.ts';

/** A connection that keeps reconnecting (every 50 ms) for as long as the test runs. */
export function connectTo(url: string): Promise<NatsConnection> {
  return connect({ servers: url, maxReconnectAttempts: -1, reconnectTimeWait: 50 });
}

/** A fresh bucket with a unique name; `destroy()` removes it. */
export interface TestBucket {
  readonly name: string;
  readonly kv: KV;
  destroy(): Promise<void>;
}

/** Creates a uniquely named bucket (history 1 unless told) on `connection`. */
export async function createTestBucket(connection: NatsConnection, history = 1): Promise<TestBucket> {
  const name = `lease-test-${uniqueSuffix()}`;
  const kv = await new Kvm(connection).create(name, { history });
  return {
    name,
    kv,
    destroy: async () => {
      await kv.destroy();
    },
  };
}

/** One change of leadership, in the order the event loop saw it. */
export interface LeadershipEvent {
  readonly identity: string;
  readonly type: 'start' | 'stop';
  readonly at: number;
  /** For `stop`: the leading signal's abort reason. */
  readonly reason?: unknown;
}

/** A running elector. */
export interface RunningElector {
  readonly elector: LeaderElector;
  readonly stop: AbortController;
  /** Resolves when `run` settles, to its rejection (undefined if it resolved). */
  readonly done: Promise<unknown>;
  readonly settled: boolean;
}

/**
 * Runs `elector` until `stop` aborts, appending to `log` when it starts leading and when its
 * leading signal aborts (the moment leader-gated work is told to stop).
 */
export function runLogged(elector: LeaderElector, log: LeadershipEvent[]): RunningElector {
  const stop = new AbortController();
  const running = { elector, stop, done: Promise.resolve<unknown>(undefined), settled: false };
  running.done = elector
    .run(stop.signal, {
      onStartedLeading: (signal) => {
        log.push({ identity: elector.identity, type: 'start', at: Date.now() });
        signal.addEventListener('abort', () => {
          log.push({ identity: elector.identity, type: 'stop', at: Date.now(), reason: signal.reason });
        });
      },
    })
    .then(
      () => undefined,
      (error: unknown) => error,
    )
    .finally(() => {
      running.settled = true;
    });
  return running;
}

/**
 * Replays a leadership log and returns the first event at which two identities would lead at
 * once (a start while another identity's leadership is open), or undefined if there is none.
 */
export function firstDoubleLeader(log: readonly LeadershipEvent[]): LeadershipEvent | undefined {
  const leading = new Set<string>();
  for (const event of log) {
    if (event.type === 'stop') {
      leading.delete(event.identity);
      continue;
    }
    if (leading.size > 0 && !leading.has(event.identity)) return event;
    leading.add(event.identity);
  }
  return undefined;
}

/** Samples `isLeader` of each elector every `everyMs` until `stop()`; counts moments with two leaders. */
export function sampleLeaders(
  electors: readonly LeaderElector[],
  everyMs = 10,
): { readonly samples: () => number; readonly doubles: () => number; stop(): void } {
  let samples = 0;
  let doubles = 0;
  const timer = setInterval(() => {
    samples++;
    if (electors.filter((e) => e.isLeader).length > 1) doubles++;
  }, everyMs);
  return { samples: () => samples, doubles: () => doubles, stop: () => clearInterval(timer) };
}

/**
 * How late this process's timers have fired since `start()`: the worst delay seen by a 10 ms
 * sampling timer (perf_hooks' event-loop delay histogram). A deadline the code keeps with a timer
 * is kept to within this lateness; on a quiet machine it is a few milliseconds, on a loaded one
 * (a second suite beside this one) it can be hundreds. Bounds on timers are written as the
 * deadline plus this, never as the deadline plus a guess.
 */
export function timerLateness(): { maxMs(): number; stop(): void } {
  const histogram = monitorEventLoopDelay({ resolution: 10 });
  histogram.enable();
  return {
    // The histogram counts from the moment a sample was due; it includes the resolution itself.
    maxMs: () => histogram.max / 1e6,
    stop: () => histogram.disable(),
  };
}

/**
 * Polls `condition` every `intervalMs` until it holds, and rejects naming `what` if it does not
 * within `timeoutMs`. Resolves to the time waited.
 */
export async function waitFor(
  what: string,
  condition: () => boolean | Promise<boolean>,
  timeoutMs: number,
  intervalMs = 10,
): Promise<number> {
  const start = Date.now();
  for (;;) {
    if (await condition()) return Date.now() - start;
    if (Date.now() - start > timeoutMs)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

const encoder = new TextEncoder();
const json = (value: unknown): Uint8Array => encoder.encode(JSON.stringify(value));
const validSpec = {
  holderIdentity: 'a',
  leaseDurationMs: 15_000,
  acquireTime: '2024-05-06T07:08:09.123000Z',
  renewTime: '2024-05-06T07:08:10.456000Z',
  leaseTransitions: 3,
};
const notString = fc.oneof(
  fc.constant(null),
  fc.boolean(),
  fc.double(),
  fc.array(fc.jsonValue(), { maxLength: 3 }),
  fc.dictionary(fc.string(), fc.jsonValue(), { maxKeys: 3 }),
);
const notDuration = fc.oneof(
  notString.filter((v) => typeof v !== 'number'),
  fc.string(),
  fc.double({ max: -Number.MIN_VALUE, noNaN: true }),
);
const notTransitions = fc.oneof(
  notDuration,
  fc.double({ min: 0.001, max: 1e6, noNaN: true }).filter((v) => !Number.isInteger(v)),
  fc.constant(2 ** 60),
);
const notTime = fc.oneof(
  notString,
  fc.string({ minLength: 1 }).filter((s) => !/^\d{4}-/.test(s)),
  fc.constantFrom('2024-13-45T00:00:00Z', '2024-05-06', '2024-05-06T07:08:09', 'yesterday'),
);
const wrongField = fc.oneof(
  fc.record({ field: fc.constant('holderIdentity'), value: notString }),
  fc.record({ field: fc.constant('leaseDurationMs'), value: notDuration }),
  fc.record({ field: fc.constant('leaseTransitions'), value: notTransitions }),
  fc.record({ field: fc.constantFrom('acquireTime', 'renewTime'), value: notTime }),
);

/**
 * Entry values that are not lease documents: arbitrary bytes, JSON that is not a v1 KvLease
 * document, a document whose spec is not an object, and a valid document with one spec field of
 * the wrong type. Each comes with the words the error message must contain.
 */
export const malformedLeaseValue: fc.Arbitrary<{ readonly bytes: Uint8Array; readonly mentions: string }> =
  fc.oneof(
    fc.uint8Array({ maxLength: 300 }).map((bytes) => ({ bytes, mentions: '' })),
    fc
      .jsonValue()
      .filter(
        (v) =>
          typeof v !== 'object' ||
          v === null ||
          Array.isArray(v) ||
          (v as Record<string, unknown>).apiVersion !== 'converge.dev/v1',
      )
      .map((v) => ({ bytes: json(v), mentions: '' })),
    fc
      .record({ apiVersion: fc.string(), kind: fc.string() })
      .filter((d) => d.apiVersion !== 'converge.dev/v1' || d.kind !== 'KvLease')
      .map((d) => ({ bytes: json({ ...d, spec: validSpec }), mentions: 'apiVersion' })),
    notString
      .filter((spec) => typeof spec !== 'object' || spec === null || Array.isArray(spec))
      .map((spec) => ({
        bytes: json({ apiVersion: 'converge.dev/v1', kind: 'KvLease', spec }),
        mentions: 'spec',
      })),
    wrongField.map(({ field, value }) => ({
      bytes: json({ apiVersion: 'converge.dev/v1', kind: 'KvLease', spec: { ...validSpec, [field]: value } }),
      mentions: `spec.${field}`,
    })),
  );
