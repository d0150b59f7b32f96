/**
 * Column descriptions of kube-apiserver 1.32's Tables: the API documentation of the field each
 * column shows (`SwaggerDoc()` of k8s.io/api and apimachinery v0.32), as the printers use them.
 */

/** `ObjectMeta.name` */
export const NAME =
  'Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names';
/** `ObjectMeta.creationTimestamp` */
export const CREATION_TIMESTAMP =
  'CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata';
/** `PodStatus.podIP` */
export const POD_IP =
  'podIP address allocated to the pod. Routable at least within the cluster. Empty if not yet allocated.';
/** `PodSpec.nodeName` */
export const POD_NODE_NAME =
  'NodeName indicates in which node this pod is scheduled. If empty, this pod is a candidate for scheduling by the scheduler defined in schedulerName. Once this field is set, the kubelet for this node becomes responsible for the lifecycle of this pod. This field should not be used to express a desire for the pod to be scheduled on a specific node. https://kubernetes.io/docs/concepts/scheduling-eviction/assign-pod-node/#nodename';
/** `PodStatus.nominatedNodeName` */
export const POD_NOMINATED_NODE_NAME =
  'nominatedNodeName is set only when this pod preempts other pods on the node, but it cannot be scheduled right away as preemption victims receive their graceful termination periods. This field does not guarantee that the pod will be scheduled on this node. Scheduler may decide to place the pod elsewhere if other nodes become available sooner. Scheduler may also decide to give the resources on this node to a higher priority pod that is created after preemption. As a result, this field may be different than PodSpec.nodeName when the pod is scheduled.';
/** `PodSpec.readinessGates` */
export const POD_READINESS_GATES =
  'If specified, all readiness gates will be evaluated for pod readiness. A pod is ready when all its containers are ready AND all conditions specified in the readiness gates have status equal to "True" More info: https://git.k8s.io/enhancements/keps/sig-network/580-pod-readiness-gates';
/** `ReplicaSetSpec.replicas` */
export const REPLICA_SET_SPEC_REPLICAS =
  'Replicas is the number of desired replicas. This is a pointer to distinguish between explicit zero and unspecified. Defaults to 1. More info: https://kubernetes.io/docs/concepts/workloads/controllers/replicationcontroller/#what-is-a-replicationcontroller';
/** `ReplicaSetStatus.replicas` */
export const REPLICA_SET_STATUS_REPLICAS =
  'Replicas is the most recently observed number of replicas. More info: https://kubernetes.io/docs/concepts/workloads/controllers/replicationcontroller/#what-is-a-replicationcontroller';
/** `ReplicaSetStatus.readyReplicas` */
export const REPLICA_SET_READY_REPLICAS = 'The number of ready replicas for this replica set.';
/** `ReplicaSetSpec.selector` */
export const REPLICA_SET_SELECTOR =
  'Selector is a label query over pods that should match the replica count. If the selector is empty, it is defaulted to the labels present on the pod template. Label keys and values that must match in order to be controlled by this replica set. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors';
/** `JobStatus.succeeded` */
export const JOB_SUCCEEDED =
  'The number of pods which reached phase Succeeded. The value increases monotonically for a given spec. However, it may decrease in reaction to scale down of elastic indexed jobs.';
/** `JobSpec.selector` */
export const JOB_SELECTOR =
  'A label query over pods that should match the pod count. Normally, the system sets this field for you. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors';
/** `ServiceSpec.type` */
export const SERVICE_TYPE =
  'type determines how the Service is exposed. Defaults to ClusterIP. Valid options are ExternalName, ClusterIP, NodePort, and LoadBalancer. "ClusterIP" allocates a cluster-internal IP address for load-balancing to endpoints. Endpoints are determined by the selector or if that is not specified, by manual construction of an Endpoints object or EndpointSlice objects. If clusterIP is "None", no virtual IP is allocated and the endpoints are published as a set of endpoints rather than a virtual IP. "NodePort" builds on ClusterIP and allocates a port on every node which routes to the same endpoints as the clusterIP. "LoadBalancer" builds on NodePort and creates an external load-balancer (if supported in the current cloud) which routes to the same endpoints as the clusterIP. "ExternalName" aliases this service to the specified externalName. Several other fields do not apply to ExternalName services. More info: https://kubernetes.io/docs/concepts/services-networking/service/#publishing-services-service-types';
/** `ServiceSpec.clusterIP` */
export const SERVICE_CLUSTER_IP =
  'clusterIP is the IP address of the service and is usually assigned randomly. If an address is specified manually, is in-range (as per system configuration), and is not in use, it will be allocated to the service; otherwise creation of the service will fail. This field may not be changed through updates unless the type field is also being changed to ExternalName (which requires this field to be blank) or the type field is being changed from ExternalName (in which case this field may optionally be specified, as describe above).  Valid values are "None", empty string (""), or a valid IP address. Setting this to "None" makes a "headless service" (no virtual IP), which is useful when direct endpoint connections are preferred and proxying is not required.  Only applies to types ClusterIP, NodePort, and LoadBalancer. If this field is specified when creating a Service of type ExternalName, creation will fail. This field will be wiped when updating a Service to type ExternalName. More info: https://kubernetes.io/docs/concepts/services-networking/service/#virtual-ips-and-service-proxies';
