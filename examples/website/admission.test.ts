/**
 * The Website's admission handlers as plain functions: no server, no API server. What they answer
 * here is what `kubectl apply` shows (test/website-admission/ checks that end to end).
 */
import type { AdmissionOperation, AdmissionRequest } from '@converge/runtime';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DEFAULT_IMAGE, defaultWebsite, domainProblem, validateWebsite } from './admission.ts';
import type { Website } from './types.ts';

const site = (spec: Partial<Website['spec']>): Website => ({
  apiVersion: 'examples.converge.dev/v1alpha1',
  kind: 'Website',
  metadata: { name: 'home', namespace: 'default' },
  spec: { domain: 'home.example.com', content: '<h1>home</h1>', ...spec },
});

function request(operation: AdmissionOperation, object: Website | null, oldObject: Website | null = null) {
  const kind = { group: 'examples.converge.dev', version: 'v1alpha1', kind: 'Website' };
  const resource = { group: 'examples.converge.dev', version: 'v1alpha1', resource: 'websites' };
  return {
    uid: 'u1',
    reviewVersion: 'admission.k8s.io/v1',
    operation,
    kind,
    resource,
    subResource: '',
    requestKind: kind,
    requestResource: resource,
    requestSubResource: '',
    name: 'home',
    namespace: 'default',
    userInfo: { username: 'admin', uid: '', groups: [], extra: {} },
    object,
    oldObject,
    dryRun: false,
    options: null,
    signal: new AbortController().signal,
  } satisfies AdmissionRequest<Website>;
}

const validate = (object: Website, operation: AdmissionOperation = 'CREATE') =>
  validateWebsite.validate(request(operation, object));
const defaulted = (object: Website, operation: AdmissionOperation = 'CREATE') =>
  defaultWebsite.default(
    structuredClone(object),
    request(operation, object, operation === 'UPDATE' ? object : null),
  );

describe('defaultWebsite', () => {
  it('sets spec.replicas to 1 and spec.image to nginx:1.27 when they are unset', () => {
    expect(defaulted(site({}))).toEqual(site({ replicas: 1, image: DEFAULT_IMAGE }));
  });

  it('keeps what the user set, replicas 0 included', () => {
    const mine = site({ replicas: 0, image: 'httpd:2.4' });
    expect(defaulted(mine)).toEqual(mine);
  });

  it('lowercases the domain and drops a trailing dot on CREATE, never on UPDATE (it is immutable)', () => {
    expect(defaulted(site({ domain: 'Home.Example.COM.' }))).toMatchObject({
      spec: { domain: 'home.example.com' },
    });
    expect(defaulted(site({ domain: 'Home.Example.COM.' }), 'UPDATE')).toMatchObject({
      spec: { domain: 'Home.Example.COM.', replicas: 1, image: DEFAULT_IMAGE },
    });
  });

  it('leaves a spec that is not an object for the schema validation to refuse, and never throws', () => {
    for (const spec of ['x', 3, null, ['a']]) {
      const object = { ...site({}), spec } as unknown as Website;
      expect(defaulted(object)).toEqual(object);
    }
    fc.assert(
      fc.property(fc.jsonValue(), (spec) => {
        const object = { ...site({}), spec } as unknown as Website;
        expect(() => defaulted(object)).not.toThrow();
      }),
    );
  });
});

describe('validateWebsite', () => {
  it('admits a well-formed Website without warnings', async () => {
    expect(await validate(site({ replicas: 2, image: 'nginx:1.27' }))).toMatchObject({
      allowed: true,
      warnings: [],
    });
  });

  it.each([
    [
      'my blog',
      'its label "my blog" is not lowercase letters, digits and \'-\' starting and ending with a letter or digit',
    ],
    [
      'Home.example.com',
      'its label "Home" is not lowercase letters, digits and \'-\' starting and ending with a letter or digit',
    ],
    [
      '-x.example.com',
      'its label "-x" is not lowercase letters, digits and \'-\' starting and ending with a letter or digit',
    ],
    ['a..b', 'it has an empty label (two dots in a row, or a dot at an end)'],
    ['', 'it is empty'],
    [`${'a'.repeat(64)}.com`, 'its label "aaaaaaaaaaaaaaaa"… is longer than 63 characters'],
    [`${'abcdefgh.'.repeat(28)}com`, 'it has 255 characters, at most 253 are allowed'],
  ])('refuses the domain %j with a message saying why', async (domain, why) => {
    const answer = await validate(site({ domain }));
    expect(answer.allowed).toBe(false);
    expect(answer.status).toEqual({
      code: 403,
      reason: 'Forbidden',
      message: `spec.domain ${JSON.stringify(domain)} is not a valid domain name: ${why} (for example hello.example.com)`,
    });
  });

  it('refuses a domain that is not a string', async () => {
    const answer = await validate(site({ domain: 42 as unknown as string }));
    expect(answer.status?.message).toBe(
      'spec.domain 42 is not a valid domain name: it is not a string (for example hello.example.com)',
    );
  });

  it('accepts every RFC 1123 subdomain, and domainProblem agrees with kube’s regular expression', () => {
    const kube = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
    const label = fc.stringMatching(/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/);
    fc.assert(
      fc.property(fc.array(label, { minLength: 1, maxLength: 4 }), (labels) => {
        expect(domainProblem(labels.join('.'))).toBeUndefined();
      }),
    );
    fc.assert(
      fc.property(fc.string({ maxLength: 40 }), (domain) => {
        const labelsFit = domain.split('.').every((l) => l.length <= 63);
        expect(domainProblem(domain) === undefined).toBe(kube.test(domain) && labelsFit);
      }),
      { numRuns: 500 },
    );
  });

  it('warns about 0 replicas and about an image without a pinned tag, and still admits', async () => {
    expect(await validate(site({ replicas: 0, image: 'nginx' }))).toMatchObject({
      allowed: true,
      warnings: [
        'spec.replicas is 0: the Website serves nothing until it is scaled up',
        'spec.image nginx has no pinned tag: name a version (nginx:1.27) so that rollouts are deliberate',
      ],
    });
    for (const image of ['nginx:latest', 'registry:5000/nginx']) {
      expect((await validate(site({ image }))).warnings).toHaveLength(1);
    }
    for (const image of ['registry:5000/nginx:1.27', 'nginx@sha256:0123']) {
      expect((await validate(site({ image }))).warnings).toEqual([]);
    }
  });

  it('checks a changed domain on UPDATE, not one kept from the stored object, and admits every DELETE', async () => {
    const update = (from: string, to: string) =>
      validateWebsite.validate(request('UPDATE', site({ domain: to }), site({ domain: from })));
    expect((await update('home.example.com', 'no way')).allowed).toBe(false);
    // Stored before the webhook existed: its finalizer can still be removed.
    expect((await update('no way', 'no way')).allowed).toBe(true);
    const deletion = await validateWebsite.validate(request('DELETE', null, site({ domain: 'no way' })));
    expect(deletion.allowed).toBe(true);
  });

  it('answers any spec, however malformed, with an admission result (never throws)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.jsonValue(), async (spec) => {
        const answer = await validate({ ...site({}), spec } as unknown as Website);
        expect(typeof answer.allowed).toBe('boolean');
      }),
    );
  });
});
