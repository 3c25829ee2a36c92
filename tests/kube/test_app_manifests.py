"""The platform's own workloads under platform/k8s/app validate, meet Pod Security
"restricted", and the kustomization lists every manifest."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from .conftest import REPO_ROOT, pod_specs_of, restricted_violations, validate_manifest

APP = REPO_ROOT / "platform" / "k8s" / "app"
DOCS = [
    (f"{p.name}:{d['kind']}:{d['metadata']['name']}", d)
    for p in sorted(APP.glob("*.yaml"))
    for d in yaml.safe_load_all(p.read_text())
    if d
]


@pytest.mark.parametrize(("label", "doc"), DOCS, ids=[d[0] for d in DOCS])
def test_app_manifest_is_valid_and_restricted(label: str, doc: dict[str, Any]) -> None:
    validate_manifest(doc)
    batch_job = doc["apiVersion"] == "batch/v1"  # pod_specs_of reads Volcano Jobs
    specs = [doc["spec"]["template"]["spec"]] if batch_job else pod_specs_of(doc)
    for spec in specs:
        assert restricted_violations(spec) == []


def test_web_has_no_cluster_credentials_and_workers_use_the_controller_account() -> None:
    by_name = {d["metadata"]["name"]: d for _, d in DOCS if d["kind"] == "Deployment"}
    web = by_name["zhisuan-web"]["spec"]["template"]["spec"]
    assert web["automountServiceAccountToken"] is False
    for name in ("zhisuan-worker", "zhisuan-beat"):
        spec = by_name[name]["spec"]["template"]["spec"]
        assert spec["serviceAccountName"] == "zhisuan-controller"
    assert by_name["zhisuan-beat"]["spec"]["replicas"] == 1
    # One owner of the scalers' in-memory windows; one publisher of telemetry frames.
    for name in ("zhisuan-autoscaler", "zhisuan-telemetry"):
        single = by_name[name]["spec"]
        assert single["replicas"] == 1 and single["strategy"]["type"] == "Recreate", name
        assert single["template"]["spec"]["automountServiceAccountToken"] is False, name


def test_kustomization_lists_every_manifest() -> None:
    kustomization = yaml.safe_load((REPO_ROOT / "platform" / "kustomization.yaml").read_text())
    listed = set(kustomization["resources"])
    on_disk = {
        str(p.relative_to(REPO_ROOT / "platform"))
        for p in Path(REPO_ROOT / "platform" / "k8s").rglob("*.yaml")
    }
    assert listed == on_disk
