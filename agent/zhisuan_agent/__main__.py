"""``python -m zhisuan_agent``: check rounds forever (the DaemonSet), or ``--once --print``
for one round printed as JSON (an operator on a node, a smoke test on a GPU machine)."""

from __future__ import annotations

import argparse
import json
import logging
import os
import socket
import sys
import time
from pathlib import Path

from prometheus_client import start_http_server

from . import __version__, gpu
from .checks import Checker
from .client import Platform
from .host import Host
from .metrics import Metrics
from .remediate import perform
from .token import read_token

log = logging.getLogger("zhisuan_agent")


def parse(argv: list[str] | None) -> argparse.Namespace:
    env = os.environ.get
    p = argparse.ArgumentParser(prog="zhisuan-agent", description=__doc__)
    p.add_argument("--once", action="store_true", help="run one round and exit")
    p.add_argument("--print", action="store_true", help="print the round's JSON report")
    p.add_argument("--interval", type=float, default=float(env("ZS_AGENT_INTERVAL_S", "30")))
    p.add_argument(
        "--root",
        default=env("ZS_AGENT_HOST_ROOT", "/"),
        help="where the host's /proc, /sys and /dev are mounted",
    )
    p.add_argument("--expected-gpus", type=int, default=int(env("ZS_AGENT_EXPECTED_GPUS", "-1")))
    p.add_argument("--ib-min-rate", type=float, default=float(env("ZS_AGENT_IB_MIN_GBPS", "0")))
    p.add_argument("--disk", action="append", default=None, help="mount point to watch")
    p.add_argument("--nvml-fixture", default="", help="read GPU facts from this JSON file")
    p.add_argument("--platform-url", default=env("ZS_AGENT_PLATFORM_URL", ""))
    p.add_argument("--token-file", default=env("ZS_AGENT_TOKEN_FILE", ""))
    p.add_argument(
        "--token-dir",
        default=env("ZS_AGENT_TOKEN_DIR", ""),
        help="folder with one token file per node name (the mounted Secret)",
    )
    p.add_argument("--node", default=env("ZS_AGENT_NODE_NAME", socket.gethostname()))
    p.add_argument("--metrics-port", type=int, default=int(env("ZS_AGENT_METRICS_PORT", "9410")))
    return p.parse_args(argv)


def build_host(args: argparse.Namespace) -> Host:
    host = Host(
        root=Path(args.root),
        expected_gpus=args.expected_gpus if args.expected_gpus >= 0 else None,
        ib_min_rate_gbps=args.ib_min_rate or None,
        disk_paths=tuple(args.disk or ["/"]),
    )
    if args.nvml_fixture:
        fixture = Path(args.nvml_fixture)
        host.gpu = lambda: gpu.from_json(fixture)
    return host


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    checker = Checker(build_host(args))
    platform: Platform | None = None
    warned = False
    metrics = Metrics()
    if not args.once:
        start_http_server(args.metrics_port, registry=metrics.registry)
    pending: list[str] = []
    while True:
        started = time.monotonic()
        done = perform(pending) if pending else {}
        results = checker.run()
        metrics.observe(results, time.monotonic() - started)
        if args.print:
            report = {
                "node": args.node,
                "agent_version": __version__,
                "results": [r.as_dict() for r in results],
            }
            json.dump(report, sys.stdout, indent=2, default=str)
            sys.stdout.write("\n")
        pending = []
        if args.platform_url:
            # Read every round: a rotated token reaches the mounted Secret without a restart.
            token = read_token(args.token_file, args.token_dir, args.node)
            if token is None:
                if not warned:
                    log.warning("no token for node %s yet: not reporting", args.node)
                warned = True
                platform = None
            elif platform is None or platform.token != token:
                platform = Platform(args.platform_url, token, args.node)
                warned = False
        if platform is not None:
            try:
                pending = platform.report(results, done)
                metrics.reports.labels("ok").inc()
            except OSError as exc:  # URLError and HTTPError are OSErrors; try next round
                metrics.reports.labels("error").inc()
                log.warning("report to %s failed: %s", args.platform_url, exc)
        if args.once:
            return 0
        time.sleep(max(1.0, args.interval - (time.monotonic() - started)))


if __name__ == "__main__":
    raise SystemExit(main())
