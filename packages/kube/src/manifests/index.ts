/**
 * Deploy artefacts of an operator, generated from its wiring: {@link generateManifests} turns a
 * manager's recorded permissions and kinds into a Namespace, ServiceAccount, ClusterRole/Roles and
 * bindings, a leader-election Role (or a shard group's Lease Role), a ValidatingAdmissionPolicy
 * fencing the leader's writes (not for a shard group, whose every member writes), CRDs,
 * a hardened Deployment running `converge run`, a metrics Service and a Dockerfile;
 * {@link configFiles} lays them out as plain YAML with a kustomize base, {@link helmChart} as a
 * Helm chart. `converge manifests` writes them and checks them for drift.
 *
 * @module
 */
export { dockerfileOf, dockerignoreOf } from './dockerfile.ts';
export {
  type FencedResourceRule,
  fencedResourceRules,
  fencingPolicy,
  POD_NAME_EXTRA,
} from './fencing.ts';
export { configFiles, GENERATED_HEADER, toYaml } from './files.ts';
export {
  generateManifests,
  type Manifest,
  type ManifestSet,
  type ManifestSource,
  manifestLabels,
  type PermissionSource,
  runArgs,
} from './generate.ts';
export { helmChart } from './helm.ts';
export {
  DEFAULT_RESOURCES,
  type ManifestOptions,
  type ManifestResources,
  type ResolvedManifestOptions,
  resolveManifestOptions,
} from './options.ts';
export {
  EVENT_RULES,
  FENCES_RULE,
  LEASE_VERBS,
  type NonResourcePolicyRule,
  type PolicyRule,
  policyRules,
} from './rbac.ts';
export { leaseVerbs } from './sharding.ts';
