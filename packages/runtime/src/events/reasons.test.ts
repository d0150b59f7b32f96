import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { OptionsError } from '../errors.ts';
import { EventReasons, eventMessages } from './index.ts';
import { goQuote } from './reasons.ts';

/** Reads back a string written by goQuote (Go's strconv.Unquote, for the escapes goQuote uses). */
function goUnquote(quoted: string): string {
  expect(quoted.startsWith('"') && quoted.endsWith('"')).toBe(true);
  const body = quoted.slice(1, -1);
  const simple: Record<string, string> = {
    a: '\u0007',
    b: '\b',
    f: '\f',
    n: '\n',
    r: '\r',
    t: '\t',
    v: '\v',
    '"': '"',
    '\\': '\\',
  };
  let out = '';
  for (let i = 0; i < body.length; i++) {
    const char = body.charAt(i);
    expect(char).not.toBe('"'); // every quote inside is escaped
    if (char !== '\\') {
      out += char;
      continue;
    }
    const next = body.charAt(++i);
    if (next === 'x' || next === 'u') {
      const digits = next === 'x' ? 2 : 4;
      out += String.fromCharCode(Number.parseInt(body.slice(i + 1, i + 1 + digits), 16));
      i += digits;
    } else {
      const value = simple[next];
      expect(value).toBeDefined();
      out += value;
    }
  }
  return out;
}

describe("Kumori's event reasons and messages", () => {
  it('are the exact strings of Kumori controller runtime', () => {
    expect(EventReasons).toEqual({ synced: 'Synced', errResourceExists: 'ErrResourceExists' });
    expect(eventMessages.synced('hello-config', 'created')).toBe(
      '"hello-config" synced successfully (created)',
    );
    expect(eventMessages.synced('hello', 'updated')).toBe('"hello" synced successfully (updated)');
    expect(eventMessages.synced('default/hello', 'deleted')).toBe(
      '"default/hello" synced successfully (deleted)',
    );
    expect(eventMessages.resourceExists('taken')).toBe(
      'Resource "taken" already exists and is not managed by this controller',
    );
    expect(() => eventMessages.synced('x', 'purged' as never)).toThrow(OptionsError);
    expect(Object.isFrozen(EventReasons)).toBe(true);
  });

  it("quotes as Go's %q: escapes quotes, backslashes and control characters", () => {
    expect(goQuote('plain-name.1')).toBe('"plain-name.1"');
    expect(goQuote('say "hi"\\')).toBe('"say \\"hi\\"\\\\"');
    expect(goQuote('a\nb\tc\u0007\u0000\u007f')).toBe('"a\\nb\\tc\\a\\x00\\x7f"');
    expect(goQuote('héllo ✓ 🚀')).toBe('"héllo ✓ 🚀"');
    expect(goQuote('\u0085')).toBe('"\\u0085"');
  });

  it('property: a quoted string holds no raw control characters or quotes, and reads back to itself', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 60 }), (text) => {
        const quoted = goQuote(text);
        const controls = [...quoted].filter((c) => {
          const code = c.codePointAt(0) ?? 0;
          return code < 0x20 || (code >= 0x7f && code < 0xa0);
        });
        expect(controls).toEqual([]);
        expect(goUnquote(quoted)).toBe(text);
      }),
    );
  });
});
