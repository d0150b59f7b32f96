/**
 * The simulator's seeded generator: every choice of a run (a fault, a delay, a crash point, a uid)
 * is drawn from one of these, so a seed is a trace. splitmix32: small, fast, and each stream is
 * independent of the others' use (a fork draws its own seed once).
 */
export class Random {
  #state: number;

  constructor(seed: number) {
    this.#state = seed >>> 0;
  }

  /** A float in [0, 1). */
  next(): number {
    this.#state = (this.#state + 0x9e3779b9) >>> 0;
    let z = this.#state;
    z = Math.imul(z ^ (z >>> 16), 0x21f0aaad);
    z = Math.imul(z ^ (z >>> 15), 0x735a2d97);
    z ^= z >>> 15;
    return (z >>> 0) / 4294967296;
  }

  /** An integer in [min, max]. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  /** True with probability `p`. Always draws, so the stream stays aligned whatever `p` is. */
  chance(p: number): boolean {
    return this.next() < p;
  }

  /** An independent stream. */
  fork(): Random {
    return new Random(Math.floor(this.next() * 4294967296));
  }

  /** A version-4-shaped uid made of this stream's draws. */
  uid(): string {
    let hex = '';
    for (let i = 0; i < 4; i++)
      hex += Math.floor(this.next() * 4294967296)
        .toString(16)
        .padStart(8, '0');
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
  }
}
