/**
 * What `converge why` prints for a person: a head line, then a block per controller holding the
 * object's key, every text from the operator made one terminal-safe line.
 */
import { isClusterScoped, kindWords } from './why-args.ts';
import type { WhyAnswer, WhyController } from './why-cmd.ts';

/** The answer for a person: a head line, then a block per controller holding the key. */
export function describeAnswer(answer: WhyAnswer): string[] {
  const { object } = answer;
  const kind = `${shown(object.resource)}${object.group === undefined ? '' : `.${shown(object.group)}`}`;
  const clusterScoped = isClusterScoped(object.resource);
  const what = `${kind} ${clusterScoped ? '' : `${object.namespace}/`}${shown(object.name)}`;
  const lines = [`${what} (asked ${answer.operator} at ${answer.now})`];
  const others = answer.keys.filter((k) => !k.matchesKind);
  const words = kindWords(object.resource);
  const named = answer.controllers.filter((c) => words.has(c.toLowerCase()));
  if (answer.idle && others.length === 0 && named.length > 0) {
    lines.push(
      `No controller has it queued: it is idle (the last reconcile by ${named.map(shown).join(', ')} succeeded and nothing changed since), or it does not exist.`,
    );
  } else if (answer.idle && others.length === 0) {
    const controllers = answer.controllers.length === 0 ? 'none' : answer.controllers.map(shown).join(', ');
    lines.push(
      `No controller has it queued: it is idle (its last reconcile succeeded, nothing changed since), or no controller watches ${kind} (controllers: ${controllers}; none named for ${kind}).`,
    );
  } else if (answer.idle)
    lines.push(
      `No controller named for ${kind} has it queued; controllers named otherwise hold a key ${shown(others[0]?.key.key ?? '')} (of another kind, or of ${kind} under another name):`,
    );
  for (const entry of answer.keys) lines.push('', ...describeKey(entry, answer.now));
  return lines;
}

function describeKey({ controller, matchesKind, key }: WhyController, now: string): string[] {
  const field = (label: string, value: string): string => `  ${`${label}:`.padEnd(13)} ${value}`;
  // With the chain shown, a cause is its own part: the chain has the rest.
  const chained = key.chain !== undefined && key.chain.length > 0;
  const cause = (text: string): string => shown(chained ? ownPart(text) : text);
  const lines = [
    `controller ${shown(controller)}: ${shown(key.state)}${matchesKind ? '' : ' (a controller named otherwise)'}${key.key.includes('/') ? '' : ` (key ${shown(key.key)})`}`,
  ];
  if (key.state === 'running') {
    const since = key.runningSince === undefined ? '' : ` since ${shown(key.runningSince)}`;
    const forMs = key.runningForMs === undefined ? '' : ` (${duration(key.runningForMs)})`;
    const id = key.reconcileId === undefined ? '' : `reconcile ${shown(key.reconcileId)}`;
    lines.push(field('running', `${id}${since}${forMs}`.trim()));
    if (key.runCauses !== undefined && key.runCauses.length > 0)
      lines.push(field('runs because', key.runCauses.map(cause).join('; ')));
    if (key.runsAgain === true) lines.push(field('then', 'runs again (changed while running)'));
  }
  if (key.causes !== undefined && key.causes.length > 0) {
    const dropped = key.droppedCauses ? ` (and ${key.droppedCauses} more)` : '';
    lines.push(
      field(
        key.state === 'running' ? 'next because' : 'causes',
        `${key.causes.map(cause).join('; ')}${dropped}`,
      ),
    );
  }
  if (chained) lines.push(...chainLines(field, 'chain', key.chain ?? []));
  if (key.attempts !== undefined && key.attempts > 0)
    lines.push(field('attempts', `${key.attempts} failed since it last succeeded`));
  if (key.lastError !== undefined) {
    const e = key.lastError;
    const about = [e.name, e.code, e.at === undefined ? undefined : `at ${e.at}`].filter(
      (x) => x !== undefined,
    );
    lines.push(
      field(
        'last error',
        `${shown(e.message ?? '')}${about.length > 0 ? ` (${about.map(shown).join(', ')})` : ''}`,
      ),
    );
  }
  if (key.nextRetryAt !== undefined) {
    const inMs = key.nextRetryInMs ?? Date.parse(key.nextRetryAt) - Date.parse(now);
    lines.push(field('next retry', `in ${duration(inMs)} (${shown(key.nextRetryAt)})`));
  }
  const hot = key.hotLoop;
  if (hot === undefined) lines.push(field('hot loop', 'no'));
  else {
    const since = hot.since === undefined ? '' : ` since ${shown(timeText(hot.since))}`;
    const runs = hot.selfCausedRuns === undefined ? '' : `, ${hot.selfCausedRuns} self-caused runs`;
    lines.push(field('hot loop', `YES${since}${runs}: its reconciles are caused by its own writes`));
    if (hot.chain !== undefined && hot.chain.length > 0) {
      if (sameChain(hot.chain, key.chain)) lines.push(field('loop', 'the chain above'));
      else lines.push(...chainLines(field, 'loop', hot.chain));
    }
  }
  return lines;
}

/** A cause as formatCause writes it, without the chain it appends (`, written by reconcile …`). */
function ownPart(text: string): string {
  const at = text.indexOf(', written by ');
  return at < 0 ? text : text.slice(0, at);
}

function sameChain(a: readonly string[], b: readonly string[] | undefined): boolean {
  return b !== undefined && a.length === b.length && a.every((link, i) => link === b[i]);
}

/** A chain, one link a line, nearest first. */
function chainLines(
  field: (label: string, value: string) => string,
  label: string,
  chain: readonly string[],
): string[] {
  return chain.map((link, i) => (i === 0 ? field(label, shown(link)) : `${' '.repeat(16)}← ${shown(link)}`));
}

/** A time from the operator: ISO 8601 text as sent, clock milliseconds as ISO 8601. */
function timeText(time: string | number): string {
  if (typeof time !== 'number') return String(time);
  const date = new Date(time);
  return Number.isNaN(date.getTime()) ? String(time) : date.toISOString();
}

function duration(ms: number): string {
  if (!Number.isFinite(ms) || ms <= 0) return '0 s';
  if (ms < 1_000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1_000).toFixed(1)} s`;
  const minutes = Math.floor(ms / 60_000);
  return `${minutes} min ${Math.round((ms % 60_000) / 1_000)} s`;
}

/** Text from the operator as one terminal-safe line: control characters escaped, at most 500 characters. */
function shown(text: string): string {
  return oneLine(text, 500);
}

export function oneLine(text: string, max: number): string {
  const cut = text.length > max ? `${text.slice(0, max)}…` : text;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it escapes.
  return cut.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, (c) =>
    c === '\n' ? '\\n' : `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}
