import type { IncomingMessage, ServerResponse } from 'node:http';
import { notAcceptable } from './errors.ts';
import { parseAccept } from './media.ts';
import { openApiV2Protobuf } from './openapi-v2-proto.ts';
import type { OpenApiV3 } from './openapi-v3.ts';

/** What kubectl asks `/openapi/v2` for (gnostic's OpenAPI v2 protobuf). */
export const OPENAPI_V2_PROTOBUF = 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf';

/**
 * `GET /openapi/v2`: the generated definitions of the built-in kinds served, as JSON for
 * `application/json`, `*∕*` or no `Accept`; an `ETag` of the document's hash and `If-None-Match`
 * answered with 304, as kube-apiserver does; gnostic's protobuf form when asked for
 * ({@link OPENAPI_V2_PROTOBUF}, what kubectl requests).
 */
export function serveOpenApiV2(openapi: OpenApiV3, req: IncomingMessage, res: ServerResponse): void {
  const accept = req.headers.accept ?? '';
  // gnostic's media type has an `@`, which media-type parsing rejects: look at the raw ranges too.
  const json =
    accept.trim() === '' ||
    parseAccept(accept).some(
      (r) => r.type === 'application/json' || r.type === '*/*' || r.type === 'application/*',
    );
  const doc = openapi.v2();
  if (!json && accept.includes(OPENAPI_V2_PROTOBUF)) {
    const body = openApiV2Protobuf(JSON.parse(doc.body) as Record<string, unknown>);
    res.writeHead(200, {
      // `@` is not valid in a media type: client-go parses this spelling (kube-openapi's)
      'Content-Type': 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf',
      'Content-Length': String(body.byteLength),
      'Cache-Control': 'no-cache, private',
      ETag: `"${doc.hash}"`,
    });
    res.end(body);
    return;
  }
  if (!json) throw notAcceptable(['application/json', OPENAPI_V2_PROTOBUF]);
  const etag = `"${doc.hash}"`;
  if (req.headers['if-none-match'] === etag) {
    res.writeHead(304, { ETag: etag });
    res.end();
    return;
  }
  res.writeHead(200, {
    'Content-Type': 'application/json',
    'Content-Length': String(Buffer.byteLength(doc.body)),
    'Cache-Control': 'no-cache, private',
    ETag: etag,
  });
  res.end(doc.body);
}
