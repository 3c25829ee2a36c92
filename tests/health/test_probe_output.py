"""Parsing nccl-tests output: the summary's "Avg bus bandwidth", and only for correct data."""

from __future__ import annotations

from pathlib import Path

from apps.health.probe_output import parse_bus_bandwidth

SAMPLE = (Path(__file__).parent / "fixtures" / "sendrecv_perf.txt").read_text()

ALL_REDUCE = (Path(__file__).parent / "fixtures" / "all_reduce_perf.txt").read_text()


def test_reads_the_summary_of_a_sendrecv_run() -> None:
    assert parse_bus_bandwidth(SAMPLE) == 185.15


def test_reads_the_average_over_sizes_of_an_all_reduce_run() -> None:
    assert parse_bus_bandwidth(ALL_REDUCE) == 250.124


def test_wrong_data_yields_no_bandwidth() -> None:
    failed = SAMPLE.replace("Out of bounds values : 0 OK", "Out of bounds values : 12 FAILED")
    assert parse_bus_bandwidth(failed) is None
    wrong_row = ALL_REDUCE.replace(
        "256.52      0   7846.0  136.85  256.60      0",
        "256.52      0   7846.0  136.85  256.60      4",
    )
    assert parse_bus_bandwidth(wrong_row) is None


def test_unfinished_or_garbled_runs_yield_nothing() -> None:
    head = SAMPLE.split("# Out of bounds")[0]  # killed before the summary
    assert parse_bus_bandwidth(head) is None
    assert parse_bus_bandwidth("") is None
    assert parse_bus_bandwidth("# Avg bus bandwidth    : nan \n") is None
    assert parse_bus_bandwidth("# Avg bus bandwidth    : 0 \n") is None


def test_rows_without_validation_are_accepted() -> None:
    unchecked = ALL_REDUCE.replace("      0   ", "    N/A   ").replace("      0\n", "    N/A\n")
    assert parse_bus_bandwidth(unchecked) == 250.124
