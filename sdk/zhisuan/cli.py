"""``zs``: the Zhisuan command line (log in, submit and follow jobs, see where a job could
start, deploy inference services, open notebooks).

Exit codes: 0 success, 1 cannot reach the server or another failure, 2 bad usage or input
rejected by the server (400, field errors printed per field), 3 not logged in or not allowed
(401, 403), 4 not found (404).
"""

from __future__ import annotations

import argparse
import getpass
import sys
import time
import webbrowser
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TextIO

import requests

from zhisuan import __version__, _config
from zhisuan._yaml import YamlError, load_job_file
from zhisuan.client import ApiClient, ApiError

EXIT_FAILURE, EXIT_USAGE, EXIT_AUTH, EXIT_NOT_FOUND = 1, 2, 3, 4


class CliError(Exception):
    def __init__(self, message: str, code: int = EXIT_FAILURE) -> None:
        super().__init__(message)
        self.code = code


def _client(args: argparse.Namespace) -> ApiClient:
    s = _config.load(url=args.url, tenant=args.tenant)
    if not s.url or not s.token:
        raise CliError("not logged in: run `zs login --url URL` (or set ZS_API_URL and ZS_TOKEN)",
                       EXIT_AUTH)  # fmt: skip
    if not s.tenant:
        raise CliError("no tenant: pass --tenant or run `zs login --tenant SLUG`", EXIT_USAGE)
    return ApiClient(s.url, s.token, s.tenant, timeout=args.timeout)


def _table(rows: Sequence[Sequence[Any]], headers: Sequence[str], out: TextIO) -> None:
    cells = [[("" if c is None else str(c)) for c in row] for row in rows]
    widths = [max([len(h), *(len(r[i]) for r in cells)]) for i, h in enumerate(headers)]
    print("  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)).rstrip(), file=out)
    for r in cells:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip(), file=out)


