/**
 * The log and operations flags of `serve`, `dev` and `run` and their environment variables: every
 * malformed value is a usage error (exit 2) naming the flag or the variable.
 */
import { ListenFailedError, parseBindAddress } from '@converge/metrics';
import { RunnableFailedError } from '@converge/runtime';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { describeWithCauses } from '../src/errors.ts';
import { main, parseCommand, UsageError } from '../src/index.ts';
import { LOG_LEVELS } from '../src/log-args.ts';

async function run(argv: string[]): Promise<{ code: number; err: string }> {
  const err: string[] = [];
  const io = { out: () => {}, err: (l: string) => err.push(l), stopped: Promise.resolve() };
  const code = await main(argv, io);
  return { code, err: err.join('\n') };
}

const COMMANDS: readonly (readonly string[])[] = [['serve'], ['dev'], ['run', 'op.ts']];

/** What parseCommand threw (undefined if it returned). */
function thrown(argv: readonly string[], env: Record<string, string> = {}): unknown {
  try {
    parseCommand(argv, env);
    return undefined;
  } catch (error) {
    return error;
  }
}

const notALevel = fc.string().filter((s) => !(LOG_LEVELS as readonly string[]).includes(s.toLowerCase()));

describe('--log-level and LOG_LEVEL', () => {
  it('take every level in any case; the flag wins over the variable; info by default', () => {
    for (const command of COMMANDS) {
      expect(parseCommand([...command], {})).toMatchObject({ logLevel: 'info', logFormat: undefined });
      for (const level of LOG_LEVELS) {
        expect(parseCommand([...command, '--log-level', level.toUpperCase()], {})).toMatchObject({
          logLevel: level,
        });
        expect(parseCommand([...command], { LOG_LEVEL: ` ${level} ` })).toMatchObject({ logLevel: level });
      }
      expect(parseCommand([...command, '--log-level=warn'], { LOG_LEVEL: 'debug' })).toMatchObject({
        logLevel: 'warn',
      });
      expect(parseCommand([...command], { LOG_LEVEL: '' })).toMatchObject({ logLevel: 'info' });
    }
  });

  it('anything else on the flag is a usage error naming --log-level (exit 2)', async () => {
    fc.assert(
      fc.property(fc.constantFrom(...COMMANDS), notALevel, (command, value) => {
        const error = thrown([...command, `--log-level=${value}`]);
        expect(error).toBeInstanceOf(UsageError);
        expect((error as UsageError).message).toContain('--log-level');
        expect((error as UsageError).command).toBe(command[0]);
      }),
    );
    const { code, err } = await run(['run', 'op.ts', '--log-level', 'verbose']);
    expect(code).toBe(2);
    expect(err).toContain(
      'converge run: --log-level must be one of trace, debug, info, warn, error, fatal, silent, got "verbose"',
    );
    expect(err).toContain('Usage: converge run module…');
  });

  it('anything else in LOG_LEVEL is a usage error naming $LOG_LEVEL', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...COMMANDS),
        notALevel.filter((s) => s.trim() !== ''),
        (command, value) => {
          const error = thrown(command, { LOG_LEVEL: value });
          expect(error).toBeInstanceOf(UsageError);
          expect((error as UsageError).message).toMatch(/: \$LOG_LEVEL must be one of /);
        },
      ),
    );
  });

  it('--log-format and CONVERGE_LOG_FORMAT take json or pretty, nothing else', () => {
    expect(parseCommand(['dev', '--log-format', 'JSON'], {})).toMatchObject({ logFormat: 'json' });
    expect(parseCommand(['serve'], { CONVERGE_LOG_FORMAT: 'pretty' })).toMatchObject({ logFormat: 'pretty' });
    fc.assert(
      fc.property(
        fc.constantFrom(...COMMANDS),
        fc.string().filter((s) => !['json', 'pretty'].includes(s.toLowerCase())),
        (command, value) => {
          const error = thrown([...command, `--log-format=${value}`]);
          expect(error).toBeInstanceOf(UsageError);
          expect((error as UsageError).message).toContain('--log-format');
        },
      ),
    );
    expect(thrown(['serve'], { CONVERGE_LOG_FORMAT: 'yaml' })).toMatchObject({
      message: 'converge serve: $CONVERGE_LOG_FORMAT must be one of json, pretty, got "yaml"',
    });
  });
});

