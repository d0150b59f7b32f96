import { describe, expect, it } from 'vitest';
import { decodeProtobufObject } from './index.ts';
import {
  ANNOTATED_CONFIGMAP,
  ANNOTATED_NAMESPACE,
  ANNOTATED_SECRET,
  ANNOTATED_SERVICE_ACCOUNT,
  KUBECTL_CONFIGMAP,
  KUBECTL_DOCKER_SECRET,
  KUBECTL_NAMESPACE,
  KUBECTL_SECRET,
  KUBECTL_SERVICE_ACCOUNT,
} from './testdata/fixtures.ts';
import { envelope, ProtoWriter } from './testdata/proto-writer.ts';

const b64 = (text: string): string => Buffer.from(text).toString('base64');

describe('bodies captured from kubectl 1.32', () => {
  it('kubectl create namespace decodes to the object a JSON body would carry', () => {
    expect(decodeProtobufObject(KUBECTL_NAMESPACE)).toEqual({
      apiVersion: 'v1',
      kind: 'Namespace',
      object: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-a' }, spec: {}, status: {} },
    });
  });

  it('kubectl create configmap keeps UTF-8 data as text and non-UTF-8 files as base64 binaryData', () => {
    expect(decodeProtobufObject(KUBECTL_CONFIGMAP).object).toEqual({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'bin-config', namespace: 'team-a' },
      data: { greeting: 'héllo' },
      binaryData: { blob: 'AAH//g==' },
    });
  });

  it('kubectl create secret generic yields base64 data and the type', () => {
    expect(decodeProtobufObject(KUBECTL_SECRET).object).toEqual({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'db-creds', namespace: 'team-a' },
      data: { password: b64('p@ss:w0rd'), user: b64('admin') },
      type: 'Opaque',
    });
  });

  it('kubectl create secret docker-registry yields the .dockerconfigjson key and its type', () => {
    const { object } = decodeProtobufObject(KUBECTL_DOCKER_SECRET);
    expect(object.type).toBe('kubernetes.io/dockerconfigjson');
    const data = object.data as Record<string, string>;
    expect(JSON.parse(Buffer.from(data['.dockerconfigjson'] ?? '', 'base64').toString())).toEqual({
      auths: { 'r.example': { username: 'u', password: 'p', auth: 'dTpw' } },
    });
  });

  it('kubectl create serviceaccount decodes to name and namespace only', () => {
    expect(decodeProtobufObject(KUBECTL_SERVICE_ACCOUNT).object).toEqual({
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: { name: 'builder', namespace: 'team-a' },
    });
  });
});

describe('bodies assembled from the generated.proto field numbers', () => {
  it('a ConfigMap decodes every ObjectMeta field, both maps and immutable, skipping unknown fields', () => {
    expect(decodeProtobufObject(ANNOTATED_CONFIGMAP).object).toEqual({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        name: 'web',
        generateName: 'web-',
        namespace: 'prod',
        uid: 'u-1',
        resourceVersion: '42',
        generation: 3,
        creationTimestamp: '2023-11-14T22:13:20Z',
        deletionGracePeriodSeconds: 30,
        labels: { app: 'web', tier: 'front' },
        annotations: { note: 'a=b' },
        ownerReferences: [
          {
            apiVersion: 'apps/v1',
            kind: 'Deployment',
            name: 'web',
            uid: 'd-1',
            controller: true,
            blockOwnerDeletion: true,
          },
        ],
        finalizers: ['example.com/a', 'example.com/b'],
        managedFields: [
          {
            manager: 'kubectl',
            operation: 'Update',
            apiVersion: 'v1',
            time: '2023-11-14T22:14:20Z',
            fieldsType: 'FieldsV1',
            fieldsV1: { 'f:data': {} },
            subresource: 'status',
          },
        ],
      },
      data: { mode: 'fast', empty: '' },
      binaryData: { blob: 'AAH//g==' },
      immutable: true,
    });
  });

  it('a Secret keeps an explicit immutable=false and passes stringData on', () => {
    expect(decodeProtobufObject(ANNOTATED_SECRET).object).toEqual({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'creds' },
      data: { password: b64('p@ss') },
      type: 'Opaque',
      stringData: { user: 'admin' },
      immutable: false,
    });
  });

  it('a Namespace decodes spec finalizers and status conditions', () => {
    expect(decodeProtobufObject(ANNOTATED_NAMESPACE).object).toEqual({
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: 'team-a' },
      spec: { finalizers: ['kubernetes'] },
      status: {
        phase: 'Terminating',
        conditions: [
          {
            type: 'NamespaceDeletionContentFailure',
            status: 'False',
            lastTransitionTime: '2023-11-14T22:13:20Z',
            reason: 'ContentDeleted',
            message: 'All content successfully deleted',
          },
        ],
      },
    });
  });

  it('a ServiceAccount decodes secrets, imagePullSecrets and automountServiceAccountToken', () => {
    expect(decodeProtobufObject(ANNOTATED_SERVICE_ACCOUNT).object).toEqual({
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: { name: 'builder' },
      secrets: [
        {
          kind: 'Secret',
          namespace: 'ci',
          name: 'tok',
          uid: 's-1',
          apiVersion: 'v1',
          resourceVersion: '7',
          fieldPath: 'data',
        },
      ],
      imagePullSecrets: [{ name: 'regcred' }],
      automountServiceAccountToken: false,
    });
  });
});

