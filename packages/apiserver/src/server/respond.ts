import type { ServerResponse } from 'node:http';
import { stringify as toYaml } from 'yaml';
import { type Status, statusOf } from './status.ts';

/** How a response body is encoded. */
export interface Encoding {
  readonly yaml?: boolean;
  readonly pretty?: boolean;
  /** Overrides the Content-Type (aggregated discovery, Tables). */
  readonly contentType?: string;
}

/** `Warning: 299 - "text"` header values, as kube-apiserver sends them (kubectl prints `Warning: text`). */
export function warningHeaders(warnings: readonly string[]): string[] {
  return warnings.map((text) => `299 - ${JSON.stringify(text.replace(/[\r\n]+/g, ' '))}`);
}

/** Encodes a value as JSON (compact, or indented with `pretty`) or YAML. */
export function encode(value: unknown, encoding: Encoding = {}): { body: string; contentType: string } {
  if (encoding.yaml === true)
    return { body: toYaml(value, { aliasDuplicateObjects: false }), contentType: 'application/yaml' };
  const body =
    encoding.pretty === true ? `${JSON.stringify(value, null, 2)}\n` : `${JSON.stringify(value)}\n`;
  return { body, contentType: encoding.contentType ?? 'application/json' };
}

/** Writes a complete response (unless the response was already started or the socket is gone). */
export function writeValue(
  res: ServerResponse,
  code: number,
  value: unknown,
  encoding: Encoding = {},
  warnings: readonly string[] = [],
): void {
  if (res.headersSent || res.destroyed) return;
  const { body, contentType } = encode(value, encoding);
  const headers: Record<string, string | string[]> = {
    'Content-Type': contentType,
    'Cache-Control': 'no-cache, private',
    'Content-Length': String(Buffer.byteLength(body)),
  };
  if (warnings.length > 0) headers.Warning = warningHeaders(warnings);
  res.writeHead(code, headers);
  res.end(body);
}

/** Writes the `metav1.Status` of an error (always JSON) with its HTTP code; returns the Status. */
export function writeError(res: ServerResponse, error: unknown, pretty = false): Status {
  const status = statusOf(error);
  writeValue(res, status.code, status, { pretty });
  return status;
}

/** Writes a plain-text body (health checks). */
export function writeText(res: ServerResponse, code: number, text: string): void {
  if (res.headersSent || res.destroyed) return;
  res.writeHead(code, {
    'Content-Type': 'text/plain; charset=utf-8',
    'Cache-Control': 'no-cache, private',
    'Content-Length': String(Buffer.byteLength(text)),
  });
  res.end(text);
}