describe('--metrics-bind-address and --health-probe-bind-address', () => {
  it('default: run as kubebuilder (metrics off, probes on :8081), dev on free loopback ports', () => {
    expect(parseCommand(['run', 'op.ts'], {})).toMatchObject({
      metricsBindAddress: '0',
      healthProbeBindAddress: ':8081',
    });
    expect(parseCommand(['dev'], {})).toMatchObject({
      metricsBindAddress: '127.0.0.1:0',
      healthProbeBindAddress: '127.0.0.1:0',
    });
    expect(
      parseCommand(['run', 'op.ts', '--metrics-bind-address', ':8080'], {
        CONVERGE_METRICS_BIND_ADDRESS: '127.0.0.1:9090',
        CONVERGE_HEALTH_PROBE_BIND_ADDRESS: '[::1]:9091',
      }),
    ).toMatchObject({ metricsBindAddress: ':8080', healthProbeBindAddress: '[::1]:9091' });
  });

  it('accept what the operations server accepts; anything else is a usage error naming the flag or variable', () => {
    const accepted = (value: string): boolean => {
      try {
        parseBindAddress('x', value);
        return true;
      } catch {
        return false;
      }
    };
    const addresses = fc.oneof(
      fc.string(),
      fc
        .tuple(
          fc.constantFrom('', '127.0.0.1', '[::1]', 'localhost', 'a b'),
          fc.integer({ min: -1, max: 70_000 }),
        )
        .map(([host, port]) => `${host}:${port}`),
    );
    fc.assert(
      fc.property(
        fc.constantFrom(['dev'], ['run', 'op.ts']),
        fc.constantFrom('metrics-bind-address', 'health-probe-bind-address'),
        addresses,
        (command, flag, value) => {
          const viaFlag = thrown([...command, `--${flag}=${value}`]);
          const variable = `CONVERGE_${flag.replaceAll('-', '_').toUpperCase()}`;
          const viaEnv = thrown(command, { [variable]: value });
          if (accepted(value)) {
            expect(viaFlag).toBeUndefined();
          } else {
            expect(viaFlag).toBeInstanceOf(UsageError);
            expect((viaFlag as Error).message).toMatch(
              value === '' ? `--${flag} needs a value` : `--${flag} must be an address`,
            );
          }
          if (value.trim() === '' || accepted(value.trim())) expect(viaEnv).toBeUndefined();
          else expect((viaEnv as Error).message).toContain(`$${variable} must be an address`);
        },
      ),
    );
  });

  it('serve takes neither; dev refuses the API server port', async () => {
    expect(thrown(['serve', '--metrics-bind-address', ':8080'])).toMatchObject({
      message:
        'converge serve: --metrics-bind-address is only used by converge dev and converge run (serve runs no operators)',
    });
    expect(thrown(['dev', '--port', '8080', '--metrics-bind-address', ':8080'])).toMatchObject({
      message: `converge dev: --metrics-bind-address ":8080" uses port 8080, the API server's --port; choose another port`,
    });
    expect(thrown(['dev', '--port', '8081', '--health-probe-bind-address', '127.0.0.1:8081'])).toBeInstanceOf(
      UsageError,
    );
    expect(thrown(['dev', '--port', '0', '--metrics-bind-address', '127.0.0.1:0'])).toBeUndefined();
    const { code, err } = await run(['dev', '--metrics-bind-address', '8080']);
    expect(code).toBe(2);
    expect(err).toContain('converge dev: --metrics-bind-address must be an address');
  });

  it('the help of run and dev lists the flags and variables', async () => {
    const out: string[] = [];
    const io = { out: (l: string) => out.push(l), err: () => {}, stopped: Promise.resolve() };
    for (const command of ['run', 'dev']) {
      out.length = 0;
      expect(await main([command, '--help'], io)).toBe(0);
      const help = out.join('\n');
      for (const text of [
        '--metrics-bind-address',
        '--health-probe-bind-address',
        '$CONVERGE_METRICS_BIND_ADDRESS',
        '--log-level',
        '$LOG_LEVEL',
        '--log-format',
      ])
        expect(help).toContain(text);
    }
    out.length = 0;
    await main(['serve', '--help'], io);
    expect(out.join('\n')).toContain('--log-level');
    expect(out.join('\n')).not.toContain('--metrics-bind-address');
  });
});

describe('the line a failed operator stops with', () => {
  it('says what the wrapped error says: a taken probe port is named', () => {
    const taken = Object.assign(new Error('listen EADDRINUSE: address already in use :8081'), {
      code: 'EADDRINUSE',
    });
    const error = new RunnableFailedError('operations-server', {
      cause: new ListenFailedError(':8081', { cause: taken }),
    });
    expect(describeWithCauses(error)).toMatch(
      /^runnable operations-server failed \(CONVERGE_ERR_MANAGER_RUNNABLE_FAILED\): could not listen on :8081 \(EADDRINUSE\) \(CONVERGE_ERR_METRICS_LISTEN_FAILED\): listen EADDRINUSE/,
    );
    expect(describeWithCauses(new Error('plain'))).toBe('plain');
  });
});
