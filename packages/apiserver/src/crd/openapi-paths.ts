/**
 * The REST paths of one CRD version in OpenAPI v3 form, with the operation ids, tags, descriptions,
 * parameters, bodies and responses kube-apiserver publishes.
 */
import type { CrdInfo, CrdVersionInfo } from './crd-info.ts';
import { META_SCHEMAS, ref } from './openapi-meta.ts';

type Param = Record<string, unknown>;

const query = (name: string, description: string, type = 'string'): Param => ({
  name,
  in: 'query',
  description,
  schema: { type, uniqueItems: true },
});

const P = {
  pretty: query(
    'pretty',
    "If 'true', then the output is pretty printed. Defaults to 'false' unless the user-agent indicates a browser or command-line HTTP tool (curl and wget).",
  ),
  allowWatchBookmarks: query(
    'allowWatchBookmarks',
    'allowWatchBookmarks requests watch events with type "BOOKMARK". Servers that do not implement bookmarks may ignore this flag.',
    'boolean',
  ),
  continue: query(
    'continue',
    'The continue option should be set when retrieving more results from the server.',
  ),
  dryRun: query(
    'dryRun',
    'When present, indicates that modifications should not be persisted. Valid values are: - All: all dry run stages will be processed',
  ),
  fieldManager: query(
    'fieldManager',
    'fieldManager is a name associated with the actor or entity that is making these changes.',
  ),
  fieldSelector: query(
    'fieldSelector',
    'A selector to restrict the list of returned objects by their fields. Defaults to everything.',
  ),
  fieldValidation: query(
    'fieldValidation',
    'fieldValidation instructs the server on how to handle objects in the request (POST/PUT/PATCH) containing unknown or duplicate fields. Valid values are: - Ignore - Warn (the default) - Strict',
  ),
  force: query(
    'force',
    'Force is going to "force" Apply requests. It means user will re-acquire conflicting fields owned by other people.',
    'boolean',
  ),
  gracePeriodSeconds: query(
    'gracePeriodSeconds',
    'The duration in seconds before the object should be deleted.',
    'integer',
  ),
  ignoreStoreReadError: query(
    'ignoreStoreReadErrorWithClusterBreakingPotential',
    'if set to true, it will trigger an unsafe deletion of the resource in case the normal deletion flow fails with a corrupt object error.',
    'boolean',
  ),
  labelSelector: query(
    'labelSelector',
    'A selector to restrict the list of returned objects by their labels. Defaults to everything.',
  ),
  limit: query('limit', 'limit is a maximum number of responses to return for a list call.', 'integer'),
  orphanDependents: query('orphanDependents', 'Deprecated: please use the PropagationPolicy.', 'boolean'),
  propagationPolicy: query(
    'propagationPolicy',
    "Whether and how garbage collection will be performed. Acceptable values are: 'Orphan', 'Background', 'Foreground'.",
  ),
  resourceVersion: query(
    'resourceVersion',
    'resourceVersion sets a constraint on what resource versions a request may be served from.',
  ),
  resourceVersionMatch: query(
    'resourceVersionMatch',
    'resourceVersionMatch determines how resourceVersion is applied to list calls.',
  ),
  sendInitialEvents: query(
    'sendInitialEvents',
    '`sendInitialEvents=true` may be set together with `watch=true`. In that case, the watch stream will begin with synthetic events to produce the current state of objects in the collection.',
    'boolean',
  ),
  timeoutSeconds: query('timeoutSeconds', 'Timeout for the list/watch call.', 'integer'),
  watch: query(
    'watch',
    'Watch for changes to the described resources and return them as a stream of add, update, and remove notifications.',
    'boolean',
  ),
};

const LIST = [
  P.allowWatchBookmarks,
  P.continue,
  P.fieldSelector,
  P.labelSelector,
  P.limit,
  P.resourceVersion,
  P.resourceVersionMatch,
  P.sendInitialEvents,
  P.timeoutSeconds,
  P.watch,
];
const DELETE = [
  P.dryRun,
  P.gracePeriodSeconds,
  P.ignoreStoreReadError,
  P.orphanDependents,
  P.propagationPolicy,
];
const PARAMS: Record<string, readonly Param[]> = {
  list: LIST,
  deletecollection: LIST,
  get: [P.resourceVersion],
  post: [P.dryRun, P.fieldManager, P.fieldValidation],
  put: [P.dryRun, P.fieldManager, P.fieldValidation],
  patch: [P.dryRun, P.fieldManager, P.fieldValidation, P.force],
  delete: DELETE,
};

const VERBS = ['deletecollection', 'replace', 'create', 'delete', 'patch', 'watch', 'list', 'read', 'get'];

/** apiserver's `ToValidOperationID`. */
function operationIdPart(text: string, capitalize: boolean): string {
  let out = '';
  let upper = capitalize;
  [...text].forEach((ch, i) => {
    if (/\p{L}|_/u.test(ch) || (i !== 0 && /\p{Nd}/u.test(ch))) {
      out += upper ? ch.toUpperCase() : ch;
      upper = false;
    } else {
      upper = true;
    }
  });
  return out;
}

/** apiserver's `GetOperationIDAndTags` for a path under `/apis/<group>/<version>`. */
function operationId(operation: string, group: string, version: string): { id: string; tag: string } {
  const verb = VERBS.find((v) => operation.startsWith(v)) ?? '';
  const trimmed = group.endsWith('.k8s.io') ? group.slice(0, -'.k8s.io'.length) : group;
  const prefix = verb + operationIdPart(trimmed, verb !== '') + operationIdPart(version, true);
  return {
    id: prefix + operationIdPart(operation.slice(verb.length), true),
    tag: `${operationIdPart(trimmed, false)}_${operationIdPart(version, false)}`,
  };
}

