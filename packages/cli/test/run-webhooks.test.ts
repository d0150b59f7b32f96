/**
 * `converge run` serves its modules' webhooks with controller-runtime's flags: certificates from
 * `--webhook-cert-dir` (tls.crt, tls.key), `--webhook-port`; the API server (here `converge serve`,
 * configured by hand as a cluster would be) calls them.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { type AddressInfo, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { generateWebhookCertificates } from '@converge/kube';
import { afterEach, describe, expect, it } from 'vitest';
import { parseCommand } from '../src/index.ts';
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

/** A port nothing listens on right now. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('converge run webhook flags', () => {
  it('parses --webhook-port and --webhook-cert-dir, and refuses a bad port', () => {
    expect(parseCommand(['run', 'op.ts'])).toMatchObject({
      webhookPort: undefined,
      webhookCertDir: undefined,
    });
    expect(
      parseCommand(['run', 'op.ts', '--webhook-port', '8443', '--webhook-cert-dir', '/certs']),
    ).toMatchObject({
      webhookPort: 8443,
      webhookCertDir: '/certs',
    });
    expect(() => parseCommand(['run', 'op.ts', '--webhook-port', 'x'])).toThrow(
      'converge run: --webhook-port must be a port number (0-65535), got "x"',
    );
    expect(() => parseCommand(['run', 'op.ts', '--webhook-port', '65536'])).toThrow(/--webhook-port/);
    expect(parseCommand(['run', 'op.ts', '--webhook-service', 'web/hooks:8443'])).toMatchObject({
      webhookService: { namespace: 'web', name: 'hooks', port: 8443 },
      webhookSecret: undefined,
    });
    expect(
      parseCommand(['run', 'op.ts', '--webhook-service', 'web/hooks', '--webhook-secret', 'certs']),
    ).toMatchObject({
      webhookService: { namespace: 'web', name: 'hooks' },
      webhookSecret: 'certs',
    });
    for (const bad of ['hooks', 'web/Hooks', 'web/hooks:0', 'web/hooks:x', '/hooks']) {
      expect(() => parseCommand(['run', 'op.ts', '--webhook-service', bad])).toThrow(
        `converge run: --webhook-service must be NAMESPACE/NAME[:PORT], got ${JSON.stringify(bad)}`,
      );
    }
    expect(() =>
      parseCommand(['run', 'op.ts', '--webhook-service', 'web/hooks', '--webhook-cert-dir', '/c']),
    ).toThrow('--webhook-service (managed certificates) and --webhook-cert-dir exclude each other');
    expect(() => parseCommand(['run', 'op.ts', '--webhook-secret', 's'])).toThrow(
      '--webhook-secret is only used with --webhook-service',
    );
  });

  it('serves the webhooks with the certificate files, and warns when registered webhooks are not served', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'converge-run-webhooks-'));
    dirs.push(dir);
    const certs = await generateWebhookCertificates({ hosts: ['127.0.0.1'] });
    writeFileSync(join(dir, 'tls.crt'), certs.cert);
    writeFileSync(join(dir, 'tls.key'), certs.key);
    const start = (args: readonly string[]): ConvergeProcess => {
      const p = spawnConverge(dir, args);
      processes.push(p);
      return p;
    };
    const printed = (p: ConvergeProcess, text: string): Promise<string> =>
      waitFor(
        JSON.stringify(text),
        () =>
          p
            .output()
            .split('\n')
            .find((l) => l.includes(text)),
        p.output,
      );
    const kubeconfig = join(dir, '.converge', 'kubeconfig');
    const kubectl = async (args: readonly string[], input: string) => {
      const run = exec('kubectl', ['--kubeconfig', kubeconfig, '--request-timeout=20s', ...args], {
        timeout: 30_000,
        env: { ...process.env, KUBECACHEDIR: join(dir, 'kube-cache') },
      });
      run.child.stdin?.end(input);
      return run.then(
        ({ stderr }) => ({ code: 0, stderr }),
        (e: { stderr?: string }) => ({ code: 1, stderr: e.stderr ?? '' }),
      );
    };

    const serve = start(['serve', '--port', '0']);
    await printed(serve, 'converge: serving Kubernetes API');
    const crd = fileURLToPath(new URL('fixtures/webhooks/manifests/crd.yaml', import.meta.url));
    await exec('kubectl', ['--kubeconfig', kubeconfig, 'apply', '-f', crd]);

    const unserved = start(['run', operator, '--kubeconfig', kubeconfig]);
    await printed(
      unserved,
      'converge: WARNING: webhooks registered but not served (give --webhook-port or --webhook-cert-dir)',
    );
    unserved.child.kill('SIGTERM');
    await within('run to exit', unserved.exited, unserved.output);

    const run = start([
      'run',
      operator,
      '--kubeconfig',
      kubeconfig,
      '--webhook-port',
      '0',
      '--webhook-cert-dir',
      dir,
    ]);
    await printed(
      run,
      `converge: serving webhooks on port 0 (certificates from ${dir}): mutating mwidget-v1.webhooks.example.com`,
    );
    const logged = await printed(run, '"msg":"Serving webhooks"');
    const { url } = JSON.parse(logged) as { url: string };
    const configuration = {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingWebhookConfiguration',
      metadata: { name: 'widgets' },
      webhooks: [
        {
          name: 'vwidget-v1.webhooks.example.com',
          clientConfig: {
            url: `${url.replace('localhost', '127.0.0.1')}/validate-webhooks-example-com-v1-widget`,
            caBundle: Buffer.from(certs.caCert).toString('base64'),
          },
          rules: [
            {
              operations: ['CREATE'],
              apiGroups: ['webhooks.example.com'],
              apiVersions: ['v1'],
              resources: ['widgets'],
            },
          ],
          sideEffects: 'None',
          admissionReviewVersions: ['v1'],
        },
      ],
    };
    expect((await kubectl(['apply', '-f', '-'], JSON.stringify(configuration))).code).toBe(0);
    const widget = {
      apiVersion: 'webhooks.example.com/v1',
      kind: 'Widget',
      metadata: { name: 'big', namespace: 'default' },
      spec: { size: 12 },
    };
    expect(await kubectl(['apply', '-f', '-'], JSON.stringify(widget))).toMatchObject({
      code: 1,
      stderr: expect.stringContaining(
        'admission webhook "vwidget-v1.webhooks.example.com" denied the request: spec.size 12 is more than 10',
      ),
    });
    run.child.kill('SIGTERM');
    expect((await within('run to exit', run.exited, run.output)).code).toBe(0);

    // Managed mode: the API server maps the Service to 127.0.0.1:PORT, so serve on that port.
    expect((await kubectl(['delete', 'validatingwebhookconfiguration', 'widgets'], '')).code).toBe(0);
    const port = await freePort();
    const managed = start([
      'run',
      operator,
      '--kubeconfig',
      kubeconfig,
      '--webhook-port',
      String(port),
      '--webhook-service',
      `default/widgets:${port}`,
    ]);
    await printed(
      managed,
      `converge: serving webhooks on port ${port} for service default/widgets (certificates in secret widgets-webhook-certs, configurations managed): mutating mwidget-v1.webhooks.example.com`,
    );
    await printed(managed, '"msg":"Applied webhook configurations"');
    expect(await kubectl(['apply', '-f', '-'], JSON.stringify(widget))).toMatchObject({
      code: 1,
      stderr: expect.stringContaining(
        'admission webhook "vwidget-v1.webhooks.example.com" denied the request',
      ),
    });
    const secret = await exec('kubectl', [
      '--kubeconfig',
      kubeconfig,
      'get',
      'secret',
      'widgets-webhook-certs',
      '-o',
      'jsonpath={.type}',
    ]);
    expect(secret.stdout).toBe('kubernetes.io/tls');
    managed.child.kill('SIGTERM');
    expect((await within('run to exit', managed.exited, managed.output)).code).toBe(0);
    serve.child.kill('SIGTERM');
    await within('serve to exit', serve.exited, serve.output);
  }, 120_000);
});