def _positive(text: str) -> int:
    """An argparse type: a whole number of at least 1 (a bad one is a usage error, exit 2)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def _when(ts: Any) -> str:
    return str(ts or "")[:19].replace("T", " ")


# ---------------------------------------------------------------------------------- commands
def cmd_login(args: argparse.Namespace, out: TextIO) -> int:
    stored = _config.load_file()
    url = (args.url or stored.get("url") or "").rstrip("/")
    if not url:
        raise CliError("give the server: zs login --url https://zhisuan.example.com", EXIT_USAGE)
    token = args.token or (getpass.getpass("API token (zs_...): ") if sys.stdin.isatty() else "")
    token = token.strip() or sys.stdin.readline().strip()
    if not token:
        raise CliError("no token given (create one under your profile: API tokens)", EXIT_USAGE)
    client = ApiClient(url, token, args.tenant or "-", timeout=args.timeout)
    page = client.get("/api/v1/tenants/")
    slugs = [t["slug"] for t in (page.get("results", page) if isinstance(page, dict) else page)]
    tenant = args.tenant
    if tenant is None:
        if len(slugs) != 1:
            raise CliError(f"you belong to {len(slugs)} tenants ({', '.join(slugs) or 'none'}); "
                           "pick one with --tenant", EXIT_USAGE)  # fmt: skip
        tenant = slugs[0]
    elif tenant not in slugs:
        raise CliError(f"no tenant {tenant!r} for this token; yours: {', '.join(slugs)}",
                       EXIT_NOT_FOUND)  # fmt: skip
    path = _config.save_file(url=url, token=token, tenant=tenant)
    print(f"Logged in to {url} (tenant {tenant}). Settings saved to {path}.", file=out)
    return 0


def _resolve_pool(client: ApiClient, body: dict[str, Any]) -> None:
    pool = body.get("pool")
    if isinstance(pool, str) and not pool.isdigit():
        pools = client.get("/api/v1/pools/")
        found = [p["id"] for p in pools if p.get("name") == pool]
        if len(found) != 1:
            names = ", ".join(sorted(str(p.get("name")) for p in pools))
            raise CliError(f"no pool named {pool!r}; pools: {names}", EXIT_USAGE)
        body["pool"] = found[0]


def _read_body(args: argparse.Namespace) -> dict[str, Any]:
    """The mapping in the YAML or JSON file of ``--file`` ('-': stdin), ``--set`` applied."""
    path = Path(args.file)
    try:
        text = sys.stdin.read() if args.file == "-" else path.read_text()
    except OSError as exc:
        raise CliError(f"cannot read {args.file}: {exc.strerror}", EXIT_USAGE) from exc
    try:
        body = load_job_file(text, args.file)
    except YamlError as exc:
        raise CliError(f"{args.file}: {exc}", EXIT_USAGE) from exc
    if not isinstance(body, dict):
        raise CliError(f"{args.file}: expected a mapping of fields", EXIT_USAGE)
    for override in args.set or []:
        key, sep, value = override.partition("=")
        if not sep:
            raise CliError(f"--set wants KEY=VALUE, got {override!r}", EXIT_USAGE)
        body[key] = load_job_file(f"v: {value}")["v"]
    return body


def cmd_submit(args: argparse.Namespace, out: TextIO) -> int:
    body = _read_body(args)
    body.setdefault("kind", "training")
    client = _client(args)
    _resolve_pool(client, body)
    job = client.post(client.tenant_path("jobs/"), body)
    print(f"Submitted job {job['id']} ({job['name']}): {job['state']}", file=out)
    return 0


def cmd_list(args: argparse.Namespace, out: TextIO) -> int:
    client = _client(args)
    filters = {"state": args.state, "kind": args.kind, "name": args.name, "owner": args.owner}
    params = {key: value for key, value in filters.items() if value}
    jobs = client.list(client.tenant_path("jobs/"), args.limit, **params)
    rows = [
        (j["id"], j["name"], j["kind"], j["state"], f"P{j['priority']}",
         j.get("requested_devices", ""), j.get("owner") or "", _when(j.get("submitted_at")))
        for j in jobs
    ]  # fmt: skip
    _table(rows, ["ID", "NAME", "KIND", "STATE", "PRIO", "DEVICES", "OWNER", "SUBMITTED"], out)
    return 0


def cmd_pools(args: argparse.Namespace, out: TextIO) -> int:
    """Where a job could start now: each pool's free GPUs, wholly free nodes, GPUs stranded on
    part-used nodes, the largest whole-node job that fits now in one leaf / one Scalable Unit /
    the pool, and its queue."""
    client = _client(args)
    rows = []
    for pool in client.get("/api/v1/pools/"):
        topo = client.get(f"/api/v1/pools/{pool['id']}/topology/")
        s, queue = topo["summary"], topo["queue"]
        largest = [f"{g['model']} {g['leaf']}/{g['scalable_unit']}/{g['pool']}"
                   for g in topo["largest_gang"]]  # fmt: skip
        rows.append(
            (pool["id"], pool["name"], s["devices"], s["free"], s["whole_free_nodes"],
             s["stranded"], ", ".join(largest) or "-", f"{queue['jobs']} ({queue['devices']})")
        )  # fmt: skip
    _table(rows, ["ID", "POOL", "GPUS", "FREE", "WHOLE-NODES", "STRANDED",
                  "LARGEST-NOW(LEAF/SU/POOL)", "QUEUED(GPUS)"], out)  # fmt: skip
    return 0


def cmd_describe(args: argparse.Namespace, out: TextIO) -> int:
    client = _client(args)
    job = client.get(client.tenant_path(f"jobs/{args.id}/"))
    fields = [
        ("ID", job["id"]), ("Name", job["name"]), ("Kind", job["kind"]),
        ("State", job["state"]), ("Reason", job.get("state_reason")),
        ("Priority", f"P{job['priority']}"), ("Pool", job.get("pool")),
        ("Accelerator", job.get("accelerator_model") or "any"),
        ("Devices", job.get("requested_devices")), ("Owner", job.get("owner")),
        ("Attempt", job.get("attempt")), ("Failures", job.get("failures")),
        ("Queue position", job.get("queue_position")),
        ("Pending", " ".join(filter(None, (job.get("pending_code"), job.get("pending_message"))))),
        ("Submitted", _when(job.get("submitted_at"))), ("Started", _when(job.get("started_at"))),
        ("Finished", _when(job.get("finished_at"))),
        ("Image", (job.get("spec") or {}).get("image")),
    ]  # fmt: skip
    for label, value in fields:
        if value not in (None, ""):
            print(f"{label + ':':<16}{value}", file=out)
    allocs = job.get("allocations") or []
    if allocs:
        print("Placement:", file=out)
        for a in allocs:
            devs = ",".join(str(d) for d in a.get("devices") or []) or "shared"
            print(f"  {a['replica_group']}-{a['replica_index']}  {a['node']}  devices {devs}",
                  file=out)  # fmt: skip
    events = client.get(client.tenant_path(f"jobs/{args.id}/events/"))
    if events:
        print("Recent events:", file=out)
        _print_events(events[-10:], out, indent="  ")
    return 0


def _print_events(events: list[dict[str, Any]], out: TextIO, indent: str = "") -> None:
    for e in events:
        move = f"{e['from_state']} -> {e['to_state']}" if e.get("to_state") else ""
        line = f"{indent}{_when(e['created_at'])}  {e['reason']:<16} {move:<26} {e['message']}"
        print(line.rstrip(), file=out)


def cmd_events(args: argparse.Namespace, out: TextIO) -> int:
    client = _client(args)
    _print_events(client.get(client.tenant_path(f"jobs/{args.id}/events/")), out)
    return 0


FINISHED = ("succeeded", "failed", "cancelled")


def _print_log_lines(lines: list[dict[str, Any]], out: TextIO) -> str | None:
    """Print ``<time> <replica>  <text>`` per line; the last line's time (to follow from)."""
    for line in lines:
        print(f"{line['ts']} {line['replica']}  {line['text']}", file=out)
    return str(lines[-1]["ts"]) if lines else None


