import { createRequire } from 'node:module';
import type * as Undici from 'undici';

let loaded: typeof Undici | undefined;

/**
 * undici, loaded when the first connection pool is made rather than when this package is imported:
 * it is ~110 modules and ~0.2 s of CPU, which every `converge` command paid at start (`dev`,
 * `serve`, `simulate` and `why` never talk to a cluster through it).
 */
export function undici(): typeof Undici {
  loaded ??= createRequire(import.meta.url)('undici') as typeof Undici;
  return loaded;
}
