import type { KubeObject } from '../object/index.ts';
import { integer } from '../options.ts';
import type { EventType } from './event-types.ts';
import type { EventRecorder } from './recorder.ts';

/** One call of {@link FakeRecorder.event}, as it was made. */
export interface RecordedEvent {
  readonly regarding: KubeObject;
  readonly type: EventType;
  readonly reason: string;
  readonly action: string;
  readonly note: string;
  readonly related?: KubeObject;
}

export interface FakeRecorderOptions {
  /** Events kept at most; later ones are counted in `dropped` (like a full channel). Default 10 000. */
  readonly maxEvents?: number;
}

/**
 * An {@link EventRecorder} that keeps every event in memory, for tests of reconcilers
 * (controller-runtime's `record.FakeRecorder`). Nothing is validated, aggregated or rate-limited:
 * what the code under test recorded is exactly what `events` holds.
 *
 * @example
 * const recorder = new FakeRecorder();
 * await reconcile(request, { recorder });
 * expect(recorder.lines()).toContain('Normal Created created deployment web');
 * expect(recorder.about(website)).toHaveLength(1);
 */
export class FakeRecorder implements EventRecorder {
  readonly maxEvents: number;
  /** Every event recorded, oldest first. */
  readonly events: RecordedEvent[] = [];
  #dropped = 0;

  constructor(options: FakeRecorderOptions = {}) {
    this.maxEvents = integer('maxEvents', options.maxEvents, 10_000, 0);
  }

  /** Events not kept because `maxEvents` were already held. */
  get dropped(): number {
    return this.#dropped;
  }

  event(
    regarding: KubeObject,
    type: EventType,
    reason: string,
    action: string,
    note: string,
    related?: KubeObject,
  ): void {
    if (this.events.length >= this.maxEvents) {
      this.#dropped++;
      return;
    }
    this.events.push({
      regarding,
      type,
      reason,
      action,
      note,
      ...(related === undefined ? {} : { related }),
    });
  }

  /** Each event as controller-runtime's FakeRecorder formats it: `<type> <reason> <note>`. */
  lines(): string[] {
    return this.events.map((e) => `${e.type} ${e.reason} ${e.note}`);
  }

  /**
   * The events regarding `object`: the same uid when both have one, else the same kind,
   * namespace and name.
   */
  about(object: KubeObject): RecordedEvent[] {
    return this.events.filter((e) => sameObject(e.regarding, object));
  }

  /** Forgets every event (and the dropped count). */
  clear(): void {
    this.events.length = 0;
    this.#dropped = 0;
  }
}

function sameObject(a: KubeObject, b: KubeObject): boolean {
  const ua = a.metadata?.uid;
  const ub = b.metadata?.uid;
  if (ua !== undefined && ub !== undefined) return ua === ub;
  return (
    a.kind === b.kind &&
    (a.metadata?.namespace ?? '') === (b.metadata?.namespace ?? '') &&
    a.metadata?.name === b.metadata?.name
  );
}
