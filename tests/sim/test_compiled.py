"""The mypyc-compiled core and engine (``apps/scheduling/compiled.py``) decide exactly as the
Python ones: the same workloads run both ways, in fresh processes, give the same start,
end, preemptions, failures and nodes for every job."""

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from apps.scheduling import compiled

ROOT = Path(__file__).resolve().parents[2]

# Run in a fresh interpreter: this one has imported the Python core already.
SCRIPT = """
import hashlib, json, pickle, sys
from pathlib import Path
from typing import Any
from apps.scheduling import compiled
if sys.argv[1] == "compiled":
    compiled.enable()
from apps.scheduling.sim import Simulator
from apps.scheduling.sim import policies as pol
from apps.scheduling.sim.llm import llm_workload
from apps.scheduling.sim.loaders import openb_workload

runs = {
    "llm-ours": (llm_workload(Path("bench/llm_workload.toml"), 7, jobs=1500, gpus=2000),
                 pol.spec_for("ours", quotas=True, devices=2000)),
    "llm-ours-plan": (llm_workload(Path("bench/llm_workload.toml"), 7, jobs=1500, gpus=2000),
                      pol.spec_for("ours-plan", quotas=True, devices=2000)),
    "llm-volcano": (llm_workload(Path("bench/llm_workload.toml"), 7, jobs=1500, gpus=2000),
                    pol.spec_for("volcano", quotas=True)),
    "openb-ours": (openb_workload(42, limit=1500), pol.spec_for("ours", quotas=False)),
    "openb-spread": (openb_workload(42, limit=1500), pol.spec_for("fifo-spread", quotas=False)),
}
out = {"active": compiled.active(), "runs": {}, "started": 0, "preemptions": 0}
for name, (w, spec) in runs.items():
    sim = Simulator(w, spec, seed=7, cycle_interval=60.0, sample_interval=3600.0)
    result = sim.run()
    pickle.loads(pickle.dumps(result))  # results cross process pools
    rows = [
        (r.job.job_id, r.status, r.first_start, r.end, r.preemptions, r.failures,
         sorted(r.nodes), str(r.tier))
        for r in sim.runs
    ]
    out["runs"][name] = hashlib.sha256(repr(rows).encode()).hexdigest()
    out["started"] += sum(r.first_start is not None for r in sim.runs)
    out["preemptions"] += sum(r.preemptions for r in sim.runs)
print(json.dumps(out))
"""


def _digests(mode: str) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, mode],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.skipif(shutil.which("cc") is None, reason="compiling the core needs a C compiler")
def test_the_compiled_core_decides_exactly_as_the_python_one():
    compiled.build()
    plain = _digests("python")
    fast = _digests("compiled")
    assert plain["active"] is False
    assert fast["active"] is True
    # The workloads do exercise the core: thousands of starts, preemptions among them.
    assert plain["started"] > 3000
    assert plain["preemptions"] > 0
    assert fast["runs"] == plain["runs"]
    assert (fast["started"], fast["preemptions"]) == (plain["started"], plain["preemptions"])


def test_enable_refuses_once_the_python_core_is_imported():
    import apps.scheduling.core  # noqa: F401 (this process runs the Python core)

    with pytest.raises(RuntimeError, match="too late"):
        compiled.enable()


def test_a_changed_source_gets_a_new_build(tmp_path, monkeypatch):
    for rel in [*compiled.compiled_sources(), Path("apps/scheduling/sim/events.py")]:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / rel, tmp_path / rel)
    monkeypatch.setattr(compiled, "ROOT", tmp_path)
    before = compiled.build_key()
    assert compiled.build_key() == before
    delay = tmp_path / "apps" / "scheduling" / "core" / "delay.py"
    delay.write_text(delay.read_text() + "\n# changed\n")
    assert compiled.build_key() != before


def test_module_names_follow_the_package_layout():
    names = {compiled.module_name(p) for p in compiled.compiled_sources()}
    assert {
        "apps.scheduling.core",
        "apps.scheduling.core.scheduler",
        "apps.scheduling.sim.engine",
    } <= names
    assert not any(n.endswith("__init__") for n in names)
