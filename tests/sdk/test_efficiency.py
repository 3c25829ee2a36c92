"""MFU and throughput, checked against numbers worked out by hand."""

from __future__ import annotations

import pytest
from zhisuan import efficiency as eff


def test_7b_dense_on_8_a100s():
    # N = 7e9, L = 32, d = 4096, T = 4096:
    # per token: 6 * 7e9 + 12 * 32 * 4096 * 4096 = 42e9 + 6,442,450,944 = 48,442,450,944
    assert eff.flops_per_token(7e9, 32, 4096, 4096) == 48_442_450_944
    # 8 A100s at 3,000 tokens/s each = 24,000 tokens/s:
    # 48,442,450,944 * 24,000 = 1.162618822656e15 FLOP/s; per GPU 145.327 TFLOPS
    # MFU = 1.162618822656e15 / (8 * 312e12) = 0.465793...
    e = eff.efficiency(tokens_per_s=24_000, n_params=7e9, n_layers=32, d_model=4096,
                       seq_len=4096, devices=8, accelerator="A100")  # fmt: skip
    assert e.tflops_per_device == pytest.approx(145.3273528, rel=1e-9)
    assert e.mfu == pytest.approx(0.4657928, rel=1e-6)
    assert e.as_metrics() == {"perf/tokens_per_s": 24_000, "perf/tflops_per_device":
                              e.tflops_per_device, "perf/mfu": e.mfu}  # fmt: skip


def test_attention_term_matters_for_long_sequences():
    # 1.3B-ish model, L = 24, d = 2048, T = 32768: attention 12*24*2048*32768 = 19,327,352,832
    # dense 6 * 1.3e9 = 7.8e9: attention is 71% of the work
    per_token = eff.flops_per_token(1.3e9, 24, 2048, 32768)
    assert per_token == 7.8e9 + 19_327_352_832
    assert eff.flops_per_token(1.3e9, 24, 2048, 32768, training=False) == per_token / 3


def test_h800_and_ascend_peaks_and_names():
    assert eff.peak_flops("H800") == 989e12
    assert eff.peak_flops("NVIDIA A800-SXM4-80GB") == 312e12
    assert eff.peak_flops("NVIDIA H100 PCIe") == 756e12
    assert eff.peak_flops("ascend910b3") == 313e12
    assert eff.peak_flops("Ascend910B") == 320e12
    with pytest.raises(KeyError, match="unknown accelerator"):
        eff.peak_flops("TPUv9")
    # 70B on 64 H800s at 400 tokens/s/GPU: 6*70e9 + 12*80*8192*4096 = 420e9 + 32,212,254,720
    # = 452,212,254,720 FLOPs/token; x 25,600 tokens/s / (64 * 989e12) = 0.18290...
    e = eff.efficiency(tokens_per_s=25_600, n_params=70e9, n_layers=80, d_model=8192,
                       seq_len=4096, devices=64, accelerator="H800")  # fmt: skip
    assert e.mfu == pytest.approx(452_212_254_720 * 25_600 / (64 * 989e12))
    assert e.mfu == pytest.approx(0.182897, rel=1e-5)


def test_explicit_peak_and_bad_arguments():
    e = eff.efficiency(tokens_per_s=1000, n_params=1e9, n_layers=1, d_model=1, seq_len=1,
                       devices=1, peak_tflops=100)  # fmt: skip
    assert e.mfu == pytest.approx((6e9 + 12) * 1000 / 100e12)
    with pytest.raises(ValueError, match="devices"):
        eff.efficiency(tokens_per_s=1, n_params=1, n_layers=1, d_model=1, seq_len=1,
                       devices=0, accelerator="A100")  # fmt: skip
    with pytest.raises(ValueError, match="accelerator or peak"):
        eff.efficiency(tokens_per_s=1, n_params=1, n_layers=1, d_model=1, seq_len=1, devices=1)


def test_throughput_meter_reports_over_the_interval():
    meter = eff.ThroughputMeter(n_params=7e9, n_layers=32, d_model=4096, seq_len=4096,
                                devices=8, accelerator="A800")  # fmt: skip
    meter.update(0, now=100.0)
    m = meter.update(48_000, now=102.0)  # 24,000 tokens/s
    assert m["perf/tokens_per_s"] == 24_000
    assert m["perf/mfu"] == pytest.approx(0.4657928, rel=1e-6)
    assert meter.update(10, now=102.0) == {}
