import { parseDocument } from 'yaml';

/** The bounds a YAML conversion keeps. */
export interface YamlLimits {
  /** Alias expansions (`maxAliasCount` of the `yaml` package). */
  readonly maxAliases: number;
  /** Nesting depth of the result. */
  readonly maxDepth: number;
  /** Size of the result as JSON text, in UTF-16 code units. */
  readonly maxBytes: number;
}

/** One job for the YAML worker. */
export interface YamlJob {
  readonly id: number;
  readonly text: string;
  readonly limits: YamlLimits;
}

/** The outcome of a conversion: JSON text, or the client's error message. */
export type YamlResult = { readonly json: string } | { readonly error: string; readonly tooLarge?: boolean };

/** The worker's answer to a job. */
export type YamlReply = YamlResult & { readonly id: number };
/** What the worker sends once, when it has loaded and listens for jobs. */
export interface YamlReady {
  readonly ready: true;
}

/**
 * Converts one YAML document (YAML 1.2 core schema) to JSON text within `limits`: aliases bounded,
 * the result's depth and size bounded while it is written (a cyclic alias is an error, not a hang),
 * never a stack overflow. Errors are messages for a 400 (`tooLarge`: a 413).
 */
export function parseYamlToJsonText(text: string, limits: YamlLimits): YamlResult {
  let value: unknown;
  try {
    const doc = parseDocument(text, { prettyErrors: false, uniqueKeys: false });
    const first = doc.errors[0];
    if (first !== undefined) return { error: `error converting YAML to JSON: yaml: ${first.message}` };
    value = doc.toJS({ maxAliasCount: limits.maxAliases }) ?? null;
  } catch (error) {
    const message =
      error instanceof RangeError
        ? `the document nests deeper than ${limits.maxDepth} levels`
        : (error as Error).message;
    return { error: `error converting YAML to JSON: yaml: ${message}` };
  }
  return writeJson(value, limits);
}

type Frame = { readonly items: [string | undefined, unknown][]; index: number; readonly array: boolean };

/** JSON text of `value`, iteratively, with depth, size and cycle checks. */
function writeJson(value: unknown, limits: YamlLimits): YamlResult {
  const out: string[] = [];
  let size = 0;
  const open = new Set<unknown>();
  const stack: { frame: Frame; node: unknown }[] = [];
  const emit = (piece: string): boolean => {
    size += piece.length;
    out.push(piece);
    return size <= limits.maxBytes;
  };
  const tooLarge: YamlResult = {
    error: `error converting YAML to JSON: the document is larger than ${limits.maxBytes} bytes as JSON`,
    tooLarge: true,
  };
  const start = (node: unknown): YamlResult | undefined => {
    if (typeof node !== 'object' || node === null || node instanceof Date) {
      const scalar = node instanceof Date ? node.toISOString() : node;
      const text = JSON.stringify(typeof scalar === 'bigint' ? Number(scalar) : scalar) ?? 'null';
      return emit(text) ? undefined : tooLarge;
    }
    if (open.has(node)) return { error: 'error converting YAML to JSON: yaml: an alias refers to itself' };
    if (stack.length >= limits.maxDepth) {
      return {
        error: `error converting YAML to JSON: the document nests deeper than ${limits.maxDepth} levels`,
      };
    }
    const array = Array.isArray(node);
    const entries: [string | undefined, unknown][] = array
      ? (node as unknown[]).map((item) => [undefined, item])
      : node instanceof Map
        ? [...node.entries()].map(([k, v]) => [String(k), v])
        : Object.entries(node as Record<string, unknown>);
    open.add(node);
    stack.push({ frame: { items: entries, index: 0, array }, node });
    return emit(array ? '[' : '{') ? undefined : tooLarge;
  };
  const first = start(value);
  if (first !== undefined) return first;
  while (stack.length > 0) {
    const top = stack[stack.length - 1] as { frame: Frame; node: unknown };
    const { frame } = top;
    if (frame.index >= frame.items.length) {
      stack.pop();
      open.delete(top.node);
      if (!emit(frame.array ? ']' : '}')) return tooLarge;
      continue;
    }
    const [key, item] = frame.items[frame.index] as [string | undefined, unknown];
    if (frame.index > 0 && !emit(',')) return tooLarge;
    frame.index++;
    if (key !== undefined && !emit(`${JSON.stringify(key)}:`)) return tooLarge;
    const failed = start(item === undefined ? null : item);
    if (failed !== undefined) return failed;
  }
  return { json: out.join('') };
}
