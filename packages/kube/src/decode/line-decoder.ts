import { WatchLineTooLongError } from '../errors.ts';

const NEWLINE = 0x0a;
const CARRIAGE_RETURN = 0x0d;

/**
 * Splits a byte stream into newline-terminated lines (the framing of Kubernetes JSON watch
 * streams) without ever holding more than `maxLineBytes` of one line: a longer line throws a
 * {@link WatchLineTooLongError}. Lines are decoded as UTF-8 only once complete, so multi-byte
 * characters split across chunks survive; `\r\n` endings and blank lines are tolerated.
 *
 * @example
 * const decoder = new LineDecoder(16 * 1024 * 1024);
 * for await (const chunk of body) for (const line of decoder.push(chunk)) handle(JSON.parse(line));
 * const last = decoder.end(); // an unterminated final line, if any
 */
export class LineDecoder {
  readonly #limit: number;
  #parts: Buffer[] = [];
  #size = 0;

  constructor(maxLineBytes: number) {
    this.#limit = maxLineBytes;
  }

  /** The lines this chunk completes, in order. */
  push(chunk: Buffer): string[] {
    const lines: string[] = [];
    let start = 0;
    for (let nl = chunk.indexOf(NEWLINE, start); nl >= 0; nl = chunk.indexOf(NEWLINE, start)) {
      const piece = chunk.subarray(start, nl);
      this.#grow(piece.length);
      const line = this.#parts.length === 0 ? piece : Buffer.concat([...this.#parts, piece]);
      this.#parts = [];
      this.#size = 0;
      const text = decode(line);
      if (text !== undefined) lines.push(text);
      start = nl + 1;
    }
    if (start < chunk.length) {
      const rest = chunk.subarray(start);
      this.#grow(rest.length);
      this.#parts.push(rest);
    }
    return lines;
  }

  /** The unterminated last line, if any (a stream may end without a final newline). */
  end(): string | undefined {
    if (this.#parts.length === 0) return undefined;
    const line = Buffer.concat(this.#parts);
    this.#parts = [];
    this.#size = 0;
    return decode(line);
  }

  #grow(bytes: number): void {
    this.#size += bytes;
    if (this.#size > this.#limit) {
      this.#parts = [];
      this.#size = 0;
      throw new WatchLineTooLongError(this.#limit);
    }
  }
}

/** A line's text without its `\r`; undefined for a blank line. */
function decode(line: Buffer): string | undefined {
  const end = line.length > 0 && line[line.length - 1] === CARRIAGE_RETURN ? line.length - 1 : line.length;
  const text = line.toString('utf8', 0, end);
  return text.trim() === '' ? undefined : text;
}
