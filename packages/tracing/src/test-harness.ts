import { type Cause, Controller, type ControllerOptions, type Source } from '@converge/runtime';
import type { VirtualClock } from '@converge/runtime/testing';
import { context } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
  TracerProvider,
} from '@opentelemetry/sdk-trace';

/** An SDK that keeps every finished span in memory, and the AsyncLocalStorage context manager. */
export function recorder(): {
  readonly provider: TracerProvider;
  spans(): ReadableSpan[];
  named(name: string): ReadableSpan[];
  /** The span whose id is `id`. */
  byId(id: string): ReadableSpan | undefined;
  reset(): void;
  /** Unregisters the context manager. */
  close(): Promise<void>;
} {
  const exporter = new InMemorySpanExporter();
  const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });
  const manager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(manager);
  const spans = (): ReadableSpan[] => exporter.getFinishedSpans();
  return {
    provider,
    spans,
    named: (name) => spans().filter((s) => s.name === name),
    byId: (id) => spans().find((s) => s.spanContext().spanId === id),
    reset: () => exporter.reset(),
    close: async () => {
      await provider.shutdown();
      context.disable();
    },
  };
}

/** A `modified` cause of a Widget at `resourceVersion`, as an informer's event gives. */
export function modified(name: string, resourceVersion: string): Cause {
  return {
    type: 'modified',
    source: 'widgets',
    object: { kind: 'Widget', namespace: 'default', name, uid: `uid-${name}`, resourceVersion },
  };
}

/**
 * A controller of `{ namespace, name }` requests whose source syncs at once; `push(name, cause)`
 * adds `default/<name>` with that cause.
 */
export function pushController(
  clock: VirtualClock,
  options: Omit<ControllerOptions<{ namespace: string; name: string }>, 'clock' | 'sources'>,
): {
  controller: Controller<{ namespace: string; name: string }>;
  push: (name: string, cause: Cause) => void;
} {
  let push: (name: string, cause: Cause) => void = () => {};
  const source: Source<{ namespace: string; name: string }> = {
    name: 'widgets',
    start(signal, queue) {
      push = (name, cause) => queue.add({ namespace: 'default', name }, { cause });
      return new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
    },
  };
  const controller = new Controller({ ...options, clock, sources: [source] });
  return { controller, push: (name, cause) => push(name, cause) };
}

/** The attributes of a span, as a plain object. */
export function attributesOf(span: ReadableSpan): Record<string, unknown> {
  return { ...span.attributes };
}

/** Milliseconds since the epoch of an OpenTelemetry time. */
export function ms(time: readonly [number, number]): number {
  return time[0] * 1000 + time[1] / 1e6;
}
