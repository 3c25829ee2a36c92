"""The jobs tests' simulated cluster (32 A800 in one pool, tenant quotas 16 + 16)."""

from tests.jobs.conftest import cluster

__all__ = ["cluster"]
