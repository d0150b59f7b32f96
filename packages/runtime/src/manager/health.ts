import { type Clock, realClock, type Timer } from '../clock/index.ts';
import { OptionsError } from '../errors.ts';

/** A check passes when it returns (or resolves); it fails when it throws (or rejects). */
export type Check = () => void | Promise<void>;

/** The result of running a set of checks. */
export interface CheckReport {
  readonly ok: boolean;
  readonly checks: Readonly<Record<string, { readonly ok: boolean; readonly error?: string }>>;
}

/**
 * Named health or readiness checks (controller-runtime's healthz/readyz as functions; the HTTP
 * endpoints come with the server).
 */
export class Checks {
  readonly #checks = new Map<string, Check>();
  readonly #clock: Clock;

  constructor(clock: Clock = realClock) {
    this.#clock = clock;
  }

  add(name: string, check: Check): void {
    if (typeof name !== 'string' || name === '') throw new OptionsError('name', name, 'a non-empty string');
    if (typeof check !== 'function') throw new OptionsError('check', check, 'a function');
    if (this.#checks.has(name)) throw new OptionsError('name', name, 'a name not already registered');
    this.#checks.set(name, check);
  }

  remove(name: string): void {
    this.#checks.delete(name);
  }

  /** Runs every check concurrently; a check slower than `timeoutMs` fails. */
  async run(timeoutMs = 5_000): Promise<CheckReport> {
    const entries = [...this.#checks];
    const results = await Promise.all(
      entries.map(async ([name, check]) => {
        let timer: Timer | undefined;
        try {
          await Promise.race([
            Promise.resolve().then(check),
            new Promise<never>((_, reject) => {
              timer = this.#clock.setTimer(
                () => reject(new Error(`check timed out after ${timeoutMs}ms`)),
                timeoutMs,
              );
            }),
          ]);
          return [name, { ok: true }] as const;
        } catch (error) {
          return [
            name,
            { ok: false, error: error instanceof Error ? error.message : String(error) },
          ] as const;
        } finally {
          timer?.cancel();
        }
      }),
    );
    return { ok: results.every(([, r]) => r.ok), checks: Object.fromEntries(results) };
  }
}
