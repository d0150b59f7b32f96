import type { CheckReport } from '@converge/runtime';

/** Where probe checks come from: a `Manager` (`health()` for /healthz, `ready()` for /readyz). */
export interface ProbeSource {
  health(): Promise<CheckReport>;
  ready(): Promise<CheckReport>;
}

/** A text response. */
export interface TextResponse {
  readonly status: number;
  readonly body: string;
}

type Result = { readonly ok: boolean; readonly error?: string };

/**
 * The answer to `/healthz` or `/readyz` (`kind`), worded as kube-apiserver words it: `ok`, or with
 * `?verbose` (and always on failure) one line per check, `[+]name ok` or `[-]name failed: reason`,
 * then `<kind> check passed` or `<kind> check failed`. `?exclude=name` (repeatable) leaves a check
 * out. `check` names one check (`/readyz/<check>`): `ok`, or `internal server error: reason`; a
 * name that is not a check is a 404.
 */
export function probeResponse(
  kind: 'healthz' | 'readyz',
  report: CheckReport,
  query: URLSearchParams,
  check: string | undefined,
): TextResponse {
  const checks: [string, Result][] = [['ping', { ok: true }], ...Object.entries(report.checks)];
  if (check !== undefined) {
    const found = checks.find(([name]) => name === check);
    if (found === undefined)
      return { status: 404, body: `404 page not found: no ${kind} check named ${JSON.stringify(check)}\n` };
    const [, result] = found;
    return result.ok
      ? { status: 200, body: 'ok' }
      : { status: 500, body: `internal server error: ${oneLine(result.error)}\n` };
  }
  const excluded = new Set(query.getAll('exclude'));
  const unmatched = [...excluded].filter((name) => !checks.some(([n]) => n === name));
  const included = checks.filter(([name]) => !excluded.has(name));
  const failed = included.some(([, r]) => !r.ok);
  const verbose = query.has('verbose');
  if (!failed && !verbose) return { status: 200, body: 'ok' };
  let body = '';
  for (const [name, r] of included)
    body += r.ok ? `[+]${name} ok\n` : `[-]${name} failed: ${oneLine(r.error)}\n`;
  if (unmatched.length > 0) {
    body += `warn: some ${kind} checks cannot be excluded: no matches for ${unmatched.map((n) => JSON.stringify(n)).join(',')}\n`;
  }
  body += failed ? `${kind} check failed\n` : `${kind} check passed\n`;
  return { status: failed ? 500 : 200, body };
}

function oneLine(text: string | undefined): string {
  return (text ?? 'unknown').replace(/[\r\n]+/g, ' ');
}
