import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KubeErrorCodes } from '../errors.ts';
import { hubAndSpoke } from './conversion.ts';
import { WebhookConversionError } from './errors.ts';
import { type RunningServer, runServer } from './webhook-test-support.ts';

/** v1: one domain and a size. */
interface WebsiteV1 {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; uid?: string };
  spec: { domain: string; size: number };
}
/** v2 (the hub): several domains and replicas. */
interface WebsiteV2 {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; uid?: string; annotations?: Record<string, string> };
  spec: { domains: string[]; replicas: number };
}
/** v3: replicas renamed again, domains joined. */
interface WebsiteV3 {
  apiVersion: string;
  kind: string;
  metadata: { name: string };
  spec: { hosts: string; scale: number };
}

const converter = hubAndSpoke<WebsiteV2>({
  hub: 'example.com/v2',
  spokes: {
    'example.com/v1': {
      toHub: (v1: WebsiteV1) => ({ ...v1, spec: { domains: [v1.spec.domain], replicas: v1.spec.size } }),
      fromHub(v2: WebsiteV2): WebsiteV1 {
        if (v2.spec.domains.length !== 1) throw new Error('v1 holds exactly one domain');
        return { ...v2, spec: { domain: v2.spec.domains[0] as string, size: v2.spec.replicas } };
      },
    },
    'example.com/v3': {
      toHub: (v3: WebsiteV3) => ({
        ...v3,
        spec: { domains: v3.spec.hosts === '' ? [] : v3.spec.hosts.split(','), replicas: v3.spec.scale },
      }),
      fromHub: (v2: WebsiteV2) => ({
        ...v2,
        spec: { hosts: v2.spec.domains.join(','), scale: v2.spec.replicas },
      }),
    },
  },
});

function v1(name: string, domain: string, size: number): WebsiteV1 {
  return {
    apiVersion: 'example.com/v1',
    kind: 'Website',
    metadata: { name, namespace: 'default', uid: `uid-${name}` },
    spec: { domain, size },
  };
}

function conversionReview(
  objects: unknown[],
  desiredAPIVersion: string,
  uid = 'conv-1',
  apiVersion = 'apiextensions.k8s.io/v1',
) {
  return { apiVersion, kind: 'ConversionReview', request: { uid, desiredAPIVersion, objects } };
}

