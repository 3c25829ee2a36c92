"""The default fault catalogue, seeded into ``FaultRule`` rows that operators then edit.

A code is ``family:detail`` (``xid:79``, ``ib:port_down``); lookup tries the exact code, then
the family, then falls back to an alert-only warning, so a new fault is never silently lost.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class RuleSpec:
    code: str
    severity: str
    action: str
    description: str
    remediation: str = ""


DEFAULT_RULES: tuple[RuleSpec, ...] = (
    RuleSpec("gpu:missing", "critical", "cordon_drain", "GPU fallen off the bus / not enumerated"),
    RuleSpec("xid:79", "critical", "cordon_drain", "XID 79: GPU has fallen off the bus"),
    RuleSpec("xid:48", "critical", "cordon_drain", "XID 48: double-bit ECC error"),
    RuleSpec("xid:74", "critical", "cordon_drain", "XID 74: NVLink error"),
    RuleSpec("xid:94", "critical", "cordon_drain", "XID 94: contained ECC error"),
    RuleSpec("xid:95", "critical", "cordon_drain", "XID 95: uncontained ECC error"),
    RuleSpec("xid:119", "critical", "cordon_drain", "XID 119: GSP RPC timeout"),
    RuleSpec("xid", "warning", "alert", "Other XID events (often the application's own fault)"),
    RuleSpec("ecc:uncorrectable", "critical", "cordon_drain", "Uncorrectable ECC errors"),
    RuleSpec(
        "ecc:pending_retirement",
        "warning",
        "cordon",
        "Page retirement / row remap pending: drain at leisure, then reset the GPU",
    ),
    RuleSpec("ecc:remap_failed", "critical", "cordon_drain", "Row remapping failed: replace"),
    RuleSpec("ecc:sbe", "warning", "alert", "Single-bit ECC errors above the agent's rate"),
    RuleSpec("throttle", "warning", "alert", "Thermal or power slowdown"),
    RuleSpec("nvlink:errors", "warning", "alert", "NVLink replay/recovery/CRC errors"),
    RuleSpec("module", "critical", "cordon", "A required kernel module is not loaded"),
    RuleSpec("driver:version_mismatch", "critical", "cordon", "Driver/library version mismatch"),
    RuleSpec(
        "fabricmanager:down",
        "critical",
        "remediate",
        "nvidia-fabricmanager not running on an NVSwitch node",
        "restart_fabricmanager",
    ),
    RuleSpec("ib:port_down", "critical", "cordon_drain", "InfiniBand/RoCE port down"),
    RuleSpec("ib:rate_degraded", "warning", "cordon", "InfiniBand port below its rated speed"),
    RuleSpec("disk:full", "warning", "alert", "Filesystem nearly full"),
    RuleSpec("disk:failed", "critical", "cordon", "Block device offline"),
    RuleSpec("slow_node", "warning", "cordon", "Slow node located by pairwise probes"),
)
FALLBACK = RuleSpec("*", "warning", "alert", "Fault without a catalogue entry")


def family(code: str) -> str:
    return code.split(":", 1)[0]
