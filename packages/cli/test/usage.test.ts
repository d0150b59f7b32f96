import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { main, parseCommand, UsageError } from '../src/index.ts';

/** Runs `main(argv)` in this process; resolves with the exit code and what it printed. */
async function run(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const io = { out: (l: string) => out.push(l), err: (l: string) => err.push(l), stopped: Promise.resolve() };
  const code = await main(argv, io);
  return { code, out: out.join('\n'), err: err.join('\n') };
}

/** Line breaks of any kind: a usage message is one line. */
const LINE_BREAK = /[\n\r\v\f\u0085\u2028\u2029]/;

describe('converge usage errors', () => {
  const cases: [argv: string[], message: string, usage: string][] = [
    [
      ['serve', '--port', 'abc'],
      'converge serve: --port must be a port number (0-65535), got "abc"',
      'Usage: converge serve [options]',
    ],
    [['serve', '--port'], 'converge serve: --port needs a value (PORT, 0-65535)', 'Usage: converge serve'],
    [
      ['serve', 'op.ts'],
      'converge serve: unexpected argument "op.ts" (serve takes no modules; converge dev runs modules)',
      'Usage: converge serve',
    ],
    [['dev', '--insecure=yes'], 'converge dev: --insecure takes no value, got "yes"', 'Usage: converge dev'],
    [
      ['dev', '--kubeconfig', '--insecure'],
      'converge dev: --kubeconfig needs a value (PATH), not the option --insecure; write --kubeconfig=VALUE for a value that starts with -',
      'Usage: converge dev',
    ],
    [
      ['dev', '--data-dir', ''],
      'converge dev: --data-dir needs a value (DIR), got ""',
      'Usage: converge dev',
    ],
    [
      ['run'],
      'converge run: at least one operator module is required (converge run module… [options])',
      'Usage: converge run module… [options]',
    ],
    [['run', 'op.ts', '--foo'], 'converge run: unknown option --foo', 'Usage: converge run'],
    [
      ['run', 'op.ts', '--lease-duration-ms', '0'],
      'converge run: --lease-duration-ms must be a positive number of milliseconds, got "0"',
      'Usage: converge run',
    ],
    [['kv', 'get', 'widgets', '-x'], 'converge kv: unknown option -x', 'Usage: converge kv apply -f FILE…'],
    [['bogus'], 'converge: unknown command bogus', 'Usage: converge <command> [options]'],
    [['help', 'bogus'], 'converge: unknown command bogus', 'Usage: converge <command> [options]'],
    [
      ['--port', '1'],
      'converge: unknown option --port (options come after the command)',
      'Usage: converge <command> [options]',
    ],
    [['serve', '--a\nb'], 'converge serve: unknown option "--a\\nb"', 'Usage: converge serve'],
  ];

  for (const [argv, message, usage] of cases) {
    it(`converge ${argv.map((a) => JSON.stringify(a)).join(' ')} → exit 2: ${message}`, async () => {
      expect(() => parseCommand(argv)).toThrow(UsageError);
      const result = await run(...argv);
      expect(result.code).toBe(2);
      const [first, blank, third] = result.err.split('\n');
      expect(first).toBe(message);
      expect(blank).toBe('');
      expect(third).toContain(usage);
      expect(result.out).toBe('');
    });
  }

  it('the usage of a subcommand is its own, not the global one', async () => {
    const { err } = await run('serve', '--port', 'abc');
    expect(err).toContain('--data-dir DIR');
    expect(err).not.toContain('Commands:');
  });

  it('converge <command> --help prints that command’s usage and exits 0, even after a bad option', async () => {
    for (const [command, usage] of [
      ['serve', 'Usage: converge serve [options]'],
      ['dev', 'Usage: converge dev [module…] [options]'],
      ['run', 'Usage: converge run module… [options]'],
      ['kv', 'Usage: converge kv apply -f FILE… [options]'],
    ] as const) {
      for (const argv of [
        [command, '--help'],
        [command, '-h'],
        [command, '--bogus', '--help'],
        ['help', command],
      ]) {
        const result = await run(...argv);
        expect(result.code, argv.join(' ')).toBe(0);
        expect(result.out.split('\n')[0], argv.join(' ')).toBe(usage);
        expect(result.err).toBe('');
      }
    }
    expect(await run('help')).toMatchObject({ code: 0, out: expect.stringContaining('Commands:') });
    expect(await run()).toMatchObject({ code: 0, out: expect.stringContaining('Commands:') });
  });

  it('for any argv, parseCommand returns a command or throws a UsageError whose message is one line', () => {
    const word = fc.constantFrom(
      'serve',
      'dev',
      'run',
      'kv',
      'help',
      'version',
      'apply',
      'get',
      'delete',
      'op.ts',
      'applications.kumori.examples.converge.dev/v1',
      'ConfigMap/v1',
      '--',
      '-',
      '-h',
      '--help',
      '-f',
      '-n',
      '-A',
      '-o',
      '-Af',
      '--port',
      '--port=',
      '--host',
      '--insecure',
      '--insecure=1',
      '--kubeconfig',
      '--data-dir',
      '--token',
      '--leader-elect',
      '--lease-backend',
      'nats',
      'kubernetes',
      '--lease-name',
      '--lease-namespace',
      '--lease-bucket',
      '--nats',
      '--lease-duration-ms',
      '--retry-period-ms',
      '--kind',
      '--plural',
      '--output',
      'yaml',
      '--filename',
      '--all-namespaces',
      '--cluster-scoped',
      '--bucket-prefix',
      '0',
      '65536',
      '1.5',
      '__proto__',
      '--__proto__',
      '--constructor',
      '--toString=x',
    );
    const arg = fc.oneof(
      { weight: 3, arbitrary: word },
      { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 12 }) },
      { weight: 1, arbitrary: fc.tuple(word, fc.string({ maxLength: 6 })).map(([a, b]) => `${a}=${b}`) },
    );
    fc.assert(
      fc.property(fc.array(arg, { maxLength: 8 }), (argv) => {
        let error: unknown;
        try {
          const command = parseCommand(argv);
          expect(typeof command.command).toBe('string');
          return;
        } catch (e) {
          error = e;
        }
        expect(error).toBeInstanceOf(UsageError);
        const { message } = error as UsageError;
        expect(message).toMatch(/^converge( [a-z]+)?: \S/);
        expect(message).not.toMatch(LINE_BREAK);
        expect(message).not.toContain('expected valid options');
        expect(message).not.toContain('invalid option');
        expect(message.length).toBeLessThan(400);
      }),
      { numRuns: 3_000 },
    );
  });
});
