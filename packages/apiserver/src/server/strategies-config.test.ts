import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { goJsonObjectError } from './go-json-error.ts';
import { startTestServer, type TestResponse, type TestServer } from './test-support.ts';

let t: TestServer;

beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => {
  await t.close();
});

type Json = Record<string, unknown>;

const SECRETS = '/api/v1/namespaces/default/secrets';
const CONFIGMAPS = '/api/v1/namespaces/default/configmaps';
const KEY_REGEX_MESSAGE =
  "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')";

const post = (path: string, body: unknown): Promise<TestResponse> =>
  t.request(path, { method: 'POST', body });
const put = (path: string, body: unknown): Promise<TestResponse> => t.request(path, { method: 'PUT', body });
const b64 = (text: string): string => Buffer.from(text, 'utf8').toString('base64');

function invalid(r: TestResponse): { message: string; causes: Json[] } {
  expect(r.status, r.text).toBe(422);
  const status = r.json as Json;
  expect(status.reason).toBe('Invalid');
  return {
    message: String(status.message),
    causes: ((status.details as Json).causes ?? []) as Json[],
  };
}

describe('Secret validation by type, as kube-apiserver’s ValidateSecret', () => {
  it('requires tls.crt and tls.key in a kubernetes.io/tls Secret', async () => {
    const r = await post(SECRETS, {
      metadata: { name: 'tls-no-key' },
      type: 'kubernetes.io/tls',
      data: { 'tls.crt': b64('cert') },
    });
    const { message, causes } = invalid(r);
    expect(message).toBe('Secret "tls-no-key" is invalid: data[tls.key]: Required value');
    expect(causes).toEqual([
      { reason: 'FieldValueRequired', message: 'Required value', field: 'data[tls.key]' },
    ]);
    const neither = invalid(
      await post(SECRETS, { metadata: { name: 'tls-empty' }, type: 'kubernetes.io/tls' }),
    );
    expect(neither.message).toBe(
      'Secret "tls-empty" is invalid: [data[tls.crt]: Required value, data[tls.key]: Required value]',
    );
    const ok = await post(SECRETS, {
      metadata: { name: 'tls-ok' },
      type: 'kubernetes.io/tls',
      stringData: { 'tls.crt': 'cert', 'tls.key': '' },
    });
    expect(ok.status, ok.text).toBe(201);
  });

  it('requires .dockerconfigjson holding JSON in a kubernetes.io/dockerconfigjson Secret', async () => {
    const missing = invalid(
      await post(SECRETS, { metadata: { name: 'dcj-missing' }, type: 'kubernetes.io/dockerconfigjson' }),
    );
    expect(missing.message).toBe('Secret "dcj-missing" is invalid: data[.dockerconfigjson]: Required value');
    const garbage = invalid(
      await post(SECRETS, {
        metadata: { name: 'dcj-garbage' },
        type: 'kubernetes.io/dockerconfigjson',
        stringData: { '.dockerconfigjson': '{"auths": x}' },
      }),
    );
    expect(garbage.message).toBe(
      'Secret "dcj-garbage" is invalid: data[.dockerconfigjson]: Invalid value: "<secret contents redacted>": invalid character \'x\' looking for beginning of value',
    );
    const ok = await post(SECRETS, {
      metadata: { name: 'dcj-ok' },
      type: 'kubernetes.io/dockerconfigjson',
      stringData: { '.dockerconfigjson': '{"auths":{}}' },
    });
    expect(ok.status, ok.text).toBe(201);
  });

  it('requires .dockercfg holding a JSON object in a kubernetes.io/dockercfg Secret', async () => {
    const missing = invalid(
      await post(SECRETS, { metadata: { name: 'dc-missing' }, type: 'kubernetes.io/dockercfg' }),
    );
    expect(missing.message).toBe('Secret "dc-missing" is invalid: data[.dockercfg]: Required value');
    const array = invalid(
      await post(SECRETS, {
        metadata: { name: 'dc-array' },
        type: 'kubernetes.io/dockercfg',
        stringData: { '.dockercfg': '[]' },
      }),
    );
    expect(array.message).toBe(
      'Secret "dc-array" is invalid: data[.dockercfg]: Invalid value: "<secret contents redacted>": json: cannot unmarshal array into Go value of type map[string]interface {}',
    );
  });

  it('requires username or password in a kubernetes.io/basic-auth Secret, either one enough', async () => {
    const neither = invalid(
      await post(SECRETS, { metadata: { name: 'ba-none' }, type: 'kubernetes.io/basic-auth' }),
    );
    expect(neither.message).toBe(
      'Secret "ba-none" is invalid: [data[username]: Required value, data[password]: Required value]',
    );
    const passwordOnly = await post(SECRETS, {
      metadata: { name: 'ba-password' },
      type: 'kubernetes.io/basic-auth',
      stringData: { password: 'p' },
    });
    expect(passwordOnly.status, passwordOnly.text).toBe(201);
  });

  it('requires a non-empty ssh-privatekey in a kubernetes.io/ssh-auth Secret', async () => {
    const empty = invalid(
      await post(SECRETS, {
        metadata: { name: 'ssh-empty' },
        type: 'kubernetes.io/ssh-auth',
        data: { 'ssh-privatekey': '' },
      }),
    );
    expect(empty.message).toBe('Secret "ssh-empty" is invalid: data[ssh-privatekey]: Required value');
  });

  it('requires the service-account.name annotation on a kubernetes.io/service-account-token Secret', async () => {
    const r = invalid(
      await post(SECRETS, { metadata: { name: 'sat' }, type: 'kubernetes.io/service-account-token' }),
    );
    expect(r.message).toBe(
      'Secret "sat" is invalid: metadata.annotations[kubernetes.io/service-account.name]: Required value',
    );
    expect(r.causes[0]?.field).toBe('metadata.annotations[kubernetes.io/service-account.name]');
  });

  it('accepts any keys in Opaque and unknown types', async () => {
    const r = await post(SECRETS, { metadata: { name: 'custom' }, type: 'example.com/thing', data: {} });
    expect(r.status, r.text).toBe(201);
  });

  it('refuses a changed type on update with field is immutable', async () => {
    const created = (await post(SECRETS, { metadata: { name: 'retype' }, stringData: { a: 'b' } }))
      .json as Json;
    const r = invalid(await put(`${SECRETS}/retype`, { ...created, type: 'example.com/other' }));
    expect(r.message).toBe(
      'Secret "retype" is invalid: type: Invalid value: "example.com/other": field is immutable',
    );
  });

  it('reports a bad data key at data[<key>] with apimachinery’s config key message', async () => {
    const r = invalid(await post(SECRETS, { metadata: { name: 'bad-key' }, data: { 'bad key!': b64('x') } }));
    expect(r.message).toBe(
      `Secret "bad-key" is invalid: data[bad key!]: Invalid value: "bad key!": ${KEY_REGEX_MESSAGE}`,
    );
  });

  it('refuses data over 1 MiB at data with Too long', async () => {
    const r = invalid(
      await post(SECRETS, {
        metadata: { name: 'big' },
        data: { a: Buffer.alloc(1024 * 1024 + 1).toString('base64') },
      }),
    );
    expect(r.message).toBe('Secret "big" is invalid: data: Too long: must have at most 1048576 bytes');
  });
});