def cmd_logs(args: argparse.Namespace, out: TextIO) -> int:
    client = _client(args)
    path = client.tenant_path(f"jobs/{args.id}/logs/")
    body = client.get(path, tail=args.tail)
    if body["truncated"]:
        print(f"zs: showing the last {args.tail} lines (--tail for more)", file=sys.stderr)
    last = _print_log_lines(body["lines"], out)
    while args.follow:
        state = client.get(client.tenant_path(f"jobs/{args.id}/"))["state"]
        time.sleep(args.interval)
        params: dict[str, Any] = {"tail": 5000, **({"since": last} if last else {})}
        last = _print_log_lines(client.get(path, **params)["lines"], out) or last
        if state in FINISHED:  # one more read after the end picks up the last lines
            break
    if last is None and not args.follow:
        print("zs: no output yet", file=sys.stderr)
    return 0


def cmd_cancel(args: argparse.Namespace, out: TextIO) -> int:
    client = _client(args)
    job = client.post(client.tenant_path(f"jobs/{args.id}/cancel/"))
    print(f"Job {job['id']} ({job['name']}): {job['state']}", file=out)
    return 0


def cmd_clone(args: argparse.Namespace, out: TextIO) -> int:
    client = _client(args)
    job = client.post(client.tenant_path(f"jobs/{args.id}/clone/"))
    print(f"Submitted job {job['id']} ({job['name']}) as a copy of {args.id}: {job['state']}",
          file=out)  # fmt: skip
    return 0


# ---------------------------------------------------------------------------------- main
def cmd_inference_deploy(args: argparse.Namespace, out: TextIO) -> int:
    """Create an inference service (the autoscaled kind the dashboard's Inference page lists)
    from a file of the inference services API's fields."""
    body = _read_body(args)
    client = _client(args)
    _resolve_pool(client, body)
    service = client.post(client.tenant_path("inference/services/"), body)
    print(f"Deployed inference service {service['id']} ({service['name']}): job "
          f"{service['job']} {service['state']}, replicas {service['min_replicas']}.."
          f"{service['max_replicas']}", file=out)  # fmt: skip
    return 0


def cmd_inference_list(args: argparse.Namespace, out: TextIO) -> int:
    client = _client(args)
    services = client.list(client.tenant_path("inference/services/"), args.limit)
    rows = [
        (s["id"], s["name"], s["state"], s["model_uri"], s["ready_replicas"],
         s["desired_replicas"], f"{s['min_replicas']}..{s['max_replicas']}")
        for s in services
    ]  # fmt: skip
    _table(rows, ["ID", "NAME", "STATE", "MODEL", "READY", "DESIRED", "RANGE"], out)
    return 0


