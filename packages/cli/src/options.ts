/**
 * Options of one subcommand, parsed with `node:util` parseArgs (its tokens, not its strict mode)
 * so that every mistake becomes a {@link UsageError} whose one-line message names the flag and
 * what it takes, instead of parseArgs' own wording.
 */
import { parseArgs } from 'node:util';
import { quote, UsageError } from './errors.ts';

export interface OptionSpec {
  readonly type: 'string' | 'boolean';
  readonly short?: string;
  readonly multiple?: boolean;
  /** What a string option's value is, for messages: `PATH`, `a port number (0-65535)`. */
  readonly value?: string;
  /** The empty string is a value (default: false, `--name ''` is an error). */
  readonly allowEmpty?: boolean;
}

export type OptionSpecs = Readonly<Record<string, OptionSpec>>;

/** The parsed values: strings (arrays for `multiple`) and booleans, undefined when not given. */
export type OptionValues<S extends OptionSpecs> = {
  readonly [K in keyof S]?: S[K]['type'] extends 'boolean'
    ? boolean
    : S[K]['multiple'] extends true
      ? readonly string[]
      : string;
};

export interface ParsedOptions<S extends OptionSpecs> {
  readonly values: OptionValues<S>;
  readonly positionals: readonly string[];
  /** `-h` or `--help` was given (if the specs have `help`); nothing else was checked. */
  readonly help: boolean;
}

/** A flag as typed, quoted if it holds anything but printable ASCII. */
export function shownFlag(raw: string): string {
  return /^[\x21-\x7e]+$/.test(raw) ? raw : quote(raw);
}

/**
 * Parses `args` of `converge <command>`. Throws a {@link UsageError} for an unknown option, a
 * string option without a value (or followed by another option instead of one), a boolean option
 * given a value, or an empty value. Values starting with a dash are passed as `--name=-value`.
 */
export function parseOptions<S extends OptionSpecs>(
  command: string,
  args: readonly string[],
  specs: S,
): ParsedOptions<S> {
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({
      args: [...args],
      options: specs as Record<string, OptionSpec>,
      strict: false,
      allowPositionals: true,
      tokens: true,
    });
  } catch (error) {
    throw new UsageError(command, `cannot read the arguments: ${quote(String((error as Error).message))}`);
  }
  const tokens = parsed.tokens ?? [];
  if ('help' in specs && tokens.some((t) => t.kind === 'option' && t.name === 'help')) {
    return { values: {}, positionals: [], help: true };
  }
  const values: Record<string, string | boolean | string[]> = {};
  const positionals: string[] = [];
  for (const token of tokens) {
    if (token.kind === 'positional') positionals.push(token.value);
    if (token.kind !== 'option') continue;
    const spec = Object.hasOwn(specs, token.name) ? specs[token.name] : undefined;
    const flag = shownFlag(token.rawName);
    if (spec === undefined) throw new UsageError(command, `unknown option ${flag}`);
    if (spec.type === 'boolean') {
      if (token.value !== undefined) {
        throw new UsageError(command, `${flag} takes no value, got ${quote(token.value)}`);
      }
      values[token.name] = true;
      continue;
    }
    const what = spec.value ?? 'a value';
    const value = token.value;
    if (value === undefined) throw new UsageError(command, `${flag} needs a value (${what})`);
    if (!token.inlineValue && value.startsWith('-') && value !== '-') {
      throw new UsageError(
        command,
        `${flag} needs a value (${what}), not the option ${shownFlag(value)}; write --${shownFlag(token.name)}=VALUE for a value that starts with -`,
      );
    }
    if (value === '' && spec.allowEmpty !== true) {
      throw new UsageError(command, `${flag} needs a value (${what}), got ""`);
    }
    if (spec.multiple === true) {
      const list = (values[token.name] as string[] | undefined) ?? [];
      list.push(value);
      values[token.name] = list;
    } else values[token.name] = value;
  }
  return { values: values as OptionValues<S>, positionals, help: false };
}

/**
 * `--shard-by key|uid` of `command`, undefined when not given. `missing` names the flag it needs
 * when that flag was not given (`--shard-group`, `--sharded`), undefined when it was. Every
 * problem is a UsageError in the same words for run, manifests and simulate.
 */
export function shardByOption(
  command: string,
  given: string | undefined,
  missing: string | undefined,
): 'key' | 'uid' | undefined {
  if (given === undefined) return undefined;
  if (given !== 'key' && given !== 'uid')
    throw new UsageError(command, `--shard-by must be key or uid, got ${quote(given)}`);
  if (missing !== undefined) throw new UsageError(command, `--shard-by is only used with ${missing}`);
  return given;
}
