import { InternalError, type KubeObject, type WriteOptions } from '@converge/runtime';
import type { ServedType, StoreCore } from './core.ts';
import { metaOf, toDraft } from './draft.ts';
import { alreadyExists, forbidden, invalid } from './errors.ts';
import { deepFreeze } from './json.ts';
import { encodeKey } from './keys.ts';
import { namespaceTerminating } from './namespaces.ts';
import { prepareCreate } from './prepare.ts';
import { validateMeta } from './validate.ts';

/** Characters of generated name suffixes (no vowels, no look-alikes), as in apimachinery. */
const ALPHANUMS = 'bcdfghjklmnpqrstvwxz2456789';
const SUFFIX_LENGTH = 5;
const MAX_GENERATED_PREFIX = 63 - SUFFIX_LENGTH;
/** How many generated names are tried before a collision is reported (`RetryGenerateName`). */
const GENERATE_ATTEMPTS = 8;

/**
 * Creates an object, mirroring the apiserver: namespace lifecycle admission (no new content in a
 * terminating namespace), the create strategy, name generation, metadata validation, then storage
 * (a resourceVersion in the body is an InternalError, an existing key an AlreadyExistsError; a
 * generated name that collides is retried).
 */
export function createObject(
  core: StoreCore,
  td: ServedType,
  input: unknown,
  options: WriteOptions,
): KubeObject {
  const type = td.type;
  const draft = toDraft(type, input);
  const meta = metaOf(draft);
  const namespace = meta.namespace ?? '';
  if (type.namespaced && namespaceTerminating(core, namespace)) {
    throw forbidden(
      type,
      meta.name ?? '',
      `unable to create new content in namespace ${namespace} because it is being terminated`,
    );
  }
  prepareCreate(type, draft, core.options.clock.now(), core.options.newUid);
  const generated = (meta.name ?? '') === '' && (meta.generateName ?? '') !== '';
  for (let attempt = 1; ; attempt++) {
    if (generated)
      draft.metadata.name = generateName(meta.generateName as string, () => core.options.clock.random());
    const causes = validateMeta(type, draft, true);
    if (causes.length > 0) throw invalid(type, meta.name ?? '', causes);
    if ((meta.resourceVersion ?? '') !== '') {
      throw new InternalError('resourceVersion should not be set on objects to be created');
    }
    const name = meta.name as string;
    const key = encodeKey(namespace, name);
    const existing = td.latest(key);
    if (existing !== undefined) {
      if (generated && attempt < GENERATE_ATTEMPTS) continue;
      throw alreadyExists(type, name, existing.metadata.deletionTimestamp !== undefined);
    }
    if (options.dryRun === true) return deepFreeze(draft) as unknown as KubeObject;
    return core.commit(td, key, undefined, draft);
  }
}

/** `base` (cut to 58 characters) plus 5 random characters from {@link ALPHANUMS}. */
export function generateName(base: string, random: () => number): string {
  let suffix = '';
  for (let i = 0; i < SUFFIX_LENGTH; i++) suffix += ALPHANUMS[Math.floor(random() * ALPHANUMS.length)] ?? 'b';
  return base.slice(0, MAX_GENERATED_PREFIX) + suffix;
}
