import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cpuMs } from '../cpu-test-support.ts';
import { REFUSED_BODY_DRAIN_BYTES } from './body.ts';
import { checkJsonShape, checkYamlKeys, LIMITS, LimitErrorCodes } from './limits.ts';
import { issueToken, tokenKeys } from './service-account-token.ts';
import { startTestServer, type TestServer } from './test-support.ts';

let t: TestServer;
const CM = '/api/v1/namespaces/default/configmaps';

beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => {
  await t.close();
});

/** What a raw TCP client read until the server closed, and the socket error it met, if any. */
interface RawExchange {
  readonly text: string;
  readonly error: string | undefined;
}

/**
 * Sends `head` on a fresh connection, then what `send` writes, reading everything the server
 * answers until the connection closes (no HTTP client in between: it must see what goes on the wire).
 */
function exchange(head: string, send: (socket: Socket) => void = () => {}): Promise<RawExchange> {
  const url = new URL(t.url);
  return new Promise((resolve) => {
    const socket = connect(Number(url.port), url.hostname);
    const chunks: Buffer[] = [];
    let error: string | undefined;
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', (cause: NodeJS.ErrnoException) => {
      error = cause.code ?? cause.message;
    });
    socket.on('close', () => resolve({ text: Buffer.concat(chunks).toString('latin1'), error }));
    socket.write(head);
    send(socket);
  });
}

const postHead = (headers: string): string =>
  `POST ${CM} HTTP/1.1\r\nHost: converge\r\nAuthorization: Bearer ${t.server.token}\r\n` +
  `Content-Type: application/json\r\n${headers}\r\n`;

/** Writes a chunked body of `total` bytes of `a` in chunks of 64 KiB as the socket drains, then its last chunk. */
function sendChunked(socket: Socket, total: number): void {
  const chunk = `10000\r\n${'a'.repeat(0x10000)}\r\n`;
  let sent = 0;
  const pump = (): void => {
    for (; sent < total; sent += 0x10000) {
      if (!socket.write(chunk)) {
        sent += 0x10000;
        socket.once('drain', pump);
        return;
      }
    }
    socket.end('0\r\n\r\n');
  };
  pump();
}

describe('an upload refused for its size: the client reads the 413', () => {
  it('answers Expect: 100-continue with a Content-Length over the limit with 413 and no 100 Continue', async () => {
    const { text, error } = await exchange(
      postHead(`Expect: 100-continue\r\nContent-Length: ${LIMITS.maxBodyBytes + 1}\r\n`),
    );
    expect(error).toBeUndefined();
    expect(text).not.toMatch(/100 Continue/);
    expect(text).toMatch(/^HTTP\/1\.1 413 /);
    expect(text).toMatch(/Connection: close/i);
    expect(text).toContain('"message":"Request entity too large: limit is 3145728"');
  });

  it('answers Expect: 100-continue within the limit with 100 Continue, then serves the request', async () => {
    const body = JSON.stringify({ metadata: { name: 'continued' }, data: { a: 'b' } });
    const { text } = await exchange(
      postHead(`Expect: 100-continue\r\nContent-Length: ${body.length}\r\nConnection: close\r\n`),
      (socket) => {
        socket.once('data', () => socket.write(body));
      },
    );
    expect(text).toMatch(/^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 201 /);
    expect((await t.request(`${CM}/continued`)).status).toBe(200);
  });

  it('lets the client read the 413 of a chunked body refused mid-stream, with no broken pipe', async () => {
    const { text, error } = await exchange(postHead('Transfer-Encoding: chunked\r\n'), (socket) =>
      sendChunked(socket, LIMITS.maxBodyBytes + REFUSED_BODY_DRAIN_BYTES - 0x20000),
    );
    expect(error).toBeUndefined();
    expect(text).toMatch(/^HTTP\/1\.1 413 /);
    expect(text).toContain('"reason":"RequestEntityTooLarge"');
  });

  it('lets the client read the 413 of a Content-Length body over the limit, with no broken pipe', async () => {
    const size = LIMITS.maxBodyBytes + 1024 * 1024;
    const { text, error } = await exchange(postHead(`Content-Length: ${size}\r\n`), (socket) =>
      socket.end(Buffer.alloc(size, 'a')),
    );
    expect(error).toBeUndefined();
    expect(text).toMatch(/^HTTP\/1\.1 413 /);
  });
});