describe('ConfigMap keys, as kube-apiserver’s ValidateConfigMap', () => {
  it('reports a bad data key at data[<key>] with the value and apimachinery’s message', async () => {
    const r = invalid(await post(CONFIGMAPS, { metadata: { name: 'bad' }, data: { 'bad key!': 'v' } }));
    expect(r.message).toBe(
      `ConfigMap "bad" is invalid: data[bad key!]: Invalid value: "bad key!": ${KEY_REGEX_MESSAGE}`,
    );
    expect(r.causes).toEqual([
      {
        reason: 'FieldValueInvalid',
        message: `Invalid value: "bad key!": ${KEY_REGEX_MESSAGE}`,
        field: 'data[bad key!]',
      },
    ]);
  });

  it('reports a bad binaryData key at binaryData[<key>]', async () => {
    const r = invalid(await post(CONFIGMAPS, { metadata: { name: 'bin' }, binaryData: { 'a/b': b64('x') } }));
    expect(r.message).toBe(
      `ConfigMap "bin" is invalid: binaryData[a/b]: Invalid value: "a/b": ${KEY_REGEX_MESSAGE}`,
    );
  });

  it('refuses keys that are . or start with ..', async () => {
    const r = invalid(await post(CONFIGMAPS, { metadata: { name: 'dots' }, data: { '.': 'a', '..x': 'b' } }));
    expect(r.message).toBe(
      `ConfigMap "dots" is invalid: [data[.]: Invalid value: ".": must not be '.', data[..x]: Invalid value: "..x": must not start with '..']`,
    );
  });

  it('refuses a key longer than 253 characters', async () => {
    const key = 'k'.repeat(254);
    const r = invalid(await post(CONFIGMAPS, { metadata: { name: 'long' }, data: { [key]: 'v' } }));
    expect(r.message).toBe(
      `ConfigMap "long" is invalid: data[${key}]: Invalid value: "${key}": must be no more than 253 characters`,
    );
  });

  it('counts data in UTF-8 bytes: 350 000 × € (1 050 000 bytes) is too long, 500 000 × é (1 000 000) is not', async () => {
    const euro = invalid(
      await post(CONFIGMAPS, { metadata: { name: 'euros' }, data: { a: '€'.repeat(350_000) } }),
    );
    expect(euro.message).toBe('ConfigMap "euros" is invalid: Too long: must have at most 1048576 bytes');
    const accents = await post(CONFIGMAPS, {
      metadata: { name: 'accents' },
      data: { a: 'é'.repeat(500_000) },
    });
    expect(accents.status, accents.text.slice(0, 200)).toBe(201);
  });

  it('counts a key’s length in UTF-8 bytes: 127 × é (254 bytes) is too long', async () => {
    const key = 'é'.repeat(127);
    const r = invalid(await post(CONFIGMAPS, { metadata: { name: 'long-utf8' }, data: { [key]: 'v' } }));
    expect(r.causes.map((c) => c.message)).toContain(
      `Invalid value: "${key}": must be no more than 253 characters`,
    );
  });

  it('refuses a key in both data and binaryData at data[<key>]', async () => {
    const r = invalid(
      await post(CONFIGMAPS, { metadata: { name: 'dup' }, data: { k: 'v' }, binaryData: { k: b64('v') } }),
    );
    expect(r.message).toBe(
      'ConfigMap "dup" is invalid: data[k]: Invalid value: "k": duplicate of key present in binaryData',
    );
  });

  it('checks keys on update too', async () => {
    const created = (await post(CONFIGMAPS, { metadata: { name: 'later' }, data: { ok: 'v' } })).json as Json;
    const r = invalid(await put(`${CONFIGMAPS}/later`, { ...created, data: { 'no way': 'v' } }));
    expect(r.causes.map((c) => c.field)).toEqual(['data[no way]']);
  });
});

