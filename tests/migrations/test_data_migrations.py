"""The migrations that change data, run from the schema before them on rows written with the
models as they were then (django-test-migrations builds the database at the earlier
migration, then applies the one under test). Every RunPython of the project has a test here:
a new one needs one too (``test_every_data_migration_is_tested``)."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import pytest
from django.apps import apps as live_apps
from django.db.migrations.state import ProjectState
from django_test_migrations.migrator import Migrator

from apps.health.catalogue import DEFAULT_RULES

pytestmark = pytest.mark.django_db(transaction=True)

TESTED = {
    "governance/0005_tenant_policy_keeps_only_what_it_sets",
    "health/0002_default_catalogue",
    "inference/0006_rollout",
    "inference/0007_revision_settings",
    "runs/0003_run_state_follows_job",
    "sweeps/0007_trial_bracket",
}


def _world(old: ProjectState) -> dict[str, Any]:
    """A tenant, its user and a pool, written with the models of ``old``."""
    models = old.apps
    tenant = models.get_model("tenancy", "Tenant").objects.create(slug="vision", name="Vision")
    user = models.get_model("accounts", "User").objects.create(
        username="bob", password="!", display_name="Bob"
    )
    cluster = models.get_model("clusters", "Cluster").objects.create(name="sim", kind="simulated")
    pool = models.get_model("clusters", "ResourcePool").objects.create(cluster=cluster, name="p")
    return {"tenant": tenant, "owner": user, "pool": pool}


def _job(old: ProjectState, world: dict[str, Any], name: str, **fields: Any) -> Any:
    job_model = old.apps.get_model("jobs", "Job")
    return job_model.objects.create(name=name, spec={}, **world, **fields)


def test_every_data_migration_is_tested() -> None:
    found = set()
    for config in live_apps.get_app_configs():
        folder = Path(config.path) / "migrations"
        if not config.name.startswith("apps.") or not folder.is_dir():
            continue
        for path in folder.glob("0*.py"):
            tree = ast.parse(path.read_text())
            calls = [
                node
                for node in ast.walk(tree)
                if isinstance(node, ast.Attribute) and node.attr == "RunPython"
            ]
            if calls:
                found.add(f"{config.label}/{path.stem}")
    assert found == TESTED


def test_existing_services_get_their_first_revision(migrator: Migrator) -> None:
    old = migrator.apply_initial_migration(("inference", "0005_decision_limited_detail"))
    world = _world(old)
    service_model = old.apps.get_model("inference", "InferenceService")
    made = []
    for name, model in (("chat", "s3://models/qwen2-7b"), ("code", "hf://qwen/coder")):
        job = _job(old, world, name, kind="inference", state="running")
        made.append(
            service_model.objects.create(
                job=job, tenant=world["tenant"], model_uri=model, runtime_image="vllm/x:1"
            )
        )

    new = migrator.apply_tested_migration(("inference", "0006_rollout"))
    revision_model = new.apps.get_model("inference", "ServiceRevision")
    service_model = new.apps.get_model("inference", "InferenceService")
    for before in made:
        service = service_model.objects.get(pk=before.pk)
        assert (service.revision, service.serving_revision, service.rollout_state) == (1, 1, "")
        rows = list(revision_model.objects.filter(service_id=before.pk))
        assert [(r.number, r.runtime_image, r.model_uri, r.state) for r in rows] == [
            (1, "vllm/x:1", before.model_uri, "complete")
        ]
        assert rows[0].created_at == rows[0].finished_at == before.created_at
        assert rows[0].created_by_id is None
    assert revision_model.objects.count() == 2


def test_revisions_take_their_services_port_and_probes(migrator: Migrator) -> None:
    old = migrator.apply_initial_migration(("inference", "0006_rollout"))
    world = _world(old)
    service = old.apps.get_model("inference", "InferenceService").objects.create(
        job=_job(old, world, "chat", kind="inference", state="running"),
        tenant=world["tenant"],
        model_uri="s3://m/v2",
        port=9000,
        readiness_path="/ready",
        revision=2,
        serving_revision=2,
    )
    revision_model = old.apps.get_model("inference", "ServiceRevision")
    for number, model in ((1, "s3://m/v1"), (2, "s3://m/v2")):
        revision_model.objects.create(
            service=service, number=number, runtime_image="vllm/x:1", model_uri=model,
            state="superseded" if number == 1 else "complete",
        )  # fmt: skip

    new = migrator.apply_tested_migration(("inference", "0007_revision_settings"))
    revision_model = new.apps.get_model("inference", "ServiceRevision")
    expected = {
        "port": 9000,
        "readiness_path": "/ready",
        "liveness_path": "/health",
        "probe_initial_delay_s": 30,
        "probe_period_s": 10,
    }
    assert [(r.number, r.settings) for r in revision_model.objects.order_by("number")] == [
        (1, expected),
        (2, expected),
    ]


def test_runs_of_ended_jobs_end_and_simulated_curves_are_marked(migrator: Migrator) -> None:
    old = migrator.apply_initial_migration(
        [("runs", "0002_checkpoint_request"), ("jobs", "0007_job_max_runtime_s")]
    )
    simulated = _world(old)
    run_model = old.apps.get_model("runs", "Run")
    runs = {}
    for job_state in ("succeeded", "failed", "cancelled", "running"):
        job = _job(old, simulated, f"train-{job_state}", kind="training", state=job_state)
        runs[job_state] = run_model.objects.create(
            name=job.name, job=job, tenant=simulated["tenant"], owner=simulated["owner"]
        )
    # A notebook's run and a run on a real cluster are not the simulator's curves.
    notebook = _job(old, simulated, "nb", kind="notebook", state="running")
    runs["notebook"] = run_model.objects.create(name="nb", job=notebook, tenant=notebook.tenant)
    models = old.apps
    real_cluster = models.get_model("clusters", "Cluster").objects.create(
        name="k8s", kind="kubernetes"
    )
    real = {
        **simulated,
        "pool": models.get_model("clusters", "ResourcePool").objects.create(
            cluster=real_cluster, name="p"
        ),
    }
    on_cluster = _job(old, real, "train-k8s", kind="training", state="succeeded")
    runs["kubernetes"] = run_model.objects.create(
        name="k8s", job=on_cluster, tenant=on_cluster.tenant
    )
    # A run with no job (reported by a script outside the platform) keeps its state.
    runs["standalone"] = run_model.objects.create(name="solo", tenant=simulated["tenant"])

    new = migrator.apply_tested_migration(("runs", "0003_run_state_follows_job"))
    run_model = new.apps.get_model("runs", "Run")
    after = {key: run_model.objects.get(pk=run.pk) for key, run in runs.items()}
    assert {key: (run.state, run.simulated) for key, run in after.items()} == {
        "succeeded": ("finished", True),
        "failed": ("failed", True),
        "cancelled": ("cancelled", True),
        "running": ("running", True),
        "notebook": ("running", False),
        "kubernetes": ("finished", False),
        "standalone": ("running", False),
    }


def test_trials_keep_the_bracket_they_took_in_turn(migrator: Migrator) -> None:
    old = migrator.apply_initial_migration(("sweeps", "0006_brackets"))
    world = _world(old)
    sweep_model = old.apps.get_model("sweeps", "Sweep")
    trial_model = old.apps.get_model("sweeps", "Trial")
    made = {}
    for name, brackets in (("hyperband", 3), ("plain", 1)):
        sweep = sweep_model.objects.create(
            name=name, method="random", parameters=[], template={}, parallel=2, seed=1,
            tenant=world["tenant"], early_stop="asha", brackets=brackets,
        )  # fmt: skip
        made[name] = sweep.pk
        for index in range(1, 8):
            trial_model.objects.create(sweep=sweep, index=index, params={})

    new = migrator.apply_tested_migration(("sweeps", "0007_trial_bracket"))
    trial_model = new.apps.get_model("sweeps", "Trial")

    def brackets(name: str) -> list[int]:
        rows = trial_model.objects.filter(sweep_id=made[name]).order_by("index")
        return [row.bracket for row in rows]

    assert brackets("hyperband") == [1, 2, 3, 1, 2, 3, 1]
    assert brackets("plain") == [1] * 7


def test_tenant_policies_forget_copied_defaults_and_back(migrator: Migrator) -> None:
    old = migrator.apply_initial_migration(("governance", "0004_alter_notification_kind"))
    tenant_model = old.apps.get_model("tenancy", "Tenant")
    policy_model = old.apps.get_model("governance", "IdlePolicy")
    default = {
        "util_threshold_pct": 5.0,  # an operator's default, not the built-in 10%
        "training_idle_s": 7200,
        "notebook_idle_s": 3600,
        "grace_s": 1800,
        "max_extensions": 2,
        "extension_s": 3600,
        "queue_action": "expire",
        "max_runtime_s": None,
    }
    policy_model.objects.create(is_default=True, **default)
    copied = policy_model.objects.create(
        tenant=tenant_model.objects.create(slug="a", name="A"), **default
    )
    tightened = policy_model.objects.create(
        tenant=tenant_model.objects.create(slug="b", name="B"),
        **{**default, "util_threshold_pct": 20.0, "grace_s": 600, "queue_action": "escalate"},
    )

    new = migrator.apply_tested_migration(
        ("governance", "0005_tenant_policy_keeps_only_what_it_sets")
    )
    policy_model = new.apps.get_model("governance", "IdlePolicy")
    rules = list(default)

    def values(pk: int) -> dict[str, Any]:
        row = policy_model.objects.get(pk=pk)
        return {name: getattr(row, name) for name in rules}

    unset = {name: ("" if name == "queue_action" else None) for name in rules}
    assert values(copied.pk) == unset
    assert values(tightened.pk) == {
        **unset,
        "util_threshold_pct": 20.0,
        "grace_s": 600,
        "queue_action": "escalate",
    }
    assert policy_model.objects.get(is_default=True).util_threshold_pct == 5.0

    back = migrator.apply_tested_migration(("governance", "0004_alter_notification_kind"))
    policy_model = back.apps.get_model("governance", "IdlePolicy")
    assert values(copied.pk) == default
    assert values(tightened.pk) == {
        **default,
        "util_threshold_pct": 20.0,
        "grace_s": 600,
        "queue_action": "escalate",
    }


def test_the_fault_catalogue_is_seeded_without_overwriting_an_edit(migrator: Migrator) -> None:
    old = migrator.apply_initial_migration(("health", "0001_initial"))
    rule_model = old.apps.get_model("health", "FaultRule")
    edited = DEFAULT_RULES[0]
    rule_model.objects.create(code=edited.code, severity="info", action="alert", description="ours")

    new = migrator.apply_tested_migration(("health", "0002_default_catalogue"))
    rule_model = new.apps.get_model("health", "FaultRule")
    rows = {r.code: r for r in rule_model.objects.all()}
    assert set(rows) == {spec.code for spec in DEFAULT_RULES}
    assert (rows[edited.code].severity, rows[edited.code].description) == ("info", "ours")
    for spec in DEFAULT_RULES[1:]:
        row = rows[spec.code]
        assert (row.severity, row.action, row.remediation) == (
            spec.severity,
            spec.action,
            spec.remediation,
        )
