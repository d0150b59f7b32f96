/**
 * The website example's admission webhooks end to end: `converge dev` runs the operator (and its
 * webhook server) as a real process, the real kubectl writes Websites. Denials, defaults, warnings,
 * the CRD's CEL transition rule, and what the API server does when a webhook is down or slow
 * (configurations of our own, pointing at a stopped and at a silent server).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type Dev,
  startDev,
  startSilentServer,
  VALIDATING_WEBHOOK,
  WEBSITE_V1ALPHA1,
  website,
} from './support.ts';

type WebsiteJson = {
  metadata: { name: string; labels?: Record<string, string> };
  spec: { domain: string; replicas?: number; image?: string; content: string };
  status?: { url?: string };
};

let dev: Dev;
beforeAll(async () => {
  dev = await startDev();
});
afterAll(async () => {
  if (dev !== undefined) expect(await dev.stop(), dev.output()).toBe(0);
});

/** A ValidatingWebhookConfiguration for Websites labelled `website-admission=<label>`. */
function configuration(label: string, webhook: Record<string, unknown>): string {
  return JSON.stringify({
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingWebhookConfiguration',
    metadata: { name: `website-admission-${label}` },
    webhooks: [
      {
        name: `${label}.website-admission.converge.dev`,
        sideEffects: 'None',
        admissionReviewVersions: ['v1'],
        objectSelector: { matchLabels: { 'website-admission': label } },
        rules: [
          {
            operations: ['CREATE', 'UPDATE'],
            apiGroups: ['examples.converge.dev'],
            apiVersions: ['*'],
            resources: ['websites'],
          },
        ],
        ...webhook,
      },
    ],
  });
}

