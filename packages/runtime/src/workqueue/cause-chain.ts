import { type Cause, type CauseWriter, formatOwnCause, formatWriter, MAX_CHAIN_LINKS } from './cause.ts';

/**
 * The chain behind a cause, one text per link, for a person: the cause itself (without its
 * writer), then for each writer `written by reconcile <id> of controller <name> (<key>), which ran
 * because: <its causes, without their writers>`, following for each writer the cause that was
 * itself an echo ({@link followedEcho}: one written by another controller or key when there is
 * one, else the newest), at most {@link MAX_CHAIN_LINKS} writers. One element when the cause echoes
 * no write of this process.
 *
 * @example
 * causeChain(cause);
 * // ['modified Deployment default/web@12 via owns:Deployment',
 * //  'written by reconcile website-7 of controller website (default/web), which ran because: modified Website default/web@10 via for:Website']
 */
export function causeChain(cause: Cause): string[] {
  const lines = [formatOwnCause(cause)];
  let writer = cause.writtenBy;
  for (let links = 0; writer !== undefined && links < MAX_CHAIN_LINKS; links++) {
    const because = writer.causes.map(formatOwnCause).join('; ');
    lines.push(
      because === '' ? formatWriter(writer) : `${formatWriter(writer)}, which ran because: ${because}`,
    );
    writer = followedEcho(writer.causes, writer.controller, writer.key)?.writtenBy;
  }
  return lines;
}

/**
 * The cause a chain follows among a run's causes: the newest echo of a write by another
 * controller or of another key than `controller`'s `key` (it names who else takes part: in a
 * ping-pong, the partner), else the newest echo; undefined when none is an echo. Which events a
 * run coalesces depends on timing, so following the newest alone showed a ping-pong as one
 * controller echoing itself whenever its own echo happened to come last.
 */
export function followedEcho(causes: readonly Cause[], controller: string, key: string): Cause | undefined {
  let newest: Cause | undefined;
  for (let i = causes.length - 1; i >= 0; i--) {
    const c = causes[i] as Cause;
    const w = c.writtenBy;
    if (w === undefined) continue;
    if (w.controller !== controller || w.key !== key) return c;
    newest ??= c;
  }
  return newest;
}

/**
 * The chain of the newest cause among `causes` that echoes a write of this process (see
 * {@link causeChain}); undefined when none does.
 */
export function chainOf(causes: readonly Cause[]): string[] | undefined {
  const echo = lastEcho(causes);
  return echo === undefined ? undefined : causeChain(echo);
}

/**
 * Whether the chain of `cause` passes through a reconcile of `key` by `controller`: the write it
 * echoes was made by that reconcile, or by one that ran (a few links up) because of such a write.
 */
export function chainReaches(cause: Cause, controller: string, key: string): boolean {
  return chainWriterOf(cause, controller, key) !== undefined;
}

/**
 * The writer of `key` by `controller` that the chain of `cause` passes through (see
 * {@link chainReaches}), up to {@link MAX_CHAIN_LINKS} links: the first found, walking each
 * writer's causes in order. Undefined when the chain reaches none. @internal
 */
export function chainWriterOf(cause: Cause, controller: string, key: string): CauseWriter | undefined {
  const writer = cause.writtenBy;
  return writer === undefined ? undefined : writerOf(writer, controller, key, MAX_CHAIN_LINKS);
}

function writerOf(
  writer: CauseWriter,
  controller: string,
  key: string,
  links: number,
): CauseWriter | undefined {
  if (writer.key === key && writer.controller === controller) return writer;
  if (links <= 1) return undefined;
  const causes = writer.causes;
  for (let i = 0; i < causes.length; i++) {
    const w = (causes[i] as Cause).writtenBy;
    if (w === undefined) continue;
    const own = writerOf(w, controller, key, links - 1);
    if (own !== undefined) return own;
  }
  return undefined;
}

/**
 * The most links of `writtenBy` below any of `causes`, counted up to `max` (a walk, no allocation).
 * @internal
 */
export function chainDepth(causes: readonly Cause[], max: number): number {
  let depth = 0;
  for (let i = 0; i < causes.length; i++) {
    const w = (causes[i] as Cause).writtenBy;
    if (w === undefined) continue;
    const d = max <= 1 ? 1 : 1 + chainDepth(w.causes, max - 1);
    if (d > depth) depth = d;
    if (depth >= max) return depth;
  }
  return depth;
}

/**
 * `causes` with their chains cut to `links` links of `writtenBy` (0: none). Returns causes that
 * need no cut as they are. @internal
 */
export function limitLinks(causes: readonly Cause[], links: number): readonly Cause[] {
  let out: Cause[] | undefined;
  for (let i = 0; i < causes.length; i++) {
    const c = causes[i] as Cause;
    const limited = limitCause(c, links);
    if (limited !== c) {
      out ??= causes.slice();
      out[i] = limited;
    }
  }
  return out === undefined ? causes : Object.freeze(out);
}

function limitCause(cause: Cause, links: number): Cause {
  const w = cause.writtenBy;
  if (w === undefined) return cause;
  if (links <= 0) {
    const { writtenBy: _, ...rest } = cause;
    return Object.freeze(rest);
  }
  const causes = limitLinks(w.causes, links - 1);
  return causes === w.causes
    ? cause
    : Object.freeze({ ...cause, writtenBy: Object.freeze({ ...w, causes }) });
}

function lastEcho(causes: readonly Cause[]): Cause | undefined {
  for (let i = causes.length - 1; i >= 0; i--) if (causes[i]?.writtenBy !== undefined) return causes[i];
  return undefined;
}
