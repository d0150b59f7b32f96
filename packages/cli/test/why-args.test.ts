/**
 * `converge why`'s command line, in this process: what it accepts, the usage errors (exit 2) with
 * the flag named, and a property over any argv.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { main, parseCommand, UsageError } from '../src/index.ts';

async function run(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const io = { out: (l: string) => out.push(l), err: (l: string) => err.push(l), stopped: Promise.resolve() };
  const code = await main(argv, io);
  return { code, out: out.join('\n'), err: err.join('\n') };
}

describe('converge why arguments', () => {
  it('takes a kind or plural in any case, an optional group, -n, --address and --json', () => {
    expect(parseCommand(['why', 'configmap/x'])).toEqual({
      command: 'why',
      resource: 'configmap',
      group: undefined,
      name: 'x',
      namespace: 'default',
      address: undefined,
      json: false,
    });
    expect(parseCommand(['why', 'Website/web', '-n', 'shop', '--json'])).toMatchObject({
      resource: 'Website',
      namespace: 'shop',
      json: true,
    });
    expect(parseCommand(['why', 'deployments.apps/web', '--namespace=prod'])).toMatchObject({
      resource: 'deployments',
      group: 'apps',
      namespace: 'prod',
    });
    const address = (text: string): unknown =>
      (parseCommand(['why', 'websites/web', '--address', text]) as { address?: string }).address;
    expect(address('http://127.0.0.1:8080')).toBe('http://127.0.0.1:8080');
    expect(address('127.0.0.1:8080')).toBe('http://127.0.0.1:8080');
    expect(address('http://127.0.0.1:8080/metrics')).toBe('http://127.0.0.1:8080');
    expect(address('http://[::1]:9/debug/keys')).toBe('http://[::1]:9');
    expect(address('https://proxy.example/ops/')).toBe('https://proxy.example/ops');
    expect(parseCommand(['why', '--help'])).toEqual({ command: 'help', topic: 'why' });
    expect(parseCommand(['help', 'why'])).toEqual({ command: 'help', topic: 'why' });
  });

  it('exits 2 on a bad command line, naming what is wrong, with the usage of why', async () => {
    const cases: [argv: string[], message: string][] = [
      [['why'], 'converge why: which object? give KIND/NAME, such as configmap/settings or Website/web'],
      [['why', 'web'], 'converge why: "web" is not KIND/NAME: name the object, such as configmap/settings'],
      [['why', 'a/b', 'c/d'], 'converge why: takes one KIND/NAME, got also "c/d" (one object at a time)'],
      [
        ['why', 'default/web/x'],
        'converge why: "web/x" is not an object name (1-253 printable characters, no / or %); give the namespace with -n',
      ],
      [
        ['why', '9lives/x'],
        'converge why: "9lives" is not a kind or resource (letters and digits, optionally .group: Website, websites, deployments.apps)',
      ],
      [
        ['why', 'cm/x', '-n', 'Prod'],
        'converge why: --namespace must be a DNS label (lower-case letters, digits and -, at most 63), got "Prod"',
      ],
      [
        ['why', 'cm/x', '--address', 'ftp://h'],
        'converge why: --address must be the operator\'s metrics address, such as http://127.0.0.1:8080 or 127.0.0.1:8080, got "ftp://h"',
      ],
      [['why', 'cm/x', '--address'], 'converge why: --address needs a value (URL)'],
      [['why', 'cm/x', '--json=yes'], 'converge why: --json takes no value, got "yes"'],
      [['why', 'cm/x', '--watch'], 'converge why: unknown option --watch'],
    ];
    for (const [argv, message] of cases) {
      const { code, out, err } = await run(...argv);
      expect({ argv, code, first: err.split('\n')[0] }).toEqual({ argv, code: 2, first: message });
      expect(err).toContain('Usage: converge why KIND/NAME [options]');
      expect(out).toBe('');
    }
    const help = await run('why', '-h');
    expect(help.code).toBe(0);
    expect(help.out).toContain('--address URL');
    expect((await run('help')).out).toMatch(/^ {2}why KIND\/NAME {4}Ask a running operator/m);
  });

  it('any argv after why parses or is a one-line UsageError of why, nothing else', () => {
    const token = fc.oneof(
      fc.constantFrom('-n', '--namespace', '--address', '--json', '-h', '--json=1', '-n=x', '--', '-', '/'),
      fc.constantFrom('configmap/x', 'Website/web', 'deployments.apps/web', 'default', 'http://127.0.0.1:1'),
      fc.string({ maxLength: 12 }),
      fc.string({ unit: 'grapheme', maxLength: 8 }).map((s) => `${s}/${s}`),
    );
    fc.assert(
      fc.property(fc.array(token, { maxLength: 6 }), (argv) => {
        let parsed: ReturnType<typeof parseCommand>;
        try {
          parsed = parseCommand(['why', ...argv]);
        } catch (error) {
          expect(error).toBeInstanceOf(UsageError);
          expect((error as UsageError).command).toBe('why');
          expect((error as UsageError).message).toMatch(/^converge why: /);
          expect((error as UsageError).message).not.toMatch(/[\n\r\u2028\u2029]/);
          return;
        }
        if (parsed.command === 'help') {
          expect(parsed.topic).toBe('why');
          return;
        }
        expect(parsed.command).toBe('why');
        if (parsed.command !== 'why') return;
        expect(parsed.name).toMatch(/^[^/%\s]{1,253}$/);
        expect(parsed.namespace).toMatch(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/);
        if (parsed.address !== undefined) expect(parsed.address).toMatch(/^https?:\/\/[^?#]+$/);
      }),
      { numRuns: 2_000 },
    );
  });
});
