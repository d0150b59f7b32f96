import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Clock, Logger } from '@converge/runtime';
import { runDiscarded } from './fault-capture.ts';
import { writeInjected } from './fault-response.ts';
import type { DelaySpec, FailRatioSpec, FaultMethod, FaultRuleInfo, FaultStatus } from './fault-rules.ts';
import { queryBool } from './query.ts';
import type { RequestTarget } from './request-info.ts';
import type { RequestUrl } from './request-url.ts';

/** The counters request rules update. */
export interface RequestFaultCounters {
  delayed: number;
  readonly failed: Record<FaultStatus, number>;
  failedAfterApply: number;
}

interface RequestRule<S> {
  readonly id: string;
  readonly spec: S;
  injected: number;
  /** Failures decided but not answered yet (they count against `times`). */
  reserved: number;
}

const WRITES: ReadonlySet<string> = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

function matches(spec: DelaySpec | FailRatioSpec, path: string, verb: string): boolean {
  return (spec.methods === undefined || spec.methods.includes(verb as FaultMethod)) && spec.path.test(path);
}

/**
 * The delay and failRatio rules, applied around serving each request: first the delays of every
 * matching rule (added up, on the clock; a client leaving meanwhile ends the request unserved),
 * then the first failRatio rule that fires (one `clock.random()` draw per matching rule, in the
 * order they were added) answers its error — before serving, or, for a write with
 * `phase: 'after'`, after serving it into a discarding response.
 */
export class RequestFaults {
  readonly #clock: Clock;
  readonly #logger: Logger;
  readonly #counters: RequestFaultCounters;
  readonly #delays = new Map<string, RequestRule<DelaySpec>>();
  readonly #failures = new Map<string, RequestRule<FailRatioSpec>>();

  constructor(clock: Clock, logger: Logger, counters: RequestFaultCounters) {
    this.#clock = clock;
    this.#logger = logger;
    this.#counters = counters;
  }

  addDelay(id: string, spec: DelaySpec): void {
    this.#delays.set(id, { id, spec, injected: 0, reserved: 0 });
  }

  addFailure(id: string, spec: FailRatioSpec): void {
    this.#failures.set(id, { id, spec, injected: 0, reserved: 0 });
  }

  /** Removes a rule; false if it is not one of these (any more). */
  remove(id: string): boolean {
    return this.#delays.delete(id) || this.#failures.delete(id);
  }

  /** The active rules as {@link FaultRuleInfo}s. */
  infos(): FaultRuleInfo[] {
    const rules: FaultRuleInfo[] = [];
    for (const { id, spec, injected } of this.#delays.values()) {
      const { path, methods, ms, times } = spec;
      rules.push({
        id,
        type: 'delay',
        ...path.info,
        ...(methods && { methods }),
        ms,
        ...(times && { times }),
        injected,
      });
    }
    for (const { id, spec, injected } of this.#failures.values()) {
      const { path, methods, ratio, status, retryAfterSeconds, phase, times } = spec;
      rules.push({
        id,
        type: 'failRatio',
        ...path.info,
        ...(methods && { methods }),
        ratio,
        status,
        ...(retryAfterSeconds !== undefined && { retryAfterSeconds }),
        phase,
        ...(times && { times }),
        injected,
      });
    }
    return rules;
  }

  /** Serves a request through `next` with the matching rules applied; one size check when there are none. */
  async around(
    req: IncomingMessage,
    res: ServerResponse,
    url: RequestUrl,
    target: RequestTarget,
    next: (res: ServerResponse) => Promise<void>,
  ): Promise<void> {
    if (this.#delays.size === 0 && this.#failures.size === 0) return next(res);
    const method = (req.method ?? 'GET').toUpperCase();
    const watch = method === 'GET' && queryBool(url.searchParams, 'watch') === true;
    const verb = watch ? 'WATCH' : method;
    const path = url.pathname;
    const delayMs = this.#delayFor(path, verb);
    if (delayMs > 0 && !(await this.#sleep(res, delayMs))) return;
    const rule = this.#failureFor(path, verb);
    if (rule === undefined) return next(res);
    const { status, retryAfterSeconds, phase } = rule.spec;
    const after = phase === 'after' && WRITES.has(method);
    rule.reserved++;
    try {
      // A write that fails by itself rejects here: its real error is the answer, and no fault counts.
      if (after) await runDiscarded(req, next);
    } finally {
      rule.reserved--;
    }
    this.#count(rule, this.#failures);
    this.#counters.failed[status]++;
    if (after) this.#counters.failedAfterApply++;
    this.#logger.debug({ id: rule.id, method, path, code: status, phase }, 'Fault injected');
    const resourceVersion = url.searchParams.get('resourceVersion') ?? '';
    writeInjected(res, { ruleId: rule.id, status, retryAfterSeconds, target, resourceVersion }, watch);
  }

  #delayFor(path: string, verb: string): number {
    let total = 0;
    let matched = false;
    for (const rule of [...this.#delays.values()]) {
      if (!matches(rule.spec, path, verb)) continue;
      matched = true;
      total += rule.spec.ms;
      this.#count(rule, this.#delays);
    }
    if (matched) this.#counters.delayed++;
    return total;
  }

  #failureFor(path: string, verb: string): RequestRule<FailRatioSpec> | undefined {
    for (const rule of this.#failures.values()) {
      const { spec } = rule;
      if (!matches(spec, path, verb)) continue;
      if (spec.times !== undefined && rule.injected + rule.reserved >= spec.times) continue;
      if (spec.ratio >= 1 || (spec.ratio > 0 && this.#clock.random() < spec.ratio)) return rule;
    }
    return undefined;
  }

  /** Counts an injection; a rule with `times` ends after its last one. */
  #count<S extends { readonly times: number | undefined }>(
    rule: RequestRule<S>,
    rules: Map<string, RequestRule<S>>,
  ): void {
    rule.injected++;
    if (rule.spec.times !== undefined && rule.injected >= rule.spec.times && rules.delete(rule.id)) {
      this.#logger.info({ id: rule.id, times: rule.spec.times }, 'Fault rule expired');
    }
  }

  /** Waits `ms` on the clock; false if the client left meanwhile. */
  async #sleep(res: ServerResponse, ms: number): Promise<boolean> {
    const abort = new AbortController();
    const onClose = (): void => abort.abort();
    res.once('close', onClose);
    try {
      await this.#clock.sleep(ms, abort.signal);
      return true;
    } catch {
      return false;
    } finally {
      res.off('close', onClose);
    }
  }
}
