/**
 * Kinds declared in TypeScript: {@link defineKind} takes TypeBox schemas (the object type is
 * derived from them) and gives a resource type and a structural CRD schema; {@link crdsOf} turns
 * kinds into CustomResourceDefinitions; {@link kindOf} finds the kind of a resource type; and
 * {@link importCrd} writes a `defineKind` module from a CRD someone else owns.
 *
 * @module
 */
export { type Static, type TSchema, Type } from 'typebox';
export { Condition, Conditions, type TCondition } from './conditions.ts';
export { crdsOf } from './crds.ts';
export {
  defineKind,
  type Kind,
  type KindObject,
  type KindOptions,
  type KindValidation,
  kindOf,
  type ObjectOfKind,
  type PrinterColumn,
  type ScaleOptions,
} from './define-kind.ts';
export {
  CrdImportError,
  KindConflictError,
  KindErrorCodes,
  KindOptionsError,
  KindSchemaError,
} from './errors.ts';
export { type ImportCrdOptions, importCrd } from './import-crd.ts';
export { IntOrString } from './int-or-string.ts';
