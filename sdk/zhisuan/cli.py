"""``zs``: the Zhisuan command line (log in, submit and follow jobs).

Exit codes: 0 success, 1 cannot reach the server or another failure, 2 bad usage or input
rejected by the server (400, field errors printed per field), 3 not logged in or not allowed
(401, 403), 4 not found (404).
"""

from __future__ import annotations

import argparse
import getpass
import sys
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


def cmd_submit(args: argparse.Namespace, out: TextIO) -> int:
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
        raise CliError(f"{args.file}: expected a mapping of job fields", EXIT_USAGE)
    body.setdefault("kind", "training")
    for override in args.set or []:
        key, sep, value = override.partition("=")
        if not sep:
            raise CliError(f"--set wants KEY=VALUE, got {override!r}", EXIT_USAGE)
        body[key] = load_job_file(f"v: {value}")["v"]
    client = _client(args)
    _resolve_pool(client, body)
    job = client.post(client.tenant_path("jobs/"), body)
    print(f"Submitted job {job['id']} ({job['name']}): {job['state']}", file=out)
    return 0


def cmd_list(args: argparse.Namespace, out: TextIO) -> int:
    client = _client(args)
    params: dict[str, Any] = {"page_size": args.limit}
    if args.state:
        params["state"] = args.state
    if args.kind:
        params["kind"] = args.kind
    page = client.get(client.tenant_path("jobs/"), **params)
    rows = [
        (j["id"], j["name"], j["kind"], j["state"], f"P{j['priority']}",
         j.get("requested_devices", ""), j.get("owner") or "", _when(j.get("submitted_at")))
        for j in page["results"]
    ]  # fmt: skip
    _table(rows, ["ID", "NAME", "KIND", "STATE", "PRIO", "DEVICES", "OWNER", "SUBMITTED"], out)
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


def cmd_logs(args: argparse.Namespace, out: TextIO) -> int:
    client = _client(args)
    events = client.get(client.tenant_path(f"jobs/{args.id}/events/"))
    print("zs: the platform has no log endpoint yet; showing the job's events instead.",
          file=sys.stderr)  # fmt: skip
    _print_events(events, out)
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
    lst.add_argument("--limit", type=int, default=50)
    for name, fn, text in (
        ("describe", cmd_describe, "show a job: spec, placement, recent events"),
        ("events", cmd_events, "show a job's events"),
        ("logs", cmd_logs, "show a job's logs (events until the platform serves logs)"),
        ("cancel", cmd_cancel, "cancel a job"),
        ("clone", cmd_clone, "submit a copy of a job"),
    ):
        add(name, fn, text).add_argument("id", type=int, help="job id")
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
