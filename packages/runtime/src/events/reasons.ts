import { OptionsError } from '../errors.ts';

/**
 * Event reasons of Kumori's controller runtime (and of Kubernetes' sample-controller), for
 * controllers that report what they did to their secondaries.
 *
 * @example
 * recorder.event(configMap, 'Normal', EventReasons.synced, 'Reconcile', eventMessages.synced(name, 'created'));
 */
export const EventReasons = Object.freeze({
  /** A secondary was created, updated or deleted to match its primary (Kumori's `ReasonResourceSynced`). */
  synced: 'Synced',
  /** A secondary's name is taken by an object the controller does not manage (`ReasonErrResourceExists`). */
  errResourceExists: 'ErrResourceExists',
} as const);

/** What a sync did to a secondary. */
export type SyncedOperation = 'created' | 'updated' | 'deleted';

const OPERATIONS: readonly SyncedOperation[] = ['created', 'updated', 'deleted'];

/**
 * The messages that go with {@link EventReasons}, word for word Kumori's formats
 * (`MessageResourceSyncedCreated` … `%q synced successfully (created)`,
 * `MessageErrResourceExists` `Resource %q already exists and is not managed by this controller`),
 * `%q` written as Go writes it (see {@link goQuote}).
 *
 * @example
 * eventMessages.synced('hello-config', 'created'); // '"hello-config" synced successfully (created)'
 * eventMessages.resourceExists('taken'); // 'Resource "taken" already exists and is not managed by this controller'
 */
export const eventMessages = Object.freeze({
  synced(name: string, operation: SyncedOperation): string {
    if (!OPERATIONS.includes(operation)) {
      throw new OptionsError('operation', operation, "'created', 'updated' or 'deleted'");
    }
    return `${goQuote(name)} synced successfully (${operation})`;
  },
  resourceExists(name: string): string {
    return `Resource ${goQuote(name)} already exists and is not managed by this controller`;
  },
});

const SHORT_ESCAPES: Readonly<Record<string, string>> = {
  '\u0007': '\\a',
  '\b': '\\b',
  '\f': '\\f',
  '\n': '\\n',
  '\r': '\\r',
  '\t': '\\t',
  '\v': '\\v',
  '"': '\\"',
  '\\': '\\\\',
};

/**
 * `text` double-quoted as Go's `%q` (`strconv.Quote`) writes ASCII: `"` and `\` escaped, the C
 * escapes `\a \b \f \n \r \t \v`, other control characters as `\xNN`. Characters beyond ASCII
 * are kept as they are, except C1 controls (U+0080–U+009F) and unpaired surrogates, which are
 * written `\uNNNN` (Kubernetes names are ASCII, so this is exact for them).
 *
 * @example
 * goQuote('a"b'); // '"a\\"b"'
 */
export function goQuote(text: string): string {
  let out = '"';
  for (const char of text) {
    const short = SHORT_ESCAPES[char];
    const code = char.codePointAt(0) ?? 0;
    if (short !== undefined) out += short;
    else if (code < 0x20 || code === 0x7f) out += `\\x${code.toString(16).padStart(2, '0')}`;
    else if ((code >= 0x80 && code < 0xa0) || (code >= 0xd800 && code < 0xe000)) {
      out += `\\u${code.toString(16).padStart(4, '0')}`;
    } else out += char;
  }
  return `${out}"`;
}
