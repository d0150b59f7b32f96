import type { Metric, Registry } from 'prom-client';

/**
 * Counters and histograms for the hot path (every add, hand-out, reconcile): a child per label set,
 * made once when a part is instrumented, whose `inc` or `observe` is a few number updates — no
 * label hashing, no allocation. prom-client's own `labels(...).inc()` hashes the labels on every
 * call, which cost about 1.5 µs per queued key in `bench:queue`. They register in a prom-client
 * registry as any metric does (`registerMetric`, read through `get()` on each scrape), so the
 * exposition, content type and default metrics stay prom-client's.
 */

type Value = { value: number; labels: Record<string, string | number>; metricName?: string };

interface MetricObject {
  readonly name: string;
  readonly help: string;
  readonly type: 'counter' | 'histogram';
  readonly values: Value[];
  readonly aggregator: 'sum';
}

abstract class Family<C> {
  readonly name: string;
  readonly help: string;
  readonly aggregator = 'sum';
  readonly labelNames: readonly string[];
  protected readonly children = new Map<
    string,
    { readonly labels: Record<string, string>; readonly child: C }
  >();

  constructor(registry: Registry, name: string, help: string, labelNames: readonly string[]) {
    this.name = name;
    this.help = help;
    this.labelNames = labelNames;
    registry.registerMetric(this as unknown as Metric);
  }

  /** The child of one label set (created on first use; keep it, do not call this per event). */
  labels(...values: string[]): C {
    const key = values.join('\u0000');
    let entry = this.children.get(key);
    if (entry === undefined) {
      const labels: Record<string, string> = {};
      for (const [i, name] of this.labelNames.entries()) labels[name] = values[i] ?? '';
      entry = { labels, child: this.create() };
      this.children.set(key, entry);
    }
    return entry.child;
  }

  protected abstract create(): C;
  abstract get(): Promise<MetricObject>;
  abstract reset(): void;
}

/** A counter child. */
export class CounterChild {
  value = 0;
  inc(by = 1): void {
    this.value += by;
  }
}

export class FastCounter extends Family<CounterChild> {
  readonly type = 'counter';

  protected create(): CounterChild {
    return new CounterChild();
  }

  get(): Promise<MetricObject> {
    const values: Value[] = [];
    for (const { labels, child } of this.children.values()) values.push({ value: child.value, labels });
    return Promise.resolve({ name: this.name, help: this.help, type: 'counter', values, aggregator: 'sum' });
  }

  reset(): void {
    for (const { child } of this.children.values()) child.value = 0;
  }
}

/** A histogram child: counts per bucket (not cumulative until read), sum and count. */
export class HistogramChild {
  readonly #upper: Float64Array;
  readonly counts: Float64Array;
  sum = 0;
  count = 0;

  constructor(upper: Float64Array) {
    this.#upper = upper;
    this.counts = new Float64Array(upper.length + 1);
  }

  observe(value: number): void {
    const upper = this.#upper;
    let i = 0;
    while (i < upper.length && value > (upper[i] as number)) i++;
    this.counts[i] = (this.counts[i] as number) + 1;
    this.sum += value;
    this.count++;
  }
}

export class FastHistogram extends Family<HistogramChild> {
  readonly type = 'histogram';
  readonly #upper: Float64Array;

  constructor(
    registry: Registry,
    name: string,
    help: string,
    labelNames: readonly string[],
    buckets: readonly number[],
  ) {
    super(registry, name, help, labelNames);
    this.#upper = Float64Array.from([...buckets].sort((a, b) => a - b));
  }

  protected create(): HistogramChild {
    return new HistogramChild(this.#upper);
  }

  get(): Promise<MetricObject> {
    const values: Value[] = [];
    const bucket = `${this.name}_bucket`;
    for (const { labels, child } of this.children.values()) {
      let cumulative = 0;
      for (const [i, le] of this.#upper.entries()) {
        cumulative += child.counts[i] as number;
        values.push({ value: cumulative, labels: { ...labels, le }, metricName: bucket });
      }
      values.push({ value: child.count, labels: { ...labels, le: '+Inf' }, metricName: bucket });
      values.push({ value: child.sum, labels, metricName: `${this.name}_sum` });
      values.push({ value: child.count, labels, metricName: `${this.name}_count` });
    }
    return Promise.resolve({
      name: this.name,
      help: this.help,
      type: 'histogram',
      values,
      aggregator: 'sum',
    });
  }

  reset(): void {
    for (const { child } of this.children.values()) {
      child.counts.fill(0);
      child.sum = 0;
      child.count = 0;
    }
  }
}
