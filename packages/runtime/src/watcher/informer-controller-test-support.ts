import type { KubeObject } from '../object/index.ts';
import { EventChannel } from '../source/index.ts';
import { VirtualClock } from '../testing/index.ts';
import type { RetryPolicy } from '../workqueue/index.ts';
import { InformerController } from './informer-controller.ts';
import type { InformerControllerOptions } from './informer-controller-options.ts';

/** A test object: a widget with a spec tag to tell events apart. */
export interface Widget extends KubeObject {
  readonly spec: { readonly tag: string };
}

export function widget(
  name: string,
  options: {
    readonly generation?: number | string;
    readonly rv?: string;
    readonly tag?: string;
    readonly namespace?: string;
  } = {},
): Widget {
  return {
    apiVersion: 'example.com/v1',
    kind: 'Widget',
    metadata: {
      name,
      namespace: options.namespace ?? 'default',
      ...(options.rv === undefined ? {} : { resourceVersion: options.rv }),
      ...(options.generation === undefined ? {} : { generation: options.generation as number }),
    },
    spec: { tag: options.tag ?? name },
  };
}

/** Retry every `delayMs` while fewer than `max` retries were made (unlimited by default). */
export function linearRetryPolicy(delayMs: number, max = Number.POSITIVE_INFINITY): RetryPolicy {
  return {
    name: `linear(${delayMs}ms, ${max})`,
    decide: ({ failures }) => (failures < max ? { retry: true, delayMs } : { retry: false }),
  };
}

/** A controller on a virtual clock with one event channel added for kind 'Widget', already started. */
export function setup(options: InformerControllerOptions = {}) {
  const clock = new VirtualClock();
  const events = new EventChannel<Widget>();
  const controller = new InformerController({ clock, ...options });
  controller.addInformer(events, 'Widget');
  const stop = new AbortController();
  let run: Promise<void> | undefined;
  return {
    clock,
    events,
    controller,
    stop,
    /** Starts the controller; its settlement is `run()`'s promise. */
    start(): Promise<void> {
      run ??= controller.start(stop.signal);
      return run;
    },
  };
}
