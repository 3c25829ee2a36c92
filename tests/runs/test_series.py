"""Downsampled chart reads: bounded, exact extremes, raw when small; both ingest paths agree."""

from __future__ import annotations

import math
import random

import pytest

from apps.runs import selectors, services
from apps.runs.models import MetricKey, MetricRollup
from tests.runs.conftest import metrics_url

pytestmark = pytest.mark.django_db


def _curve(n: int, seed: int = 7) -> list[float]:
    rng = random.Random(seed)
    return [2.0 + 8.0 * math.exp(-s / 3000) + rng.gauss(0, 0.05) for s in range(n)]


def _ingest(run, key: str, values: list[float], *, portable: bool = False, chunk: int = 5000):
    for lo in range(0, len(values), chunk):
        pts = [(key, s, values[s]) for s in range(lo, min(lo + chunk, len(values)))]
        services.ingest_metrics(run=run, points=pts, portable=portable)


def test_small_series_come_back_raw(runs):
    _ingest(runs.a, "loss", [1.0, 2.0, 3.0])
    series = selectors.metric_series(runs.a, ["loss", "missing"], max_points=10)
    assert series["loss"].steps == [0, 1, 2] and series["loss"].values == [1.0, 2.0, 3.0]
    assert not series["loss"].downsampled
    assert series["missing"].steps == []


@pytest.mark.parametrize("max_points", [10, 100, 1000])
def test_downsampled_series_are_bounded_and_keep_the_extremes(runs, max_points):
    values = _curve(20_000)
    values[12_345] = 99.0  # a spike must survive downsampling
    values[777] = -5.0
    _ingest(runs.a, "loss", values)
    s = selectors.metric_series(runs.a, ["loss"], max_points=max_points)["loss"]
    assert s.downsampled and len(s.steps) <= max_points
    assert s.steps == sorted(s.steps) and len(set(s.steps)) == len(s.steps)
    assert all(values[step] == v for step, v in zip(s.steps, s.values, strict=True))
    assert max(s.values) == 99.0 and min(s.values) == -5.0
    assert s.count == 20_000


@pytest.mark.parametrize("portable", [False, True])
def test_zoomed_range_uses_rollups_and_raw_edges_exactly(runs, portable):
    values = _curve(50_000)
    _ingest(runs.a, "loss", values)
    lo, hi = 1234, 45_678
    s = selectors.metric_series(
        runs.a, ["loss"], max_points=200, step_min=lo, step_max=hi, portable=portable
    )["loss"]
    assert len(s.steps) <= 200 and all(lo <= st <= hi for st in s.steps)
    window = values[lo : hi + 1]
    assert max(s.values) == max(window) and min(s.values) == min(window)
    assert s.count == hi - lo + 1
    # every point is a real point
    assert all(values[step] == v for step, v in zip(s.steps, s.values, strict=True))


def test_database_and_python_merges_of_rollups_agree(runs):
    _ingest(runs.a, "loss", _curve(40_000, seed=11))
    for lo, hi in ((None, None), (999, 31_234), (5, None)):
        a = selectors.metric_series(runs.a, ["loss"], max_points=300, step_min=lo, step_max=hi)
        b = selectors.metric_series(
            runs.a, ["loss"], max_points=300, step_min=lo, step_max=hi, portable=True
        )
        assert (a["loss"].steps, a["loss"].values) == (b["loss"].steps, b["loss"].values)
        assert a["loss"].count == b["loss"].count


def test_portable_and_postgres_ingest_agree(world, runs):
    from apps.runs.services import create_run

    other = create_run(tenant=world.tenant_a, owner=None, name="portable")
    values = _curve(3000, seed=3)
    rng = random.Random(1)
    order = list(range(3000))
    rng.shuffle(order)
    # out-of-order batches with overlaps, through both paths
    for i in range(0, 3000, 700):
        chunk = sorted(order[i : i + 900])
        pts = [("loss", st, values[st]) for st in chunk]
        services.ingest_metrics(run=runs.a, points=pts)
        services.ingest_metrics(run=other, points=pts, portable=True)

    def state(run):
        key = MetricKey.objects.get(run=run, name="loss")
        rolls = list(
            MetricRollup.objects.filter(key=key)
            .order_by("level", "bucket")
            .values_list("level", "bucket", "vmin", "smin", "vmax", "smax", "n")
        )
        return (key.count, key.first_step, key.last_step, key.last_value), rolls

    assert state(runs.a) == state(other)
    assert state(runs.a)[0] == (3000, 0, 2999, values[2999])


def test_series_api_validates_query(world, runs, client_for):
    from apps.tenancy.models import Role

    client = client_for(world.user("a", Role.VIEWER))
    assert client.get(metrics_url(runs.a), {"max_points": 5}).status_code == 400
    assert client.get(metrics_url(runs.a), {"keys": "bad key"}).status_code == 400
    resp = client.get(metrics_url(runs.a), {"step_min": 10, "step_max": 5})
    assert resp.status_code == 400 and "step_max" in resp.json()["errors"]
    _ingest(runs.a, "loss", _curve(5000))
    _ingest(runs.a, "lr", [1e-4] * 5000)
    resp = client.get(metrics_url(runs.a), {"keys": "loss,lr", "max_points": 100})
    body = resp.json()
    assert set(body["series"]) == {"loss", "lr"}
    assert all(len(s["steps"]) <= 100 for s in body["series"].values())
    all_keys = client.get(metrics_url(runs.a), {"max_points": 100}).json()["series"]
    assert set(all_keys) == {"loss", "lr"}