/** CPU time of the whole process (every thread: the YAML decoder's too), in milliseconds. */
const processCpuMs = (): number => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1_000;
};

const keyNames = (count: number): string[] => Array.from({ length: count }, (_, i) => `k${i}`);

describe('refuse by cost before the work', () => {
  it('refuses a 1.3 MB JSON body of 100 000 keys with 413 before decoding it, in bounded CPU time', async () => {
    const raw = JSON.stringify({
      metadata: { name: 'many' },
      data: Object.fromEntries(keyNames(100_000).map((key) => [key, 'v'])),
    });
    expect(raw.length).toBeGreaterThan(1_200_000);
    const started = cpuMs();
    const res = await t.request(CM, { method: 'POST', raw, headers: { 'content-type': 'application/json' } });
    // Decoding and validating it took 1 000–1 600 ms of this thread; scanning it takes a few.
    expect(cpuMs() - started).toBeLessThan(400);
    expect(res.status).toBe(413);
    expect(res.json).toMatchObject({
      kind: 'Status',
      reason: 'RequestEntityTooLarge',
      message:
        'Request entity too large: the json body holds more than 50000 keys (object members and array elements)',
    });
    expect((await t.request(`${CM}/many`)).status).toBe(404);
  });

  it('refuses a 2.5 MB YAML body of 200 000 keys with 413 before the YAML parser runs', async () => {
    const raw = `metadata:\n  name: many\ndata:\n${keyNames(200_000)
      .map((key) => `  ${key}: v\n`)
      .join('')}`;
    expect(raw.length).toBeGreaterThan(2_000_000);
    const started = processCpuMs();
    const res = await t.request(CM, { method: 'POST', raw, headers: { 'content-type': 'application/yaml' } });
    // Parsing it in the YAML worker took 7–10 s of CPU; the pre-scan takes a few ms.
    expect(processCpuMs() - started).toBeLessThan(1_000);
    expect(res.status).toBe(413);
    expect(String((res.json as { message: string }).message)).toMatch(
      /the yaml body holds more than 50000 keys/,
    );
  });

  it('counts keys on the text: JSON exactly (commas and containers), YAML as an over-estimate', () => {
    expect(() => checkJsonShape('{"a":[1,2,3],"b":{"c":"x,y"}}', 200, 6)).not.toThrow();
    expect(() => checkJsonShape('{"a":[1,2,3],"b":{"c":"x,y"}}', 200, 5)).toThrow(/more than 5 keys/);
    const yaml = 'a:\n  - 1\n  - - 2\n    - k: v\nb: {c: d, e: f}\nd: *x\ne: "-1"\n';
    expect(() => checkYamlKeys(yaml, 14)).not.toThrow();
    try {
      checkYamlKeys(yaml, 13);
      expect.unreachable();
    } catch (error) {
      expect(error).toMatchObject({ status: 413, code: LimitErrorCodes.BODY_TOO_MANY_KEYS });
    }
  });

  it('still accepts a 1 MB ConfigMap of 1000 keys, in JSON and in YAML', async () => {
    const data = Object.fromEntries(keyNames(1000).map((key) => [key, 'x'.repeat(1000)]));
    const json = await t.request(CM, { method: 'POST', body: { metadata: { name: 'wide-json' }, data } });
    expect(json.status, json.text.slice(0, 300)).toBe(201);
    const raw = `metadata:\n  name: wide-yaml\ndata:\n${Object.entries(data)
      .map(([key, value]) => `  ${key}: ${value}\n`)
      .join('')}`;
    expect(raw.length).toBeGreaterThan(1_000_000);
    const yaml = await t.request(CM, {
      method: 'POST',
      raw,
      headers: { 'content-type': 'application/yaml' },
    });
    expect(yaml.status, yaml.text.slice(0, 300)).toBe(201);
  });

  it('still accepts a CRD with a big schema: 4000 documented properties, 600 KB of YAML', async () => {
    const properties = Object.fromEntries(
      keyNames(4000).map((key) => [
        key,
        { type: 'string', description: `The ${key} field: ${'documented at length. '.repeat(4)}` },
      ]),
    );
    const raw = [
      'apiVersion: apiextensions.k8s.io/v1',
      'kind: CustomResourceDefinition',
      'metadata:',
      '  name: bigs.example.com',
      'spec:',
      '  group: example.com',
      '  scope: Namespaced',
      '  names: {plural: bigs, kind: Big}',
      '  versions:',
      '  - name: v1',
      '    served: true',
      '    storage: true',
      '    schema:',
      '      openAPIV3Schema:',
      '        type: object',
      '        properties:',
      '          spec:',
      '            type: object',
      '            properties:',
      ...Object.entries(properties).flatMap(([key, schema]) => [
        `              ${key}:`,
        `                type: ${schema.type}`,
        `                description: '${schema.description}'`,
      ]),
    ].join('\n');
    expect(raw.length).toBeGreaterThan(600_000);
    const res = await t.request('/apis/apiextensions.k8s.io/v1/customresourcedefinitions', {
      method: 'POST',
      raw,
      headers: { 'content-type': 'application/yaml' },
    });
    expect(res.status, res.text.slice(0, 300)).toBe(201);
  }, 30_000);
});

