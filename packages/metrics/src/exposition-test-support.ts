/**
 * A small parser of the Prometheus text exposition format (version 0.0.4), for tests: families
 * with their HELP and TYPE, and samples with labels. prom-client has no parser of its own.
 */

export interface Sample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

export interface Family {
  readonly name: string;
  help: string | undefined;
  type: string | undefined;
  readonly samples: Sample[];
}

const SUFFIXES = ['_bucket', '_sum', '_count'];

/** Parses an exposition; throws on a line it cannot read (a test then fails, as it should). */
export function parseExposition(text: string): Map<string, Family> {
  const families = new Map<string, Family>();
  const family = (name: string): Family => {
    let f = families.get(name);
    if (f === undefined) {
      f = { name, help: undefined, type: undefined, samples: [] };
      families.set(name, f);
    }
    return f;
  };
  for (const [index, line] of text.split('\n').entries()) {
    if (line.trim() === '') continue;
    const meta = /^# (HELP|TYPE) ([a-zA-Z_:][a-zA-Z0-9_:]*) ?(.*)$/.exec(line);
    if (meta !== null) {
      const f = family(meta[2] as string);
      if (meta[1] === 'HELP') f.help = unescapeHelp(meta[3] as string);
      else f.type = meta[3];
      continue;
    }
    if (line.startsWith('#')) continue;
    const sample = parseSample(line);
    if (sample === undefined) throw new Error(`line ${index + 1} is not a sample: ${JSON.stringify(line)}`);
    const owner =
      families.has(sample.name) || !SUFFIXES.some((s) => sample.name.endsWith(s))
        ? sample.name
        : sample.name.slice(0, sample.name.lastIndexOf('_'));
    family(families.has(owner) ? owner : sample.name).samples.push(sample);
  }
  return families;
}

function parseSample(line: string): Sample | undefined {
  const head = /^([a-zA-Z_:][a-zA-Z0-9_:]*)/.exec(line);
  if (head === null) return undefined;
  const name = head[1] as string;
  let i = name.length;
  const labels: Record<string, string> = {};
  if (line[i] === '{') {
    i++;
    for (;;) {
      if (line[i] === '}') {
        i++;
        break;
      }
      const label = /^([a-zA-Z_][a-zA-Z0-9_]*)="/.exec(line.slice(i));
      if (label === null) return undefined;
      i += label[0].length;
      let value = '';
      for (;;) {
        const c = line[i];
        if (c === undefined) return undefined;
        if (c === '"') {
          i++;
          break;
        }
        if (c === '\\') {
          const n = line[i + 1];
          value += n === 'n' ? '\n' : (n ?? '');
          i += 2;
          continue;
        }
        value += c;
        i++;
      }
      labels[label[1] as string] = value;
      if (line[i] === ',') i++;
    }
  }
  const rest = line.slice(i).trim().split(/\s+/);
  const text = rest[0];
  if (text === undefined || rest.length > 2) return undefined;
  const value = parseFloatLikeGo(text);
  if (value === undefined) return undefined;
  return { name, labels, value };
}

/**
 * A sample value as Prometheus reads it (Go's strconv.ParseFloat): NaN and Inf in any case, with
 * an optional sign on Inf or Infinity. prom-client writes a NaN as `Nan` (an event-loop lag
 * histogram with no samples yet, as right after another file reset it), which Prometheus accepts.
 */
function parseFloatLikeGo(text: string): number | undefined {
  const special = /^([+-]?)(inf|infinity|nan)$/i.exec(text);
  if (special !== null) {
    if ((special[2] as string).toLowerCase() === 'nan') return special[1] === '' ? Number.NaN : undefined;
    return special[1] === '-' ? Number.NEGATIVE_INFINITY : Number.POSITIVE_INFINITY;
  }
  const value = Number(text);
  return Number.isNaN(value) || text === '' ? undefined : value;
}

function unescapeHelp(text: string): string {
  return text.replace(/\\(n|\\)/g, (_, c: string) => (c === 'n' ? '\n' : '\\'));
}

/** The value of the one sample of `name` whose labels include `labels`; throws if none or several. */
export function sampleValue(
  families: Map<string, Family>,
  name: string,
  labels: Readonly<Record<string, string>> = {},
): number {
  const matches = [...families.values()]
    .flatMap((f) => f.samples)
    .filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  if (matches.length !== 1) {
    throw new Error(`${matches.length} samples of ${name} ${JSON.stringify(labels)}`);
  }
  return (matches[0] as Sample).value;
}
