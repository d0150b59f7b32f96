/**
 * A linear-time matcher for RE2 patterns (a Pike VM): every position of the input is visited once
 * per program instruction at most, so no pattern can make matching take exponential time — the
 * property Go's regexp (and so kube-apiserver) has and JavaScript's backtracking RegExp lacks.
 * Matching works on code points, leftmost-first like Go.
 */
import { RegexSyntaxError } from './errors.ts';
import { type CodePointTest, isWordChar, parseRegex, type RegexNode } from './regex-parse.ts';

type Inst =
  | { op: 'char'; test: CodePointTest; next: number }
  | { op: 'split'; x: number; y: number }
  | { op: 'jmp'; x: number }
  | { op: 'assert'; what: 'bol' | 'eol' | 'bot' | 'eot' | 'word' | 'notWord'; next: number }
  | { op: 'match' };

/** The largest program a pattern may compile to (`x{1000}{1000}` style blow-ups are refused). */
const MAX_PROGRAM = 20_000;

/** A compiled RE2 pattern. */
export interface Regex {
  /** The pattern's length in code points (what the cost model charges per character). */
  readonly size: number;
  /** Instructions in the compiled program. */
  readonly programSize: number;
  /** The leftmost-first match in `text` (code points) at or after `from`: [start, end), or undefined. */
  search(text: readonly number[], from: number): [number, number] | undefined;
}

/** A string as the code points the matcher works on (Go matches runes). */
export function codePoints(text: string): number[] {
  return Array.from(text, (ch) => ch.codePointAt(0) ?? 0);
}

class Compiler {
  readonly prog: Inst[] = [];

  emit(inst: Inst): number {
    if (this.prog.length >= MAX_PROGRAM)
      throw new RegexSyntaxError('error parsing regexp: expression too large');
    this.prog.push(inst);
    return this.prog.length - 1;
  }

  /** Compiles `node` so that it continues at the instruction index returned by the `patch` list. */
  compile(node: RegexNode): void {
    switch (node.kind) {
      case 'empty':
        return;
      case 'char': {
        const at = this.emit({ op: 'char', test: node.test, next: 0 });
        (this.prog[at] as { next: number }).next = at + 1;
        return;
      }
      case 'assert': {
        const at = this.emit({ op: 'assert', what: node.what, next: 0 });
        (this.prog[at] as { next: number }).next = at + 1;
        return;
      }
      case 'concat':
        for (const item of node.items) this.compile(item);
        return;
      case 'alt': {
        const jumps: number[] = [];
        node.items.forEach((item, i) => {
          if (i === node.items.length - 1) {
            this.compile(item);
            return;
          }
          const split = this.emit({ op: 'split', x: 0, y: 0 });
          this.compile(item);
          jumps.push(this.emit({ op: 'jmp', x: 0 }));
          Object.assign(this.prog[split] as object, { x: split + 1, y: this.prog.length });
        });
        for (const j of jumps) (this.prog[j] as { x: number }).x = this.prog.length;
        return;
      }
      case 'repeat':
        this.#repeat(node.item, node.min, node.max, node.greedy);
        return;
    }
  }

  #star(item: RegexNode, greedy: boolean): void {
    const split = this.emit({ op: 'split', x: 0, y: 0 });
    this.compile(item);
    this.emit({ op: 'jmp', x: split });
    const after = this.prog.length;
    Object.assign(
      this.prog[split] as object,
      greedy ? { x: split + 1, y: after } : { x: after, y: split + 1 },
    );
  }

  #repeat(item: RegexNode, min: number, max: number, greedy: boolean): void {
    for (let i = 0; i < min; i++) this.compile(item);
    if (max === -1) {
      this.#star(item, greedy);
      return;
    }
    // x{n,m}: the optional copies nest, (x(x(x)?)?)?, so that later copies need the earlier ones
    const splits: number[] = [];
    for (let i = min; i < max; i++) {
      splits.push(this.emit({ op: 'split', x: 0, y: 0 }));
      this.compile(item);
    }
    const after = this.prog.length;
    for (const split of splits) {
      Object.assign(
        this.prog[split] as object,
        greedy ? { x: split + 1, y: after } : { x: after, y: split + 1 },
      );
    }
  }
}

