import type { Timer } from '../clock/index.ts';
import { AlreadyStartedError } from '../errors.ts';
import type { LogFields, Logger } from '../log/index.ts';
import type { KubeObject } from '../object/index.ts';
import { whenAborted } from '../runnable/index.ts';
import { EventInvalidError, EventsCloseTimeoutError, EventWriteError } from './errors.ts';
import { eventData, seriesKey } from './event-data.ts';
import type { EventType } from './event-types.ts';
import { eventName, referenceIdentity, uniqueSuffix } from './format.ts';
import {
  type EventRecorderOptions,
  type ResolvedRecorderOptions,
  resolveRecorderOptions,
} from './options.ts';
import type { BackendEventRecorder, EventRecorderStats, EventsCloseResult } from './recorder.ts';
import { SeriesCache, type SeriesEntry } from './series-cache.ts';
import { EventSink } from './sink.ts';
import { SpamFilter } from './spam-filter.ts';
import { writeEntry } from './write.ts';

/**
 * Creates an event recorder over any Backend, with client-go's events semantics: Events are
 * `events.k8s.io/v1` (core/v1 when that is not served); repeats within `seriesWindowMs` become
 * one Event whose `series` is updated at most every `heartbeatMs`; new Events are rate-limited
 * per regarding object; writes go one at a time from a bounded buffer, retried on retryable
 * errors. `event()` never throws and never waits.
 *
 * @example
 * const recorder = createEventRecorder({ backend, component: 'website-controller' });
 * recorder.event(website, 'Normal', 'Created', 'CreateDeployment', `created deployment ${name}`, deployment);
 * manager.add(recorder); // closed (and flushed) when the manager stops
 */
export function createEventRecorder(options: EventRecorderOptions): BackendEventRecorder {
  return new Recorder(resolveRecorderOptions(options));
}

class Recorder implements BackendEventRecorder {
  readonly needLeaderElection = false as const;
  readonly #o: ResolvedRecorderOptions;
  readonly #logger: Logger;
  readonly #sink: EventSink;
  readonly #cache: SeriesCache;
  readonly #spam: SpamFilter;
  /** Entries waiting for the writer, oldest first. */
  #buffer: SeriesEntry[] = [];
  /** Entries with occurrences not yet written, waiting for their heartbeat; always cached. */
  readonly #dirty = new Set<SeriesEntry>();
  #timer: Timer | undefined;
  #timerAt = Number.POSITIVE_INFINITY;
  #writer: Promise<void> | undefined;
  #writing = false;
  readonly #abort = new AbortController();
  #closing: Promise<EventsCloseResult> | undefined;
  #started = false;
  readonly #counts = { recorded: 0, aggregated: 0, sent: 0, retries: 0 };
  readonly #dropped = { rateLimit: 0, buffer: 0, evicted: 0, error: 0, invalid: 0, closed: 0 };

  constructor(options: ResolvedRecorderOptions) {
    this.#o = options;
    this.#logger = options.logger.child({ reportingController: options.component });
    this.#sink = new EventSink(options.backend, options, this.#logger);
    this.#cache = new SeriesCache(options.maxSeries, options.seriesWindowMs);
    this.#spam = new SpamFilter(options.burst, options.qps, options.maxSeries);
  }

  event(
    regarding: KubeObject,
    type: EventType,
    reason: string,
    action: string,
    note: string,
    related?: KubeObject,
  ): void {
    try {
      this.#record(regarding, type, reason, action, note, related);
    } catch (error) {
      this.#dropped.invalid++;
      this.#log('warn', { err: error }, 'Event dropped');
    }
  }

