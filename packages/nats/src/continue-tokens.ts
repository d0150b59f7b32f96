import { randomBytes } from 'node:crypto';
import { BadRequestError, type Clock, ExpiredError, type KubeObject } from '@converge/runtime';

/** A paginated list's remaining items, held in memory until read, expired or evicted. */
interface Held {
  /** Which list it belongs to: type and selectors. A continue with other ones is a BadRequest. */
  readonly scope: string;
  readonly revision: string;
  readonly items: readonly KubeObject[];
  readonly expiresAt: number;
}

/** One page served from a held snapshot. */
export interface Page {
  readonly revision: string;
  readonly items: KubeObject[];
  readonly continue: string | undefined;
  readonly remaining: number;
}

const TOKEN = /^nats1-([0-9a-f]{32})-(0|[1-9][0-9]*)$/;

/**
 * Continue tokens for `limit` / `continue` lists. A KV bucket keeps the latest entries, not a
 * snapshot per revision, so the first page of a paginated list reads one consistent snapshot and
 * the rest of it is held here, under a random id, for `ttlMs`; at most `max` snapshots are held
 * (the oldest is dropped first). A token names the snapshot and an offset into it.
 *
 * Tokens are valid only in the process that issued them. A token whose snapshot expired, was
 * evicted or was dropped by `clear()` is an {@link ExpiredError} (410, as Kubernetes answers a
 * compacted continue token); the client lists again from the start. A token that is not one this
 * class makes is a {@link BadRequestError}.
 */
export class ContinueTokens {
  readonly #clock: Clock;
  readonly #ttlMs: number;
  readonly #max: number;
  readonly #held = new Map<string, Held>();

  constructor(clock: Clock, ttlMs: number, max: number) {
    this.#clock = clock;
    this.#ttlMs = ttlMs;
    this.#max = max;
  }

  /** Serves the first page of `items` and holds the rest when there is more than `limit`. */
  first(scope: string, revision: string, items: readonly KubeObject[], limit: number): Page {
    if (items.length <= limit) return { revision, items: [...items], continue: undefined, remaining: 0 };
    this.#expire();
    while (this.#held.size >= this.#max) {
      const oldest = this.#held.keys().next().value as string;
      this.#held.delete(oldest);
    }
    const id = randomBytes(16).toString('hex');
    this.#held.set(id, { scope, revision, items, expiresAt: this.#clock.now() + this.#ttlMs });
    return this.#page(id, items, revision, 0, limit);
  }

  /** Serves the page a continue token points at. */
  next(scope: string, token: string, limit: number | undefined): Page {
    const match = TOKEN.exec(token);
    if (match === null) {
      throw new BadRequestError(
        `invalid continue token ${JSON.stringify(token)}: not a token of this backend`,
      );
    }
    this.#expire();
    const id = match[1] as string;
    const held = this.#held.get(id);
    if (held === undefined) {
      throw new ExpiredError(
        'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter (the snapshot expired or was issued by another process).',
      );
    }
    if (held.scope !== scope) {
      throw new BadRequestError(
        'the continue token belongs to a list with another type, namespace or selector',
      );
    }
    const offset = Number(match[2]);
    if (offset > held.items.length) throw new BadRequestError('the continue token points past its list');
    return this.#page(id, held.items, held.revision, offset, limit ?? held.items.length);
  }

  /** Drops every held snapshot: their tokens expire. */
  clear(): void {
    this.#held.clear();
  }

  /** Snapshots held now. */
  get size(): number {
    return this.#held.size;
  }

  #page(id: string, items: readonly KubeObject[], revision: string, offset: number, limit: number): Page {
    const end = Math.min(items.length, offset + limit);
    const page = items.slice(offset, end).map((item) => structuredClone(item));
    if (end >= items.length) {
      this.#held.delete(id);
      return { revision, items: page, continue: undefined, remaining: 0 };
    }
    return { revision, items: page, continue: `nats1-${id}-${end}`, remaining: items.length - end };
  }

  #expire(): void {
    const now = this.#clock.now();
    for (const [id, held] of this.#held) if (held.expiresAt <= now) this.#held.delete(id);
  }
}
