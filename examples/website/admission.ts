/**
 * The Website's admission webhooks, as plain functions a unit test calls without a server:
 *
 * - {@link defaultWebsite} (mutating): `spec.replicas` 1 and `spec.image` {@link DEFAULT_IMAGE}
 *   when unset; `spec.domain` lowercased and without a trailing dot (DNS names are not case
 *   sensitive, and `example.com.` is `example.com`).
 * - {@link validateWebsite} (validating): refuses a `spec.domain` that is not a DNS name, with a
 *   message saying what a valid one looks like; warns about a Website scaled to 0 and about an
 *   image without a pinned tag.
 *
 * The CRD carries what a schema can say (types, `replicas` 0–50, the domain immutable through a
 * CEL transition rule); these say what it cannot, with messages written for people.
 */
import {
  type AdmissionRequest,
  type AdmissionResult,
  allowed,
  type Defaulter,
  denied,
  type Validator,
} from '@converge/runtime';
import type { Website } from './types.ts';

/** The image a Website runs when its spec names none. */
export const DEFAULT_IMAGE = 'nginx:1.27';
/** The replicas a Website runs when its spec says nothing. */
export const DEFAULT_REPLICAS = 1;

const LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/**
 * Why `domain` is not an RFC 1123 DNS subdomain (lowercase letters, digits, `-` and `.`, labels
 * of 1–63 characters starting and ending with a letter or digit, 253 characters at most), or
 * undefined when it is one.
 */
export function domainProblem(domain: unknown): string | undefined {
  if (typeof domain !== 'string') return 'it is not a string';
  if (domain === '') return 'it is empty';
  if (domain.length > 253) return `it has ${domain.length} characters, at most 253 are allowed`;
  for (const label of domain.split('.')) {
    if (label === '') return 'it has an empty label (two dots in a row, or a dot at an end)';
    if (label.length > 63)
      return `its label ${JSON.stringify(label.slice(0, 16))}… is longer than 63 characters`;
    if (!LABEL.test(label)) {
      return (
        `its label ${JSON.stringify(label)} is not lowercase letters, digits and '-' ` +
        `starting and ending with a letter or digit`
      );
    }
  }
  return undefined;
}

/** Fills in what a user may leave out, and puts the domain in its canonical form. */
export const defaultWebsite: Defaulter<Website> = {
  default(site, request) {
    const spec = site.spec;
    // Not an object: nothing to default, the schema validation refuses it.
    if (typeof spec !== 'object' || spec === null || Array.isArray(spec)) return site;
    // Only on CREATE: the domain is immutable afterwards (the CRD's CEL rule), even in another case.
    const domain =
      request.operation === 'CREATE' && typeof spec.domain === 'string'
        ? spec.domain.toLowerCase().replace(/\.$/, '')
        : spec.domain;
    return {
      ...site,
      spec: {
        ...spec,
        domain,
        replicas: spec.replicas ?? DEFAULT_REPLICAS,
        image: spec.image ?? DEFAULT_IMAGE,
      },
    };
  },
};

/** Whether `image` names a tag other than `latest` or a digest. */
function pinned(image: string): boolean {
  if (image.includes('@')) return true;
  const tag = /:([^/:]+)$/.exec(image)?.[1];
  return tag !== undefined && tag !== 'latest';
}

const specOf = (site: Website | null): Partial<Website['spec']> =>
  typeof site?.spec === 'object' && site.spec !== null ? site.spec : {};

/**
 * Refuses a malformed domain; warns about settings that are allowed but rarely meant. An update
 * that keeps the stored domain is not refused for it (ratcheting, as the API server does for CRD
 * rules): a Website stored before this webhook existed can still get its finalizer removed.
 */
export const validateWebsite: Validator<Website> = {
  validate(request: AdmissionRequest<Website>): AdmissionResult {
    const site = request.object;
    if (request.operation === 'DELETE' || site === null) return allowed();
    const { domain, replicas, image } = specOf(site);
    const kept = request.operation === 'UPDATE' && domain === specOf(request.oldObject).domain;
    const problem = kept ? undefined : domainProblem(domain);
    if (problem !== undefined) {
      // 403 Forbidden, controller-runtime's `Denied`: kubectl prints `Error from server (Forbidden): …
      // admission webhook "…" denied the request: …` (a 422 without causes reads `The request is invalid`).
      return denied(
        `spec.domain ${JSON.stringify(domain ?? '')} is not a valid domain name: ${problem} (for example hello.example.com)`,
      );
    }
    const warnings: string[] = [];
    if (replicas === 0) warnings.push('spec.replicas is 0: the Website serves nothing until it is scaled up');
    if (typeof image === 'string' && !pinned(image)) {
      warnings.push(
        `spec.image ${image} has no pinned tag: name a version (nginx:1.27) so that rollouts are deliberate`,
      );
    }
    return allowed({ warnings });
  },
};
