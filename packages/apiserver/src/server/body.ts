import type { IncomingMessage, ServerResponse } from 'node:http';
import { BadRequestError } from '@converge/runtime';
import { noteDuplicateFields } from './duplicate-fields.ts';
import { entityTooLarge, unsupportedMediaType } from './errors.ts';
import { checkJsonShape, LIMITS } from './limits.ts';
import { parseMediaType } from './media.ts';
import { noteBodySize } from './stage-yield.ts';
import { decodeYaml, decodeYamlSync } from './yaml-decode.ts';

/** kube-apiserver's request body limit: 3 MiB. */
export const MAX_BODY_BYTES = LIMITS.maxBodyBytes;

/**
 * How much more of a refused body is still read, and discarded, before the 413 is written: a
 * client still uploading when the server closes the connection sees a reset (a broken pipe), not
 * the answer. Past this the 413 is written at once and the connection closed.
 */
export const REFUSED_BODY_DRAIN_BYTES = LIMITS.maxBodyBytes;

/** Requests whose client waits for a `100 Continue` it was not sent: their body never comes. */
const continueWithheld = new WeakSet<IncomingMessage>();

/**
 * Reads a request body up to `limit` bytes. A longer body rejects with a 413 once it is read to
 * its end and discarded (so the client, done sending, can read the answer), or at once when it
 * declares or sends more than {@link REFUSED_BODY_DRAIN_BYTES} past the limit, or when the client
 * waits for a `100 Continue` it will not get (see {@link continueWithinLimit}). The caller closes
 * the connection after a 413.
 */
export function readBody(req: IncomingMessage, limit: number = MAX_BODY_BYTES): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  const drainUpTo = limit + REFUSED_BODY_DRAIN_BYTES;
  if (Number.isFinite(declared) && declared > limit && (declared > drainUpTo || continueWithheld.has(req)))
    return Promise.reject(entityTooLarge(limit));
  return new Promise<Buffer>((resolve, reject) => {
    let chunks: Buffer[] = [];
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
      else {
        noteBodySize(req, size);
        resolve(Buffer.concat(chunks, size));
      }
    };
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > drainUpTo) {
        req.pause();
        finish(entityTooLarge(limit));
      } else if (size > limit) {
        chunks = [];
      } else {
        chunks.push(chunk);
      }
    };
    const onEnd = (): void => finish(size > limit ? entityTooLarge(limit) : undefined);
    const onError = (error: Error): void => finish(error);
    const onAborted = (): void => finish(new BadRequestError('the request body was not received completely'));
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('aborted', onAborted);
  });
}

/**
 * The server's `checkContinue` listener (`Expect: 100-continue`): a body declared over the limit
 * is refused, as kube-apiserver refuses it, without `100 Continue`, so the client never sends it
 * and reads the 413 (Node would otherwise answer `100 Continue` to every such request, and the
 * client, sending, would meet a closed connection); any other request gets `100 Continue` and is
 * handled as usual. The refused request still goes through `handle` (authentication first: an
 * unauthenticated one is a 401), whose body read rejects at once; its connection is closed after
 * the answer, since the body was never sent.
 */
export function continueWithinLimit(
  handle: (req: IncomingMessage, res: ServerResponse) => void,
  limit: number = MAX_BODY_BYTES,
): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > limit) {
      continueWithheld.add(req);
      res.setHeader('Connection', 'close');
    } else {
      res.writeContinue();
    }
    handle(req, res);
  };
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
 * than {@link LIMITS}.maxDepth; more than {@link LIMITS}.maxKeys keys is a 413 (both checked in
 * one pass before parsing).
 */
export function parseJson(text: string): unknown {
  checkJsonShape(text);
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