describe('Go’s json.Unmarshal errors for docker config Secrets', () => {
  it('names the first bad character and its context as Go’s scanner does', () => {
    expect(goJsonObjectError('')).toBe('unexpected end of JSON input');
    expect(goJsonObjectError('{"a":1')).toBe('unexpected end of JSON input');
    expect(goJsonObjectError('not json')).toBe("invalid character 'o' in literal null (expecting 'u')");
    expect(goJsonObjectError('{a:1}')).toBe(
      "invalid character 'a' looking for beginning of object key string",
    );
    expect(goJsonObjectError('{"a" 1}')).toBe("invalid character '1' after object key");
    expect(goJsonObjectError('{"a":1 "b":2}')).toBe("invalid character '\"' after object key:value pair");
    expect(goJsonObjectError('[1 2]')).toBe("invalid character '2' after array element");
    expect(goJsonObjectError('{} x')).toBe("invalid character 'x' after top-level value");
  });

  it('accepts objects and null, and names the Go type of anything else', () => {
    expect(goJsonObjectError('{"auths":{}}')).toBeUndefined();
    expect(goJsonObjectError('null')).toBeUndefined();
    expect(goJsonObjectError('"s"')).toBe(
      'json: cannot unmarshal string into Go value of type map[string]interface {}',
    );
    expect(goJsonObjectError('1')).toBe(
      'json: cannot unmarshal number into Go value of type map[string]interface {}',
    );
    expect(goJsonObjectError('true')).toBe(
      'json: cannot unmarshal bool into Go value of type map[string]interface {}',
    );
  });
});
