/**
 * A ValidatingAdmissionPolicy over the website example's Websites, under `converge dev` as a real
 * process, with the real kubectl: one policy, a binding that denies and one that only warns. The
 * policy sees the object after the example's defaulting webhook.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Dev, startDev, WEBSITE_V1ALPHA1, website } from './support.ts';

const POLICY = 'website-limits.examples.converge.dev';

let dev: Dev;
beforeAll(async () => {
  dev = await startDev();
  await dev.ok(
    ['apply', '-f', '-'],
    JSON.stringify({
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicy',
      metadata: { name: POLICY },
      spec: {
        failurePolicy: 'Fail',
        matchConstraints: {
          resourceRules: [
            {
              apiGroups: ['examples.converge.dev'],
              apiVersions: ['*'],
              operations: ['CREATE', 'UPDATE'],
              resources: ['websites'],
            },
          ],
        },
        validations: [
          {
            expression: 'object.spec.replicas <= 5',
            messageExpression:
              "'a Website runs at most 5 replicas here, not ' + string(object.spec.replicas)",
          },
          { expression: "object.spec.image.startsWith('nginx:')" },
        ],
      },
    }),
  );
  for (const action of ['Deny', 'Warn']) {
    const label = action.toLowerCase();
    await dev.ok(
      ['apply', '-f', '-'],
      JSON.stringify({
        apiVersion: 'admissionregistration.k8s.io/v1',
        kind: 'ValidatingAdmissionPolicyBinding',
        metadata: { name: `website-limits-${label}.examples.converge.dev` },
        spec: {
          policyName: POLICY,
          validationActions: [action],
          matchResources: { objectSelector: { matchLabels: { policy: label } } },
        },
      }),
    );
  }
});
afterAll(async () => {
  if (dev !== undefined) expect(await dev.stop(), dev.output()).toBe(0);
});

describe('a ValidatingAdmissionPolicy on Websites, under converge dev, with kubectl', () => {
  it('Deny: a Website over the limit is refused with the policy’s message, as kubectl prints it', async () => {
    const result = await dev.kubectl(
      ['apply', '-f', '-'],
      website('big', { domain: 'big.example.com', replicas: 7 }, { policy: 'deny' }),
    );
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      `The websites "big" is invalid: : ValidatingAdmissionPolicy '${POLICY}' with binding ` +
        `'website-limits-deny.examples.converge.dev' denied request: a Website runs at most 5 replicas here, not 7\n`,
    );
    expect((await dev.kubectl(['get', WEBSITE_V1ALPHA1, 'big'])).stderr).toContain('NotFound');
  });

  it('Deny: the policy sees the defaulting webhook’s image and replicas (a Website without them passes)', async () => {
    const result = await dev.kubectl(
      ['apply', '-f', '-'],
      website('small', { domain: 'small.example.com' }, { policy: 'deny' }),
    );
    expect(result).toMatchObject({ code: 0, stderr: '' });
    const other = await dev.kubectl(
      ['apply', '-f', '-'],
      website('httpd', { domain: 'httpd.example.com', image: 'httpd:2.4' }, { policy: 'deny' }),
    );
    expect(other.stderr).toBe(
      `The websites "httpd" is invalid: : ValidatingAdmissionPolicy '${POLICY}' with binding ` +
        `'website-limits-deny.examples.converge.dev' denied request: failed expression: object.spec.image.startsWith('nginx:')\n`,
    );
  });

  it('Deny on update: scaling an admitted Website past the limit is refused', async () => {
    const result = await dev.kubectl([
      'patch',
      WEBSITE_V1ALPHA1,
      'small',
      '--type=merge',
      '-p',
      '{"spec":{"replicas":9}}',
    ]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('denied request: a Website runs at most 5 replicas here, not 9');
  });

  it('Warn: the same Website is admitted, and kubectl prints the policy’s warning', async () => {
    const result = await dev.kubectl(
      ['apply', '-f', '-'],
      website('loud', { domain: 'loud.example.com', replicas: 7 }, { policy: 'warn' }),
    );
    expect(result.stderr).toBe(
      `Warning: Validation failed for ValidatingAdmissionPolicy '${POLICY}' with binding ` +
        `'website-limits-warn.examples.converge.dev': a Website runs at most 5 replicas here, not 7\n`,
    );
    expect(result.stdout).toBe('website.examples.converge.dev/loud created\n');
    expect(await dev.ok(['get', WEBSITE_V1ALPHA1, 'loud', '-o', 'jsonpath={.spec.replicas}'])).toBe('7');
  });

  it('a Website neither binding selects is not checked', async () => {
    const result = await dev.kubectl(
      ['apply', '-f', '-'],
      website('free', { domain: 'free.example.com', replicas: 7 }),
    );
    expect(result).toMatchObject({ code: 0, stderr: '' });
  });
});
