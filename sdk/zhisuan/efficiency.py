"""Training efficiency: tokens/s, achieved TFLOPS and model FLOPs utilization (MFU).

Model FLOPs per token follow the PaLM paper (Chowdhery et al. 2022, appendix B): a dense
decoder with N parameters, L layers, model width d and sequence length T needs

    training (forward + backward):  6 N + 12 L d T   FLOPs per token
    forward only (inference):       2 N +  4 L d T

where 12 L d T is the attention score and value products (PaLM writes 12 L H Q T, with
H heads of width Q, and H Q = d). MFU is model FLOPs per second over the peak of the devices:

    MFU = flops_per_token * tokens_per_s / (devices * peak_flops_per_device)

Model FLOPs exclude activation recomputation, so MFU does not reward recomputing (that would
be hardware FLOPs utilization, HFU). N should exclude embedding parameters for a faithful
count (PaLM counts non-embedding parameters), though the difference is small for large models.

Peak dense BF16 (or FP16 where the chip has no BF16 figure) FLOP/s per device, without
structured sparsity. Sources:
- A100 / A800 (SXM and PCIe): 312 TFLOPS. NVIDIA A100 Tensor Core GPU datasheet (BF16 Tensor
  Core 312, 624 with sparsity); the A800 is the export variant with the same compute.
- H100 SXM / H800 SXM: 989 TFLOPS; H100 PCIe / H800 PCIe: 756; H100 NVL: 835. NVIDIA H100
  datasheet (BF16 Tensor Core 1,979 / 1,513 / 1,671 *with sparsity*, half that dense); the
  H800 is the export variant with the H100's compute.
- H200 (SXM): 989 TFLOPS, NVIDIA H200 datasheet (1,979 with sparsity). H20: 148, NVIDIA H20
  product brief. L40S: 362, NVIDIA L40S datasheet (733 with sparsity). B200: 2,250 dense,
  NVIDIA DGX B200 / HGX B200 figures (4.5 PFLOPS sparse FP16/BF16 per GPU); check the SKU.
- Huawei Ascend: the Ascend 910 datasheet gives 320 TFLOPS FP16. For the 910B there is no
  public datasheet; vendor briefings and press report about 376 TFLOPS FP16 for the 910B2 and
  313 for the 910B3 (280 for the 910B4). ``Ascend910B`` defaults to 320 (between the two,
  matching the 910); pass ``peak_tflops`` for your exact SKU when it matters.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass

PEAK_BF16_TFLOPS: dict[str, float] = {
    "A100": 312.0,
    "A800": 312.0,
    "H100": 989.0,  # SXM
    "H100-SXM": 989.0,
    "H100-PCIE": 756.0,
    "H100-NVL": 835.0,
    "H800": 989.0,  # SXM
    "H800-SXM": 989.0,
    "H800-PCIE": 756.0,
    "H200": 989.0,
    "H20": 148.0,
    "L40S": 362.0,
    "B200": 2250.0,
    "Ascend910": 320.0,
    "Ascend910B": 320.0,
    "Ascend910B2": 376.0,
    "Ascend910B3": 313.0,
    "Ascend910B4": 280.0,
}


def _norm(name: str) -> str:
    return re.sub(r"[\s_]+", "-", name.strip()).upper()


_BY_NORM = {_norm(k): v for k, v in PEAK_BF16_TFLOPS.items()}


def peak_flops(accelerator: str) -> float:
    """Peak dense BF16 FLOP/s of one device, by model name (case and spacing ignored;
    "NVIDIA A800-SXM4-80GB" and "a800" both find the A800)."""
    key = _norm(accelerator)
    if key in _BY_NORM:
        return _BY_NORM[key] * 1e12
    # Longest table name contained in the given one: "NVIDIA-H100-80GB-HBM3" -> "H100".
    hits = [k for k in _BY_NORM if k in key]
    if hits:
        return _BY_NORM[max(hits, key=len)] * 1e12
    raise KeyError(f"unknown accelerator {accelerator!r}; pass peak_tflops explicitly")


def flops_per_token(
    n_params: float, n_layers: int, d_model: int, seq_len: int, *, training: bool = True
) -> float:
    """Model FLOPs per token: 6N + 12 L d T for training, 2N + 4 L d T forward only."""
    attention = 12.0 * n_layers * d_model * seq_len
    dense = 6.0 * n_params
    return dense + attention if training else (dense + attention) / 3.0


@dataclass(frozen=True)
class Efficiency:
    tokens_per_s: float
    tflops_per_device: float  # achieved model TFLOPS per device
    mfu: float  # 0..1

    def as_metrics(self, prefix: str = "perf/") -> dict[str, float]:
        return {
            f"{prefix}tokens_per_s": self.tokens_per_s,
            f"{prefix}tflops_per_device": self.tflops_per_device,
            f"{prefix}mfu": self.mfu,
        }


def efficiency(
    *,
    tokens_per_s: float,
    n_params: float,
    n_layers: int,
    d_model: int,
    seq_len: int,
    devices: int,
    accelerator: str | None = None,
    peak_tflops: float | None = None,
    training: bool = True,
) -> Efficiency:
    """Achieved TFLOPS per device and MFU of a job processing ``tokens_per_s`` (all devices
    together). Give the device model (see ``PEAK_BF16_TFLOPS``) or its ``peak_tflops``."""
    if devices <= 0:
        raise ValueError("devices must be positive")
    if peak_tflops is None:
        if accelerator is None:
            raise ValueError("give accelerator or peak_tflops")
        peak = peak_flops(accelerator)
    else:
        peak = peak_tflops * 1e12
    achieved = flops_per_token(n_params, n_layers, d_model, seq_len, training=training)
    achieved *= tokens_per_s
    return Efficiency(
        tokens_per_s=tokens_per_s,
        tflops_per_device=achieved / devices / 1e12,
        mfu=achieved / (devices * peak),
    )


class ThroughputMeter:
    """Tokens/s, TFLOPS and MFU over the steps since the last report.

    meter = ThroughputMeter(n_params=7e9, n_layers=32, d_model=4096, seq_len=4096,
                            devices=8, accelerator="A100")
    ...
    zhisuan.log(step, {**meter.update(tokens_this_step), "loss": loss})
    """

    def __init__(
        self,
        *,
        n_params: float,
        n_layers: int,
        d_model: int,
        seq_len: int,
        devices: int,
        accelerator: str | None = None,
        peak_tflops: float | None = None,
    ) -> None:
        self.n_params, self.n_layers, self.d_model = n_params, n_layers, d_model
        self.seq_len, self.devices = seq_len, devices
        self.accelerator, self.peak_tflops = accelerator, peak_tflops
        self._last = time.perf_counter()

    def update(self, tokens: int, *, now: float | None = None) -> dict[str, float]:
        """Metrics for ``tokens`` processed (by all devices) since the previous call."""
        t = time.perf_counter() if now is None else now
        elapsed, self._last = t - self._last, t
        if elapsed <= 0:
            return {}
        return efficiency(
            tokens_per_s=tokens / elapsed,
            n_params=self.n_params,
            n_layers=self.n_layers,
            d_model=self.d_model,
            seq_len=self.seq_len,
            devices=self.devices,
            accelerator=self.accelerator,
            peak_tflops=self.peak_tflops,
        ).as_metrics()
