import type { EventSource, ObjectEvent } from '../event/index.ts';
import type { KubeObject } from '../object/index.ts';
import { InformerAlreadyAddedError } from './errors.ts';

interface Binding {
  readonly start: boolean;
  unsubscribe: (() => void) | undefined;
}

interface Run {
  references: number;
  readonly controller: AbortController;
}

/**
 * The informers of an informer controller, by kind: who is subscribed to what, and which
 * informers the controller runs — each once, however many kinds it was added for, until the last
 * of those bindings is removed or the controller stops.
 */
export class InformerBindings {
  readonly #onEvent: (kind: string, event: ObjectEvent<KubeObject>) => void;
  readonly #onRunFailed: (kind: string, error: unknown) => void;
  readonly #byKind = new Map<string, Map<EventSource<KubeObject>, Binding>>();
  readonly #runs = new Map<EventSource<KubeObject>, Run>();
  readonly #done = new Set<Promise<void>>();
  #signal: AbortSignal | undefined;

  constructor(
    onEvent: (kind: string, event: ObjectEvent<KubeObject>) => void,
    onRunFailed: (kind: string, error: unknown) => void,
  ) {
    this.#onEvent = onEvent;
    this.#onRunFailed = onRunFailed;
  }

  /** Adds `source` for `kind`; subscribed (and run, if `start`) at once while running. */
  add(source: EventSource<KubeObject>, kind: string, start: boolean): void {
    let bindings = this.#byKind.get(kind);
    if (bindings?.has(source) === true) throw new InformerAlreadyAddedError(kind);
    if (bindings === undefined) {
      bindings = new Map();
      this.#byKind.set(kind, bindings);
    }
    const binding: Binding = { start, unsubscribe: undefined };
    bindings.set(source, binding);
    if (this.#signal !== undefined && !this.#signal.aborted) this.#bind(source, kind, binding, this.#signal);
  }

  /** Removes `source` from `kind`: unsubscribed, and stopped if this was the last binding that ran it. */
  remove(source: EventSource<KubeObject>, kind: string): boolean {
    const bindings = this.#byKind.get(kind);
    const binding = bindings?.get(source);
    if (bindings === undefined || binding === undefined) return false;
    bindings.delete(source);
    if (bindings.size === 0) this.#byKind.delete(kind);
    binding.unsubscribe?.();
    binding.unsubscribe = undefined;
    if (binding.start) {
      const run = this.#runs.get(source);
      if (run !== undefined && --run.references === 0) {
        this.#runs.delete(source);
        run.controller.abort(new Error('informer removed from its informer controller'));
      }
    }
    return true;
  }

  /** Subscribes to every informer and runs those to run, until `signal` aborts. Later adds follow. */
  start(signal: AbortSignal): void {
    this.#signal = signal;
    for (const [kind, bindings] of this.#byKind) {
      for (const [source, binding] of bindings) this.#bind(source, kind, binding, signal);
    }
  }

  /** Unsubscribes from every informer; returns promises of the runs, which stop with the start signal. */
  stop(): Promise<void>[] {
    for (const bindings of this.#byKind.values()) {
      for (const binding of bindings.values()) {
        binding.unsubscribe?.();
        binding.unsubscribe = undefined;
      }
    }
    this.#runs.clear();
    return [...this.#done];
  }

  #bind(source: EventSource<KubeObject>, kind: string, binding: Binding, stop: AbortSignal): void {
    // Subscribe first, so an informer started below delivers its initial list to us.
    binding.unsubscribe = source.subscribe((event) => this.#onEvent(kind, event));
    if (!binding.start || source.start === undefined) return;
    const existing = this.#runs.get(source);
    if (existing !== undefined) {
      existing.references++;
      return;
    }
    const run: Run = { references: 1, controller: new AbortController() };
    this.#runs.set(source, run);
    const signal = AbortSignal.any([stop, run.controller.signal]);
    const done = (async () => {
      try {
        await source.start?.(signal);
      } catch (error) {
        if (!signal.aborted) this.#onRunFailed(kind, error);
      }
    })();
    this.#done.add(done);
    void done.then(() => this.#done.delete(done));
  }
}
