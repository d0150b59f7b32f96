import { BadRequestError, UnsupportedError } from '@converge/runtime';
import { describe, expect, it } from 'vitest';
import {
  decodeProtobufObject,
  ProtobufDecodeError,
  ProtobufErrorCodes,
  ProtobufUnsupportedKindError,
} from './index.ts';
import { ANNOTATED_CONFIGMAP } from './testdata/fixtures.ts';
import { envelope, ProtoWriter } from './testdata/proto-writer.ts';

function decodeError(body: Uint8Array): ProtobufDecodeError {
  try {
    decodeProtobufObject(body);
  } catch (error) {
    if (error instanceof ProtobufDecodeError) return error;
    throw error;
  }
  throw new Error('decoding succeeded');
}

describe('malformed bodies are 400 BadRequest with a specific code', () => {
  it.each([
    ['an empty body', new Uint8Array(), ProtobufErrorCodes.NOT_PROTOBUF, 'empty data'],
    [
      'JSON',
      new TextEncoder().encode('{"kind":"ConfigMap"}'),
      ProtobufErrorCodes.NOT_PROTOBUF,
      'expected prefix [107 56 115 0]',
    ],
    ['the magic alone', Uint8Array.of(0x6b, 0x38, 0x73, 0x00), ProtobufErrorCodes.NOT_PROTOBUF, 'empty body'],
    [
      'a missing kind',
      envelope('v1', '', new Uint8Array()),
      ProtobufErrorCodes.MISSING_KIND,
      "Object 'Kind' is missing",
    ],
    [
      'a missing apiVersion',
      envelope('', 'Secret', new Uint8Array()),
      ProtobufErrorCodes.MISSING_KIND,
      "'apiVersion' is missing",
    ],
    [
      'apiVersion a/b/c',
      envelope('a/b/c', 'Secret', new Uint8Array()),
      ProtobufErrorCodes.MISSING_KIND,
      'apiVersion',
    ],
    [
      'gzip content encoding',
      envelope('v1', 'Secret', new Uint8Array(), { contentEncoding: 'gzip' }),
      ProtobufErrorCodes.UNSUPPORTED_ENCODING,
      'gzip',
    ],
    [
      'JSON raw content',
      envelope('v1', 'Secret', new Uint8Array(), { contentType: 'application/json' }),
      ProtobufErrorCodes.UNSUPPORTED_ENCODING,
      'application/json',
    ],
  ])('%s', (_name, body, code, message) => {
    const error = decodeError(body);
    expect(error).toBeInstanceOf(BadRequestError);
    expect(error.status).toBe(400);
    expect(error.reason).toBe('BadRequest');
    expect(error.code).toBe(code);
    expect(error.message).toContain(message);
  });

  it('every truncation inside a field is MALFORMED, never a partial object', () => {
    // magic (4) + typeMeta (2 + 15) end at 21; raw runs to the 4 trailing bytes `1a 00 22 00`.
    const typeMetaEnd = 21;
    const rawEnd = ANNOTATED_CONFIGMAP.length - 4;
    for (let length = 5; length < rawEnd; length++) {
      if (length === typeMetaEnd) continue;
      const error = decodeError(ANNOTATED_CONFIGMAP.subarray(0, length));
      expect(error.code, `length ${length}`).toBe(ProtobufErrorCodes.MALFORMED);
    }
    // Cut between two envelope fields, the rest is a shorter valid message: no raw, an empty object.
    expect(decodeProtobufObject(ANNOTATED_CONFIGMAP.subarray(0, typeMetaEnd)).object).toEqual({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {},
    });
  });

  it.each([
    [
      'a wrong wire type for a known field',
      (w: ProtoWriter) => w.tag(4, 2).varint(0),
      'wrong wireType = 2 for field k8s.io.api.core.v1.ConfigMap.immutable',
    ],
    ['field number 0', (w: ProtoWriter) => w.tag(0, 0).varint(1), 'illegal tag 0'],
    ['an end group without a start', (w: ProtoWriter) => w.tag(9, 4), 'end group for non-group'],
    ['an unterminated group', (w: ProtoWriter) => w.tag(9, 3).tag(1, 0).varint(1), 'unexpected EOF'],
    ['wire type 7', (w: ProtoWriter) => w.tag(9, 7), 'illegal wireType 7'],
    [
      'an eleven-byte varint',
      (w: ProtoWriter) => w.tag(9, 0).raw([...Array(10).fill(0xff), 0x01]),
      'integer overflow',
    ],
    ['a length past the end', (w: ProtoWriter) => w.tag(9, 2).varint(1000), 'unexpected EOF'],
    ['a negative length', (w: ProtoWriter) => w.tag(9, 2).varint(-1), 'negative length'],
    [
      'a timestamp after year 9999',
      (w: ProtoWriter) => w.message(1, (m) => m.message(8, (t) => t.int64(1, 253_402_300_800))),
      'out of range',
    ],
    [
      'fieldsV1 that is not JSON',
      (w: ProtoWriter) => w.message(1, (m) => m.message(17, (e) => e.message(7, (f) => f.string(1, '{')))),
      'fieldsV1: raw is not JSON',
    ],
  ])('%s', (_name, build, message) => {
    const w = new ProtoWriter();
    build(w);
    const error = decodeError(envelope('v1', 'ConfigMap', w.finish()));
    expect(error.code).toBe(ProtobufErrorCodes.MALFORMED);
    expect(error.message).toContain(message);
    expect(error.offset).toBeGreaterThan(0);
  });
});

describe('kinds without a protobuf decoder', () => {
  it('are 415 UnsupportedMediaType naming the kind and the decoded ones', () => {
    let error: unknown;
    try {
      decodeProtobufObject(envelope('example.com/v1', 'Widget', new Uint8Array()));
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ProtobufUnsupportedKindError);
    expect(error).toBeInstanceOf(UnsupportedError);
    const typed = error as ProtobufUnsupportedKindError;
    expect(typed.status).toBe(415);
    expect(typed.code).toBe(ProtobufErrorCodes.UNSUPPORTED_KIND);
    expect(typed.message).toContain('example.com/v1, Kind=Widget');
    expect(typed.message).toContain('built-in kinds');
  });
});
