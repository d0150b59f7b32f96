/**
 * Path globs of fault rules, matched in time linear in the path (for a given glob) by simulating
 * the glob's automaton over the path once, never by backtracking: a hostile glob such as
 * `/*a*a*a*a*b` against a long path costs `path length × glob length` steps at most, where a
 * backtracking RegExp compiled from it would take exponential time.
 *
 * @module
 */

/** One step of a compiled glob. */
type GlobToken =
  /** One literal character. */
  | { readonly kind: 'char'; readonly char: string }
  /** `?`: one character other than `/`. */
  | { readonly kind: 'one' }
  /** `*`: any run of characters without `/` (possibly empty). */
  | { readonly kind: 'star' }
  /** `**`: any run of characters (possibly empty). */
  | { readonly kind: 'any' }
  /** The `/` of a trailing `/**`, which may be absent together with what follows it. */
  | { readonly kind: 'tail' };

/** A compiled glob: `test(path)` in O(path length × tokens) time and O(tokens) memory. */
export interface GlobMatcher {
  test(path: string): boolean;
}

function tokenize(glob: string): GlobToken[] {
  const tokens: GlobToken[] = [];
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i] as string;
    if (c === '*' && glob[i + 1] === '*') {
      i++;
      const last = tokens.at(-1);
      if (i === glob.length - 1 && last?.kind === 'char' && last.char === '/') {
        tokens[tokens.length - 1] = { kind: 'tail' };
      }
      pushStar(tokens, 'any');
    } else if (c === '*') pushStar(tokens, 'star');
    else if (c === '?') tokens.push({ kind: 'one' });
    else tokens.push({ kind: 'char', char: c });
  }
  return tokens;
}

/** Adjacent stars collapse into one (`**` absorbs `*`), so that a star is never followed by a star. */
function pushStar(tokens: GlobToken[], kind: 'star' | 'any'): void {
  const last = tokens.at(-1);
  if (last?.kind === 'any') return;
  if (last?.kind === 'star') tokens[tokens.length - 1] = { kind };
  else tokens.push({ kind });
}

/** Whether state `j` (the first `j` tokens matched) moves to `j + 1` on `c`. */
function advances(token: GlobToken, c: string): boolean {
  switch (token.kind) {
    case 'char':
      return token.char === c;
    case 'one':
      return c !== '/';
    case 'tail':
      return c === '/';
    case 'star':
    case 'any':
      return false;
  }
}

/** Whether state `j` stays on `c` (a star consuming one more character). */
function loops(token: GlobToken, c: string): boolean {
  return token.kind === 'any' || (token.kind === 'star' && c !== '/');
}

/** Whether state `j` also stands for state `j + 1` without consuming anything. */
function skippable(token: GlobToken | undefined): boolean {
  return token?.kind === 'star' || token?.kind === 'any';
}

/**
 * Compiles a glob (`*` within one segment, `?` one character but `/`, `**` across segments, a
 * trailing `/**` also matching the path before it) into a matcher of whole paths.
 */
export function compileGlob(glob: string): GlobMatcher {
  const tokens = tokenize(glob);
  if (tokens.every((t) => t.kind === 'char')) return { test: (path) => path === glob };
  const m = tokens.length;
  // A trailing `/**` may be absent: the state before its `/` accepts too.
  const tailAt = tokens.findIndex((t) => t.kind === 'tail');
  const accepts = (state: Uint8Array): boolean => state[m] === 1 || (tailAt >= 0 && state[tailAt] === 1);
  const close = (state: Uint8Array): void => {
    // A star is never followed by a star, so one forward pass reaches every skippable state.
    for (let j = 0; j < m; j++) if (state[j] === 1 && skippable(tokens[j])) state[j + 1] = 1;
  };
  return {
    test(path: string): boolean {
      let current = new Uint8Array(m + 1);
      let next = new Uint8Array(m + 1);
      current[0] = 1;
      close(current);
      for (let i = 0; i < path.length; i++) {
        const c = path[i] as string;
        next.fill(0);
        let alive = false;
        for (let j = 0; j < m; j++) {
          if (current[j] !== 1) continue;
          const token = tokens[j] as GlobToken;
          if (loops(token, c)) {
            next[j] = 1;
            alive = true;
          }
          if (advances(token, c)) {
            next[j + 1] = 1;
            alive = true;
          }
        }
        if (!alive) return false;
        close(next);
        [current, next] = [next, current];
      }
      return accepts(current);
    },
  };
}
