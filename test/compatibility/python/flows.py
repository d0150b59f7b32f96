"""Drives the Converge API server with the official Kubernetes Python client.

Usage: python3 flows.py KUBECONFIG

Runs every flow of the compatibility suite in one process and prints one JSON
object: flow name -> what the client observed (or {"error": ...} when the
flow raised). The TypeScript test asserts each value against what
kube-apiserver 1.32 answers; this script only records.
"""

import json
import sys
import time
import traceback

from kubernetes import client, config, watch
from kubernetes.client.rest import ApiException

NS = "py"


def status_of(exc):
    body = json.loads(exc.body) if exc.body else {}
    return {
        "status": exc.status,
        "reason": exc.reason,
        "kind": body.get("kind"),
        "bodyReason": body.get("reason"),
        "code": body.get("code"),
    }


def list_namespaces(core, apps, custom, ext):
    names = sorted(ns.metadata.name for ns in core.list_namespace().items)
    return {"names": names}


def configmap(core, apps, custom, ext):
    body = client.V1ConfigMap(metadata=client.V1ObjectMeta(name="settings"), data={"a": "1"})
    created = core.create_namespaced_config_map(NS, body)
    got = core.read_namespaced_config_map("settings", NS)
    patched = core.patch_namespaced_config_map("settings", NS, {"data": {"b": "2"}})
    deleted = core.delete_namespaced_config_map("settings", NS)
    try:
        core.read_namespaced_config_map("settings", NS)
        after = None
    except ApiException as exc:
        after = exc.status
    return {
        "created": created.data,
        "uidStable": created.metadata.uid == got.metadata.uid,
        "patched": patched.data,
        "rvChanged": patched.metadata.resource_version != created.metadata.resource_version,
        "deletedKind": deleted.kind,
        "deletedStatus": deleted.status,
        "getAfterDelete": after,
    }


def deployment(core, apps, custom, ext):
    labels = {"app": "web"}
    body = client.V1Deployment(
        metadata=client.V1ObjectMeta(name="web"),
        spec=client.V1DeploymentSpec(
            replicas=1,
            selector=client.V1LabelSelector(match_labels=labels),
            template=client.V1PodTemplateSpec(
                metadata=client.V1ObjectMeta(labels=labels),
                spec=client.V1PodSpec(containers=[client.V1Container(name="web", image="nginx")]),
            ),
        ),
    )
    created = apps.create_namespaced_deployment(NS, body)
    got = apps.read_namespaced_deployment("web", NS)
    patched = apps.patch_namespaced_deployment("web", NS, {"spec": {"replicas": 3}})
    scale = apps.read_namespaced_deployment_scale("web", NS)
    apps.delete_namespaced_deployment("web", NS)
    remaining = [d.metadata.name for d in apps.list_namespaced_deployment(NS).items]
    return {
        "strategy": created.spec.strategy.type,
        "revisionHistoryLimit": got.spec.revision_history_limit,
        "imagePullPolicy": got.spec.template.spec.containers[0].image_pull_policy,
        "replicas": patched.spec.replicas,
        "generation": patched.metadata.generation,
        "scaleReplicas": scale.spec.replicas,
        "remaining": remaining,
    }


def watch_configmaps(core, apps, custom, ext):
    core.create_namespaced_config_map(NS, client.V1ConfigMap(metadata=client.V1ObjectMeta(name="w1")))
    seen = []
    w = watch.Watch()
    for event in w.stream(core.list_namespaced_config_map, NS, timeout_seconds=10):
        name = event["object"].metadata.name
        if name == "kube-root-ca.crt":
            continue
        seen.append([event["type"], name])
        if seen == [["ADDED", "w1"]]:
            core.patch_namespaced_config_map("w1", NS, {"data": {"x": "y"}})
        elif len(seen) == 2:
            core.delete_namespaced_config_map("w1", NS)
        elif len(seen) == 3:
            w.stop()
    return {"events": seen}


