import { isSelectorWhitespace } from './label-syntax.ts';

/** The kinds of token of the label selector syntax. `in` and `notin` are identifiers here. */
export type LabelTokenKind = 'identifier' | '!' | '!=' | '=' | '==' | '(' | ')' | ',' | '>' | '<' | 'end';

/** One token and the offset of its first character in the selector text. */
export interface LabelToken {
  readonly kind: LabelTokenKind;
  readonly text: string;
  readonly offset: number;
}

const SYMBOLS: ReadonlySet<string> = new Set(['!', '=', '(', ')', ',', '>', '<']);

/**
 * Splits a label selector into tokens, skipping whitespace. An identifier is a run of characters
 * that are neither whitespace nor one of `! = ( ) , < >`; whether it is a valid key or value is
 * the parser's business. Ends with an `end` token.
 */
export function tokenizeLabelSelector(text: string): LabelToken[] {
  const tokens: LabelToken[] = [];
  let i = 0;
  while (i < text.length) {
    const ch = text.charAt(i);
    if (isSelectorWhitespace(ch)) {
      i++;
      continue;
    }
    if (SYMBOLS.has(ch)) {
      const doubled = (ch === '!' || ch === '=') && text.charAt(i + 1) === '=';
      const symbol = doubled ? `${ch}=` : ch;
      tokens.push({ kind: symbol as LabelTokenKind, text: symbol, offset: i });
      i += symbol.length;
      continue;
    }
    const start = i;
    while (i < text.length && !isSelectorWhitespace(text.charAt(i)) && !SYMBOLS.has(text.charAt(i))) i++;
    tokens.push({ kind: 'identifier', text: text.slice(start, i), offset: start });
  }
  tokens.push({ kind: 'end', text: '', offset: text.length });
  return tokens;
}