describe('an accepted body below the key bound', () => {
  it('creates, updates and applies a 40 000-key ConfigMap in bounded CPU time (no per-key waste)', async () => {
    const body = (value: string): Record<string, unknown> => ({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'wide' },
      data: Object.fromEntries(keyNames(40_000).map((key) => [key, value])),
    });
    const started = cpuMs();
    const created = await t.request(CM, { method: 'POST', body: body('a') });
    const updated = await t.request(`${CM}/wide`, { method: 'PUT', body: body('b') });
    const applied = await t.request(`${CM}/wide?fieldManager=wide&force=true`, {
      method: 'PATCH',
      raw: JSON.stringify(body('c')),
      headers: { 'content-type': 'application/apply-patch+yaml' },
    });
    const spent = cpuMs() - started;
    expect([created.status, updated.status, applied.status]).toEqual([201, 200, 200]);
    expect((applied.json as { data: Record<string, string> }).data.k39999).toBe('c');
    // The three took 2.3 s of this thread (both ends of the exchanges, first run, not warmed up)
    // on a shared 2-core machine: a few µs per key for each linear pass of the write pipeline.
    // Work quadratic in the keys (a scan of the object per key: 40 000² steps) takes tens of
    // seconds; 8 s leaves 3–4x room for a slower machine.
    expect(spent).toBeLessThan(8_000);
    // A hang detector: ~10 s of wall time in a quiet suite run, several times that beside a second suite.
  }, 180_000);
});

describe('a 2 MB annotation: 422 as kube, the object size limit after validation', () => {
  it('answers a 2 MB annotation with 422 metadata.annotations: Too long, not 413', async () => {
    const res = await t.request(CM, {
      method: 'POST',
      body: { metadata: { name: 'annotated', annotations: { a: 'x'.repeat(2_000_000) } } },
    });
    expect(res.status).toBe(422);
    expect(res.json).toMatchObject({
      reason: 'Invalid',
      message:
        'ConfigMap "annotated" is invalid: metadata.annotations: Too long: must have at most 262144 bytes',
      details: { causes: [{ reason: 'FieldValueTooLong', field: 'metadata.annotations' }] },
    });
  });

  it('answers an update adding a 2 MB annotation with the same 422', async () => {
    await t.request(CM, { method: 'POST', body: { metadata: { name: 'to-annotate' } } });
    const res = await t.request(`${CM}/to-annotate`, {
      method: 'PUT',
      body: { metadata: { name: 'to-annotate', annotations: { a: 'x'.repeat(2_000_000) } } },
    });
    expect(res.status).toBe(422);
    expect(String((res.json as { message: string }).message)).toMatch(/metadata\.annotations: Too long/);
  });

  it('still answers a valid object over 1.5 MiB serialized with 413 (the store limit, where etcd would refuse it)', async () => {
    const labels = Object.fromEntries(keyNames(30_000).map((key) => [key, 'v'.repeat(50)]));
    const big = await t.request(CM, { method: 'POST', body: { metadata: { generateName: 'big-', labels } } });
    expect(big.status, big.text.slice(0, 200)).toBe(413);
    expect(big.json).toMatchObject({ reason: 'RequestEntityTooLarge' });
  });
});

