import { Readable } from 'node:stream';
import { allowed, denied } from '@converge/runtime';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hubAndSpoke } from './conversion.ts';
import {
  admissionReview,
  type HttpAnswer,
  type RunningServer,
  responseOf,
  runServer,
  website,
} from './webhook-test-support.ts';

const LIMIT = 4096;
const ADMISSION = ['admission.k8s.io/v1', 'admission.k8s.io/v1beta1'];
const CONVERSION = ['apiextensions.k8s.io/v1', 'apiextensions.k8s.io/v1beta1'];

/** Whether a request has what an answer needs: JSON within the limit, a review of a served version with a uid. */
function answerable(path: string, contentType: string, text: string): boolean {
  if (!contentType.startsWith('application/json') || Buffer.byteLength(text) > LIMIT) return false;
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return false;
  }
  const isObject = (value: unknown): value is Record<string, unknown> =>
    typeof value === 'object' && value !== null && !Array.isArray(value);
  if (!isObject(body) || !isObject(body.request)) return false;
  const [versions, kind] =
    path === '/convert' ? [CONVERSION, 'ConversionReview'] : [ADMISSION, 'AdmissionReview'];
  const uid = body.request.uid;
  return (
    typeof body.apiVersion === 'string' &&
    versions.includes(body.apiVersion) &&
    body.kind === kind &&
    typeof uid === 'string' &&
    uid !== ''
  );
}

