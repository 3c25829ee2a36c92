"""platform/prometheus/prometheus.yml scrapes what the platform reads: the node agents' metrics
and vLLM's metrics on inference replicas, with the labels the autoscaler selects on.

The pods are the ones we ship or render; Kubernetes pod discovery is modelled by its
`__meta_kubernetes_*` labels (one target per container port) and the relabelling by its
`keep` and `replace` rules (debian's promtool lacks Kubernetes discovery, so it cannot load
this file)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import yaml

from apps.clusters.backends.kubernetes.manifests import render_inference
from apps.inference.runtime_metrics import pod_selector

from .conftest import REPO_ROOT, inference_spec

CONFIG = yaml.safe_load((REPO_ROOT / "platform" / "prometheus" / "prometheus.yml").read_text())


def _sanitize(name: str) -> str:
    return re.sub(r"[^a-zA-Z0-9_]", "_", name)


def _targets(pod: Mapping[str, Any], namespace: str, name: str) -> list[dict[str, str]]:
    """What pod discovery offers for one pod: a target per container port."""
    base = {
        "__meta_kubernetes_namespace": namespace,
        "__meta_kubernetes_pod_name": name,
        "__meta_kubernetes_pod_node_name": "gpu-001",
        **{
            f"__meta_kubernetes_pod_label_{_sanitize(k)}": v
            for k, v in pod["metadata"].get("labels", {}).items()
        },
    }
    return [
        {**base, "__meta_kubernetes_pod_container_port_name": port.get("name", "")}
        for container in pod["spec"]["containers"]
        for port in container.get("ports", [])
    ]


def _expand(replacement: str, match: re.Match[str]) -> str:
    """Prometheus' ``$1`` / ``${1}`` references to the regex's groups."""
    groups = [match.group(0), *(g or "" for g in match.groups())]
    return re.sub(r"\$\{?(\d+)\}?", lambda ref: groups[int(ref.group(1))], replacement)


def _relabel(job: Mapping[str, Any], target: dict[str, str]) -> dict[str, str] | None:
    labels = dict(target)
    for rule in job.get("relabel_configs", []):
        value = ";".join(labels.get(s, "") for s in rule["source_labels"])
        match = re.fullmatch(rule.get("regex", "(.*)"), value)
        action = rule.get("action", "replace")
        if action == "keep":
            if match is None:
                return None
        elif action == "replace":
            if match is not None:
                labels[rule["target_label"]] = _expand(rule.get("replacement", "$1"), match)
        else:
            raise AssertionError(f"unmodelled action {action}")
    return {k: v for k, v in labels.items() if not k.startswith("__")}


def _scraped(pod: Mapping[str, Any], namespace: str, name: str) -> list[tuple[str, dict[str, str]]]:
    found = []
    for job in CONFIG["scrape_configs"]:
        for sd in job.get("kubernetes_sd_configs", []):
            names = sd.get("namespaces", {}).get("names")
            if sd["role"] != "pod" or (names and namespace not in names):
                continue
            for target in _targets(pod, namespace, name):
                labels = _relabel(job, target)
                if labels is not None:
                    found.append((job["job_name"], labels))
    return found


def test_the_node_agents_are_scraped_by_node() -> None:
    daemonset = yaml.safe_load((REPO_ROOT / "platform" / "agent" / "daemonset.yaml").read_text())
    pod = daemonset["spec"]["template"]
    [(job, labels)] = _scraped(pod, daemonset["metadata"]["namespace"], "zhisuan-agent-x7k2p")
    assert labels["node"] == "gpu-001", job


def test_inference_replicas_are_scraped_with_the_labels_the_autoscaler_selects() -> None:
    spec = inference_spec()
    [deployment] = [m for m in render_inference(spec) if m["kind"] == "Deployment"]
    name = deployment["metadata"]["name"]
    namespace = deployment["metadata"]["namespace"]
    pod = deployment["spec"]["template"]
    [(job, labels)] = _scraped(pod, namespace, f"{name}-5d8f9c7b6-abcde")
    selector = dict(re.findall(r'(\w+)=~?"([^"]*)"', pod_selector(spec.job_id, spec.tenant)))
    assert labels["namespace"] == selector["namespace"], job
    assert re.fullmatch(selector["pod"], labels["pod"]), job
    # Pods of other kinds, or of the platform itself, are not scraped as inference.
    labels_of_a_notebook = {**pod["metadata"]["labels"], "zhisuan.io/kind": "notebook"}
    notebook_like = {**pod, "metadata": {"labels": labels_of_a_notebook}}
    assert _scraped(notebook_like, namespace, f"{name}-0") == []


def _exporter_pod(labels: dict[str, str]) -> dict[str, Any]:
    ports = [{"name": "metrics", "containerPort": 9400}]
    return {"metadata": {"labels": labels}, "spec": {"containers": [{"ports": ports}]}}


def test_dcgm_exporter_is_scraped_as_either_install_labels_it() -> None:
    chart = _exporter_pod({"app.kubernetes.io/name": "dcgm-exporter"})
    operator = _exporter_pod({"app": "nvidia-dcgm-exporter"})
    other = _exporter_pod({"app": "something-else"})
    assert [job for job, _ in _scraped(chart, "monitoring", "dcgm-exporter-a")] == ["dcgm-exporter"]
    assert [job for job, _ in _scraped(operator, "gpu-operator", "nvidia-dcgm-exporter-b")] == [
        "dcgm-exporter"
    ]
    assert _scraped(other, "monitoring", "x") == []