describe('a ServiceAccount token is authenticated first: 401 for a dead account, on every path', () => {
  const SA = '/api/v1/namespaces/default/serviceaccounts';
  const paths = ['/api', '/apis', '/api/v1', CM];

  async function tokenOf(name: string): Promise<string> {
    const res = await t.request(`${SA}/${name}/token`, { method: 'POST', body: {} });
    expect(res.status, res.text).toBe(201);
    return (res.json as { status: { token: string } }).status.token;
  }

  async function statuses(token: string): Promise<number[]> {
    return Promise.all(paths.map(async (path) => (await t.request(path, { token })).status));
  }

  it("serves a live ServiceAccount's token: discovery 200, a list it is not granted 403", async () => {
    await t.request(SA, { method: 'POST', body: { metadata: { name: 'alive' } } });
    expect(await statuses(await tokenOf('alive'))).toEqual([200, 200, 200, 403]);
  });

  it('answers the token of a deleted ServiceAccount with 401 on /api, /apis and a list', async () => {
    await t.request(SA, { method: 'POST', body: { metadata: { name: 'deleted' } } });
    const token = await tokenOf('deleted');
    expect((await t.request(`${SA}/deleted`, { method: 'DELETE' })).status).toBe(200);
    expect(await statuses(token)).toEqual([401, 401, 401, 401]);
  });

  it('answers the token of a re-created ServiceAccount (a new uid) with 401', async () => {
    await t.request(SA, { method: 'POST', body: { metadata: { name: 'recreated' } } });
    const token = await tokenOf('recreated');
    await t.request(`${SA}/recreated`, { method: 'DELETE' });
    expect((await t.request(SA, { method: 'POST', body: { metadata: { name: 'recreated' } } })).status).toBe(
      201,
    );
    expect(await statuses(token)).toEqual([401, 401, 401, 401]);
  });

  it('answers a well-signed token of a ServiceAccount that never existed with 401', async () => {
    const { token } = issueToken(tokenKeys(t.server.token), {
      namespace: 'default',
      name: 'never',
      uid: '6f1c1a52-0000-4000-8000-000000000000',
      audiences: ['https://kubernetes.default.svc.cluster.local'],
      expirationSeconds: 3600,
      nowMs: Date.now(),
    });
    expect(await statuses(token)).toEqual([401, 401, 401, 401]);
    const status = await t.request('/api', { token });
    expect(status.json).toMatchObject({ kind: 'Status', reason: 'Unauthorized', code: 401 });
  });
});

describe('a URL up to 1 MiB, as kube-apiserver (Go) reads it', () => {
  /** `app notin (v0,v1,…)` of at least `bytes` characters, URL-encoded. */
  const longSelector = (bytes: number): string => {
    const values = keyNames(Math.ceil(bytes / 7)).join(',');
    return encodeURIComponent(`app notin (${values})`);
  };

  it('serves a list with a 700 KB labelSelector (200)', async () => {
    await t.request(CM, { method: 'POST', body: { metadata: { name: 'selected', labels: { app: 'web' } } } });
    const selector = longSelector(700_000);
    expect(selector.length).toBeGreaterThan(700_000);
    const res = await t.request(`${CM}?labelSelector=${selector}`);
    expect(res.status, res.text.slice(0, 300)).toBe(200);
    const names = (res.json as { items: { metadata: { name: string } }[] }).items.map((i) => i.metadata.name);
    expect(names).toContain('selected');
  });

  it('refuses a request line over 1 MiB cleanly with 431, not a reset', async () => {
    const { text, error } = await exchange(
      `GET ${CM}?labelSelector=${longSelector(1_100_000)} HTTP/1.1\r\nHost: converge\r\n\r\n`,
    );
    expect(error).toBeUndefined();
    expect(text).toMatch(/^HTTP\/1\.1 431 Request Header Fields Too Large\r\n/);
  });
});