def crd_custom_objects(core, apps, custom, ext):
    crd = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {
            "group": "example.com",
            "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "subresources": {"status": {}},
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "properties": {
                                "spec": {"type": "object", "properties": {"size": {"type": "integer"}}},
                                "status": {"type": "object", "properties": {"ready": {"type": "boolean"}}},
                            },
                        }
                    },
                }
            ],
        },
    }
    ext.create_custom_resource_definition(crd)
    established = False
    for _ in range(100):
        got = ext.read_custom_resource_definition("widgets.example.com")
        conditions = got.status.conditions or [] if got.status else []
        if any(c.type == "Established" and c.status == "True" for c in conditions):
            established = True
            break
        time.sleep(0.02)
    args = ("example.com", "v1", NS, "widgets")
    obj = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}, "spec": {"size": 1}}
    custom.create_namespaced_custom_object(*args, obj)
    got = custom.get_namespaced_custom_object(*args, "w")
    patched = custom.patch_namespaced_custom_object(*args, "w", {"spec": {"size": 2}})
    status = custom.patch_namespaced_custom_object_status(*args, "w", {"status": {"ready": True}})
    listed = custom.list_namespaced_custom_object(*args)
    try:
        custom.create_namespaced_custom_object(
            *args, {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "bad"}, "spec": {"size": "big"}}
        )
        invalid = None
    except ApiException as exc:
        invalid = status_of(exc)
    custom.delete_namespaced_custom_object(*args, "w")
    return {
        "established": established,
        "size": got["spec"]["size"],
        "patchedSize": patched["spec"]["size"],
        "ready": status["status"]["ready"],
        "statusKeptSpec": status["spec"]["size"],
        "listKind": listed["kind"],
        "listed": [o["metadata"]["name"] for o in listed["items"]],
        "invalid": invalid,
    }


def errors(core, apps, custom, ext):
    out = {}
    try:
        core.read_namespaced_config_map("missing", NS)
    except ApiException as exc:
        out["notFound"] = status_of(exc)
    core.create_namespaced_config_map(NS, client.V1ConfigMap(metadata=client.V1ObjectMeta(name="twice")))
    try:
        core.create_namespaced_config_map(NS, client.V1ConfigMap(metadata=client.V1ObjectMeta(name="twice")))
    except ApiException as exc:
        out["conflict"] = status_of(exc)
    try:
        core.create_namespaced_config_map(NS, client.V1ConfigMap(metadata=client.V1ObjectMeta(name="Bad_Name")))
    except ApiException as exc:
        out["invalid"] = status_of(exc)
    return out


def list_options(core, apps, custom, ext):
    for i in range(3):
        core.create_namespaced_config_map(
            NS, client.V1ConfigMap(metadata=client.V1ObjectMeta(name=f"page-{i}", labels={"paged": "yes"}))
        )
    first = core.list_namespaced_config_map(NS, label_selector="paged=yes", limit=2)
    rest = core.list_namespaced_config_map(NS, label_selector="paged=yes", limit=2, _continue=first.metadata._continue)
    by_field = core.list_namespaced_config_map(NS, field_selector="metadata.name=page-1")
    dry = core.create_namespaced_config_map(
        NS, client.V1ConfigMap(metadata=client.V1ObjectMeta(name="dry")), dry_run="All"
    )
    try:
        core.read_namespaced_config_map("dry", NS)
        dry_stored = True
    except ApiException:
        dry_stored = False
    stale = core.read_namespaced_config_map("page-0", NS)
    core.patch_namespaced_config_map("page-0", NS, {"data": {"v": "1"}})
    try:
        core.replace_namespaced_config_map("page-0", NS, stale)
        conflict = None
    except ApiException as exc:
        conflict = status_of(exc)
    core.delete_collection_namespaced_config_map(NS, label_selector="paged=yes")
    left = core.list_namespaced_config_map(NS, label_selector="paged=yes").items
    return {
        "firstPage": [c.metadata.name for c in first.items],
        "remaining": first.metadata.remaining_item_count,
        "secondPage": [c.metadata.name for c in rest.items],
        "secondContinue": rest.metadata._continue,
        "byField": [c.metadata.name for c in by_field.items],
        "dryRunName": dry.metadata.name,
        "dryRunStored": dry_stored,
        "staleReplace": conflict,
        "afterDeleteCollection": len(left),
    }


FLOWS = [
    ("list-namespaces", list_namespaces),
    ("configmap", configmap),
    ("deployment", deployment),
    ("watch", watch_configmaps),
    ("crd-custom-objects", crd_custom_objects),
    ("errors", errors),
    ("list-options", list_options),
]


def main():
    config.load_kube_config(config_file=sys.argv[1])
    core = client.CoreV1Api()
    apps = client.AppsV1Api()
    custom = client.CustomObjectsApi()
    ext = client.ApiextensionsV1Api()
    core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=NS)))
    results = {}
    for name, flow in FLOWS:
        try:
            results[name] = flow(core, apps, custom, ext)
        except Exception as exc:  # recorded, so one broken flow does not hide the others
            results[name] = {"error": "".join(traceback.format_exception_only(type(exc), exc)).strip()}
    print(json.dumps(results, sort_keys=True))


if __name__ == "__main__":
    main()
