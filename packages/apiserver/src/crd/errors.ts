import { ConvergeError, type ConvergeErrorOptions, type StatusCause } from '@converge/runtime';

/**
 * Stable error codes of the CRD module (never reused). Validation problems of a CRD or of a custom
 * resource are not errors: they come back as `StatusCause[]` for a 422. These codes are for input
 * that cannot be read at all.
 *
 * @example
 * if ((error as { code?: string }).code === CrdErrorCodes.DECODE) answer400(error.message);
 */
export const CrdErrorCodes = {
  /** A CRD has a field of the wrong JSON type (kube-apiserver answers 400 while decoding). */
  DECODE: 'CONVERGE_ERR_APISERVER_CRD_DECODE',
  /** A schema handed to validate/prune/default/OpenAPI is malformed (not a JSONSchemaProps). */
  SCHEMA_INVALID: 'CONVERGE_ERR_APISERVER_CRD_SCHEMA_INVALID',
  /** An object holds something JSON cannot carry (undefined, NaN, a function, a cycle, a bigint). */
  NOT_JSON: 'CONVERGE_ERR_APISERVER_CRD_NOT_JSON',
  /** A scale path crosses a non-object or ends at a non-integer (kube-apiserver answers 500). */
  SCALE_PATH: 'CONVERGE_ERR_APISERVER_CRD_SCALE_PATH',
  /** A printer column's JSONPath cannot be parsed. */
  JSONPATH: 'CONVERGE_ERR_APISERVER_CRD_JSONPATH',
  /** A CRD handed to crdInfo/resourceTypesOf/openApiV3ForCrd does not pass validateCrd. */
  INVALID: 'CONVERGE_ERR_APISERVER_CRD_INVALID',
  /** The CRD does not declare the version asked for. */
  VERSION_NOT_FOUND: 'CONVERGE_ERR_APISERVER_CRD_VERSION_NOT_FOUND',
} as const;

/**
 * A CRD could not be decoded: a field holds the wrong JSON type. The message is kube-apiserver's
 * (`CustomResourceDefinition in version "v1" cannot be handled as a CustomResourceDefinition: json:
 * cannot unmarshal string into Go struct field …`); answer it as a 400 BadRequest.
 *
 * @example
 * try { validateCrd(body); } catch (e) { if (e instanceof CrdDecodeError) return badRequest(e.message); }
 */
export class CrdDecodeError extends ConvergeError {
  /** The HTTP status kube-apiserver answers with. */
  readonly status = 400;
  /** The JSON path of the offending field (`spec.versions[0].served`). */
  readonly field: string;

  constructor(field: string, message: string, options?: ConvergeErrorOptions) {
    super(CrdErrorCodes.DECODE, message, options);
    this.field = field;
  }
}

/**
 * A schema is not a JSONSchemaProps (a field of the wrong JSON type). Schemas that passed
 * {@link validateCrd} never raise it; it guards callers that hand in schemas from elsewhere.
 *
 * @example
 * expect(() => validateCustomResource({ type: 5 } as never, {})).toThrow(CrdSchemaError);
 */
export class CrdSchemaError extends ConvergeError {
  /** Where in the schema: `properties[spec].maxLength`. */
  readonly field: string;

  constructor(field: string, message: string, options?: ConvergeErrorOptions) {
    super(
      CrdErrorCodes.SCHEMA_INVALID,
      `invalid schema at ${field === '' ? '<root>' : field}: ${message}`,
      options,
    );
    this.field = field;
  }
}

/**
 * A value is not JSON data: decode request bodies with `JSON.parse` (or a YAML parser in JSON mode)
 * before handing them in.
 *
 * @example
 * expect(() => pruneUnknownFields(schema, { spec: { n: Number.NaN } })).toThrow(CrdNotJsonError);
 */
export class CrdNotJsonError extends ConvergeError {
  /** Where the value sits: `spec.items[2]`. */
  readonly field: string;

  constructor(field: string, what: string) {
    super(CrdErrorCodes.NOT_JSON, `${field === '' ? '<root>' : field}: ${what} is not a JSON value`);
    this.field = field;
  }
}

/**
 * The scale subresource cannot read or write its replicas: a path crosses a non-object or ends at a
 * non-integer. The message is kube's (`.spec.replicas accessor error: foo is of the type string,
 * expected int64`); kube-apiserver answers 500.
 *
 * @example
 * try { scaleOf(obj, scale); } catch (e) { if (e instanceof CrdScaleError) return internalError(e.message); }
 */
export class CrdScaleError extends ConvergeError {
  readonly status = 500;
  constructor(message: string) {
    super(CrdErrorCodes.SCALE_PATH, message);
  }
}

/**
 * A JSONPath expression (printer column) cannot be parsed; `validateCrd` only checks that column
 * paths start with `.`, as kube does, so this can surface when a table is rendered.
 *
 * @example
 * expect(() => printerColumnValues(obj, [{ name: 'X', type: 'string', priority: 0, jsonPath: '.a[' }])).toThrow(CrdJsonPathError);
 */
export class CrdJsonPathError extends ConvergeError {
  readonly expression: string;
  constructor(expression: string, problem: string) {
    super(CrdErrorCodes.JSONPATH, `unrecognized column definition "${expression}": ${problem}`);
    this.expression = expression;
  }
}

/**
 * The CRD has no version of that name.
 *
 * @example
 * expect(() => openApiV3ForCrd(crd, 'v9')).toThrow(CrdVersionNotFoundError);
 */
export class CrdVersionNotFoundError extends ConvergeError {
  readonly version: string;
  constructor(crdName: string, version: string) {
    super(
      CrdErrorCodes.VERSION_NOT_FOUND,
      `customresourcedefinition "${crdName}" has no version "${version}"`,
    );
    this.version = version;
  }
}

/**
 * A CRD that does not pass {@link validateCrd} was handed to a function that serves CRDs
 * (`crdInfo`, `resourceTypesOf`, `openApiV3ForCrd`, `establishedConditions`). Validate before storing.
 *
 * @example
 * try { crdInfo(crd); } catch (e) { if (e instanceof CrdInvalidError) console.error(e.causes); }
 */
export class CrdInvalidError extends ConvergeError {
  readonly causes: readonly StatusCause[];
  constructor(name: string, causes: readonly StatusCause[]) {
    const first = causes[0];
    const summary =
      first === undefined
        ? ''
        : `: ${first.field}: ${first.message}${causes.length > 1 ? ` (and ${causes.length - 1} more)` : ''}`;
    super(CrdErrorCodes.INVALID, `customresourcedefinition "${name}" is invalid${summary}`);
    this.causes = causes;
  }
}
