/**
 * Byte fixtures of protobuf request bodies (not part of the public API).
 *
 * - `KUBECTL_*`: bodies captured from the real kubectl 1.32.4 (`kubectl create namespace|configmap|
 *   secret|serviceaccount` against a recording server), hex-encoded verbatim.
 * - `ANNOTATED_*`: bodies assembled by hand from the field numbers of k8s.io/api
 *   `core/v1/generated.proto` and apimachinery `meta/v1/generated.proto`, one field per line.
 *
 * @module
 */

/** Parses hex bytes, ignoring whitespace and `#` comments to the end of a line. */
export function hex(text: string): Uint8Array {
  const digits = text
    .split('\n')
    .map((line) => line.replace(/#.*$/, ''))
    .join('')
    .replace(/\s+/g, '');
  if (!/^([0-9a-f]{2})*$/i.test(digits)) throw new Error(`not hex: ${digits}`);
  return Uint8Array.from(digits.match(/../g) ?? [], (pair) => Number.parseInt(pair, 16));
}

/** `kubectl create namespace team-a` */
export const KUBECTL_NAMESPACE = hex(
  '6b3873000a0f0a02763112094e616d657370616365121e0a160a067465616d2d6112001a0022002a0032003800420012001a020a001a002200',
);

/** `kubectl create configmap bin-config -n team-a --from-file=blob=<00 01 ff fe> --from-literal=greeting=héllo` */
export const KUBECTL_CONFIGMAP = hex(
  '6b3873000a0f0a0276311209436f6e6669674d617012440a200a0a62696e2d636f6e66696712001a067465616d2d6122002a0032003800420012120a086772656574696e67120668c3a96c6c6f1a0c0a04626c6f6212040001fffe1a002200',
);

/** `kubectl create secret generic db-creds -n team-a --from-literal=user=admin --from-literal=password=p@ss:w0rd --type=Opaque` */
export const KUBECTL_SECRET = hex(
  '6b3873000a0c0a0276311206536563726574124e0a1e0a0864622d637265647312001a067465616d2d6122002a0032003800420012150a0870617373776f72641209704073733a77307264120d0a0475736572120561646d696e1a064f70617175651a002200',
);

/** `kubectl create secret docker-registry regcred -n team-a --docker-server=r.example --docker-username=u --docker-password=p` */
export const KUBECTL_DOCKER_SECRET = hex(
  '6b3873000a0c0a0276311206536563726574129b010a1d0a077265676372656412001a067465616d2d6122002a00320038004200125a0a112e646f636b6572636f6e6669676a736f6e12457b226175746873223a7b22722e6578616d706c65223a7b22757365726e616d65223a2275222c2270617373776f7264223a2270222c2261757468223a2264547077227d7d7d1a1e6b756265726e657465732e696f2f646f636b6572636f6e6669676a736f6e1a002200',
);

/** `kubectl create serviceaccount builder -n team-a` */
export const KUBECTL_SERVICE_ACCOUNT = hex(
  '6b3873000a140a027631120e536572766963654163636f756e74121f0a1d0a076275696c64657212001a067465616d2d6122002a003200380042001a002200',
);

/** A ConfigMap exercising every ObjectMeta field, maps, bytes, a bool and skipped unknown fields. */
export const ANNOTATED_CONFIGMAP = hex(`
6b 38 73 00  # magic "k8s\0"
0a 0f  # typeMeta (1), 15 bytes
  0a 02 76 31  # apiVersion (1) = 'v1'
  12 09 43 6f 6e 66 69 67 4d 61 70  # kind (2) = 'ConfigMap'
12 8a 02  # raw (ConfigMap) (2), 266 bytes
  0a db 01  # metadata (1), 219 bytes
    0a 03 77 65 62  # name (1) = 'web'
    12 04 77 65 62 2d  # generateName (2) = 'web-'
    1a 04 70 72 6f 64  # namespace (3) = 'prod'
    2a 03 75 2d 31  # uid (5) = 'u-1'
    32 02 34 32  # resourceVersion (6) = '42'
    38 03  # generation (7) = 3
    42 08  # creationTimestamp (8), 8 bytes
      08 80 e2 cf aa 06  # seconds (1) = 1700000000
      10 05  # nanos (2) = 5
    50 1e  # deletionGracePeriodSeconds (10) = 30
    5a 0a  # labels (11), 10 bytes
      0a 03 61 70 70  # key (1) = 'app'
      12 03 77 65 62  # value (2) = 'web'
    5a 0d  # labels (11), 13 bytes
      0a 04 74 69 65 72  # key (1) = 'tier'
      12 05 66 72 6f 6e 74  # value (2) = 'front'
    62 0b  # annotations (12), 11 bytes
      0a 04 6e 6f 74 65  # key (1) = 'note'
      12 03 61 3d 62  # value (2) = 'a=b'
    6a 23  # ownerReferences (13), 35 bytes
      0a 0a 44 65 70 6c 6f 79 6d 65 6e 74  # kind (1) = 'Deployment'
      1a 03 77 65 62  # name (3) = 'web'
      22 03 64 2d 31  # uid (4) = 'd-1'
      2a 07 61 70 70 73 2f 76 31  # apiVersion (5) = 'apps/v1'
      30 01  # controller (6) = 1
      38 01  # blockOwnerDeletion (7) = 1
    72 0d 65 78 61 6d 70 6c 65 2e 63 6f 6d 2f 61  # finalizers (14) = 'example.com/a'
    72 0d 65 78 61 6d 70 6c 65 2e 63 6f 6d 2f 62  # finalizers (14) = 'example.com/b'
    7a 03 6f 6c 64  # clusterName (removed; skipped) (15) = 'old'
    8a 01 40  # managedFields (17), 64 bytes
      0a 07 6b 75 62 65 63 74 6c  # manager (1) = 'kubectl'
      12 06 55 70 64 61 74 65  # operation (2) = 'Update'
      1a 02 76 31  # apiVersion (3) = 'v1'
      22 06  # time (4), 6 bytes
        08 bc e2 cf aa 06  # seconds (1) = 1700000060
      32 08 46 69 65 6c 64 73 56 31  # fieldsType (6) = 'FieldsV1'
      3a 0f  # fieldsV1 (7), 15 bytes
        0a 0d 7b 22 66 3a 64 61 74 61 22 3a 7b 7d 7d  # Raw (1) = '{"f:data":{}}'
      42 06 73 74 61 74 75 73  # subresource (8) = 'status'
  12 0c  # data (2), 12 bytes
    0a 04 6d 6f 64 65  # key (1) = 'mode'
    12 04 66 61 73 74  # value (2) = 'fast'
  12 09  # data (2), 9 bytes
    0a 05 65 6d 70 74 79  # key (1) = 'empty'
    12 00  # value (2) = ''
  1a 0c  # binaryData (3), 12 bytes
    0a 04 62 6c 6f 62  # key (1) = 'blob'
    12 04 00 01 ff fe  # value (2) = b'\x00\x01\xff\xfe'
  20 01  # immutable (4) = 1
  98 06 07  # unknown field (skipped) (99) = 7
1a 00  # contentEncoding (3) = ''
22 00  # contentType (4) = ''
`);

/** A Secret with bytes data, type, stringData and an explicit immutable=false. */
export const ANNOTATED_SECRET = hex(`
6b 38 73 00  # magic "k8s\0"
0a 0c  # typeMeta (1), 12 bytes
  0a 02 76 31  # apiVersion (1) = 'v1'
  12 06 53 65 63 72 65 74  # kind (2) = 'Secret'
12 34  # raw (Secret) (2), 52 bytes
  0a 07  # metadata (1), 7 bytes
    0a 05 63 72 65 64 73  # name (1) = 'creds'
  12 10  # data (2), 16 bytes
    0a 08 70 61 73 73 77 6f 72 64  # key (1) = 'password'
    12 04 70 40 73 73  # value (2) = b'p@ss'
  1a 06 4f 70 61 71 75 65  # type (3) = 'Opaque'
  22 0d  # stringData (4), 13 bytes
    0a 04 75 73 65 72  # key (1) = 'user'
    12 05 61 64 6d 69 6e  # value (2) = 'admin'
  28 00  # immutable (5) = 0
`);

/** A Namespace with spec finalizers and a status condition. */
export const ANNOTATED_NAMESPACE = hex(`
6b 38 73 00  # magic "k8s\0"
0a 0f  # typeMeta (1), 15 bytes
  0a 02 76 31  # apiVersion (1) = 'v1'
  12 09 4e 61 6d 65 73 70 61 63 65  # kind (2) = 'Namespace'
12 8b 01  # raw (Namespace) (2), 139 bytes
  0a 08  # metadata (1), 8 bytes
    0a 06 74 65 61 6d 2d 61  # name (1) = 'team-a'
  12 0c  # spec (2), 12 bytes
    0a 0a 6b 75 62 65 72 6e 65 74 65 73  # finalizers (1) = 'kubernetes'
  1a 71  # status (3), 113 bytes
    0a 0b 54 65 72 6d 69 6e 61 74 69 6e 67  # phase (1) = 'Terminating'
    12 62  # conditions (2), 98 bytes
      0a 1f 4e 61 6d 65 73 70 61 63 65 44 65 6c 65 74 69 6f 6e 43 6f 6e 74 65 6e 74 46 61 69 6c 75 72 65  # type (1) = 'NamespaceDeletionContentFailure'
      12 05 46 61 6c 73 65  # status (2) = 'False'
      22 06  # lastTransitionTime (4), 6 bytes
        08 80 e2 cf aa 06  # seconds (1) = 1700000000
      2a 0e 43 6f 6e 74 65 6e 74 44 65 6c 65 74 65 64  # reason (5) = 'ContentDeleted'
      32 20 41 6c 6c 20 63 6f 6e 74 65 6e 74 20 73 75 63 63 65 73 73 66 75 6c 6c 79 20 64 65 6c 65 74 65 64  # message (6) = 'All content successfully deleted'
`);

/** A ServiceAccount with a full ObjectReference, an image pull secret and automount=false. */
export const ANNOTATED_SERVICE_ACCOUNT = hex(`
6b 38 73 00  # magic "k8s\0"
0a 14  # typeMeta (1), 20 bytes
  0a 02 76 31  # apiVersion (1) = 'v1'
  12 0e 53 65 72 76 69 63 65 41 63 63 6f 75 6e 74  # kind (2) = 'ServiceAccount'
12 3d  # raw (ServiceAccount) (2), 61 bytes
  0a 09  # metadata (1), 9 bytes
    0a 07 62 75 69 6c 64 65 72  # name (1) = 'builder'
  12 23  # secrets (2), 35 bytes
    0a 06 53 65 63 72 65 74  # kind (1) = 'Secret'
    12 02 63 69  # namespace (2) = 'ci'
    1a 03 74 6f 6b  # name (3) = 'tok'
    22 03 73 2d 31  # uid (4) = 's-1'
    2a 02 76 31  # apiVersion (5) = 'v1'
    32 01 37  # resourceVersion (6) = '7'
    3a 04 64 61 74 61  # fieldPath (7) = 'data'
  1a 09  # imagePullSecrets (3), 9 bytes
    0a 07 72 65 67 63 72 65 64  # name (1) = 'regcred'
  20 00  # automountServiceAccountToken (4) = 0
`);
