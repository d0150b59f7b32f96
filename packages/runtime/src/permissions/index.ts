/**
 * RBAC permissions an operator needs: {@link Permissions} collects the rules the builder derives
 * from a controller's wiring ({@link derivedRules}) and those the operator declares, merged and
 * sorted, and the resource types the wiring touched. `manager.permissions` holds one per manager;
 * `converge manifests` turns it into a ClusterRole, Roles and CRDs.
 *
 * @module
 */
export { derivedRules, type PermissionRule, Permissions, type RequireOptions } from './permissions.ts';
