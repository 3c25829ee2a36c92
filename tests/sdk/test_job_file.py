"""Job files for `zs submit`, read with PyYAML and with the built-in YAML subset alike."""

from __future__ import annotations

import signal
import sys
from typing import Any

import pytest
from zhisuan._yaml import YamlError, load_job_file, parse, parse_override


@pytest.fixture(params=["pyyaml", "builtin"])
def parser(request: Any, monkeypatch: pytest.MonkeyPatch) -> str:
    """Each test runs with PyYAML and with the built-in subset (PyYAML made unimportable)."""
    if request.param == "builtin":
        monkeypatch.setitem(sys.modules, "yaml", None)
    return str(request.param)


JOB = """
name: sweep
priority: 3
command: [python, train.py, --lr, 1e-3, --tag, 007, --fp8, yes, --seed, 42]
args:
  - --warmup
  - 1_000
  - 0x1F
  - .5
  - null
  - 'quoted'
env:
  USE_FP8: no
  WORKERS: 8
  RATIO: 1.50
  RUN_DATE: 2024-06-01
  EMPTY:
  NOTE: "spaced out"
extra: {RUN_DATE: 2024-06-01, count: 2}
"""


def test_command_args_and_env_keep_the_text_as_written(parser: str) -> None:
    doc = load_job_file(JOB, "job.yaml")
    assert doc["command"] == ["python", "train.py", "--lr", "1e-3", "--tag", "007", "--fp8",
                              "yes", "--seed", "42"]  # fmt: skip
    assert doc["args"] == ["--warmup", "1_000", "0x1F", ".5", "null", "quoted"]
    assert doc["env"] == {"USE_FP8": "no", "WORKERS": "8", "RATIO": "1.50",
                          "RUN_DATE": "2024-06-01", "EMPTY": "", "NOTE": "spaced out"}  # fmt: skip
    # other fields keep YAML's types; a date becomes ISO text (PyYAML reads it as a date)
    assert doc["priority"] == 3 and doc["extra"] == {"RUN_DATE": "2024-06-01", "count": 2}


def test_each_step_of_a_pipeline_keeps_its_text_too(parser: str) -> None:
    text = "priority: 3\ncommand: [python, 007]\npipeline:\n" + "".join(
        ("  - " if i == 0 else "    ") + line
        for i, line in enumerate(JOB.strip().splitlines(keepends=True))
    )
    doc = load_job_file(text, "pipeline.yaml")
    assert doc["command"] == ["python", "007"] and doc["priority"] == 3
    [step] = doc["pipeline"]
    assert step == load_job_file(JOB, "job.yaml")


def test_dates_and_times_become_iso_text(parser: str) -> None:
    doc = load_job_file("name: x\nwhen: 2024-06-01 10:30:00\nlist: [2024-06-01]\n", "j.yaml")
    assert doc["list"] == ["2024-06-01"]
    assert doc["when"] in ("2024-06-01T10:30:00", "2024-06-01 10:30:00")  # PyYAML / subset


def test_set_values_read_like_the_same_field_in_a_file(parser: str) -> None:
    assert parse_override("priority", "3") == 3
    assert parse_override("command", "[python, -c, 1e-3]") == ["python", "-c", "1e-3"]
    assert parse_override("env", "{USE_FP8: no}") == {"USE_FP8": "no"}
    assert parse_override("name", '"[x"') == "[x"
    for bad in ("[x", "{a", "[a}"):
        with pytest.raises(YamlError) as err:
            parse_override("name", bad)
        assert "\n" not in str(err.value) and not str(err.value).startswith("line")


def test_a_parse_error_names_the_file_once_on_one_line(parser: str) -> None:
    for text in ("name: [unclosed\n", "a: b\n  c: d\n", "a: 1\na: 2\n" if parser == "builtin"
                 else "a: [1, 2\nb: 3\n"):  # fmt: skip
        with pytest.raises(YamlError) as err:
            load_job_file(text, "malformed.yaml")
        message = str(err.value)
        assert message.startswith("malformed.yaml: line ") and message.count("malformed") == 1
        assert "\n" not in message
    with pytest.raises(YamlError) as err:
        load_job_file('{"name": ', "job.json")
    assert str(err.value).startswith("job.json: Expecting value")


def test_mismatched_brackets_are_errors_not_a_hang() -> None:
    # the subset looped forever on a bracket closing the wrong kind
    def hung(*args: Any) -> None:
        raise TimeoutError("the parser hangs")

    previous = signal.signal(signal.SIGALRM, hung)
    signal.alarm(5)
    try:
        for text in ("a: [x}\n", "a: {x]\n", "a: {[x]: 1}\n"):
            with pytest.raises(YamlError):
                parse(text)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    # a flow map's key without a value is kept, as PyYAML keeps it
    assert parse("a: {E:, F: 1, G}\n") == {"a": {"E": None, "F": 1, "G": None}}


def test_values_json_cannot_carry_are_refused_with_their_place() -> None:
    pytest.importorskip("yaml")
    for text, where in (
        ("name: x\ndata: !!binary aGVsbG8=\n", "data"),
        ("name: x\ngroups: [!!set {a: null}]\n", "groups[0]"),
        ("name: x\nloss: .nan\n", "loss"),
    ):
        with pytest.raises(YamlError) as err:
            load_job_file(text, "j.yaml")
        assert str(err.value).startswith(f"j.yaml: {where}: ")


SWEEP_FILE = """
args: [--lr, "{{lr}}", --wd, 1e-3]
sweep:
  name: lr-search
  trials: 4
  parameters:
    lr: {log_uniform: [1e-5, 1.0e-3]}
    tag: ["1e-5", 1e5, 7, x1e5]
"""


def test_a_sweep_files_numbers_read_as_yaml_1_2_with_either_parser(parser: str) -> None:
    """PyYAML (YAML 1.1) reads a plain 1e-5 as text; under `sweep:` it is a number, as with
    the built-in parser and the dashboard's. Quoted it stays text; args keep their text."""
    doc = load_job_file(SWEEP_FILE, "sweep.yaml")
    params = doc["sweep"]["parameters"]
    assert params["lr"] == {"log_uniform": [1e-05, 0.001]}
    assert params["tag"] == ["1e-5", 100000.0, 7, "x1e5"]
    assert doc["args"] == ["--lr", "{{lr}}", "--wd", "1e-3"]
    assert doc["sweep"]["trials"] == 4
