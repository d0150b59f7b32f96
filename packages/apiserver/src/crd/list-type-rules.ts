/**
 * The CRD schema rules of `x-kubernetes-list-type`, `x-kubernetes-list-map-keys` and
 * `x-kubernetes-map-type` (apiextensions' checks, including the map-key default/nullable rules).
 */
import type { StatusCause } from '@converge/runtime';
import { forbidden, GoLiteral, goStrings, invalid, notSupported, path, required } from './field-errors.ts';
import { goSyntax } from './go-format.ts';
import { isObject, type JsonObject, own } from './json.ts';

function str(s: JsonObject, key: string): string {
  const v = own(s, key);
  return typeof v === 'string' ? v : '';
}

function has(s: JsonObject, key: string): boolean {
  const v = own(s, key);
  return v !== undefined && v !== null;
}

/** Appends the list/map-type rule violations of schema node `s` at path `at`. */
export function listRules(s: JsonObject, at: string, out: StatusCause[]): void {
  const type = str(s, 'type');
  const listType = own(s, 'x-kubernetes-list-type');
  const mapType = own(s, 'x-kubernetes-map-type');
  const items = own(s, 'items');
  const itemSchema = isObject(items) ? items : undefined;
  if (typeof mapType === 'string' && type !== 'object') {
    const detail = 'must be object if x-kubernetes-map-type is specified';
    out.push(
      type === '' ? required(path.child(at, 'type'), detail) : invalid(path.child(at, 'type'), type, detail),
    );
  }
  if (typeof mapType === 'string' && mapType !== 'atomic' && mapType !== 'granular') {
    out.push(notSupported(path.child(at, 'x-kubernetes-map-type'), mapType, ['atomic', 'granular']));
  }
  if (typeof listType === 'string' && type !== 'array') {
    const detail = 'must be array if x-kubernetes-list-type is specified';
    out.push(
      type === '' ? required(path.child(at, 'type'), detail) : invalid(path.child(at, 'type'), type, detail),
    );
  } else if (listType === 'set' && itemSchema !== undefined) {
    const itemType = str(itemSchema, 'type');
    const itemList = own(itemSchema, 'x-kubernetes-list-type');
    const itemMap = own(itemSchema, 'x-kubernetes-map-type');
    const detail = 'must be atomic as item of a list with x-kubernetes-list-type=set';
    if (itemType === 'array' && typeof itemList === 'string' && itemList !== 'atomic') {
      out.push(invalid(path.child(at, 'items', 'x-kubernetes-list-type'), itemList, detail));
    } else if (itemType === 'object' && itemMap !== 'atomic') {
      out.push(
        invalid(
          path.child(at, 'items', 'x-kubernetes-map-type'),
          typeof itemList === 'string' ? itemList : null,
          detail,
        ),
      );
    }
  }
  if (typeof listType === 'string' && !['atomic', 'set', 'map'].includes(listType)) {
    out.push(notSupported(path.child(at, 'x-kubernetes-list-type'), listType, ['atomic', 'set', 'map']));
  }
  const rawKeys = own(s, 'x-kubernetes-list-map-keys');
  const keys = Array.isArray(rawKeys) ? rawKeys.filter((k): k is string => typeof k === 'string') : [];
  if (keys.length > 0) {
    const detail = 'must be map if x-kubernetes-list-map-keys is non-empty';
    if (typeof listType !== 'string') out.push(required(path.child(at, 'x-kubernetes-list-type'), detail));
    else if (listType !== 'map')
      out.push(invalid(path.child(at, 'x-kubernetes-list-type'), listType, detail));
  }
  if (listType === 'map') {
    if (keys.length === 0)
      out.push(
        required(
          path.child(at, 'x-kubernetes-list-map-keys'),
          'must not be empty if x-kubernetes-list-type is map',
        ),
      );
    if (items === undefined || items === null)
      out.push(required(path.child(at, 'items'), 'must have a schema if x-kubernetes-list-type is map'));
    if (Array.isArray(items))
      out.push(
        invalid(
          path.child(at, 'items'),
          new GoLiteral(goSyntax(items)),
          'must only have a single schema if x-kubernetes-list-type is map',
        ),
      );
    if (itemSchema !== undefined && str(itemSchema, 'type') !== 'object') {
      out.push(
        invalid(
          path.child(at, 'items', 'type'),
          str(itemSchema, 'type'),
          "must be object if parent array's x-kubernetes-list-type is map",
        ),
      );
    }
    if (itemSchema !== undefined && str(itemSchema, 'type') === 'object') {
      const props = own(itemSchema, 'properties');
      const seen = new Set<string>();
      for (const k of keys) {
        const prop = isObject(props) ? own(props, k) : undefined;
        if (isObject(prop)) {
          const t = str(prop, 'type');
          if (t === 'array' || t === 'object') {
            out.push(
              invalid(
                path.child(path.key(path.child(at, 'items', 'properties'), k), 'type'),
                'object',
                "must be a scalar type if parent array's x-kubernetes-list-type is map",
              ),
            );
          }
        } else {
          out.push(
            invalid(
              path.child(at, 'x-kubernetes-list-map-keys'),
              goStrings(keys),
              'entries must all be names of item properties',
            ),
          );
        }
        if (seen.has(k))
          out.push(
            invalid(
              path.child(at, 'x-kubernetes-list-map-keys'),
              goStrings(keys),
              'must not contain duplicate entries',
            ),
          );
        seen.add(k);
      }
    }
  }
  if (itemSchema !== undefined && (listType === 'set' || listType === 'map')) {
    if (own(itemSchema, 'nullable') === true) {
      out.push(
        forbidden(
          path.child(at, 'items', 'nullable'),
          `cannot be nullable when x-kubernetes-list-type is ${listType}`,
        ),
      );
    }
    if (listType === 'map') {
      const props = own(itemSchema, 'properties');
      const requiredKeys = own(itemSchema, 'required');
      for (const k of keys) {
        const prop = isObject(props) ? own(props, k) : undefined;
        if (!isObject(prop)) continue;
        const propPath = path.key(path.child(at, 'items', 'properties'), k);
        const isRequired = Array.isArray(requiredKeys) && requiredKeys.includes(k);
        if (!isRequired && !has(prop, 'default')) {
          out.push(
            required(
              path.child(propPath, 'default'),
              'this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property',
            ),
          );
        }
        if (own(prop, 'nullable') === true) {
          out.push(
            forbidden(
              path.child(propPath, 'nullable'),
              'this property is in x-kubernetes-list-map-keys, so it cannot be nullable',
            ),
          );
        }
      }
    }
  }
}