  stats(): EventRecorderStats {
    return {
      ...this.#counts,
      dropped: { ...this.#dropped },
      buffered: this.#buffer.length,
      series: this.#cache.size,
      api: this.#sink.api,
    };
  }

  async start(signal: AbortSignal): Promise<void> {
    if (this.#started) throw new AlreadyStartedError('event recorder');
    this.#started = true;
    if (!signal.aborted) {
      await whenAborted(signal);
    }
    await this.close();
  }

  close(options: { readonly timeoutMs?: number } = {}): Promise<EventsCloseResult> {
    this.#closing ??= this.#close(options.timeoutMs ?? this.#o.closeTimeoutMs);
    return this.#closing;
  }

  #record(
    regarding: unknown,
    type: unknown,
    reason: unknown,
    action: unknown,
    note: unknown,
    related: unknown,
  ): void {
    if (this.#closing !== undefined) {
      this.#dropped.closed++;
      return;
    }
    const now = this.#o.clock.now();
    let data: ReturnType<typeof eventData>;
    try {
      data = eventData(regarding, type, reason, action, note, related);
    } catch (error) {
      if (!(error instanceof EventInvalidError)) throw error;
      this.#dropped.invalid++;
      this.#log('warn', { err: error }, 'Invalid event dropped');
      return;
    }
    for (const ended of this.#cache.expire(now)) this.#retire(ended);
    const key = seriesKey(data);
    const existing = this.#cache.lookup(key, now);
    if (existing !== undefined) {
      this.#cache.observe(existing, now);
      this.#counts.recorded++;
      this.#counts.aggregated++;
      this.#schedule(existing, now);
      return;
    }
    if (this.#buffer.length >= this.#o.maxBuffer) {
      this.#dropped.buffer++;
      return;
    }
    if (!this.#spam.allow(referenceIdentity(data.regarding), now)) {
      this.#dropped.rateLimit++;
      return;
    }
    const entry: SeriesEntry = {
      key,
      data,
      name: this.#newName(data.regarding.name ?? ''),
      firstAt: now,
      count: 1,
      lastObservedAt: now,
      stored: false,
      writtenCount: 0,
      lastWriteAt: now,
      state: 'idle',
    };
    const left = this.#cache.add(entry);
    this.#counts.recorded++;
    this.#enqueue(entry);
    // After the new entry took its buffer slot: evicted series flush into what room is left.
    for (const evicted of left) this.#retire(evicted);
  }

  #newName(regardingName: string): string {
    return eventName(
      regardingName,
      uniqueSuffix(this.#o.clock.now(), () => this.#o.clock.random()),
    );
  }

  /**
   * After a repeat or a write of a cached entry: queue it if it has occurrences not yet written
   * and its heartbeat allows (or the recorder is closing), else wait for the heartbeat.
   */
  #schedule(entry: SeriesEntry, now: number): void {
    if (entry.state !== 'idle' || entry.count <= entry.writtenCount) return;
    const due = this.#closing === undefined ? entry.lastWriteAt + this.#o.heartbeatMs : now;
    if (due <= now && this.#buffer.length < this.#o.maxBuffer) {
      this.#enqueue(entry);
      return;
    }
    if (this.#closing !== undefined) {
      this.#dropped.closed++;
      return;
    }
    this.#dirty.add(entry);
    this.#arm(due > now ? due : now + Math.max(1, this.#o.heartbeatMs));
  }

  /** An entry left the cache: write what it still holds now, or lose it if the buffer is full. */
  #retire(entry: SeriesEntry): void {
    if (this.#dirty.delete(entry)) this.#flushRetired(entry);
  }

  /** Queues the last write of an entry no longer cached, at once. */
  #flushRetired(entry: SeriesEntry): void {
    if (this.#buffer.length < this.#o.maxBuffer) this.#enqueue(entry);
    else this.#dropped.evicted++;
  }

  #enqueue(entry: SeriesEntry): void {
    this.#dirty.delete(entry);
    entry.state = 'queued';
    this.#buffer.push(entry);
    this.#writer ??= this.#drain();
  }

  #arm(at: number): void {
    if (this.#timer !== undefined && this.#timerAt <= at) return;
    this.#timer?.cancel();
    this.#timerAt = at;
    this.#timer = this.#o.clock.setTimer(() => this.#heartbeat(), at - this.#o.clock.now());
  }

