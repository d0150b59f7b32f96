import {
  AlreadyExistsError,
  ConflictError,
  ForbiddenError,
  InvalidError,
  NotFoundError,
  type StatusCause,
} from './errors.ts';
import { qualifiedResource, type ResourceType } from './resource-type.ts';

const MODIFIED =
  'the object has been modified; please apply your changes to the latest version and try again';

/**
 * The backend errors of one object, worded as kube-apiserver words them, so every backend (the
 * store, the NATS backend, yours) reports the same messages and `details` as Kubernetes.
 *
 * @example
 * throw statusError.notFound(widgetType, 'w');       // widgets.example.com "w" not found
 * throw statusError.conflict(widgetType, 'w');       // Operation cannot be fulfilled on widgets.example.com "w": the object has been modified; …
 * throw statusError.invalid(widgetType, 'w', [fieldError.required('spec.size')]);
 */
export const statusError = {
  /** Kubernetes' message when a resource is not served at all. */
  unknownResource(): NotFoundError {
    return new NotFoundError('the server could not find the requested resource');
  },
  /** `configmaps "x" not found`. */
  notFound(type: ResourceType, name: string): NotFoundError {
    return new NotFoundError(`${qualifiedResource(type)} "${name}" not found`, {
      details: { name, group: type.group, kind: type.plural },
    });
  },
  /** `configmaps "x" already exists`, prefixed `object is being deleted: ` when terminating. */
  alreadyExists(type: ResourceType, name: string, terminating: boolean): AlreadyExistsError {
    const prefix = terminating ? 'object is being deleted: ' : '';
    return new AlreadyExistsError(`${prefix}${qualifiedResource(type)} "${name}" already exists`, {
      details: { name, group: type.group, kind: type.plural },
    });
  },
  /** `Operation cannot be fulfilled on configmaps "x": <detail>` (default: the object has been modified). */
  conflict(type: ResourceType, name: string, detail: string = MODIFIED): ConflictError {
    return new ConflictError(
      `Operation cannot be fulfilled on ${qualifiedResource(type)} "${name}": ${detail}`,
      { details: { name, group: type.group, kind: type.plural } },
    );
  },
  /** `configmaps "x" is forbidden: <reason>`. */
  forbidden(type: ResourceType, name: string, reason: string): ForbiddenError {
    return new ForbiddenError(`${qualifiedResource(type)} "${name}" is forbidden: ${reason}`, {
      details: { name, group: type.group, kind: type.plural },
    });
  },
  /**
   * `ConfigMap "x" is invalid: <field errors>` (the kind qualified by its group, `Role.rbac.authorization.k8s.io`,
   * as apimachinery's GroupKind prints), with one cause per field error.
   */
  invalid(type: ResourceType, name: string, causes: readonly StatusCause[]): InvalidError {
    const parts = causes.map((c) => `${c.field}: ${c.message}`);
    const summary = parts.length === 1 ? (parts[0] as string) : `[${parts.join(', ')}]`;
    const kind = type.group === '' ? type.kind : `${type.kind}.${type.group}`;
    return new InvalidError(`${kind} "${name}" is invalid: ${summary}`, {
      details: { name, group: type.group, kind: type.kind, causes },
    });
  },
};
