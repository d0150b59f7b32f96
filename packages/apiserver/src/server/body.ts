import type { IncomingMessage } from 'node:http';
import { BadRequestError } from '@converge/runtime';
import { parseDocument } from 'yaml';
import { entityTooLarge, unsupportedMediaType } from './errors.ts';
import { parseMediaType } from './media.ts';

/** kube-apiserver's request body limit: 3 MiB. */
export const MAX_BODY_BYTES = 3 * 1024 * 1024;

/**
 * Reads a request body up to `limit` bytes. A longer body rejects with a 413 at once, without
 * reading the rest (the connection is then closed by the caller).
 */
export function readBody(req: IncomingMessage, limit: number = MAX_BODY_BYTES): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) return Promise.reject(entityTooLarge(limit));
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const finish = (error: Error | undefined): void => {
      if (settled) return;
      settled = true;
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('aborted', onAborted);
      if (error !== undefined) reject(error);
      else resolve(Buffer.concat(chunks, size));
    };
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > limit) {
        req.pause();
        finish(entityTooLarge(limit));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = (): void => finish(undefined);
    const onError = (error: Error): void => finish(error);
    const onAborted = (): void => finish(new BadRequestError('the request body was not received completely'));
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('aborted', onAborted);
  });
}

/** A decoded request body and the media type it came in. */
export interface DecodedBody {
  readonly value: unknown;
  /** `json`, `yaml` or `protobuf`. */
  readonly format: 'json' | 'yaml' | 'protobuf';
}

/** Decodes protobuf bodies (the `k8s\0` envelope) of the endpoint's kind; installed by the protobuf module. */
export type ProtobufDecoder = (bytes: Uint8Array) => unknown;

/** Parses JSON text; a syntax error is a 400 with the parser's message. */
export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new BadRequestError(`couldn't get version/kind; json parse error: ${(error as Error).message}`);
  }
}

/** Parses one YAML document as JSON data (YAML 1.2 core schema, aliases bounded); errors are 400s. */
export function parseYaml(text: string): unknown {
  const doc = parseDocument(text, { prettyErrors: false, uniqueKeys: false });
  const first = doc.errors[0];
  if (first !== undefined) throw new BadRequestError(`error converting YAML to JSON: yaml: ${first.message}`);
  try {
    // A JSON round trip rejects self-referencing aliases (`a: &x [*x]`), which make cyclic values.
    return JSON.parse(JSON.stringify(doc.toJS({ maxAliasCount: 100 }) ?? null)) as unknown;
  } catch (error) {
    throw new BadRequestError(`error converting YAML to JSON: yaml: ${(error as Error).message}`);
  }
}

const OBJECT_TYPES = ['application/json', 'application/yaml', 'application/vnd.kubernetes.protobuf'];

/**
 * Decodes a create/update body by `Content-Type`: JSON (also when the header is missing), YAML
 * (`application/yaml`), protobuf when a decoder is installed; anything else is a 415.
 */
export function decodeObjectBody(
  contentType: string | undefined,
  body: Buffer,
  protobuf: ProtobufDecoder | undefined,
): DecodedBody {
  const media =
    contentType === undefined || contentType.trim() === '' ? undefined : parseMediaType(contentType);
  const type = media?.type ?? 'application/json';
  if (type === 'application/json') return { value: parseJson(body.toString('utf8')), format: 'json' };
  if (type === 'application/yaml') return { value: parseYaml(body.toString('utf8')), format: 'yaml' };
  if (type === 'application/vnd.kubernetes.protobuf' && protobuf !== undefined) {
    return { value: protobuf(body), format: 'protobuf' };
  }
  throw unsupportedMediaType(protobuf === undefined ? OBJECT_TYPES.slice(0, 2) : OBJECT_TYPES);
}

/** Reads and decodes a create/update body (see {@link decodeObjectBody}). */
export async function readBodyValue(
  req: IncomingMessage,
  protobuf: ProtobufDecoder | undefined,
): Promise<unknown> {
  const body = await readBody(req);
  return decodeObjectBody(req.headers['content-type'], body, protobuf).value;
}

/** Requires a decoded body to be a JSON object (not an array, string, null, …): else 400. */
export function requireObject(value: unknown): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new BadRequestError(
      "Object 'Kind' is missing in the request body: the body must be a JSON or YAML object",
    );
  }
  return value as Record<string, unknown>;
}
