"""Trace-driven discrete-event simulator of the scheduling core (no Django import).

``Simulator(workload, spec, seed=...).run()`` replays a ``Workload`` (from ``loaders`` or
``llm``) through the same core as production under one ``PolicySpec`` (``policies``) and
returns a ``SimResult`` (``metrics``); ``report`` prints results side by side.
"""

from .engine import Simulator
from .metrics import SimResult
from .policies import PolicySpec
from .workload import NodeFailure, SimJob, Workload

__all__ = ["NodeFailure", "PolicySpec", "SimJob", "SimResult", "Simulator", "Workload"]
