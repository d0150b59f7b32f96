/**
 * `converge why` finds a `converge run` operator through the record it writes: `converge run`
 * (against `converge serve`, with `--metrics-bind-address`) records its metrics address in
 * `.converge/operations.json` of its working directory while it runs, `converge why` there asks it
 * without `--address`, and once run has stopped the record is gone and `converge why` exits 1
 * saying how to start one. The operator is `./fixtures/why/operator.ts` (its ConfigMap default/x
 * fails, retried a minute later).
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ConvergeProcess, pollFor, spawnConverge, waitFor, within } from './processes.ts';

const OPERATOR = fileURLToPath(new URL('./fixtures/why/operator.ts', import.meta.url));

let dir: string;
let serve: ConvergeProcess;
let run: ConvergeProcess;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'converge-why-run-'));
  const kubeconfig = join(dir, 'kubeconfig');
  serve = spawnConverge(dir, ['serve', '--port', '0', '--kubeconfig', kubeconfig]);
  await waitFor(
    'the server',
    () => (serve.stdout().includes('serving Kubernetes API') ? true : undefined),
    serve.output,
  );
  run = spawnConverge(dir, [
    'run',
    OPERATOR,
    '--kubeconfig',
    kubeconfig,
    '--metrics-bind-address',
    '127.0.0.1:0',
  ]);
});

afterAll(async () => {
  for (const p of [run, serve])
    if (p !== undefined && p.child.exitCode === null) {
      p.child.kill('SIGKILL');
      await p.exited;
    }
  rmSync(dir, { recursive: true, force: true });
});

const record = (): string => join(dir, '.converge', 'operations.json');

/** Runs `converge why …args` as a real process in run's directory. */
async function why(...args: string[]): Promise<{ code: number | null; out: string; err: string }> {
  const p = spawnConverge(dir, ['why', ...args]);
  const exit = await within('converge why to exit', p.exited, p.output);
  return { code: exit.code, out: p.stdout(), err: p.stderr() };
}

describe('converge why with converge run', () => {
  it('run records its metrics address; why finds it there and answers; once run stops the record is gone and why exits 1', async () => {
    const metricsUrl = (
      await waitFor(
        'the operations line',
        () => /^converge: metrics at (\S+)\/metrics /m.exec(run.stdout()) ?? undefined,
        run.output,
      )
    )[1] as string;
    await waitFor('the record', () => (existsSync(record()) ? true : undefined), run.output);
    expect(JSON.parse(readFileSync(record(), 'utf8'))).toEqual({
      url: metricsUrl,
      pid: run.child.pid,
      command: 'run',
      since: expect.stringMatching(/^\d{4}-\d\d-\d\dT[\d:.]+Z$/),
    });

    // Until the first failure of default/x is in backoff (a minute: it stays there while why asks).
    await pollFor(
      'default/x in backoff',
      async () => {
        const doc = (await (await fetch(`${metricsUrl}/debug/keys?key=default/x`)).json()) as {
          controllers: { keys: { state: string }[] }[];
        };
        return doc.controllers.some((c) => c.keys.some((k) => k.state === 'backoff')) ? true : undefined;
      },
      run.output,
    );
    const asked = await why('configmap/x');
    expect({ code: asked.code, err: asked.err }).toEqual({ code: 0, err: '' });
    const lines = asked.out.split('\n');
    expect(lines[0]).toMatch(new RegExp(`^configmap default/x \\(asked ${metricsUrl} at \\d{4}-.*Z\\)$`));
    expect(lines[2]).toBe('controller configmap: backoff');
    expect(asked.out).toContain(
      '  last error:   cannot reconcile x: the template\\n"<b>" is missing (Error, at 2',
    );

    run.child.kill('SIGTERM');
    expect((await within('converge run to stop', run.exited, run.output)).code).toBe(0);
    expect(existsSync(record())).toBe(false);
    const gone = await why('configmap/x');
    expect({ code: gone.code, out: gone.out }).toEqual({ code: 1, out: '' });
    expect(gone.err).toMatch(
      /^converge: no operator to ask: no \.converge\/operations\.json here .*start one in this directory, or pass --address URL .*\(CONVERGE_ERR_CLI_OPERATOR_UNREACHABLE\)\n$/,
    );
  });
});