def cmd_notebook_open(args: argparse.Namespace, out: TextIO) -> int:
    """Print (and open in a browser) the platform address of a running notebook. The browser
    signs in to the platform as usual; the notebook's token stays on the server."""
    client = _client(args)
    job = client.get(client.tenant_path(f"jobs/{args.id}/"))
    if job.get("kind") != "notebook":
        raise CliError(f"job {args.id} is a {job.get('kind')} job, not a notebook", EXIT_USAGE)
    path = job.get("open_url")
    if not path:
        if job.get("state") == "running":
            raise CliError(f"notebook {args.id} belongs to {job.get('owner')}; only its owner "
                           "or a tenant admin can open it", EXIT_AUTH)  # fmt: skip
        raise CliError(f"notebook {args.id} ({job['name']}) is {job.get('state')}, not running",
                       EXIT_USAGE)  # fmt: skip
    url = client.url + path
    print(url, file=out)
    if not args.print_only and not webbrowser.open(url, new=2):
        print("zs: could not start a browser; open the address above", file=sys.stderr)
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="zs", description="Zhisuan (智算) command line")
    p.add_argument("--version", action="version", version=f"zs {__version__}")
    p.add_argument("--url", help="server URL (default: ZS_API_URL or `zs login`)")
    p.add_argument("--tenant", help="tenant slug (default: ZS_TENANT or `zs login`)")
    p.add_argument("--timeout", type=float, default=30.0, help="seconds per request")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def add(name: str, fn: Callable[[argparse.Namespace, TextIO], int], help_: str
            ) -> argparse.ArgumentParser:  # fmt: skip
        sp = sub.add_parser(name, help=help_, description=help_)
        sp.set_defaults(func=fn)
        return sp

    login = add("login", cmd_login, "store the server URL, token and tenant")
    login.add_argument("--token", help="API token (prompted when omitted; or on stdin)")
    submit = add("submit", cmd_submit, "submit a job from a YAML or JSON file")
    submit.add_argument("-f", "--file", required=True, help="job file ('-' for stdin)")
    submit.add_argument("--set", action="append", metavar="KEY=VALUE",
                        help="override a top-level field, e.g. --set priority=3")  # fmt: skip
    lst = add("list", cmd_list, "list jobs, newest first")
    lst.add_argument("--state", help="only jobs in this state")
    lst.add_argument("--kind", choices=["training", "notebook", "inference"])
    lst.add_argument("--name", help="only jobs whose name contains this (any case)")
    lst.add_argument("--owner", help="only jobs submitted by this user (username)")
    lst.add_argument("--limit", type=_positive, default=50, help="at most this many (newest)")
    add("pools", cmd_pools, "pools: free GPUs, wholly free nodes, largest job that fits now, queue")
    for name, fn, text in (
        ("describe", cmd_describe, "show a job: spec, placement, recent events"),
        ("events", cmd_events, "show a job's events"),
        ("cancel", cmd_cancel, "cancel a job"),
        ("clone", cmd_clone, "submit a copy of a job"),
    ):
        add(name, fn, text).add_argument("id", type=int, help="job id")
    logs = add("logs", cmd_logs, "show a job's output (all replicas, oldest first)")
    logs.add_argument("id", type=int, help="job id")
    logs.add_argument("--tail", type=int, default=500, help="the newest N lines (max 5000)")
    logs.add_argument("-f", "--follow", action="store_true", help="keep printing until it ends")
    logs.add_argument("--interval", type=float, default=2.0, help=argparse.SUPPRESS)
    inference = sub.add_parser("inference", help="deploy and list inference services",
                               description="deploy and list inference services")  # fmt: skip
    inference_sub = inference.add_subparsers(dest="inference_command", required=True,
                                             metavar="ACTION")  # fmt: skip
    deploy = inference_sub.add_parser("deploy", help="deploy a service from a YAML or JSON file")
    deploy.set_defaults(func=cmd_inference_deploy)
    deploy.add_argument("-f", "--file", required=True, help="service file ('-' for stdin)")
    deploy.add_argument("--set", action="append", metavar="KEY=VALUE",
                        help="override a top-level field, e.g. --set max_replicas=8")  # fmt: skip
    inf_list = inference_sub.add_parser("list", help="list inference services")
    inf_list.set_defaults(func=cmd_inference_list)
    inf_list.add_argument("--limit", type=_positive, default=50, help="at most this many")
    notebook = sub.add_parser("notebook", help="work with notebooks",
                              description="work with notebooks")  # fmt: skip
    notebook_sub = notebook.add_subparsers(dest="notebook_command", required=True, metavar="ACTION")
    nb_open = notebook_sub.add_parser(
        "open", help="open a running notebook in the browser (through the platform)"
    )
    nb_open.set_defaults(func=cmd_notebook_open)
    nb_open.add_argument("id", type=int, help="notebook (job) id")
    nb_open.add_argument("--print-only", action="store_true", help="print the address only")
    return p


def main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    out = out or sys.stdout
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args, out))
    except CliError as exc:
        print(f"zs: error: {exc}", file=sys.stderr)
        return exc.code
    except ApiError as exc:
        return _report(exc)
    except requests.RequestException as exc:
        print(f"zs: error: cannot reach the server: {exc}", file=sys.stderr)
        return EXIT_FAILURE
    except KeyboardInterrupt:
        return 130


def _report(exc: ApiError) -> int:
    print(f"zs: error: {exc.detail} (HTTP {exc.status})", file=sys.stderr)
    for field, messages in exc.errors.items():
        for msg in messages:
            print(f"  {field}: {msg}", file=sys.stderr)
    if exc.status == 401:
        print("  (run `zs login` with a valid token)", file=sys.stderr)
    if exc.status in (400, 405, 409, 422):
        return EXIT_USAGE
    if exc.status in (401, 403):
        return EXIT_AUTH
    if exc.status == 404:
        return EXIT_NOT_FOUND
    return EXIT_FAILURE


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
