import { parseArgs } from 'node:util';
import { OptionsError } from '@converge/runtime';

export interface ServeArgs {
  readonly host: string;
  readonly port: number;
  readonly dataDir: string | undefined;
  readonly kubeconfig: string;
  readonly token: string | undefined;
  readonly insecure: boolean;
}

export type Command =
  | { readonly command: 'help'; readonly topic?: string }
  | { readonly command: 'version' }
  | ({ readonly command: 'serve' } & ServeArgs)
  | ({ readonly command: 'dev'; readonly modules: readonly string[] } & ServeArgs);

export const USAGE = `Usage: converge <command> [options]

Commands:
  serve            Run the embedded Kubernetes API server (kubectl and @kubernetes/client-node work against it)
  dev [module…]    Run the API server and operator modules in one process (default: the bundled examples)
  help [command]   Show help

Run 'converge <command> --help' for a command's options.`;

const SERVE_OPTIONS = `Options:
  --host HOST         Address to bind (default 127.0.0.1)
  --port PORT         Port to listen on; 0 picks a free one (default 0)
  --data-dir DIR      Keep state (objects, certificates) in DIR so it survives restarts
  --kubeconfig PATH   Where to write the kubeconfig (default .converge/kubeconfig)
  --token TOKEN       Bearer token clients must send (default: random)
  --insecure          Plain HTTP without a token (debugging only)
  -h, --help          Show this help`;

export const HELP: Record<string, string> = {
  serve: `Usage: converge serve [options]

Serves the Kubernetes API over an in-process versioned store until SIGINT or SIGTERM.
The first line of output is: converge: serving Kubernetes API at URL (kubeconfig: PATH)

${SERVE_OPTIONS}`,
  dev: `Usage: converge dev [module…] [options]

Serves the Kubernetes API and runs operator modules against it in the same process. A module's
default export is (manager) => void | Promise<void>. With no module, the bundled examples run.
State is kept in .converge/data unless --data-dir says otherwise.

${SERVE_OPTIONS}`,
};

function port(value: string | undefined): number {
  if (value === undefined) return 0;
  const n = Number(value);
  if (!/^\d+$/.test(value) || n > 65_535)
    throw new OptionsError('--port', value, 'a port number between 0 and 65535');
  return n;
}

/** Parses the command line; throws OptionsError (naming the flag) on bad input. */
export function parseCommand(argv: readonly string[]): Command {
  const [command, ...rest] = argv;
  if (command === undefined || command === 'help' || command === '--help' || command === '-h') {
    return rest[0] === undefined ? { command: 'help' } : { command: 'help', topic: rest[0] };
  }
  if (command === 'version' || command === '--version') return { command: 'version' };
  if (command !== 'serve' && command !== 'dev') {
    throw new OptionsError('command', command, "one of 'serve', 'dev', 'help' (see converge --help)");
  }
  let parsed: ReturnType<typeof parseServe>;
  try {
    parsed = parseServe(rest, command === 'dev');
  } catch (error) {
    if (error instanceof OptionsError) throw error;
    throw new OptionsError(
      'arguments',
      rest.join(' '),
      `valid options for 'converge ${command}' (${(error as Error).message})`,
    );
  }
  const { values, positionals } = parsed;
  if (values.help === true) return { command: 'help', topic: command };
  const common: ServeArgs = {
    host: values.host ?? '127.0.0.1',
    port: port(values.port),
    dataDir: values['data-dir'] ?? (command === 'dev' ? '.converge/data' : undefined),
    kubeconfig: values.kubeconfig ?? '.converge/kubeconfig',
    token: values.token,
    insecure: values.insecure ?? false,
  };
  if (command === 'serve') {
    if (positionals.length > 0)
      throw new OptionsError('arguments', positionals.join(' '), 'no positional arguments');
    return { command: 'serve', ...common };
  }
  return { command: 'dev', modules: positionals, ...common };
}

function parseServe(args: string[], allowPositionals: boolean) {
  return parseArgs({
    args,
    allowPositionals,
    strict: true,
    options: {
      host: { type: 'string' },
      port: { type: 'string' },
      'data-dir': { type: 'string' },
      kubeconfig: { type: 'string' },
      token: { type: 'string' },
      insecure: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
}
