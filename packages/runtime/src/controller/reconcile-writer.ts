import type { WriteLedger, WriterScope } from '../client/index.ts';
import type { Cause, CauseSet, CauseWriter } from '../workqueue/index.ts';
import { chainDepth, limitLinks, MAX_CHAIN_LINKS } from '../workqueue/index.ts';

/**
 * The writer a reconcile's writes are recorded as: made on its first write, with the run's causes
 * (their chains bounded: see `bounded`). @internal
 */
export class ReconcileWriter implements WriterScope {
  readonly ledger: WriteLedger;
  readonly #controller: string;
  readonly #id: string;
  readonly #key: string;
  readonly #causes: CauseSet;
  readonly #streakStart: number | undefined;
  #writer: CauseWriter | undefined;

  /**
   * `streakStart`: when the run started, if hot-loop detection found it the first self-caused run
   * of a streak that it keeps no state for (see {@link streakStartOf}).
   */
  constructor(
    ledger: WriteLedger,
    controller: string,
    id: string,
    key: string,
    causes: CauseSet,
    streakStart?: number,
  ) {
    this.ledger = ledger;
    this.#controller = controller;
    this.#id = id;
    this.#key = key;
    this.#causes = causes;
    this.#streakStart = streakStart;
  }

  writer(): CauseWriter {
    this.#writer ??= Writer.of(this.#controller, this.#id, this.#key, this.#causes.causes, this.#streakStart);
    return this.#writer;
  }
}

/**
 * When the run that made `writer` started, if it was the first self-caused run of a streak that
 * hot-loop detection keeps no state for (a streak of one is carried by the run's writes, not
 * looked up per key: see `HotLoopOptions`); undefined for any other writer (no number kept in a box
 * of its own: the detector reads this field of every writer it finds). @internal
 */
export function streakStartOf(writer: CauseWriter): number | undefined {
  return Writer.streakStartOf(writer);
}

/** Links a writer's causes may carry before they are cut back to {@link MAX_CHAIN_LINKS} - 1. */
const CUT_AT = 4 * MAX_CHAIN_LINKS;

/**
 * A writer that knows how many links of `writtenBy` its chain holds (itself included), so that the
 * next one need not walk it. Its causes are kept as they are while their chains are short, and
 * cut back to {@link MAX_CHAIN_LINKS} - 1 links once they reach {@link CUT_AT}: cutting copies the
 * chain's top (every link is frozen), so a loop of writes cuts once every ten writes rather than
 * at each. What is shown and searched stops at {@link MAX_CHAIN_LINKS} links either way, and
 * memory stays bounded.
 */
class Writer implements CauseWriter {
  readonly controller: string;
  readonly reconcileId: string;
  readonly key: string;
  readonly causes: readonly Cause[];
  readonly #links: number;
  readonly #streakStart: number | undefined;

  private constructor(
    controller: string,
    reconcileId: string,
    key: string,
    causes: readonly Cause[],
    links: number,
    streakStart: number | undefined,
  ) {
    this.controller = controller;
    this.reconcileId = reconcileId;
    this.key = key;
    this.causes = causes;
    this.#links = links;
    this.#streakStart = streakStart;
    Object.freeze(this);
  }

  static of(
    controller: string,
    reconcileId: string,
    key: string,
    causes: readonly Cause[],
    streakStart: number | undefined,
  ): Writer {
    let below = 0;
    for (let i = 0; i < causes.length; i++) {
      const w = (causes[i] as Cause).writtenBy;
      if (w !== undefined) below = Math.max(below, linksOf(w));
    }
    if (below >= CUT_AT) {
      causes = limitLinks(causes, MAX_CHAIN_LINKS - 1);
      below = MAX_CHAIN_LINKS - 1;
    }
    return new Writer(controller, reconcileId, key, causes, below + 1, streakStart);
  }

  static streakStartOf(writer: CauseWriter): number | undefined {
    return #streakStart in writer ? (writer as Writer).#streakStart : undefined;
  }

  static linksOf(writer: CauseWriter): number {
    // A writer made elsewhere (a cause built by hand, a cut copy) is measured by walking it.
    return #links in writer ? (writer as Writer).#links : 1 + chainDepth(writer.causes, CUT_AT);
  }
}

const linksOf = (writer: CauseWriter): number => Writer.linksOf(writer);
