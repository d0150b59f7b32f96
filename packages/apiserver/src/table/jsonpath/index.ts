/**
 * client-go's `util/jsonpath`, as kube-apiserver uses it for CRD `additionalPrinterColumns`: one
 * `{…}` action parsed with the same grammar and quirks, evaluated over unstructured JSON with
 * missing keys allowed.
 *
 * @example
 * const nodes = parseJsonPath('.status.conditions[?(@.type=="Ready")].status');
 * const [values, error] = findResults(object, nodes); // values[0] === 'True'
 *
 * @module
 */
export { findResults, GoFloat } from './evaluate.ts';
export { JsonPathSyntaxError, type PathNode, parseJsonPath, type SliceParam } from './parse.ts';
