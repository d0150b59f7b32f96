import type { ServerResponse } from 'node:http';
import { protoMessageOfKind } from '../builtin/index.ts';
import { type ApiResource, groupVersion } from './api-resource.ts';
import { drained } from './list-stream.ts';
import { warningHeaders } from './respond.ts';

/** The `Content-Type` of protobuf responses. */
export const PROTOBUF_MEDIA_TYPE = 'application/vnd.kubernetes.protobuf';

/** Whether objects of `resource` can be answered in protobuf (built-in kinds; never custom resources). */
export function servesProtobuf(resource: ApiResource): boolean {
  return (
    resource.crd === undefined && protoMessageOfKind(groupVersion(resource), resource.kind) !== undefined
  );
}

/** Writes a complete protobuf response (unless the response was already started or the socket is gone). */
export function writeProtobuf(
  res: ServerResponse,
  code: number,
  body: Uint8Array,
  warnings: readonly string[] = [],
): void {
  if (res.headersSent || res.destroyed) return;
  const headers: Record<string, string | string[]> = {
    'Content-Type': PROTOBUF_MEDIA_TYPE,
    'Cache-Control': 'no-cache, private',
    'Content-Length': String(body.byteLength),
  };
  if (warnings.length > 0) headers.Warning = warningHeaders(warnings);
  res.writeHead(code, headers);
  res.end(body);
}

/** Writes one frame of a protobuf watch stream, waiting for the socket when it is full. */
export async function writeFrame(res: ServerResponse, frame: Uint8Array): Promise<void> {
  if (res.writableEnded || res.destroyed) return;
  if (!res.write(frame)) await drained(res);
}
