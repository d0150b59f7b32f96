import { OptionsError } from '../errors.ts';
import { parseFieldSelector, parseLabelSelector, parseShardSelector } from '../selector/index.ts';

/**
 * Checks a label selector option and returns its canonical form ('' when unset), so two spellings
 * of one selector share one informer in a registry.
 */
export function normalizeLabelSelector(field: string, text: string | undefined): string {
  if (text === undefined) return '';
  if (typeof text !== 'string') throw new OptionsError(field, text, 'a label selector string');
  try {
    return parseLabelSelector(text).toString();
  } catch (error) {
    throw new OptionsError(field, text, `a valid label selector (${(error as Error).message})`);
  }
}

/**
 * Checks a field selector option's syntax and returns its canonical form ('' when unset). Which
 * fields a kind supports is the backend's call (it answers 400), so every field name is accepted here.
 */
export function normalizeFieldSelector(field: string, text: string | undefined): string {
  if (text === undefined) return '';
  if (typeof text !== 'string') throw new OptionsError(field, text, 'a field selector string');
  try {
    return parseFieldSelector(text, fieldNames(text)).toString();
  } catch (error) {
    throw new OptionsError(field, text, `a valid field selector (${(error as Error).message})`);
  }
}

/**
 * Checks a KEP-5866 shard selector option and returns its canonical form ('' when unset or ''), so
 * two spellings of one shard share one informer in a registry.
 */
export function normalizeShardSelector(field: string, text: string | undefined): string {
  if (text === undefined || text === '') return '';
  if (typeof text !== 'string') throw new OptionsError(field, text, 'a shard selector string');
  try {
    return parseShardSelector(text).toString();
  } catch (error) {
    throw new OptionsError(field, text, `a valid shard selector (${(error as Error).message})`);
  }
}

/** The field names a selector mentions: each term's text before its operator. */
function fieldNames(text: string): string[] {
  const names: string[] = [];
  let start = 0;
  for (let i = 0; i <= text.length; i++) {
    const ch = text.charAt(i);
    if (ch === '\\') {
      i++;
      continue;
    }
    if (i === text.length || ch === ',') {
      const term = text.slice(start, i);
      const operator = term.search(/!=|=/);
      names.push((operator < 0 ? term : term.slice(0, operator)).trim());
      start = i + 1;
    }
  }
  return names;
}