describe('conversion webhooks over HTTPS', () => {
  let running: RunningServer;

  beforeAll(async () => {
    running = await runServer((server) => {
      server.conversion('/convert', converter);
      server.conversion('/drop-metadata', { convert: (object) => ({ spec: object.spec }) });
    });
  });
  afterAll(() => running.stop());

  async function convert(objects: unknown[], desired: string): Promise<unknown[]> {
    const answer = await running.post('/convert', conversionReview(objects, desired));
    const response = (
      answer.json as {
        response: { result: { status: string; message?: string }; convertedObjects: unknown[] };
      }
    ).response;
    if (response.result.status !== 'Success') throw new Error(response.result.message);
    return response.convertedObjects;
  }

  it('converts every object to the desired version through the hub, echoing the uid', async () => {
    const answer = await running.post(
      '/convert',
      conversionReview(
        [v1('a', 'a.example.com', 1), v1('b', 'b.example.com', 3)],
        'example.com/v3',
        'conv-7',
      ),
    );
    expect(answer.status).toBe(200);
    expect(answer.json).toEqual({
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'ConversionReview',
      response: {
        uid: 'conv-7',
        result: { metadata: {}, status: 'Success' },
        convertedObjects: [
          {
            apiVersion: 'example.com/v3',
            kind: 'Website',
            metadata: { name: 'a', namespace: 'default', uid: 'uid-a' },
            spec: { hosts: 'a.example.com', scale: 1 },
          },
          {
            apiVersion: 'example.com/v3',
            kind: 'Website',
            metadata: { name: 'b', namespace: 'default', uid: 'uid-b' },
            spec: { hosts: 'b.example.com', scale: 3 },
          },
        ],
      },
    });
  });

  it('round-trips spoke → hub → spoke and spoke → other spoke → spoke unchanged', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.stringMatching(/^[a-z0-9][a-z0-9.-]{0,20}$/),
        fc.nat(100),
        fc.constantFrom('example.com/v2', 'example.com/v3'),
        async (domain, size, via) => {
          const original = v1('site', domain, size);
          const there = await convert([original], via);
          const back = await convert(there, 'example.com/v1');
          expect(back).toEqual([original]);
        },
      ),
      { numRuns: 25 },
    );
  });

  it('passes objects already of the desired version through unchanged, among converted ones', async () => {
    const hub: WebsiteV2 = {
      apiVersion: 'example.com/v2',
      kind: 'Website',
      metadata: { name: 'h', annotations: { keep: 'me' } },
      spec: { domains: ['x', 'y'], replicas: 2 },
    };
    expect(await convert([hub, v1('s', 's', 1)], 'example.com/v2')).toEqual([
      hub,
      { ...v1('s', 's', 1), apiVersion: 'example.com/v2', spec: { domains: ['s'], replicas: 1 } },
    ]);
  });

  it('answers Failure with the message when a conversion throws or a version is unknown', async () => {
    const twoDomains = {
      ...v1('two', 'x', 1),
      apiVersion: 'example.com/v3',
      spec: { hosts: 'a,b', scale: 1 },
    };
    const answer = await running.post('/convert', conversionReview([twoDomains], 'example.com/v1', 'conv-f'));
    expect(answer.json).toEqual({
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'ConversionReview',
      response: {
        uid: 'conv-f',
        result: {
          metadata: {},
          status: 'Failure',
          message:
            'cannot convert Website "default/two" from example.com/v3 to example.com/v1: v1 holds exactly one domain',
        },
      },
    });
    const unknown = await running.post('/convert', conversionReview([v1('a', 'a', 1)], 'example.com/v9'));
    expect(unknown.json).toMatchObject({
      response: {
        result: {
          status: 'Failure',
          message:
            'cannot convert Website "default/a" from example.com/v1 to example.com/v9: example.com/v9 is neither ' +
            'the hub (example.com/v2) nor a spoke (example.com/v1, example.com/v3)',
        },
      },
    });
    const logged = running.logger.records.find((r) => r.message === 'Conversion failed');
    expect(logged?.fields.code).toBe(KubeErrorCodes.WEBHOOK_CONVERSION_FAILED);
  });

  it('answers Failure for an object without apiVersion and kind, and for a missing desiredAPIVersion', async () => {
    const bad = await running.post('/convert', conversionReview([{ metadata: {} }], 'example.com/v2'));
    expect(bad.json).toMatchObject({
      response: {
        uid: 'conv-1',
        result: { status: 'Failure', message: 'request.objects[0] has no string apiVersion and kind' },
      },
    });
    const noDesired = await running.post('/convert', {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'ConversionReview',
      request: { uid: 'u', objects: [] },
    });
    expect(noDesired.json).toMatchObject({ response: { uid: 'u', result: { status: 'Failure' } } });
  });

  it('stamps apiVersion and kind on results, and keeps the metadata when a converter drops it', async () => {
    const answer = await running.post(
      '/drop-metadata',
      conversionReview([v1('m', 'm', 1)], 'example.com/v2'),
    );
    expect(answer.json).toMatchObject({
      response: {
        convertedObjects: [
          {
            apiVersion: 'example.com/v2',
            kind: 'Website',
            metadata: { name: 'm', namespace: 'default', uid: 'uid-m' },
            spec: { domain: 'm', size: 1 },
          },
        ],
      },
    });
  });

  it('answers an apiextensions.k8s.io/v1beta1 review in v1beta1', async () => {
    const answer = await running.post(
      '/convert',
      conversionReview([v1('a', 'a', 1)], 'example.com/v2', 'beta', 'apiextensions.k8s.io/v1beta1'),
    );
    expect(answer.json).toMatchObject({
      apiVersion: 'apiextensions.k8s.io/v1beta1',
      kind: 'ConversionReview',
      response: { uid: 'beta', result: { status: 'Success' } },
    });
  });

  it('answers 400 to a review without request or uid', async () => {
    const answer = await running.post('/convert', {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'ConversionReview',
    });
    expect(answer.status).toBe(400);
    expect(answer.json).toMatchObject({ kind: 'Status', code: 400, reason: 'BadRequest' });
  });
});

describe('hubAndSpoke', () => {
  it('refuses a hub that is also a spoke', () => {
    const spoke = { toHub: (o: never) => o, fromHub: (o: never) => o };
    expect(() => hubAndSpoke({ hub: 'x/v1', spokes: { 'x/v1': spoke } })).toThrow(WebhookConversionError);
  });
});
