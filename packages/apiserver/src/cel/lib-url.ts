/**
 * Kubernetes' CEL URL library (`k8s.io/apiserver/pkg/cel/library/urls.go`): `url(s)` and `isURL(s)`
 * parse as Go's `url.ParseRequestURI` (an absolute URL or an absolute path), and a URL answers
 * `getScheme`, `getHost`, `getHostname`, `getPort`, `getEscapedPath` and `getQuery`.
 */
import { type Environment, EvaluationError } from '@marcbachmann/cel-js';
import { chargeSize } from './cost.ts';
import type { CelEquatable } from './values.ts';

/** A parsed URL (the parts Go's `url.URL` exposes to the library). */
export class CelUrl implements CelEquatable {
  readonly scheme: string;
  readonly host: string;
  readonly escapedPath: string;
  readonly rawQuery: string;
  readonly text: string;

  constructor(scheme: string, host: string, escapedPath: string, rawQuery: string, text: string) {
    this.scheme = scheme;
    this.host = host;
    this.escapedPath = escapedPath;
    this.rawQuery = rawQuery;
    this.text = text;
  }

  celEquals(other: unknown): boolean {
    return other instanceof CelUrl && other.text === this.text;
  }
}

function unescapeUrl(text: string, plusIsSpace: boolean): string | undefined {
  if (/%(?![0-9A-Fa-f]{2})/.test(text)) return undefined;
  try {
    return decodeURIComponent(plusIsSpace ? text.replaceAll('+', ' ') : text);
  } catch {
    return undefined;
  }
}

/** Go's `url.ParseRequestURI`; an Error carries Go's message (`parse "x": invalid URI for request`). */
export function parseRequestUri(raw: string): CelUrl | Error {
  const fail = (why: string): Error => new Error(`parse ${JSON.stringify(raw)}: ${why}`);
  if (Array.from(raw).some((ch) => ch.charCodeAt(0) < 0x20 || ch.charCodeAt(0) === 0x7f)) {
    return fail('net/url: invalid control character in URL');
  }
  if (raw === '') return fail('empty url');
  if (raw === '*') return new CelUrl('', '', '*', '', raw);
  let scheme = '';
  let rest = raw;
  const s = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(raw);
  if (s !== null) {
    scheme = (s[1] ?? '').toLowerCase();
    rest = raw.slice(s[0].length);
  } else if (raw.startsWith(':')) {
    return fail('missing protocol scheme');
  }
  let query = '';
  const q = rest.indexOf('?');
  if (q >= 0) {
    query = rest.slice(q + 1);
    rest = rest.slice(0, q);
  }
  if (!rest.startsWith('/')) {
    if (scheme !== '') return new CelUrl(scheme, '', '', query, raw);
    return fail('invalid URI for request');
  }
  let host = '';
  if (scheme !== '' && rest.startsWith('//')) {
    const slash = rest.indexOf('/', 2);
    let authority = slash < 0 ? rest.slice(2) : rest.slice(2, slash);
    rest = slash < 0 ? '' : rest.slice(slash);
    const at = authority.lastIndexOf('@');
    if (at >= 0) authority = authority.slice(at + 1);
    const problem = hostProblem(authority);
    if (problem !== undefined) return fail(problem);
    host = authority;
  }
  if (unescapeUrl(rest, false) === undefined) {
    const bad = /%(?![0-9A-Fa-f]{2}).{0,2}/.exec(rest)?.[0] ?? '%';
    return fail(`invalid URL escape ${JSON.stringify(bad)}`);
  }
  return new CelUrl(scheme, host, rest, query, raw);
}

function hostProblem(host: string): string | undefined {
  if (host.startsWith('[')) {
    const close = host.indexOf(']');
    if (close < 0) return "missing ']' in host";
    const after = host.slice(close + 1);
    if (after !== '' && !/^:\d*$/.test(after)) return `invalid port ${JSON.stringify(after)} after host`;
    return undefined;
  }
  const colon = host.lastIndexOf(':');
  if (colon >= 0 && !/^\d*$/.test(host.slice(colon + 1))) {
    return `invalid port ${JSON.stringify(host.slice(colon))} after host`;
  }
  return undefined;
}

function hostname(u: CelUrl): string {
  const host = u.host;
  if (host.startsWith('[')) return host.slice(1, host.indexOf(']'));
  const colon = host.lastIndexOf(':');
  return colon >= 0 ? host.slice(0, colon) : host;
}

function port(u: CelUrl): string {
  const host = u.host;
  const close = host.startsWith('[') ? host.indexOf(']') : -1;
  const colon = host.lastIndexOf(':');
  return colon > close ? host.slice(colon + 1) : '';
}

/** Go's `url.Values` of the raw query: keys to all their values, in order. */
function queryOf(u: CelUrl): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const part of u.rawQuery.split('&')) {
    if (part === '' || part.includes(';')) continue;
    const eq = part.indexOf('=');
    const key = unescapeUrl(eq < 0 ? part : part.slice(0, eq), true);
    const value = unescapeUrl(eq < 0 ? '' : part.slice(eq + 1), true);
    if (key === undefined || value === undefined) continue;
    out.set(key, [...(out.get(key) ?? []), value]);
  }
  return out;
}

function url(text: string): CelUrl {
  chargeSize(text.length);
  const u = parseRequestUri(text);
  if (u instanceof Error)
    throw new EvaluationError(`URL parse error during conversion from string: ${u.message}`);
  return u;
}

/** Registers the URL library on `env` (type `kubernetes.URL`). */
export function registerUrlLibrary(env: Environment): void {
  const T = 'kubernetes.URL';
  env.registerType(T, CelUrl);
  env.registerFunction(`url(string): ${T}`, url);
  env.registerFunction('isURL(string): bool', (s: string) => !(parseRequestUri(s) instanceof Error));
  env.registerFunction(`${T}.getScheme(): string`, (u: CelUrl) => u.scheme);
  env.registerFunction(`${T}.getHost(): string`, (u: CelUrl) => u.host);
  env.registerFunction(`${T}.getHostname(): string`, hostname);
  env.registerFunction(`${T}.getPort(): string`, port);
  env.registerFunction(`${T}.getEscapedPath(): string`, (u: CelUrl) => u.escapedPath);
  env.registerFunction(`${T}.getQuery(): map<string, list<string>>`, queryOf);
}