function article(noun: string): string {
  return /^[aeiou]/i.test(noun) ? ' an ' : ' a ';
}

function description(verb: string, sub: string, kind: string): string {
  const of = sub === '' ? '' : ` ${sub} of`;
  switch (verb) {
    case 'list':
      return `list${of} objects of kind ${kind}`;
    case 'read':
    case 'replace':
      return `${verb}${of} the specified ${kind}`;
    case 'patch':
      return `partially update${of} the specified ${kind}`;
    case 'create':
    case 'delete':
      return `${verb}${of}${article(kind)}${kind}`;
    default:
      return `delete collection of${sub === '' ? '' : `${of} a`} ${kind}`;
  }
}

const json = (schema: string): Record<string, unknown> => ({
  'application/json': { schema: ref(schema) },
  'application/yaml': { schema: ref(schema) },
});

interface Names {
  readonly kind: string;
  readonly list: string;
  readonly scale: string;
}

/** The path items of one CRD version, keyed by path. */
export function operationsFor(info: CrdInfo, version: CrdVersionInfo, names: Names): Record<string, unknown> {
  const { group, names: crdNames } = info;
  const kind = crdNames.kind;
  const namespaced = info.scope === 'Namespaced';
  const base = `/apis/${group}/${version.name}`;
  const root = namespaced
    ? `${base}/namespaces/{namespace}/${crdNames.plural}`
    : `${base}/${crdNames.plural}`;
  const items: Record<string, Record<string, unknown>> = {};
  const gvk = { group, kind, version: version.name };
  const add = (
    path: string,
    method: string,
    verb: string,
    action: string,
    sub: string,
    sample: string,
    override?: string,
  ): void => {
    const operation =
      override ??
      `${verb}${namespaced ? 'Namespaced' : ''}${kind}${sub === '' ? '' : sub[0]?.toUpperCase() + sub.slice(1)}`;
    const { id, tag } = operationId(operation, group, version.name);
    const responses: Record<string, unknown> = { '200': { description: 'OK', content: json(sample) } };
    if (action === 'post') {
      responses['201'] = { description: 'Created', content: json(sample) };
      responses['202'] = { description: 'Accepted', content: json(sample) };
    } else if (action === 'put') {
      responses['201'] = { description: 'Created', content: json(sample) };
    } else if (action === 'delete') {
      responses['202'] = { description: 'Accepted', content: json(sample) };
    }
    responses['401'] = { description: 'Unauthorized' };
    const op: Record<string, unknown> = {
      tags: [tag],
      description: description(verb, sub, kind),
      operationId: id,
    };
    const params = PARAMS[action] ?? [];
    if (params.length > 0) op.parameters = params;
    if (action === 'post' || action === 'put')
      op.requestBody = {
        content: { '*/*': { schema: ref(sub === 'scale' ? names.scale : names.kind) } },
        required: true,
      };
    if (action === 'patch') {
      const patch = { schema: ref(META_SCHEMAS.patch) };
      op.requestBody = {
        content: {
          'application/apply-patch+yaml': patch,
          'application/json-patch+json': patch,
          'application/merge-patch+json': patch,
        },
        required: true,
      };
    }
    if (action === 'delete')
      op.requestBody = { content: { '*/*': { schema: ref(META_SCHEMAS.deleteOptions) } } };
    op.responses = responses;
    op['x-kubernetes-action'] = action;
    op['x-kubernetes-group-version-kind'] = gvk;
    const item = items[path] ?? {};
    items[path] = item;
    item[method] = op;
    const shared: Param[] = [];
    if (path.includes('{name}'))
      shared.push({
        name: 'name',
        in: 'path',
        description: `name of the ${kind}`,
        required: true,
        schema: { type: 'string', uniqueItems: true },
      });
    if (path.includes('{namespace}')) {
      shared.push({
        name: 'namespace',
        in: 'path',
        description: 'object name and auth scope, such as for teams and projects',
        required: true,
        schema: { type: 'string', uniqueItems: true },
      });
    }
    shared.push(P.pretty);
    item.parameters = shared;
  };
  if (namespaced)
    add(`${base}/${crdNames.plural}`, 'get', 'list', 'list', '', names.list, `list${kind}ForAllNamespaces`);
  add(root, 'get', 'list', 'list', '', names.list);
  add(root, 'post', 'create', 'post', '', names.kind);
  add(root, 'delete', 'deletecollection', 'deletecollection', '', META_SCHEMAS.status);
  const one = `${root}/{name}`;
  add(one, 'get', 'read', 'get', '', names.kind);
  add(one, 'put', 'replace', 'put', '', names.kind);
  add(one, 'delete', 'delete', 'delete', '', META_SCHEMAS.status);
  add(one, 'patch', 'patch', 'patch', '', names.kind);
  if (version.statusSubresource) {
    add(`${one}/status`, 'get', 'read', 'get', 'status', names.kind);
    add(`${one}/status`, 'put', 'replace', 'put', 'status', names.kind);
    add(`${one}/status`, 'patch', 'patch', 'patch', 'status', names.kind);
  }
  if (version.scale !== undefined) {
    add(`${one}/scale`, 'get', 'read', 'get', 'scale', names.scale);
    add(`${one}/scale`, 'put', 'replace', 'put', 'scale', names.scale);
    add(`${one}/scale`, 'patch', 'patch', 'patch', 'scale', names.scale);
  }
  return items;
}
