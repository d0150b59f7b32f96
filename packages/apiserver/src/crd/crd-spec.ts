/**
 * Validation of a CRD's `spec` in kube's internal form: group, scope, names, versions (storage,
 * names, deprecation), schemas, subresources, printer columns, selectable fields and conversion.
 */
import type { StatusCause } from '@converge/runtime';
import { validateConversion } from './conversion-validation.ts';
import { anyStatusEnabled, type InternalSpec, subresourcesFor } from './crd-defaults.ts';
import {
  validateColumn,
  validateDeprecationWarning,
  validateNames,
  validateSelectableFields,
  validateSubresources,
} from './crd-parts.ts';
import { validateSchemaBlock } from './crd-schema.ts';
import { GoLiteral, invalid, notSupported, path, required } from './field-errors.ts';
import { goQuote } from './go-format.ts';
import { isObject, type JsonObject, own } from './json.ts';
import { isDns1035Label, isDns1123Subdomain } from './names.ts';

function str(o: unknown, key: string): string {
  const v = isObject(o) ? own(o, key) : undefined;
  return typeof v === 'string' ? v : '';
}

/** `%#v` of the internal versions list, as kube prints it (pointers elided). */
function versionsLiteral(internal: InternalSpec): GoLiteral {
  const ptr = (present: boolean, type: string): string => (present ? `(*${type})(…)` : `(*${type})(nil)`);
  const items = internal.versions.map((v) => {
    const fields = [
      `Name:${goQuote(str(v, 'name'))}`,
      `Served:${own(v, 'served') === true}`,
      `Storage:${own(v, 'storage') === true}`,
      `Deprecated:${own(v, 'deprecated') === true}`,
      `DeprecationWarning:${ptr(typeof own(v, 'deprecationWarning') === 'string', 'string')}`,
      `Schema:${ptr(!internal.identical.schema && isObject(own(v, 'schema')), 'apiextensions.CustomResourceValidation')}`,
      `Subresources:${ptr(!internal.identical.subresources && isObject(own(v, 'subresources')), 'apiextensions.CustomResourceSubresources')}`,
    ];
    return `apiextensions.CustomResourceDefinitionVersion{${fields.join(', ')}, …}`;
  });
  return new GoLiteral(`[]apiextensions.CustomResourceDefinitionVersion{${items.join(', ')}}`);
}

function hasDefaults(schema: unknown): boolean {
  if (Array.isArray(schema)) return schema.some(hasDefaults);
  if (!isObject(schema)) return false;
  return Object.entries(schema).some(([k, v]) =>
    k === 'default' ? v !== null && v !== undefined : k !== 'enum' && k !== 'example' && hasDefaults(v),
  );
}

function validateVersions(internal: InternalSpec, at: string, out: StatusCause[]): void {
  const seen = new Set<string>();
  let storage = 0;
  let unique = true;
  internal.versions.forEach((v, i) => {
    const vPath = path.index(path.child(at, 'versions'), i);
    const name = str(v, 'name');
    if (own(v, 'storage') === true) storage++;
    if (seen.has(name)) unique = false;
    seen.add(name);
    const errs = isDns1035Label(name);
    if (errs.length > 0) out.push(invalid(path.child(vPath, 'name'), name, errs.join(',')));
    validateDeprecationWarning(v, vPath, out);
    const subresources = subresourcesFor(internal, v);
    const statusEnabled = isObject(subresources) && isObject(own(subresources, 'status'));
    if (!internal.identical.schema)
      out.push(...validateSchemaBlock(own(v, 'schema'), statusEnabled, path.child(vPath, 'schema')));
    if (!internal.identical.subresources)
      validateSubresources(own(v, 'subresources'), path.child(vPath, 'subresources'), out);
    const columns = own(v, 'additionalPrinterColumns');
    if (!internal.identical.columns && Array.isArray(columns)) {
      columns.forEach((c: unknown, j) => {
        validateColumn(
          isObject(c) ? c : {},
          path.index(path.child(vPath, 'additionalPrinterColumns'), j),
          out,
        );
      });
    }
    const selectable = own(v, 'selectableFields');
    if (!internal.identical.selectableFields && Array.isArray(selectable) && selectable.length > 0) {
      const schema = internal.identical.schema ? undefined : own(v, 'schema');
      const root = isObject(schema) ? own(schema, 'openAPIV3Schema') : undefined;
      if (!isObject(root)) {
        out.push(
          invalid(
            path.child(vPath, 'selectableFields'),
            '',
            'may only be set when `version.schema.openAPIV3Schema` is not included',
          ),
        );
      } else {
        validateSelectableFields(selectable, root, path.child(vPath, 'selectableFields'), out);
      }
    }
  });
  if (!unique)
    out.push(
      invalid(path.child(at, 'versions'), versionsLiteral(internal), 'must contain unique version names'),
    );
  if (storage !== 1)
    out.push(
      invalid(
        path.child(at, 'versions'),
        versionsLiteral(internal),
        'must have exactly one version marked as storage version',
      ),
    );
  const first = internal.versions[0] === undefined ? '' : str(internal.versions[0], 'name');
  if (first !== '') {
    const errs = isDns1035Label(first);
    if (errs.length > 0) out.push(invalid(path.child(at, 'version'), first, errs.join(',')));
  }
}

