import type { IncomingMessage } from 'node:http';
import { BadRequestError } from '@converge/runtime';
import { noteDuplicateFields } from './duplicate-fields.ts';
import { entityTooLarge, unsupportedMediaType } from './errors.ts';
import { checkJsonDepth, LIMITS } from './limits.ts';
import { parseMediaType } from './media.ts';
import { decodeYaml, decodeYamlSync } from './yaml-decode.ts';

/** kube-apiserver's request body limit: 3 MiB. */
export const MAX_BODY_BYTES = LIMITS.maxBodyBytes;

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

/**
 * Parses JSON text; a syntax error is a 400 with the parser's message, and so is nesting deeper
 * than {@link LIMITS}.maxDepth (checked in one pass before parsing).
 */
export function parseJson(text: string): unknown {
  checkJsonDepth(text);
  try {
    const value = JSON.parse(text) as unknown;
    noteDuplicateFields(text, value);
    return value;
  } catch (error) {
    throw new BadRequestError(`couldn't get version/kind; json parse error: ${(error as Error).message}`);
  }
}

/**
 * Parses one YAML document as JSON data (YAML 1.2 core schema) on the calling thread, with aliases,
 * depth and size bounded; errors are 400s (413 past the size). Request handlers use
 * {@link decodeYaml}, which moves large documents off the event loop.
 */
export function parseYaml(text: string): unknown {
  return decodeYamlSync(text);
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
  const format = bodyFormat(contentType, protobuf);
  if (format === 'json') return { value: parseJson(body.toString('utf8')), format };
  if (format === 'yaml') return { value: parseYaml(body.toString('utf8')), format };
  return { value: (protobuf as ProtobufDecoder)(body), format };
}

/**
 * The format of a body by its `Content-Type`: JSON when the header is missing or empty; a header
 * that is not a media type at all (`;;;/=`) is a 415 like any unknown type.
 */
function bodyFormat(
  contentType: string | undefined,
  protobuf: ProtobufDecoder | undefined,
): DecodedBody['format'] {
  const media =
    contentType === undefined || contentType.trim() === ''
      ? 'application/json'
      : parseMediaType(contentType)?.type;
  if (media === 'application/json') return 'json';
  if (media === 'application/yaml') return 'yaml';
  if (media === 'application/vnd.kubernetes.protobuf' && protobuf !== undefined) return 'protobuf';
  throw unsupportedMediaType(protobuf === undefined ? OBJECT_TYPES.slice(0, 2) : OBJECT_TYPES);
}

/**
 * Reads and decodes a create/update body (see {@link decodeObjectBody}); large YAML is decoded off
 * the event loop ({@link decodeYaml}).
 */
export async function readBodyValue(
  req: IncomingMessage,
  protobuf: ProtobufDecoder | undefined,
): Promise<unknown> {
  const body = await readBody(req);
  const format = bodyFormat(req.headers['content-type'], protobuf);
  if (format === 'yaml') return decodeYaml(body.toString('utf8'));
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
