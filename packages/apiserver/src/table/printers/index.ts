/**
 * kubectl's server-side printers for the built-in kinds the server serves, by group and kind
 * (kube-apiserver 1.32's `pkg/printers/internalversion`, rewritten over JSON objects).
 *
 * @module
 */
import type { Printer } from '../printer.ts';
import {
  controllerRevisionPrinter,
  cronJobPrinter,
  daemonSetPrinter,
  hpaPrinter,
  pdbPrinter,
  podTemplatePrinter,
  replicationControllerPrinter,
} from './apps.ts';
import {
  defaultConvertorPrinter,
  leasePrinter,
  validatingAdmissionPolicyBindingPrinter,
  validatingAdmissionPolicyPrinter,
  webhookConfigurationPrinter,
} from './cluster.ts';
import {
  configMapPrinter,
  namespacePrinter,
  secretPrinter,
  serviceAccountPrinter,
  servicePrinter,
} from './core.ts';
import { coreEventPrinter, eventsEventPrinter } from './event.ts';
import {
  componentStatusPrinter,
  createdAtPrinter,
  csiDriverPrinter,
  csiNodePrinter,
  csiStorageCapacityPrinter,
  csrPrinter,
  nodePrinter,
  persistentVolumeClaimPrinter,
  persistentVolumePrinter,
  priorityClassPrinter,
  resourceQuotaPrinter,
  roleBindingPrinter,
  runtimeClassPrinter,
  storageClassPrinter,
  volumeAttachmentPrinter,
} from './infra.ts';
import {
  endpointSlicePrinter,
  endpointsPrinter,
  ingressClassPrinter,
  ingressPrinter,
  networkPolicyPrinter,
} from './network.ts';
import { podPrinter } from './pod.ts';
import { deploymentPrinter, jobPrinter, replicaSetPrinter, statefulSetPrinter } from './workloads.ts';

const PRINTERS: ReadonlyMap<string, Printer> = new Map([
  ['/Namespace', namespacePrinter],
  ['/ConfigMap', configMapPrinter],
  ['/Secret', secretPrinter],
  ['/ServiceAccount', serviceAccountPrinter],
  ['/Service', servicePrinter],
  ['/Pod', podPrinter],
  ['/Event', coreEventPrinter],
  ['apps/Deployment', deploymentPrinter],
  ['apps/ReplicaSet', replicaSetPrinter],
  ['apps/StatefulSet', statefulSetPrinter],
  ['batch/Job', jobPrinter],
  ['events.k8s.io/Event', eventsEventPrinter],
  ['coordination.k8s.io/Lease', leasePrinter],
  ['apiextensions.k8s.io/CustomResourceDefinition', defaultConvertorPrinter],
  ['admissionregistration.k8s.io/MutatingWebhookConfiguration', webhookConfigurationPrinter],
  ['admissionregistration.k8s.io/ValidatingWebhookConfiguration', webhookConfigurationPrinter],
  ['admissionregistration.k8s.io/ValidatingAdmissionPolicy', validatingAdmissionPolicyPrinter],
  ['admissionregistration.k8s.io/ValidatingAdmissionPolicyBinding', validatingAdmissionPolicyBindingPrinter],
  ['/Node', nodePrinter],
  ['/ComponentStatus', componentStatusPrinter],
  ['/Endpoints', endpointsPrinter],
  ['/PersistentVolume', persistentVolumePrinter],
  ['/PersistentVolumeClaim', persistentVolumeClaimPrinter],
  ['/ResourceQuota', resourceQuotaPrinter],
  ['/LimitRange', createdAtPrinter],
  ['/PodTemplate', podTemplatePrinter],
  ['/ReplicationController', replicationControllerPrinter],
  ['apps/DaemonSet', daemonSetPrinter],
  ['apps/ControllerRevision', controllerRevisionPrinter],
  ['batch/CronJob', cronJobPrinter],
  ['autoscaling/HorizontalPodAutoscaler', hpaPrinter],
  ['policy/PodDisruptionBudget', pdbPrinter],
  ['rbac.authorization.k8s.io/Role', createdAtPrinter],
  ['rbac.authorization.k8s.io/ClusterRole', createdAtPrinter],
  ['rbac.authorization.k8s.io/RoleBinding', roleBindingPrinter],
  ['rbac.authorization.k8s.io/ClusterRoleBinding', roleBindingPrinter],
  ['networking.k8s.io/Ingress', ingressPrinter],
  ['networking.k8s.io/IngressClass', ingressClassPrinter],
  ['networking.k8s.io/NetworkPolicy', networkPolicyPrinter],
  ['discovery.k8s.io/EndpointSlice', endpointSlicePrinter],
  ['storage.k8s.io/StorageClass', storageClassPrinter],
  ['storage.k8s.io/CSIDriver', csiDriverPrinter],
  ['storage.k8s.io/CSINode', csiNodePrinter],
  ['storage.k8s.io/CSIStorageCapacity', csiStorageCapacityPrinter],
  ['storage.k8s.io/VolumeAttachment', volumeAttachmentPrinter],
  ['scheduling.k8s.io/PriorityClass', priorityClassPrinter],
  ['certificates.k8s.io/CertificateSigningRequest', csrPrinter],
  ['node.k8s.io/RuntimeClass', runtimeClassPrinter],
]);

/** The printer of a built-in kind (`group` '' for core), or undefined for other kinds. */
export function builtinPrinter(group: string, kind: string): Printer | undefined {
  return PRINTERS.get(`${group}/${kind}`);
}
