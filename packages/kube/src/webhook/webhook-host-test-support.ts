/**
 * Test support (not part of the package's API): one conformance suite for every `WebhookHost`
 * (`WebhookServer`, `ManagedWebhooks`, converge dev's host), run by each implementation's tests:
 * what is registered before and after `start` is served over HTTPS, `start` resolves once its
 * signal aborts, and the host needs no leadership.
 *
 * @module
 */
import {
  allowed,
  type Converter,
  type Defaulter,
  denied,
  type KubeObject,
  type Validator,
  type WebhookHost,
} from '@converge/runtime';
import { Agent, request } from 'undici';
import { describe, expect, it } from 'vitest';

/** A host to test, with what a client needs to reach it. */
export interface HostUnderTest {
  readonly host: WebhookHost;
  /** Resolves with the bound port once the host serves (after `start` was called). */
  port(): Promise<number>;
  /** The CA to trust (PEM), once serving. */
  ca(): string;
  /** The TLS server name to ask for (the certificate's name). Default `127.0.0.1`'s. */
  readonly servername?: string;
  /** Called after the host stopped. */
  cleanup?(): Promise<void>;
}

const validator: Validator<KubeObject> = {
  validate: ({ object }) => (object?.metadata.labels?.bad === 'yes' ? denied('bad says yes') : allowed()),
};
const defaulter: Defaulter<KubeObject> = {
  default: (object) => ({ ...object, metadata: { ...object.metadata, labels: { defaulted: 'yes' } } }),
};
const converter: Converter = { convert: (object, desired) => ({ ...object, apiVersion: desired }) };

function admissionReview(uid: string, labels: Record<string, string>): unknown {
  const kind = { group: 'example.com', version: 'v1', kind: 'Widget' };
  return {
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid,
      kind,
      resource: { group: 'example.com', version: 'v1', resource: 'widgets' },
      operation: 'CREATE',
      name: 'w',
      namespace: 'default',
      userInfo: { username: 'test' },
      object: { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w', labels } },
      oldObject: null,
      dryRun: false,
    },
  };
}

async function post(under: HostUnderTest, path: string, body: unknown): Promise<Record<string, unknown>> {
  const port = await under.port();
  const agent = new Agent({
    connect: { ca: under.ca(), ...(under.servername === undefined ? {} : { servername: under.servername }) },
  });
  try {
    const answer = await request(`https://127.0.0.1:${port}${path}`, {
      method: 'POST',
      dispatcher: agent,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    expect(answer.statusCode).toBe(200);
    return (await answer.body.json()) as Record<string, unknown>;
  } finally {
    await agent.close();
  }
}

/** Registers the conformance tests of a `WebhookHost` made by `make`. */
export function webhookHostSuite(name: string, make: () => Promise<HostUnderTest> | HostUnderTest): void {
  describe(`${name} is a WebhookHost`, () => {
    it('serves what is registered before and after start, needs no leadership, and stops on its signal', async () => {
      const under = await make();
      const { host } = under;
      expect(host.needLeaderElection).toBe(false);
      host.validating('/validate', validator, { sideEffects: 'None' });
      host.mutating('/mutate', defaulter);
      const stop = new AbortController();
      let stopped = false;
      const running = host.start(stop.signal).then(() => {
        stopped = true;
      });
      try {
        const denial = await post(under, '/validate', admissionReview('u1', { bad: 'yes' }));
        expect(denial).toMatchObject({
          response: { uid: 'u1', allowed: false, status: { message: 'bad says yes' } },
        });
        const patched = await post(under, '/mutate', admissionReview('u2', {}));
        expect(patched).toMatchObject({ response: { uid: 'u2', allowed: true, patchType: 'JSONPatch' } });
        // Registered while serving.
        host.conversion('/convert', converter);
        const converted = await post(under, '/convert', {
          apiVersion: 'apiextensions.k8s.io/v1',
          kind: 'ConversionReview',
          request: {
            uid: 'u3',
            desiredAPIVersion: 'example.com/v2',
            objects: [{ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' } }],
          },
        });
        expect(converted).toMatchObject({
          response: {
            uid: 'u3',
            result: { status: 'Success' },
            convertedObjects: [{ apiVersion: 'example.com/v2' }],
          },
        });
        expect(stopped).toBe(false);
      } finally {
        stop.abort();
        await running;
        await under.cleanup?.();
      }
      expect(stopped).toBe(true);
    }, 30_000);
  });
}