/** `ServiceSpec.externalIPs` */
export const SERVICE_EXTERNAL_IPS =
  'externalIPs is a list of IP addresses for which nodes in the cluster will also accept traffic for this service.  These IPs are not managed by Kubernetes.  The user is responsible for ensuring that traffic arrives at a node with this IP.  A common example is external load-balancers that are not part of the Kubernetes system.';
/** `ServiceSpec.ports` */
export const SERVICE_PORTS =
  'The list of ports that are exposed by this service. More info: https://kubernetes.io/docs/concepts/services-networking/service/#virtual-ips-and-service-proxies';
/** `ServiceSpec.selector` */
export const SERVICE_SELECTOR =
  'Route service traffic to pods with label keys and values matching this selector. If empty or not present, the service is assumed to have an external process managing its endpoints, which Kubernetes will not modify. Only applies to types ClusterIP, NodePort, and LoadBalancer. Ignored if type is ExternalName. More info: https://kubernetes.io/docs/concepts/services-networking/service/';
/** `Event.lastTimestamp` */
export const EVENT_LAST_TIMESTAMP =
  'The time at which the most recent occurrence of this event was recorded.';
/** `Event.type` */
export const EVENT_TYPE = 'Type of this event (Normal, Warning), new types could be added in the future';
/** `Event.reason` */
export const EVENT_REASON =
  "This should be a short, machine understandable string that gives the reason for the transition into the object's current status.";
/** `Event.involvedObject` */
export const EVENT_INVOLVED_OBJECT = 'The object that this event is about.';
/** `ObjectReference.fieldPath` */
export const EVENT_FIELD_PATH =
  'If referring to a piece of an object instead of an entire object, this string should contain a valid JSON/Go field access statement, such as desiredState.manifest.containers[2]. For example, if the object reference is to a container within a pod, this would take on a value like: "spec.containers{name}" (where "name" refers to the name of the container that triggered the event) or if no container name is specified "spec.containers[2]" (container with index 2 in this pod). This syntax is chosen only to have some well-defined way of referencing a part of an object.';
/** `Event.source` */
export const EVENT_SOURCE =
  'The component reporting this event. Should be a short machine understandable string.';
/** `Event.message` */
export const EVENT_MESSAGE = 'A human-readable description of the status of this operation.';
/** `Event.firstTimestamp` */
export const EVENT_FIRST_TIMESTAMP =
  'The time at which the event was first recorded. (Time of server receipt is in TypeMeta.)';
/** `Event.count` */
export const EVENT_COUNT = 'The number of times this event has occurred.';
/** `Secret.type` */
export const SECRET_TYPE =
  'Used to facilitate programmatic handling of secret data. More info: https://kubernetes.io/docs/concepts/configuration/secret/#secret-types';
/** `Secret.data` */
export const SECRET_DATA =
  "Data contains the secret data. Each key must consist of alphanumeric characters, '-', '_' or '.'. The serialized form of the secret data is a base64 encoded string, representing the arbitrary (possibly non-string) data value here. Described in https://tools.ietf.org/html/rfc4648#section-4";
/** `ServiceAccount.secrets` */
export const SERVICE_ACCOUNT_SECRETS =
  'Secrets is a list of the secrets in the same namespace that pods running using this ServiceAccount are allowed to use. Pods are only limited to this list if this service account has a "kubernetes.io/enforce-mountable-secrets" annotation set to "true". The "kubernetes.io/enforce-mountable-secrets" annotation is deprecated since v1.32. Prefer separate namespaces to isolate access to mounted secrets. This field should not be used to find auto-generated service account token secrets for use outside of pods. Instead, tokens can be requested directly using the TokenRequest API, or service account token secrets can be manually created. More info: https://kubernetes.io/docs/concepts/configuration/secret';
/** `DeploymentStatus.updatedReplicas` */
export const DEPLOYMENT_UPDATED_REPLICAS =
  'Total number of non-terminated pods targeted by this deployment that have the desired template spec.';
/** `DeploymentStatus.availableReplicas` */
export const DEPLOYMENT_AVAILABLE_REPLICAS =
  'Total number of available pods (ready for at least minReadySeconds) targeted by this deployment.';
/** `DeploymentSpec.selector` */
export const DEPLOYMENT_SELECTOR =
  'Label selector for pods. Existing ReplicaSets whose pods are selected by this will be the ones affected by this deployment.';
/** `ConfigMap.data` */
export const CONFIG_MAP_DATA =
  "Data contains the configuration data. Each key must consist of alphanumeric characters, '-', '_' or '.'. Values with non-UTF-8 byte sequences must use the BinaryData field. The keys stored in Data must not overlap with the keys in the BinaryData field, this is enforced during validation process.";
/** `LeaseSpec.holderIdentity` */
export const LEASE_HOLDER_IDENTITY =
  'holderIdentity contains the identity of the holder of a current lease. If Coordinated Leader Election is used, the holder identity must be equal to the elected LeaseCandidate.metadata.name field.';
