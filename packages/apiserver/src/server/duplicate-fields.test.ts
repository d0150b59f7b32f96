import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { duplicateFields } from './duplicate-fields.ts';
import { startTestServer, type TestServer } from './test-support.ts';

describe('duplicateFields', () => {
  it('names duplicate keys by their path, in document order', () => {
    expect(duplicateFields('{"a":1,"a":2}')).toEqual(['a']);
    expect(
      duplicateFields(
        '{"spec":{"replicas":1,"template":{"spec":{"containers":[{"name":"a"},{"name":"b","name":"c"}]}},"replicas":2}}',
      ),
    ).toEqual(['spec.template.spec.containers[1].name', 'spec.replicas']);
    expect(duplicateFields('{"a":{"x":1},"b":{"x":1},"c":["x","x"],"d":"{\\"e\\":1,\\"e\\":2}"}')).toEqual(
      [],
    );
    expect(duplicateFields('{"a\\u0062":1,"ab":2}')).toEqual(['ab']);
  });

  it('finds nothing in JSON.stringify output (no duplicates possible), for any value', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        expect(duplicateFields(JSON.stringify(value))).toEqual([]);
      }),
    );
  });
});

describe('duplicate fields of a built-in kind’s body', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(async () => {
    await t.close();
  });
  const body = (name: string): string =>
    `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"${name}"},"spec":{"replicas":1,"replicas":2,` +
    `"selector":{"matchLabels":{"a":"b"}},"template":{"metadata":{"labels":{"a":"b"}},"spec":{"containers":[{"name":"c","image":"x"}]}}}}`;
  const post = (name: string, validation: string) =>
    t.request(`/apis/apps/v1/namespaces/default/deployments?fieldValidation=${validation}`, {
      method: 'POST',
      raw: body(name),
      headers: { 'content-type': 'application/json' },
    });

  it('Strict: 400 naming the field; Warn: a warning and the last value; Ignore: silent', async () => {
    const strict = await post('s', 'Strict');
    expect(strict.status).toBe(400);
    expect((strict.json as { message: string }).message).toBe(
      'Deployment in version "v1" cannot be handled as a Deployment: strict decoding error: duplicate field "spec.replicas"',
    );
    const warn = await post('w', 'Warn');
    expect(warn.status).toBe(201);
    expect(warn.headers.warning).toBe('299 - "duplicate field \\"spec.replicas\\""');
    expect((warn.json as { spec: { replicas: number } }).spec.replicas).toBe(2);
    const ignore = await post('i', 'Ignore');
    expect(ignore.status).toBe(201);
    expect(ignore.headers.warning).toBeUndefined();
  });
});
