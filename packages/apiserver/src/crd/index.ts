/**
 * CustomResourceDefinitions for the embedded API server: pure functions, no I/O, with
 * kube-apiserver 1.32's semantics, field paths and messages.
 *
 * - Define: {@link validateCrd} / {@link validateCrdUpdate} (422 causes; {@link CrdDecodeError} for a
 *   400), {@link defaultCrd}, {@link crdInfo}, {@link resourceTypesOf}, {@link crdStatus} with
 *   {@link establishedConditions} (`NamesAccepted`, `Established`) and {@link takenNames}.
 * - Serve objects, in kube's order on every write: {@link pruneUnknownFields} (reported with
 *   {@link unknownFieldWarnings}, or {@link strictDecodingMessage} as a 400 under
 *   `fieldValidation=Strict`) → {@link applyDefaults} → {@link validateCustomResource} (or
 *   {@link validateCustomResourceStatus} for `/status`) plus {@link validateScale} →
 *   {@link validateCustomResourceRules} (the `x-kubernetes-validations` CEL rules, with `oldSelf`
 *   on updates) → {@link invalidError} for the 422.
 * - CEL rules of a CRD when it is written: {@link crdRuleCauses} (compile errors, `fieldPath`,
 *   `oldSelf` placement, estimated cost).
 * - Subresources, tables, selectors: {@link scaleOf}, {@link scaleObject}, {@link setScale},
 *   {@link printerColumnValues}, {@link tableColumnDefinitions}, {@link selectableFieldValues}.
 * - Discovery documents: {@link openApiV3ForCrd}, {@link openApiV3ForGroupVersion}.
 *
 * Inputs are never mutated; results are fresh JSON. Compiled schemas and validated CRDs are cached
 * per object, so hand in the (frozen) stored objects rather than mutating them in place.
 *
 * @example
 * import { applyDefaults, crdInfo, invalidError, pruneUnknownFields, validateCustomResource } from './crd/index.ts';
 *
 * const schema = crdInfo(crd).versions.find((v) => v.name === 'v1')?.schema ?? { type: 'object' };
 * const { object, pruned } = pruneUnknownFields(schema, body);
 * const defaulted = applyDefaults(schema, object);
 * const causes = validateCustomResource(schema, defaulted);
 * if (causes.length > 0) throw invalidError({ group: 'example.com', kind: 'Website' }, 'w1', causes);
 *
 * @module
 */

export { crdRuleCauses, STATIC_COST_LIMIT, STATIC_CRD_COST_LIMIT } from './cel-crd.ts';
export {
  type RuleValidationOptions,
  type RuleValidationResult,
  validateCustomResourceRules,
} from './cel-validate.ts';
export {
  crdStatus,
  establishedConditions,
  type TakenNames,
  takenNames,
  terminatingConditions,
} from './conditions.ts';
export { defaultCrd } from './crd-defaults.ts';
export {
  type CrdInfo,
  type CrdNames,
  type CrdVersionInfo,
  compareKubeVersions,
  crdInfo,
  DEFAULT_PRINTER_COLUMNS,
  type PrinterColumn,
  resourceTypesOf,
} from './crd-info.ts';
export { applyDefaults } from './defaults.ts';
export {
  CrdDecodeError,
  CrdErrorCodes,
  CrdInvalidError,
  CrdJsonPathError,
  CrdNotJsonError,
  CrdScaleError,
  CrdSchemaError,
  CrdVersionNotFoundError,
} from './errors.ts';
export { causeText, invalidError } from './field-errors.ts';
export { isPathSegmentName } from './names.ts';
export { modelName, openApiV3ForCrd, openApiV3ForGroupVersion } from './openapi.ts';
export {
  printerColumnValues,
  type TableColumnDefinition,
  tableColumnDefinitions,
} from './printer-columns.ts';
export { pruneUnknownFields, strictDecodingMessage, unknownFieldWarnings } from './prune.ts';
export { scaleObject, scaleOf, setScale, validateScale } from './scale.ts';
export { selectableFieldValues } from './selectable-fields.ts';
export type {
  CustomResourceColumnDefinition,
  CustomResourceConversion,
  CustomResourceDefinition,
  CustomResourceDefinitionNames,
  CustomResourceDefinitionStatus,
  CustomResourceDefinitionVersion,
  ScaleSubresource,
  StructuralSchema,
  ValidationRule,
} from './types.ts';
export { validateCrd, validateCrdUpdate } from './validate-crd.ts';
export { validateCustomResource, validateCustomResourceStatus } from './validate-object.ts';
