/**
 * `converge dev` with an operator module that registers webhooks: the embedded API server calls
 * them (real kubectl sees the denial and the default), and no webhook configuration outlives the
 * process — one left by a killed dev is replaced by the next, one of a stopped dev is gone.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { type ConvergeProcess, spawnConverge, waitFor, within } from './processes.ts';

const exec = promisify(execFile);
const operator = fileURLToPath(new URL('fixtures/webhooks/operator.ts', import.meta.url));
const processes: ConvergeProcess[] = [];
const dirs: string[] = [];

afterEach(async () => {
  for (const p of processes.splice(0)) {
    if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
    await p.exited;
  }
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function converge(dir: string, args: readonly string[]): ConvergeProcess {
  const p = spawnConverge(dir, [...args, '--port', '0', '--data-dir', join(dir, 'data')]);
  processes.push(p);
  return p;
}

const printed = (p: ConvergeProcess, line: string): Promise<string> =>
  waitFor(
    JSON.stringify(line),
    () =>
      p
        .output()
        .split('\n')
        .find((l) => l.includes(line)),
    p.output,
  );

/** Runs kubectl; resolves with its exit code and output instead of throwing. */
async function kubectl(
  dir: string,
  args: readonly string[],
  input?: string,
): Promise<{ code: number; stdout: string; stderr: string }> {
  const run = exec(
    'kubectl',
    ['--kubeconfig', join(dir, '.converge', 'kubeconfig'), '--request-timeout=20s', ...args],
    {
      timeout: 30_000,
      env: { ...process.env, KUBECACHEDIR: join(dir, 'kube-cache') },
    },
  );
  if (input !== undefined) run.child.stdin?.end(input);
  try {
    const { stdout, stderr } = await run;
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : 1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

const widget = (name: string, size: number | undefined): string =>
  JSON.stringify({
    apiVersion: 'webhooks.example.com/v1',
    kind: 'Widget',
    metadata: { name, namespace: 'default' },
    spec: size === undefined ? {} : { size },
  });

describe('converge dev serves and registers the webhooks of its operator modules', () => {
  it("denies a bad object through kubectl, defaults a good one, replaces a killed run's configurations and removes them on stop", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'converge-dev-webhooks-'));
    dirs.push(dir);

    // A first dev, killed: its configurations (failurePolicy Fail) stay in the data dir, pointing at a dead port.
    const first = converge(dir, ['dev', operator]);
    await printed(first, 'converge: serving webhooks at');
    first.child.kill('SIGKILL');
    await within('the killed dev to exit', first.exited, first.output);

    // A dev whose module registers no webhook removes them at start: the write goes through.
    writeFileSync(join(dir, 'none.mjs'), 'export default () => {};\n');
    const plain = converge(dir, ['dev', './none.mjs']);
    await printed(plain, 'converge: running operator ./none.mjs');
    expect(await kubectl(dir, ['apply', '-f', '-'], widget('unchecked', 11))).toMatchObject({ code: 0 });
    expect(plain.output()).not.toContain('serving webhooks');
    plain.child.kill('SIGINT');
    expect((await within('dev to exit', plain.exited, plain.output)).code).toBe(0);

    const dev = converge(dir, ['dev', operator]);
    const line = await printed(dev, 'converge: serving webhooks at');
    expect(line).toMatch(
      /^converge: serving webhooks at https:\/\/127\.0\.0\.1:\d+: mutating mwidget-v1\.webhooks\.example\.com \(\/mutate-webhooks-example-com-v1-widget\), validating vwidget-v1\.webhooks\.example\.com \(\/validate-webhooks-example-com-v1-widget\)$/,
    );

    const bad = await kubectl(dir, ['apply', '-f', '-'], widget('big', 11));
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain(
      'admission webhook "vwidget-v1.webhooks.example.com" denied the request: spec.size 11 is more than 10',
    );
    const good = await kubectl(dir, ['apply', '-f', '-'], widget('small', undefined));
    expect(good).toMatchObject({ code: 0 });
    const stored = await kubectl(dir, [
      'get',
      'widget',
      'small',
      '-n',
      'default',
      '-o',
      'jsonpath={.spec.size}',
    ]);
    expect(stored.stdout).toBe('1');
    const configurations = await kubectl(dir, [
      'get',
      'validatingwebhookconfigurations,mutatingwebhookconfigurations',
      '-l',
      'app.kubernetes.io/managed-by=converge-dev',
      '-o',
      'name',
    ]);
    expect(configurations.stdout.trim().split('\n').sort()).toEqual([
      'mutatingwebhookconfiguration.admissionregistration.k8s.io/converge-dev-webhooks',
      'validatingwebhookconfiguration.admissionregistration.k8s.io/converge-dev-webhooks',
    ]);

    dev.child.kill('SIGINT');
    expect((await within('dev to exit', dev.exited, dev.output)).code).toBe(0);

    // The same data dir served without the operator: nothing calls a webhook that is gone.
    const serve = converge(dir, ['serve']);
    await printed(serve, 'converge: serving Kubernetes API');
    const left = await kubectl(dir, [
      'get',
      'validatingwebhookconfigurations,mutatingwebhookconfigurations',
      '-o',
      'name',
    ]);
    expect(left).toMatchObject({ code: 0, stdout: '' });
    expect((await kubectl(dir, ['apply', '-f', '-'], widget('big', 11))).code).toBe(0);
    serve.child.kill('SIGTERM');
    await within('serve to exit', serve.exited, serve.output);
  }, 120_000);

  it('serves and configures a webhook registered after the manager started', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'converge-dev-webhooks-'));
    dirs.push(dir);
    const late = fileURLToPath(new URL('fixtures/webhooks/late.ts', import.meta.url));
    const dev = converge(dir, ['dev', late]);
    const line = await printed(dev, 'converge: serving webhooks at');
    expect(line).toMatch(
      /: validating vwidget-v1\.webhooks\.example\.com \(\/validate-webhooks-example-com-v1-widget\)$/,
    );
    const object = {
      apiVersion: 'webhooks.example.com/v1',
      kind: 'Widget',
      metadata: { name: 'late', namespace: 'default', labels: { late: 'no' } },
    };
    const denied = await kubectl(dir, ['apply', '-f', '-'], JSON.stringify(object));
    expect(denied.stderr).toContain(
      'admission webhook "vwidget-v1.webhooks.example.com" denied the request: late says no',
    );
    dev.child.kill('SIGINT');
    expect((await within('dev to exit', dev.exited, dev.output)).code).toBe(0);
  });
});