  #heartbeat(): void {
    this.#timer = undefined;
    this.#timerAt = Number.POSITIVE_INFINITY;
    try {
      const now = this.#o.clock.now();
      for (const ended of this.#cache.expire(now)) this.#retire(ended);
      for (const entry of [...this.#dirty]) {
        this.#dirty.delete(entry);
        this.#schedule(entry, now);
      }
    } catch (error) {
      this.#log('error', { err: error }, 'Event heartbeat failed');
    }
  }

  async #drain(): Promise<void> {
    try {
      // Start after the caller's synchronous code: event() never runs backend code, and a burst
      // recorded in one go is aggregated before its first write.
      await Promise.resolve();
      for (let entry = this.#buffer.shift(); entry !== undefined; entry = this.#buffer.shift()) {
        await this.#write(entry);
      }
    } catch (error) {
      this.#log('error', { err: error }, 'Event writer failed');
    } finally {
      this.#writer = undefined;
      // A failure above may have left entries behind; a later event restarts the writer.
    }
  }

  async #write(entry: SeriesEntry): Promise<void> {
    entry.state = 'writing';
    this.#writing = true;
    const outcome = await writeEntry(
      this.#sink,
      entry,
      this.#o,
      this.#o.clock,
      () => this.#newName(entry.data.regarding.name ?? ''),
      this.#abort.signal,
    ).finally(() => {
      entry.state = 'idle';
      this.#writing = false;
    });
    const now = this.#o.clock.now();
    entry.lastWriteAt = now;
    this.#counts.retries += Math.max(0, outcome.attempts - 1);
    if (outcome.ok) {
      this.#counts.sent++;
      if (this.#cache.has(entry)) this.#schedule(entry, now);
      else if (entry.count > entry.writtenCount) this.#flushRetired(entry);
    } else if (this.#abort.signal.aborted) {
      this.#dropped.closed++;
    } else {
      this.#dropped.error++;
      const error = new EventWriteError(`${entry.data.namespace}/${entry.name}`, outcome.attempts, {
        cause: outcome.error,
      });
      this.#log('warn', { err: error, namespace: entry.data.namespace, name: entry.name }, 'Event dropped');
    }
  }

  async #close(timeoutMs: number): Promise<EventsCloseResult> {
    this.#timer?.cancel();
    this.#timer = undefined;
    for (const entry of [...this.#dirty]) {
      this.#dirty.delete(entry);
      if (this.#buffer.length < this.#o.maxBuffer) this.#enqueue(entry);
      else this.#dropped.closed++;
    }
    const writer = this.#writer;
    if (writer === undefined) return { flushed: true, abandoned: 0 };
    const flushed = timeoutMs > 0 && (await this.#within(writer, timeoutMs));
    if (flushed) return { flushed, abandoned: 0 };
    const abandoned = this.#buffer.length + (this.#writing ? 1 : 0);
    this.#dropped.closed += this.#buffer.length;
    this.#buffer = [];
    this.#abort.abort(new EventsCloseTimeoutError(timeoutMs, abandoned));
    this.#log('warn', { err: this.#abort.signal.reason }, 'Event recorder closed with writes pending');
    return { flushed: false, abandoned };
  }

  /** Whether `promise` settles within `timeoutMs` on the clock. */
  async #within(promise: Promise<void>, timeoutMs: number): Promise<boolean> {
    const timeout = new AbortController();
    try {
      return await Promise.race([
        promise.then(() => true),
        this.#o.clock.sleep(timeoutMs, timeout.signal).then(
          () => false,
          () => false,
        ),
      ]);
    } finally {
      timeout.abort();
    }
  }

  /** Logs without ever throwing into the caller, whatever the logger does. */
  #log(level: 'warn' | 'error', fields: LogFields, message: string): void {
    try {
      this.#logger[level](fields, message);
    } catch {
      // A broken logger must not break event().
    }
  }
}
