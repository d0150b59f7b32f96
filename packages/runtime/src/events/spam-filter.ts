interface Bucket {
  tokens: number;
  last: number;
}

/**
 * client-go's `EventSourceObjectSpamFilter`: one token bucket per regarding object (the recorder
 * is the source), `burst` tokens, refilled at `qps` tokens per second. A new Event takes a token;
 * without one it is dropped, never delayed. At most `maxObjects` buckets are kept, least recently
 * used evicted first (an evicted object starts again with a full bucket, as in client-go's LRU).
 */
export class SpamFilter {
  readonly burst: number;
  readonly qps: number;
  readonly maxObjects: number;
  readonly #buckets = new Map<string, Bucket>();

  constructor(burst: number, qps: number, maxObjects: number) {
    this.burst = burst;
    this.qps = qps;
    this.maxObjects = maxObjects;
  }

  get size(): number {
    return this.#buckets.size;
  }

  /** Takes a token for `object` at `now` (epoch ms); false when its bucket is empty. */
  allow(object: string, now: number): boolean {
    const bucket = this.#buckets.get(object) ?? { tokens: this.burst, last: now };
    this.#buckets.delete(object);
    this.#buckets.set(object, bucket);
    const elapsed = Math.max(0, now - bucket.last);
    bucket.last = Math.max(bucket.last, now);
    bucket.tokens = Math.min(this.burst, bucket.tokens + (elapsed * this.qps) / 1000);
    for (const key of this.#buckets.keys()) {
      if (this.#buckets.size <= this.maxObjects) break;
      this.#buckets.delete(key);
    }
    if (bucket.tokens < 1) return false;
    bucket.tokens -= 1;
    return true;
  }
}