describe('the website webhooks under converge dev, with kubectl', () => {
  it('an invalid Website is refused with the validating webhook’s message', async () => {
    const result = await dev.kubectl(['apply', '-f', '-'], website('blog', { domain: 'my blog' }));
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      'Error from server (Forbidden): error when creating "STDIN": admission webhook ' +
        `"${VALIDATING_WEBHOOK}" denied the request: spec.domain "my blog" is not a valid domain name: ` +
        'its label "my blog" is not lowercase letters, digits and \'-\' starting and ending with a letter or digit ' +
        '(for example hello.example.com)\n',
    );
    expect((await dev.kubectl(['get', WEBSITE_V1ALPHA1, 'blog'])).stderr).toContain('NotFound');
  });

  it('a valid Website comes back with the defaults applied, and the operator serves them', async () => {
    const result = await dev.kubectl(
      ['apply', '-f', '-'],
      website('fresh', { domain: 'Fresh.Example.COM.' }),
    );
    expect(result).toMatchObject({
      code: 0,
      stdout: 'website.examples.converge.dev/fresh created\n',
      stderr: '',
    });
    const site = await dev.json<WebsiteJson>([WEBSITE_V1ALPHA1, 'fresh']);
    expect(site.spec).toEqual({
      domain: 'fresh.example.com',
      replicas: 1,
      image: 'nginx:1.27',
      content: '<h1>fresh</h1>',
    });
    await dev.ok(['wait', '--for=condition=Ready', '--timeout=60s', 'website/fresh']);
    expect((await dev.json<WebsiteJson>([WEBSITE_V1ALPHA1, 'fresh'])).status?.url).toBe(
      'http://fresh.example.com',
    );
    const replicas = await dev.ok(['get', 'deployment', 'fresh', '-o', 'jsonpath={.spec.replicas}']);
    expect(replicas).toBe('1');
  });

  it('a server-side dry run shows the defaults and the denials without storing anything', async () => {
    const preview = await dev.ok(
      ['apply', '--dry-run=server', '-o', 'json', '-f', '-'],
      website('preview', { domain: 'preview.example.com' }),
    );
    expect((JSON.parse(preview) as WebsiteJson).spec).toMatchObject({ replicas: 1, image: 'nginx:1.27' });
    expect((await dev.kubectl(['get', WEBSITE_V1ALPHA1, 'preview'])).stderr).toContain('NotFound');
    const refused = await dev.kubectl(
      ['apply', '--dry-run=server', '-f', '-'],
      website('preview', { domain: 'pre view' }),
    );
    expect(refused.stderr).toContain(
      `admission webhook "${VALIDATING_WEBHOOK}" denied the request: spec.domain "pre view" is not a valid domain name`,
    );
  });

  it('the validator’s warnings reach kubectl, and the write goes through', async () => {
    const result = await dev.kubectl(
      ['apply', '-f', '-'],
      website('quiet', { domain: 'quiet.example.com', replicas: 0, image: 'nginx:latest' }),
    );
    expect(result.stderr).toBe(
      'Warning: spec.replicas is 0: the Website serves nothing until it is scaled up\n' +
        'Warning: spec.image nginx:latest has no pinned tag: name a version (nginx:1.27) so that rollouts are deliberate\n',
    );
    expect(result.stdout).toBe('website.examples.converge.dev/quiet created\n');
  });

  it('the CRD’s CEL transition rule refuses a new domain with its messageExpression (oldSelf is the stored value)', async () => {
    const result = await dev.kubectl([
      'patch',
      WEBSITE_V1ALPHA1,
      'fresh',
      '--type=merge',
      '-p',
      '{"spec":{"domain":"moved.example.com"}}',
    ]);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      'The Website "fresh" is invalid: spec.domain: Forbidden: is immutable: it was fresh.example.com, ' +
        'create a new Website for moved.example.com\n',
    );
    // Other edits pass the rule (and the webhooks).
    await dev.ok(['patch', WEBSITE_V1ALPHA1, 'fresh', '--type=merge', '-p', '{"spec":{"replicas":2}}']);
    expect((await dev.json<WebsiteJson>([WEBSITE_V1ALPHA1, 'fresh'])).spec.replicas).toBe(2);
  });

  it('a webhook whose server is down: failurePolicy Fail refuses the write clearly, Ignore lets it through', async () => {
    const down = await startSilentServer();
    await down.close(); // its port now refuses connections
    const port = new URL(down.url).port;
    const clientConfig = { url: `${down.url}/validate`, caBundle: down.caBundle };
    await dev.ok(['apply', '-f', '-'], configuration('fail', { clientConfig, failurePolicy: 'Fail' }));
    await dev.ok(['apply', '-f', '-'], configuration('ignore', { clientConfig, failurePolicy: 'Ignore' }));

    const refused = await dev.kubectl(
      ['apply', '-f', '-'],
      website('down', { domain: 'down.example.com' }, { 'website-admission': 'fail' }),
    );
    expect(refused.code).toBe(1);
    expect(refused.stderr).toBe(
      'Error from server (InternalError): error when creating "STDIN": Internal error occurred: failed calling webhook ' +
        `"fail.website-admission.converge.dev": failed to call webhook: Post "${down.url}/validate?timeout=10s": ` +
        `dial tcp 127.0.0.1:${port}: connect: connection refused\n`,
    );
    const ignored = await dev.kubectl(
      ['apply', '-f', '-'],
      website('ignored', { domain: 'ignored.example.com' }, { 'website-admission': 'ignore' }),
    );
    expect(ignored).toMatchObject({ code: 0, stdout: 'website.examples.converge.dev/ignored created\n' });
    // The example's own webhooks still ran on it.
    expect((await dev.json<WebsiteJson>([WEBSITE_V1ALPHA1, 'ignored'])).spec.replicas).toBe(1);
  });

  it('a webhook slower than its timeoutSeconds fails the write with "context deadline exceeded"', async () => {
    const silent = await startSilentServer(); // accepts the review and never answers
    try {
      const clientConfig = { url: `${silent.url}/slow`, caBundle: silent.caBundle };
      await dev.ok(['apply', '-f', '-'], configuration('slow', { clientConfig, timeoutSeconds: 1 }));
      const started = Date.now();
      const result = await dev.kubectl(
        ['apply', '-f', '-'],
        website('slow', { domain: 'slow.example.com' }, { 'website-admission': 'slow' }),
      );
      expect(Date.now() - started).toBeGreaterThanOrEqual(1_000);
      expect(result.code).toBe(1);
      expect(result.stderr).toBe(
        'Error from server (InternalError): error when creating "STDIN": Internal error occurred: failed calling webhook ' +
          `"slow.website-admission.converge.dev": failed to call webhook: Post "${silent.url}/slow?timeout=1s": ` +
          'context deadline exceeded\n',
      );
    } finally {
      await silent.close();
    }
  });
});
