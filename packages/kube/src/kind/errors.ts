import { ConvergeError, type ConvergeErrorOptions } from '@converge/runtime';

/** Stable codes of the errors of kinds declared with `defineKind` (docs/errors.md, "Kinds"). */
export const KindErrorCodes = {
  /** An option of `defineKind` is missing or malformed; `error.field` names it. */
  OPTIONS_INVALID: 'CONVERGE_ERR_KIND_OPTIONS_INVALID',
  /** A schema cannot become a Kubernetes structural schema; `error.path` says where. */
  SCHEMA_UNSUPPORTED: 'CONVERGE_ERR_KIND_SCHEMA_UNSUPPORTED',
  /** Kinds given to `crdsOf` do not fit into one CRD (two storage versions, differing names, …). */
  CRD_CONFLICT: 'CONVERGE_ERR_KIND_CRD_CONFLICT',
  /** `importCrd` was given text that is not YAML of CustomResourceDefinitions it can import. */
  IMPORT_INVALID: 'CONVERGE_ERR_KIND_IMPORT_INVALID',
} as const;

/**
 * An option of `defineKind` is missing or malformed: `field` names it (`printerColumns[1].type`),
 * the message says what was expected.
 *
 * @example
 * try { defineKind({ group: 'Example', version: 'v1', kind: 'Website', spec }); }
 * catch (error) { if (error instanceof KindOptionsError) console.error(error.field); } // 'group'
 */
export class KindOptionsError extends ConvergeError {
  readonly field: string;
  constructor(field: string, problem: string, options?: ConvergeErrorOptions) {
    super(KindErrorCodes.OPTIONS_INVALID, `defineKind: invalid option ${field}: ${problem}`, options);
    this.field = field;
  }
}

/**
 * A TypeBox (or JSON) schema cannot become a Kubernetes structural schema: a union of different
 * types, a `$ref`, a tuple, a recursive type, a record whose keys are restricted, … `path` is where
 * in the kind's object it sits (`spec.rules.items`), `kind` the kind it belongs to.
 *
 * @example
 * // defineKind({ …, spec: Type.Object({ x: Type.Union([Type.String(), Type.Number()]) }) }) throws
 * // KindSchemaError: Website: spec.x: a union of different types is not structural …
 */
export class KindSchemaError extends ConvergeError {
  readonly kind: string;
  readonly path: string;
  constructor(kind: string, path: string, problem: string, options?: ConvergeErrorOptions) {
    super(KindErrorCodes.SCHEMA_UNSUPPORTED, `${kind}: ${path}: ${problem}`, options);
    this.kind = kind;
    this.path = path;
  }
}

/**
 * Kinds given to `crdsOf` that share a group and plural do not make one valid CRD: no or several
 * storage versions, a version declared twice, or a scope, kind or names that differ between
 * versions. `crd` is the CRD's name (`plural.group`).
 *
 * @example
 * crdsOf([websiteV1, websiteV2]); // both storage: true → KindConflictError
 */
export class KindConflictError extends ConvergeError {
  readonly crd: string;
  constructor(crd: string, problem: string, options?: ConvergeErrorOptions) {
    super(KindErrorCodes.CRD_CONFLICT, `CustomResourceDefinition ${crd}: ${problem}`, options);
    this.crd = crd;
  }
}

/**
 * `importCrd` (and `converge import`) was given something it cannot import: text that is not YAML,
 * a document that is not an `apiextensions.k8s.io/v1` CustomResourceDefinition, or a CRD whose
 * schema is malformed. `field` is where (`spec.versions[0].schema.openAPIV3Schema.properties.spec`),
 * `document` the index of the YAML document.
 *
 * @example
 * try { importCrd(text); } catch (error) { if (error instanceof CrdImportError) console.error(error.message); }
 */
export class CrdImportError extends ConvergeError {
  readonly document: number;
  readonly field: string;
  constructor(document: number, field: string, problem: string, options?: ConvergeErrorOptions) {
    super(
      KindErrorCodes.IMPORT_INVALID,
      `cannot import document ${document}${field === '' ? '' : ` at ${field}`}: ${problem}`,
      options,
    );
    this.document = document;
    this.field = field;
  }
}
