/**
 * `pattern` is Go RE2 syntax; this translates the RE2 features CRDs use that JavaScript spells
 * differently (leading `(?i)`/`(?s)`/`(?m)` flags, `\A`, `\z`, `[[:alpha:]]`, `\pL`) and compiles with
 * Unicode semantics (Go matches runes). Backreferences and lookaround, which RE2 rejects, are
 * rejected here too.
 */

const POSIX: Record<string, string> = {
  alnum: '0-9A-Za-z',
  alpha: 'A-Za-z',
  ascii: '\\x00-\\x7F',
  blank: '\\t ',
  cntrl: '\\x00-\\x1F\\x7F',
  digit: '0-9',
  graph: '!-~',
  lower: 'a-z',
  print: ' -~',
  punct: '!-/:-@\\[-`{-~',
  space: '\\t\\n\\v\\f\\r ',
  upper: 'A-Z',
  word: '0-9A-Za-z_',
  xdigit: '0-9A-Fa-f',
};

const cache = new Map<string, RegExp | Error>();

/** Compiles a Go regular expression; an Error says why it is not one. Results are cached. */
export function compilePattern(source: string): RegExp | Error {
  const hit = cache.get(source);
  if (hit !== undefined) return hit;
  const result = translate(source);
  if (cache.size > 1000) cache.clear();
  cache.set(source, result);
  return result;
}

function translate(source: string): RegExp | Error {
  let body = source;
  let flags = 'u';
  const lead = /^\(\?([ims]+)\)/.exec(body);
  if (lead !== null) {
    for (const f of lead[1] ?? '') if (!flags.includes(f)) flags += f;
    body = body.slice(lead[0].length);
  }
  if (/\(\?[=!<]|\\[1-9]/.test(body)) {
    return new Error(`error parsing regexp: invalid or unsupported Perl syntax: \`${source}\``);
  }
  body = body
    .replace(/\[:(\^?)([a-z]+):\]/g, (whole, neg: string, name: string) => {
      const cls = POSIX[name];
      return cls === undefined || neg === '^' ? whole : cls;
    })
    .replace(/\\A/g, '^')
    .replace(/\\z/g, '$(?![\\s\\S])')
    .replace(/\\([pP])([A-Z])(?![a-z{])/g, '\\$1{$2}');
  try {
    return new RegExp(body, flags);
  } catch {
    try {
      return new RegExp(body, flags.replace('u', ''));
    } catch (error) {
      return new Error(`error parsing regexp: ${(error as Error).message}`);
    }
  }
}
