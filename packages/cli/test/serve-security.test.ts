import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { parseCommand } from '../src/index.ts';
import { type ConvergeProcess, spawnConverge, waitFor } from './processes.ts';

const dirs: string[] = [];
const running: ConvergeProcess[] = [];

afterEach(async () => {
  for (const p of running.splice(0)) {
    if (p.child.exitCode === null && p.child.signalCode === null) {
      p.child.kill('SIGTERM');
      await p.exited;
    }
  }
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function tmp(): string {
  const dir = mkdtempSync(join(tmpdir(), 'converge-serve-sec-'));
  dirs.push(dir);
  return dir;
}

/** Starts `converge …args` in `dir` and waits for its first line (the URL). */
async function serve(
  dir: string,
  args: string[],
  env: Record<string, string> = {},
): Promise<ConvergeProcess> {
  const p = spawnConverge(dir, args, env);
  running.push(p);
  await waitFor(
    'the serving line',
    () => (p.stdout().includes('serving Kubernetes API at') ? true : undefined),
    p.output,
  );
  return p;
}

interface Kubeconfig {
  readonly server: string;
  readonly ca: string;
  readonly token: string;
}

function readKubeconfig(path: string): Kubeconfig {
  const doc = parse(readFileSync(path, 'utf8')) as {
    clusters: { cluster: { server: string; 'certificate-authority-data': string } }[];
    users: { user: { token: string } }[];
  };
  const cluster = doc.clusters[0]?.cluster;
  return {
    server: cluster?.server as string,
    ca: Buffer.from(cluster?.['certificate-authority-data'] as string, 'base64').toString('utf8'),
    token: doc.users[0]?.user.token as string,
  };
}

/** One HTTPS request to the server of a kubeconfig, with a bearer token. */
function call(k: Kubeconfig, method: string, path: string, token: string, body?: unknown): Promise<number> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = request(
      new URL(path, k.server),
      {
        method,
        ca: k.ca,
        headers: {
          authorization: `Bearer ${token}`,
          ...(payload === undefined ? {} : { 'content-type': 'application/json' }),
        },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

const mode = (path: string): string => (statSync(path).mode & 0o777).toString(8);

describe('converge serve/dev command line: tokens, fault admin, binding', () => {
  it('--insecure with a non-loopback host is refused unless --insecure-bind-non-loopback says so', () => {
    expect(() => parseCommand(['serve', '--insecure', '--host', '0.0.0.0'], {})).toThrow(
      /^converge serve: --insecure on --host "0\.0\.0\.0" would serve plain HTTP with no authentication to every machine that can reach it; .*--insecure-bind-non-loopback/,
    );
    expect(() => parseCommand(['dev', '--insecure', '--host', '10.0.0.5'], {})).toThrow(
      /converge dev: --insecure/,
    );
    expect(
      parseCommand(['serve', '--insecure', '--host', '0.0.0.0', '--insecure-bind-non-loopback'], {}),
    ).toMatchObject({ insecure: true, insecureBindNonLoopback: true, host: '0.0.0.0' });
    expect(parseCommand(['serve', '--insecure', '--host', '::1'], {})).toMatchObject({ insecure: true });
    expect(parseCommand(['serve', '--host', '0.0.0.0'], {})).toMatchObject({ insecure: false });
    expect(() => parseCommand(['serve', '--insecure-bind-non-loopback'], {})).toThrow(
      'converge serve: --insecure-bind-non-loopback is only used with --insecure',
    );
  });

  it('token from a file or the environment: --token-file, else $CONVERGE_TOKEN; --token and --token-file conflict', () => {
    const dir = tmp();
    const file = join(dir, 'token');
    writeFileSync(file, 'from-file-token\n', { mode: 0o600 });
    expect(parseCommand(['serve', '--token-file', file], { CONVERGE_TOKEN: 'env-token' })).toMatchObject({
      token: 'from-file-token',
      tokenSource: 'file',
    });
    expect(parseCommand(['serve'], { CONVERGE_TOKEN: 'env-token' })).toMatchObject({
      token: 'env-token',
      tokenSource: 'env',
    });
    expect(parseCommand(['serve', '--token', 'flag-token'], { CONVERGE_TOKEN: 'env-token' })).toMatchObject({
      token: 'flag-token',
      tokenSource: 'flag',
    });
    expect(parseCommand(['serve'], {})).toMatchObject({ token: undefined, tokenSource: undefined });
    expect(() => parseCommand(['serve', '--token', 'a', '--token-file', file], {})).toThrow(
      'converge serve: give the token once: --token or --token-file, not both',
    );
    expect(() => parseCommand(['serve', '--token-file', join(dir, 'missing')], {})).toThrow(
      /^converge serve: --token-file ".*missing" cannot be read: ENOENT/,
    );
    writeFileSync(join(dir, 'empty'), '\n');
    expect(() => parseCommand(['serve', '--token-file', join(dir, 'empty')], {})).toThrow(
      /--token-file ".*empty" must hold a token: printable characters without spaces, got nothing/,
    );
  });

  it('fault admin is off in serve unless --fault-admin, always on in dev, with a token of its own', () => {
    expect(parseCommand(['serve'], {})).toMatchObject({ faultAdmin: false, faultAdminToken: undefined });
    expect(parseCommand(['serve', '--fault-admin'], {})).toMatchObject({ faultAdmin: true });
    expect(parseCommand(['dev'], {})).toMatchObject({ faultAdmin: true });
    expect(
      parseCommand(['serve', '--fault-admin'], { CONVERGE_FAULT_ADMIN_TOKEN: 'admin-token' }),
    ).toMatchObject({ faultAdminToken: 'admin-token' });
    expect(() => parseCommand(['serve', '--fault-admin-token-file', 'x'], {})).toThrow(
      'converge serve: --fault-admin-token-file is only used with --fault-admin',
    );
    expect(() =>
      parseCommand(['serve', '--fault-admin'], {
        CONVERGE_TOKEN: 'same',
        CONVERGE_FAULT_ADMIN_TOKEN: 'same',
      }),
    ).toThrow('converge serve: the fault admin token must differ from the API token');
  });

  it('--insecure with a non-loopback host is refused: exit 2, nothing served', async () => {
    const dir = tmp();
    const p = spawnConverge(dir, [
      'serve',
      '--insecure',
      '--host',
      '0.0.0.0',
      '--kubeconfig',
      join(dir, 'k'),
    ]);
    running.push(p);
    const exit = await p.exited;
    expect(exit.code).toBe(2);
    expect(p.stderr()).toMatch(/converge serve: --insecure on --host "0\.0\.0\.0"/);
    expect(p.stdout()).not.toMatch(/serving/);
  });

  it('serve takes its token from a file, warns when it is given with --token, and does not serve fault admin by default (404)', async () => {
    const dir = tmp();
    const tokenFile = join(dir, 'token');
    writeFileSync(tokenFile, 'secret-from-a-file\n', { mode: 0o600 });
    const kubeconfig = join(dir, 'kube', 'kubeconfig');
    const fromFile = await serve(dir, ['serve', '--token-file', tokenFile, '--kubeconfig', kubeconfig]);
    const k = readKubeconfig(kubeconfig);
    expect(k.token).toBe('secret-from-a-file');
    expect(mode(kubeconfig)).toBe('600');
    expect(await call(k, 'GET', '/api/v1/namespaces', k.token)).toBe(200);
    expect(await call(k, 'GET', '/converge/faults', k.token)).toBe(404);
    expect(
      await call(k, 'POST', '/converge/faults', k.token, {
        type: 'failRatio',
        pathPattern: '/**',
        ratio: 1,
        status: 500,
      }),
    ).toBe(405);
    expect(await call(k, 'GET', '/api/v1/namespaces', k.token)).toBe(200);
    expect(fromFile.stderr()).not.toMatch(/WARNING/);
    fromFile.child.kill('SIGTERM');
    expect((await fromFile.exited).code).toBe(0);

    const fromEnv = await serve(dir, ['serve', '--kubeconfig', kubeconfig], {
      CONVERGE_TOKEN: 'secret-from-env',
    });
    expect(readKubeconfig(kubeconfig).token).toBe('secret-from-env');
    expect(fromEnv.stderr()).not.toMatch(/WARNING/);
    fromEnv.child.kill('SIGTERM');
    await fromEnv.exited;

    const fromFlag = await serve(dir, ['serve', '--token', 'secret-on-the-line', '--kubeconfig', kubeconfig]);
    expect(readKubeconfig(kubeconfig).token).toBe('secret-on-the-line');
    expect(fromFlag.stderr()).toMatch(
      /converge: WARNING: --token is visible to every local user in the process list \(ps\); use --token-file PATH or \$CONVERGE_TOKEN instead/,
    );
  }, 90_000);

  it('serve --fault-admin: the kubeconfig token gets 403 at /converge/faults, the token written 0600 beside the kubeconfig opens it', async () => {
    const dir = tmp();
    const kubeconfig = join(dir, 'kube', 'kubeconfig');
    const p = await serve(dir, ['serve', '--fault-admin', '--kubeconfig', kubeconfig]);
    const k = readKubeconfig(kubeconfig);
    const tokenFile = join(dir, 'kube', 'fault-admin-token');
    expect(mode(tokenFile)).toBe('600');
    expect(mode(join(dir, 'kube'))).toBe('700');
    const adminToken = readFileSync(tokenFile, 'utf8').trim();
    expect(adminToken).not.toBe(k.token);
    // the line after the serving line: the pipe may hand it over in a later chunk
    const line = `fault injection at ${k.server}/converge/faults (its own token: ${tokenFile})`;
    await waitFor('the fault injection line', () => (p.stdout().includes(line) ? true : undefined), p.output);
    expect(p.stdout()).toContain(line);
    const rule = { type: 'failRatio', pathPattern: '/version', ratio: 1, status: 503 };
    expect(await call(k, 'POST', '/converge/faults', k.token, rule)).toBe(403);
    expect(await call(k, 'GET', '/version', k.token)).toBe(200);
    expect(await call(k, 'POST', '/converge/faults', adminToken, rule)).toBe(201);
    expect(await call(k, 'GET', '/version', k.token)).toBe(503);
    expect(await call(k, 'DELETE', '/converge/faults', adminToken)).toBe(200);
  }, 90_000);
});
