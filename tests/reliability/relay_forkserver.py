"""A fork server for the relay-crash test: ``python -m tests.reliability.relay_forkserver``.

Django and the Kubernetes client are imported once; each ``go`` line on stdin forks a child
that runs the real outbox relay until the moment it has created a new object on the cluster
and not yet committed the outbox row, prints ``published <pid> <job id>`` and waits there to
be SIGKILLed. A child that finds nothing new to publish prints ``idle <pid>`` and exits. The
parent never opens a database connection, so every child starts with a clean one."""

from __future__ import annotations

import os
import sys
import time

import django


def _child() -> None:
    from apps.clusters.backends.spec import ApplyResult, WorkloadSpec
    from apps.clusters.registry import get_backend
    from apps.jobs import relay

    backend = get_backend()
    real_apply = backend.apply

    def apply_then_hang(spec: WorkloadSpec) -> ApplyResult:
        result = real_apply(spec)
        if result.created:  # published, row not yet marked done: the crash window
            print(f"published {os.getpid()} {spec.job_id}", flush=True)
            time.sleep(3600)
        return result

    backend.apply = apply_then_hang  # type: ignore[method-assign]
    relay.relay(backend=backend)
    print(f"idle {os.getpid()}", flush=True)


def main() -> None:
    django.setup()
    from apps.clusters.registry import get_backend
    from apps.jobs import relay  # noqa: F401 - imported once here, not in every child

    get_backend()  # builds the client (no connection yet): children inherit it warm
    for line in sys.stdin:
        if line.strip() != "go":
            continue
        pid = os.fork()
        if pid == 0:
            try:
                _child()
            finally:
                os._exit(0)
        os.waitpid(pid, 0)
        print("reaped", flush=True)


if __name__ == "__main__":
    main()
