import { isNotFound } from '../backend/index.ts';

/**
 * For `.catch`: a {@link NotFoundError} becomes `undefined`, any other error is thrown on. Reading
 * something that may be gone, or deleting something that may already be, is then one line.
 *
 * @example
 * const site = await client.get(websiteType, key).catch(ignoreNotFound);
 * if (site === undefined) return done(); // deleted meanwhile
 * await client.delete(configMapType, { namespace, name: `${name}-content` }).catch(ignoreNotFound);
 */
export function ignoreNotFound(error: unknown): undefined {
  if (isNotFound(error)) return undefined;
  throw error;
}
