/**
 * Strategic merge patch and server-side apply for the embedded apiserver: pure functions (no HTTP)
 * the request handlers call with the live object and the request body.
 *
 * - {@link patchSchemaFor} — patch metadata of the built-in kinds we serve (merge keys, list types);
 *   undefined for custom resources, which get theirs from {@link patchSchemaFromOpenAPI}
 * - {@link applyStrategicMergePatch} — `application/strategic-merge-patch+json`, with `$patch`,
 *   `$setElementOrder`, `$deleteFromPrimitiveList` and `$retainKeys`
 * - {@link serverSideApply} — `application/apply-patch+yaml`: merge, field removal, ownership,
 *   conflicts (409) and `force`
 * - {@link updateManagedFields} — ownership for every other write (create, update, patch)
 * - {@link fieldsV1Of} — the FieldsV1 set encoding of what an object sets
 * - {@link validateFieldManager} — the `fieldManager` parameter's rules
 *
 * Errors are the runtime's typed backend errors (BadRequestError 400, InvalidError 422,
 * ConflictError 409), each with a {@link PatchError} cause whose code is one of
 * {@link PatchErrorCodes}.
 *
 * @example
 * const schema = patchSchemaFor('apps', 'v1', 'Deployment');
 * const patched = applyStrategicMergePatch(live, body, schema!);
 * patched.metadata.managedFields = updateManagedFields({ live, updated: patched, manager: 'kubectl-patch', apiVersion: 'apps/v1', now, schema });
 *
 * @module
 */
export { patchSchemaFor } from './builtin-schemas.ts';
export { patchSchemaFromOpenAPI } from './crd-schema.ts';
export { PatchError, type PatchErrorCode, PatchErrorCodes } from './errors.ts';
export { FIELD_MANAGER_MAX_LENGTH, validateFieldManager } from './field-manager.ts';
export { fieldsV1Of } from './fields-v1-of.ts';
export { LAST_APPLIED_ANNOTATION } from './last-applied.ts';
export { MAX_UPDATE_MANAGERS, type ManagedFieldsEntry } from './managed-fields.ts';
export type { ListSchema, MapSchema, PatchSchema, StructSchema } from './schema.ts';
export {
  type ServerSideApplyInput,
  type ServerSideApplyResult,
  serverSideApply,
} from './server-side-apply.ts';
export { applyStrategicMergePatch } from './strategic-merge.ts';
export {
  type ResetFields,
  type UpdateManagedFieldsInput,
  updateManagedFields,
} from './update-managed-fields.ts';