/** Validates `spec` (in kube's internal form), appending causes under `spec.`. */
export function validateSpec(internal: InternalSpec, out: StatusCause[]): void {
  const at = 'spec';
  const spec = internal.spec;
  const group = str(spec, 'group');
  if (group === '') out.push(required(path.child(at, 'group')));
  else if (isDns1123Subdomain(group).length > 0)
    out.push(invalid(path.child(at, 'group'), group, isDns1123Subdomain(group).join(',')));
  else if (group.split('.').length < 2)
    out.push(invalid(path.child(at, 'group'), group, 'should be a domain with at least one dot'));
  const scope = str(spec, 'scope');
  if (scope === '') out.push(required(path.child(at, 'scope')));
  else if (scope !== 'Cluster' && scope !== 'Namespaced')
    out.push(notSupported(path.child(at, 'scope'), scope, ['Cluster', 'Namespaced']));
  const validationSchema = isObject(internal.validation)
    ? own(internal.validation, 'openAPIV3Schema')
    : undefined;
  if (!isObject(validationSchema)) {
    internal.versions.forEach((v, i) => {
      const schema = own(v, 'schema');
      if (internal.identical.schema || !isObject(schema) || !isObject(own(schema, 'openAPIV3Schema'))) {
        out.push(
          required(path.child(path.index(path.child(at, 'versions'), i), 'schema', 'openAPIV3Schema')),
        );
      }
    });
  }
  const preserve = own(spec, 'preserveUnknownFields') === true;
  if (preserve && hasDefaults(internal.versions.map((v) => own(v, 'schema')))) {
    out.push(
      invalid(
        path.child(at, 'preserveUnknownFields'),
        true,
        'must be false in order to use defaults in the schema',
      ),
    );
  }
  validateVersions(internal, at, out);
  const names = own(spec, 'names');
  const namesObject: JsonObject = isObject(names) ? names : {};
  for (const key of ['plural', 'singular', 'kind', 'listKind']) {
    if (str(namesObject, key) === '') out.push(required(path.child(at, 'names', key)));
  }
  validateNames(namesObject, path.child(at, 'names'), out);
  if (internal.identical.schema)
    out.push(
      ...validateSchemaBlock(internal.validation, anyStatusEnabled(internal), path.child(at, 'validation')),
    );
  if (internal.identical.subresources)
    validateSubresources(internal.subresources, path.child(at, 'subresources'), out);
  if (internal.identical.columns && Array.isArray(internal.columns)) {
    internal.columns.forEach((c: unknown, j) => {
      validateColumn(isObject(c) ? c : {}, path.index(path.child(at, 'additionalPrinterColumns'), j), out);
    });
  }
  if (
    internal.identical.selectableFields &&
    Array.isArray(internal.selectableFields) &&
    internal.selectableFields.length > 0
  ) {
    if (!isObject(validationSchema)) {
      out.push(
        invalid(
          path.child(at, 'selectableFields'),
          '',
          'may only be set when validations.schema is included',
        ),
      );
    } else {
      validateSelectableFields(
        internal.selectableFields,
        validationSchema,
        path.child(at, 'selectableFields'),
        out,
      );
    }
  }
  validateConversion(own(spec, 'conversion'), preserve, path.child(at, 'conversion'), out);
}
