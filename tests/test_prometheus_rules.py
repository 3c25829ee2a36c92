"""The shipped alert rules parse and fire as their unit tests say (``promtool``, from Debian's
prometheus package, which the test command installs)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

RULES = Path(__file__).resolve().parents[1] / "platform" / "prometheus"
PROMTOOL = shutil.which("promtool") or "/usr/bin/promtool"
requires_promtool = pytest.mark.skipif(
    not Path(PROMTOOL).exists(),
    reason="promtool is not installed (scripts/ensure-prometheus.sh installs it)",
)


def _promtool(*args: str) -> str:
    done = subprocess.run([PROMTOOL, *args], cwd=RULES, capture_output=True, text=True,
                          timeout=60, check=False)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


@requires_promtool
def test_alert_rules_parse() -> None:
    assert "SUCCESS: 4 rules found" in _promtool("check", "rules", "alerts.yml")


@requires_promtool
def test_alert_rules_fire_as_their_unit_tests_say() -> None:
    assert "SUCCESS" in _promtool("test", "rules", "alerts.test.yml")


def test_every_alert_has_a_unit_test_and_prometheus_loads_the_rules() -> None:
    rules = yaml.safe_load((RULES / "alerts.yml").read_text())
    alerts = {r["alert"] for g in rules["groups"] for r in g["rules"]}
    tests = yaml.safe_load((RULES / "alerts.test.yml").read_text())
    tested = {c["alertname"] for t in tests["tests"] for c in t["alert_rule_test"]}
    assert alerts == tested
    config = yaml.safe_load((RULES / "prometheus.yml").read_text())
    assert config["rule_files"] == ["alerts.yml"]
    assert "zhisuan" in {job["job_name"] for job in config["scrape_configs"]}