describe('bad input to the webhook server', () => {
  let running: RunningServer;
  const validated: unknown[] = [];

  beforeAll(async () => {
    running = await runServer(
      (server) => {
        server.validating('/validate', {
          validate(request) {
            validated.push(request.object);
            const name = request.object?.metadata?.name ?? request.oldObject?.metadata?.name;
            return name === 'forbidden' ? denied('no') : allowed();
          },
        });
        server.mutating('/mutate', {
          default(object) {
            (object.metadata as { labels?: Record<string, string> }).labels = { defaulted: 'true' };
          },
        });
        server.conversion(
          '/convert',
          hubAndSpoke({
            hub: 'example.com/v2',
            spokes: { 'example.com/v1': { toHub: (o) => o, fromHub: (o) => o } },
          }),
        );
      },
      { maxAdmissionBodyBytes: LIMIT, maxConversionBodyBytes: LIMIT },
    );
  });
  afterAll(() => running.stop());

  const expectStatus = (answer: HttpAnswer, code: number, message: RegExp) => {
    expect(answer.status).toBe(code);
    expect(answer.json).toMatchObject({ kind: 'Status', apiVersion: 'v1', status: 'Failure', code });
    expect((answer.json as { message: string }).message).toMatch(message);
  };

  it('answers 400 to malformed JSON and to an empty body', async () => {
    expectStatus(await running.post('/validate', '{"apiVersion": '), 400, /the body is not JSON/);
    expectStatus(await running.post('/validate', ''), 400, /the body is not JSON/);
  });

  it('answers 400 to a content type other than application/json', async () => {
    const body = JSON.stringify(admissionReview({ object: website() }));
    expectStatus(
      await running.post('/validate', body, { 'content-type': 'text/plain' }),
      400,
      /contentType=text\/plain/,
    );
    expectStatus(
      await running.post('/validate', body, { 'content-type': 'application/yaml' }),
      400,
      /expected application\/json/,
    );
    const withCharset = await running.post('/validate', body, {
      'content-type': 'application/json; charset=utf-8',
    });
    expect(responseOf(withCharset).allowed).toBe(true);
  });

  it('answers 400 to a review without uid, with a wrong apiVersion or kind, or without request', async () => {
    const review = admissionReview({ object: website() }) as { request: Record<string, unknown> };
    expectStatus(
      await running.post('/validate', { ...review, request: { ...review.request, uid: undefined } }),
      400,
      /request\.uid is missing/,
    );
    expectStatus(
      await running.post('/validate', { ...review, request: { ...review.request, uid: '' } }),
      400,
      /uid/,
    );
    expectStatus(
      await running.post('/validate', { ...review, apiVersion: 'admission.k8s.io/v2' }),
      400,
      /apiVersion/,
    );
    expectStatus(await running.post('/validate', { ...review, kind: 'ConversionReview' }), 400, /kind/);
    expectStatus(
      await running.post('/validate', { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview' }),
      400,
      /request/,
    );
    expectStatus(await running.post('/validate', [review]), 400, /not a JSON object/);
  });

  it('answers 413 to a body over the limit, declared or streamed, and keeps serving', async () => {
    const big = JSON.stringify(admissionReview({ object: { ...website(), padding: 'x'.repeat(LIMIT) } }));
    expectStatus(await running.post('/validate', big), 413, /larger than the limit of 4096 bytes/);
    expectStatus(await running.post('/validate', 'x'.repeat(3 * LIMIT)), 413, /larger than the limit/);
    const chunked = Readable.from(
      (function* () {
        for (let i = 0; i < 6; i++) yield Buffer.from('y'.repeat(1000));
      })(),
    );
    const { request } = await import('undici');
    const { Agent } = await import('undici');
    const agent = new Agent({ connect: { ca: running.ca } });
    try {
      const answer = await request(`${running.url}/validate`, {
        method: 'POST',
        dispatcher: agent,
        headers: { 'content-type': 'application/json' },
        body: chunked,
      });
      expect(answer.statusCode).toBe(413);
      await answer.body.dump();
    } finally {
      await agent.close();
    }
    expect(responseOf(await running.post('/validate', admissionReview({ object: website() }))).allowed).toBe(
      true,
    );
  });

  it('validates a DELETE with object: null, and denies a CREATE with object: null as a malformed review (uid echoed)', async () => {
    validated.length = 0;
    const del = await running.post(
      '/validate',
      admissionReview({
        uid: 'd',
        operation: 'DELETE',
        object: null,
        oldObject: { metadata: { name: 'forbidden' } },
      }),
    );
    expect(responseOf(del)).toMatchObject({ uid: 'd', allowed: false, status: { code: 403 } });
    expect(validated).toEqual([null]);
    const create = await running.post('/validate', admissionReview({ uid: 'c', object: null }));
    expect(responseOf(create)).toMatchObject({
      uid: 'c',
      allowed: false,
      status: {
        code: 400,
        reason: 'BadRequest',
        message: 'invalid AdmissionReview: request.object is required for CREATE',
      },
    });
  });

  it('names every wrong field of a review it can answer', async () => {
    const answer = await running.post(
      '/validate',
      admissionReview({ uid: 'w', operation: 'MERGE', object: [], dryRun: 'yes', userInfo: { groups: 'a' } }),
    );
    expect(responseOf(answer)).toMatchObject({
      uid: 'w',
      allowed: false,
      status: {
        code: 400,
        message:
          'invalid AdmissionReview: request.operation must be one of CREATE, UPDATE, DELETE, CONNECT; ' +
          'request.object must be an object or null; request.userInfo.groups must be a list of strings; ' +
          'request.dryRun must be a boolean; request.object is required for CREATE',
      },
    });
  });

  it('ignores unknown fields, as the API server decoders do', async () => {
    const review = admissionReview({ object: website(), somethingNew: { x: 1 } });
    const answer = await running.post('/validate', { ...review, extra: true });
    expect(responseOf(answer).allowed).toBe(true);
  });

  it('answers 404 to an unknown path and 405 to a method other than POST', async () => {
    expectStatus(
      await running.post('/nowhere', admissionReview({})),
      404,
      /no webhook is served at \/nowhere/,
    );
    const { request, Agent } = await import('undici');
    const agent = new Agent({ connect: { ca: running.ca } });
    try {
      const answer = await request(`${running.url}/validate`, { method: 'GET', dispatcher: agent });
      expect(answer.statusCode).toBe(405);
      expect(answer.headers.allow).toBe('POST');
      await answer.body.dump();
    } finally {
      await agent.close();
    }
  });

  it('never crashes or hangs on fuzzed requests: a 400 or 413 Status, or a well-formed answer with the uid echoed', async () => {
    const validReview = fc.record({
      path: fc.constantFrom('/validate', '/mutate'),
      body: fc.constant(admissionReview({ object: website() }) as unknown),
    });
    const validConversion = fc.record({
      path: fc.constant('/convert'),
      body: fc.constant({
        apiVersion: 'apiextensions.k8s.io/v1',
        kind: 'ConversionReview',
        request: {
          uid: 'c1',
          desiredAPIVersion: 'example.com/v2',
          objects: [{ ...website(), apiVersion: 'example.com/v1' }],
        },
      } as unknown),
    });
    /** A valid review with one field (at any depth) replaced by a random JSON value or removed. */
    const corrupted = fc
      .tuple(
        fc.oneof(validReview, validConversion),
        fc.array(fc.nat(), { minLength: 1, maxLength: 4 }),
        fc.option(fc.jsonValue({ maxDepth: 3 })),
      )
      .map(([{ path, body }, picks, replacement]) => {
        const copy = structuredClone(body) as Record<string, unknown>;
        let target: Record<string, unknown> = copy;
        for (const [i, pick] of picks.entries()) {
          const keys = Object.keys(target);
          if (keys.length === 0) break;
          const key = keys[pick % keys.length] as string;
          const value = target[key];
          if (i < picks.length - 1 && typeof value === 'object' && value !== null) {
            target = value as Record<string, unknown>;
            continue;
          }
          if (replacement === null) delete target[key];
          else target[key] = replacement;
          break;
        }
        return { path, body: copy as unknown };
      });
    const anyJson = fc.record({
      path: fc.constantFrom('/validate', '/mutate', '/convert'),
      body: fc.jsonValue({ maxDepth: 4 }),
    });
    const rawText = fc.record({
      path: fc.constantFrom('/validate', '/convert'),
      body: fc.oneof(
        fc.string({ maxLength: 200 }),
        fc.string({ minLength: LIMIT + 1, maxLength: 3 * LIMIT }),
      ),
    });
    const contentType = fc.oneof(
      { weight: 8, arbitrary: fc.constant('application/json') },
      {
        weight: 1,
        arbitrary: fc.constantFrom(
          'text/plain',
          'application/x-www-form-urlencoded',
          '',
          'application/json;charset=utf-8',
        ),
      },
    );
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(corrupted, anyJson, rawText, validReview),
        contentType,
        async ({ path, body }, type) => {
          const headers = { 'content-type': type };
          const text = typeof body === 'string' ? body : JSON.stringify(body);
          const answer = await running.post(path, text, headers);
          expect([200, 400, 413]).toContain(answer.status);
          expect(answer.status === 200, answer.text).toBe(answerable(path, type, text));
          expect(answer.json, answer.text).toBeDefined();
          if (answer.status !== 200) {
            expect(answer.json).toMatchObject({ kind: 'Status', code: answer.status });
            return;
          }
          // Answered: the envelope was well-formed, and the answer is in its version with its uid.
          const sent = body as { apiVersion: string; kind: string; request: { uid: string } };
          const versions = path === '/convert' ? CONVERSION : ADMISSION;
          expect(type.startsWith('application/json')).toBe(true);
          expect(versions).toContain(sent.apiVersion);
          const reply = answer.json as {
            apiVersion: string;
            kind: string;
            response: Record<string, unknown>;
          };
          expect(reply.apiVersion).toBe(sent.apiVersion);
          expect(reply.kind).toBe(sent.kind);
          expect(reply.response.uid).toBe(sent.request.uid);
          if (path === '/convert') {
            expect(['Success', 'Failure']).toContain((reply.response.result as { status: string }).status);
          } else {
            expect(typeof reply.response.allowed).toBe('boolean');
            if (reply.response.patch !== undefined) {
              const patch: unknown = JSON.parse(
                Buffer.from(String(reply.response.patch), 'base64').toString('utf8'),
              );
              expect(Array.isArray(patch)).toBe(true);
            }
          }
        },
      ),
      { numRuns: 300 },
    );
    expect(running.logger.records.filter((r) => r.message === 'Webhook request failed unexpectedly')).toEqual(
      [],
    );
    expect(responseOf(await running.post('/validate', admissionReview({ object: website() }))).allowed).toBe(
      true,
    );
  });
});