describe('protobuf semantics', () => {
  const configMap = (build: (w: ProtoWriter) => void): Uint8Array => {
    const w = new ProtoWriter();
    build(w);
    return envelope('v1', 'ConfigMap', w.finish());
  };

  it('map keys that are special in JavaScript stay ordinary own properties', () => {
    const body = configMap((w) => {
      w.message(1, (m) => m.mapEntry(11, '__proto__', 'x').mapEntry(11, 'constructor', 'y'));
      w.mapEntry(2, '__proto__', 'z');
    });
    const object = decodeProtobufObject(body).object as { metadata: { labels: object }; data: object };
    expect(Object.keys(object.metadata.labels)).toEqual(['__proto__', 'constructor']);
    expect(Object.getPrototypeOf(object.metadata.labels)).toBe(Object.prototype);
    expect(JSON.stringify(object.data)).toBe('{"__proto__":"z"}');
  });

  it('the last of repeated scalar fields and of duplicate map keys wins, as in Go', () => {
    const body = configMap((w) => {
      w.message(1, (m) => m.string(1, 'first').string(1, 'second'));
      w.mapEntry(2, 'k', 'old').mapEntry(2, 'k', 'new');
      w.message(1, (m) => m.string(3, 'ns'));
    });
    expect(decodeProtobufObject(body).object).toEqual({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { namespace: 'ns' },
      data: { k: 'new' },
    });
  });

  it('a map entry without key or value decodes as the empty string', () => {
    const body = configMap((w) =>
      w.message(2, (e) => e.string(2, 'only-value')).message(2, (e) => e.string(1, 'only-key')),
    );
    expect(decodeProtobufObject(body).object.data).toEqual({ '': 'only-value', 'only-key': '' });
  });

  it('unknown fields of every wire type, including nested groups, are skipped', () => {
    const body = configMap((w) => {
      w.tag(50, 0).varint(2n ** 64n - 1n); // varint
      w.tag(51, 1).raw([1, 2, 3, 4, 5, 6, 7, 8]); // fixed64
      w.tag(52, 5).raw([1, 2, 3, 4]); // fixed32
      w.tag(53, 3).tag(1, 3).tag(2, 0).varint(1).tag(1, 4).tag(3, 2).varint(1).raw([9]).tag(53, 4); // group in group
      w.message(1, (m) => m.string(1, 'kept'));
    });
    expect(decodeProtobufObject(body).object.metadata).toEqual({ name: 'kept' });
  });

  it('an envelope without kind or apiVersion takes the endpoint defaults', () => {
    const raw = new ProtoWriter().message(1, (m) => m.string(1, 'x')).finish();
    const decoded = decodeProtobufObject(envelope('', '', raw), { apiVersion: 'v1', kind: 'ConfigMap' });
    expect(decoded).toMatchObject({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      object: { metadata: { name: 'x' } },
    });
  });

  it('a timestamp is written at second precision, dropping nanos as apimachinery does', () => {
    const body = configMap((w) =>
      w.message(1, (m) => m.message(8, (t) => t.int64(1, 0).int64(2, 999_999_999))),
    );
    expect(decodeProtobufObject(body).object.metadata).toEqual({ creationTimestamp: '1970-01-01T00:00:00Z' });
  });
});
