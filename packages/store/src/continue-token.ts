import { BadRequestError, ExpiredError } from '@converge/runtime';

const VERSION = 'meta.k8s.io/v1';
const BASE64URL = /^[A-Za-z0-9_-]+$/;
const MAX_TOKEN = 4096;

/** Where the next page of a paginated list starts: the snapshot revision and the first key. */
export interface ContinueToken {
  readonly revision: number;
  /** The next page holds keys `>= start`. */
  readonly start: string;
}

/** Encodes a continue token as Kubernetes does: base64url of `{"v","rv","start"}`. */
export function encodeContinue(token: ContinueToken): string {
  return Buffer.from(JSON.stringify({ v: VERSION, rv: token.revision, start: token.start }), 'utf8').toString(
    'base64url',
  );
}

function invalid(reason: string): BadRequestError {
  return new BadRequestError(`continue key is not valid: ${reason}`);
}

/** Decodes a continue token; anything that is not one this store made is a {@link BadRequestError}. */
export function decodeContinue(text: unknown): ContinueToken {
  if (typeof text !== 'string' || text.length === 0 || text.length > MAX_TOKEN || !BASE64URL.test(text)) {
    throw invalid('not base64url');
  }
  let body: unknown;
  try {
    body = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    throw invalid('not JSON');
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw invalid('not an object');
  const { v, rv, start } = body as Record<string, unknown>;
  if (v !== VERSION) throw invalid(`unknown version ${JSON.stringify(v)}`);
  if (typeof rv !== 'number' || !Number.isSafeInteger(rv) || rv < 1) {
    throw invalid(`incorrect encoded start resourceVersion (version ${VERSION})`);
  }
  if (typeof start !== 'string' || start.length === 0 || start.length > 1024) throw invalid('no start key');
  return { revision: rv, start };
}

/** The 410 for a continue token whose snapshot was compacted away. */
export function continueExpired(): ExpiredError {
  return new ExpiredError(
    'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.',
  );
}
