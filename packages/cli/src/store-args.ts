import { quote, UsageError } from './errors.ts';
import { type OptionSpecs, parseOptions, shownFlag } from './options.ts';

/** `converge store check|repair --data-dir DIR`, parsed. */
export interface StoreArgs {
  readonly verb: 'check' | 'repair';
  readonly dataDir: string;
  readonly json: boolean;
}

export const STORE_HELP = `Usage: converge store check --data-dir DIR [--json]
       converge store repair --data-dir DIR [--json]

Inspects or repairs the data directory of the embedded API server's store (the --data-dir of
converge serve or converge dev, or its store/ folder). check may run beside a running server
(it writes nothing, and says which process holds the directory); repair refuses while one does.

  check    Reads the snapshot and the log without changing them and reports records, live
           objects, sizes, a torn last record (cut short by a crash: dropped at the next start,
           it was never acknowledged), damage and files readable by other users.
           Exits 0 when healthy, 1 when damaged.
  repair   Keeps every object and write before the first bad record of each file, moves the
           damaged files to DIR/damaged-<time>/, writes a fresh snapshot and log, and says what
           was dropped. Does nothing to a healthy directory.

Options:
  --data-dir DIR   The data directory
  --json           Print the report as JSON
  -h, --help       Show this help`;

const STORE_SPECS = {
  'data-dir': { type: 'string', value: 'DIR' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies OptionSpecs;

/** Parses `converge store …` (argv after `store`); throws a UsageError naming what is wrong. */
export function parseStore(args: readonly string[]): StoreArgs | { readonly help: true } {
  const { values, positionals, help } = parseOptions('store', args, STORE_SPECS);
  if (help || positionals.length === 0) return { help: true };
  const [verb = '', extra] = positionals;
  if (verb !== 'check' && verb !== 'repair')
    throw new UsageError('store', `unknown verb ${shownFlag(verb)}; expected check or repair`);
  if (extra !== undefined) throw new UsageError('store', `unexpected argument ${quote(extra)}`);
  const dataDir = values['data-dir'];
  if (dataDir === undefined) throw new UsageError('store', `${verb} needs --data-dir DIR`);
  return { verb, dataDir, json: values.json ?? false };
}