function assertHolds(what: string, text: readonly number[], at: number): boolean {
  const before = at > 0 ? text[at - 1] : undefined;
  const after = at < text.length ? text[at] : undefined;
  switch (what) {
    case 'bot':
      return at === 0;
    case 'eot':
      return at === text.length;
    case 'bol':
      return at === 0 || before === 10;
    case 'eol':
      return at === text.length || after === 10;
    default: {
      const boundary =
        (before !== undefined && isWordChar(before)) !== (after !== undefined && isWordChar(after));
      return what === 'word' ? boundary : !boundary;
    }
  }
}

interface Thread {
  readonly pc: number;
  readonly start: number;
}

/** Adds `pc` and everything reachable by empty transitions to `list`, in priority order. */
function addThread(
  prog: readonly Inst[],
  list: Thread[],
  seen: Int32Array,
  generation: number,
  pc: number,
  start: number,
  text: readonly number[],
  at: number,
): void {
  const stack = [pc];
  while (stack.length > 0) {
    const p = stack.pop() as number;
    if (seen[p] === generation) continue;
    seen[p] = generation;
    const inst = prog[p] as Inst;
    switch (inst.op) {
      case 'jmp':
        stack.push(inst.x);
        break;
      case 'split':
        stack.push(inst.y, inst.x);
        break;
      case 'assert':
        if (assertHolds(inst.what, text, at)) stack.push(inst.next);
        break;
      case 'char':
      case 'match':
        list.push({ pc: p, start });
    }
  }
}

/** Leftmost-first search from `from`: [start, end] in code points, or undefined. */
function search(prog: readonly Inst[], text: readonly number[], from: number): [number, number] | undefined {
  const seen = new Int32Array(prog.length).fill(-1);
  let generation = 0;
  let current: Thread[] = [];
  let matched: [number, number] | undefined;
  for (let at = from; at <= text.length; at++) {
    if (matched === undefined) addThread(prog, current, seen, generation, 0, at, text, at);
    else if (current.length === 0) break;
    generation++;
    const next: Thread[] = [];
    const cp = at < text.length ? (text[at] as number) : -1;
    for (const thread of current) {
      const inst = prog[thread.pc] as Inst;
      if (inst.op === 'match') {
        matched = [thread.start, at];
        break; // lower-priority threads lose
      }
      if (inst.op === 'char' && cp >= 0 && inst.test(cp)) {
        addThread(prog, next, seen, generation, inst.next, thread.start, text, at + 1);
      }
    }
    current = next;
  }
  return matched;
}

const cache = new Map<string, Regex | RegexSyntaxError>();

/**
 * Compiles a Go RE2 pattern into a linear-time matcher (cached).
 *
 * @throws RegexSyntaxError with Go's message for a pattern Go refuses.
 */
export function compileRegex(pattern: string): Regex {
  let hit = cache.get(pattern);
  if (hit === undefined) {
    try {
      hit = build(pattern);
    } catch (error) {
      if (!(error instanceof RegexSyntaxError)) throw error;
      hit = error;
    }
    if (cache.size > 500) cache.clear();
    cache.set(pattern, hit);
  }
  if (hit instanceof RegexSyntaxError) throw hit;
  return hit;
}

function build(pattern: string): Regex {
  const compiler = new Compiler();
  compiler.compile(parseRegex(pattern));
  compiler.emit({ op: 'match' });
  const prog = compiler.prog;
  return {
    size: Array.from(pattern).length,
    programSize: prog.length,
    search: (text, from) => search(prog, text, from),
  };
}
