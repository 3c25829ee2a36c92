"""``zs``: the Zhisuan command line (log in, submit and follow jobs, see where a job could
start and the tenant's quotas, ask a job for a checkpoint, deploy inference services, open
notebooks; roll out a service's new image or model, or roll it back).

Exit codes: 0 success, 1 cannot reach the server, an answer that is not the Zhisuan API's, or
another failure (also when the reader of the output goes away: ``zs list | head``), 2 bad
usage or input rejected by the server (400, field errors printed per field), 3 not logged in
or not allowed (401, 403), 4 not found (404). No traceback reaches the user.
"""

from __future__ import annotations

import argparse
import contextlib
import getpass
import math
import os
import re
import shlex
import sys
import time
import warnings
import webbrowser
from collections.abc import Callable, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, TextIO
from urllib.parse import urlsplit

import requests

from zhisuan import __version__, _config
from zhisuan._yaml import PIPELINE, SWEEP, YamlError, load_job_file, parse_override
from zhisuan.client import ApiClient, ApiError, NotApiError

EXIT_FAILURE, EXIT_USAGE, EXIT_AUTH, EXIT_NOT_FOUND = 1, 2, 3, 4


class CliError(Exception):
    def __init__(self, message: str, code: int = EXIT_FAILURE) -> None:
        super().__init__(message)
        self.code = code


# The server's job states (apps.jobs.models.JobState), for `zs list --state`.
JOB_STATES = ("submitted", "queued", "admitted", "dispatching", "running", "preempted",
              "restarting", "succeeded", "failed", "cancelled")  # fmt: skip
FINISHED = ("succeeded", "failed", "cancelled")
MAX_LOG_TAIL = 5000  # apps/jobs/api: JobLogsQuerySerializer.tail
# datetime.UTC is Python 3.11+; the SDK supports 3.10.
_UTC = timezone.utc  # noqa: UP017


def _no_token() -> CliError:
    return CliError("no token given (create one under your profile: API tokens)", EXIT_USAGE)


def _base_url(url: str) -> str:
    """The server's base address without a trailing slash; a CliError unless it is http(s)."""
    url = url.strip().rstrip("/")
    if url and not re.match(r"^https?://[^/\s]", url, re.IGNORECASE):
        example = f" (e.g. http://{url})" if "://" not in url else ""
        raise CliError(f"the server address {url!r} must start with http:// or https://"
                       f"{example}", EXIT_USAGE)  # fmt: skip
    return url


def _client(args: argparse.Namespace, *, tenant: bool = True) -> ApiClient:
    """The client of the stored (or given) server and token; ``tenant``: the command works in
    one, which must be known."""
    s = _config.load(url=args.url, tenant=args.tenant)
    stored = _config.load_file()
    if s.url and not s.token and stored.get("token"):
        raise CliError(f"not logged in to {s.url}: the stored token is for "
                       f"{_config.stored_url(stored)} and is not sent elsewhere; run `zs login "
                       f"--url {s.url}`", EXIT_AUTH)  # fmt: skip
    if not s.url or not s.token:
        raise CliError("not logged in: run `zs login --url URL` (or set ZS_API_URL and ZS_TOKEN)",
                       EXIT_AUTH)  # fmt: skip
    if tenant and not s.tenant:
        raise CliError("no tenant: pass --tenant or run `zs login --tenant SLUG`", EXIT_USAGE)
    return ApiClient(_base_url(s.url), s.token, s.tenant or "-", timeout=args.timeout)


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


def _log_tail(text: str) -> int:
    """``--tail``: 1 to 5000 lines, the server's bound, said here rather than as its 400."""
    value = _positive(text)
    if value > MAX_LOG_TAIL:
        raise argparse.ArgumentTypeError(f"at most {MAX_LOG_TAIL}, not {value}")
    return value


def _seconds(text: str) -> float:
    """An argparse type: a number of seconds above 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not (value > 0 and math.isfinite(value)):
        raise argparse.ArgumentTypeError(f"must be more than 0 seconds, not {text}")
    return value


def _when(ts: Any) -> str:
    """A time of the API as ``2026-12-05 07:35:12 UTC`` (every time the CLI prints is UTC)."""
    text = str(ts or "")
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return text
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=_UTC)  # the API's times are UTC
    return moment.astimezone(_UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def _expected_start(job: dict[str, Any]) -> str | None:
    """The scheduler's forecast for a queued job, with what it assumes (None: no forecast)."""
    if job.get("state") != "queued" or not job.get("expected_start_as_of"):
        return None
    at = job.get("expected_start_at")
    if not at:
        return "none within 7 days (work it waits for declares no runtime limit)"
    return f"{_when(at)} (if the work ahead runs to its runtime limits)"


def _devices(job: dict[str, Any]) -> str:
    """Whole devices plus fractional shares (``requested_milli``): ``8``, ``0.5``, ``2.25``.
    A job of shares alone has 0 whole devices, which is not what it holds."""
    whole, milli = job.get("requested_devices") or 0, job.get("requested_milli") or 0
    return f"{whole + milli / 1000:g}"


def _more(shown: int, what: str) -> None:
    print(f"zs: showing the newest {shown} {what}; there are more: raise --limit to see them",
          file=sys.stderr)  # fmt: skip


# ---------------------------------------------------------------------------------- commands
def _prompt_token() -> str:
    """The token typed at a hidden prompt; never read with echo on (a CliError where the
    terminal cannot hide it)."""
    for _ in range(3):
        try:
            with warnings.catch_warnings():
                # getpass falls back to reading with echo on where it cannot control the
                # terminal, after warning: stop there instead.
                warnings.simplefilter("error", getpass.GetPassWarning)
                token = getpass.getpass("API token (zs_...): ").strip()
        except getpass.GetPassWarning:
            raise CliError("this terminal cannot hide the token: pass it with --token, or on "
                           "stdin (zs login < token.txt)", EXIT_USAGE) from None  # fmt: skip
        except EOFError:
            print(file=sys.stderr)
            raise _no_token() from None
        if token:
            return token
        print("zs: the token was empty: paste it (it is not shown), or press Ctrl-D to stop",
              file=sys.stderr)  # fmt: skip
    return ""


def _read_token(args: argparse.Namespace) -> str:
    """--token, else ZS_TOKEN, else a hidden prompt on a terminal, else stdin's first line."""
    token: str
    if args.token is not None:
        token = str(args.token).strip()
    elif os.environ.get("ZS_TOKEN"):
        token = os.environ["ZS_TOKEN"].strip()
    elif sys.stdin.isatty():
        token = _prompt_token()
    else:
        token = sys.stdin.readline().strip()
    if not token:
        raise _no_token()
    return token


def _not_api(url: str, status: int, content_type: str) -> CliError:
    if status >= 500:
        return CliError(f"the server at {url} answered HTTP {status} ({content_type}) instead of "
                        "the Zhisuan API: the platform or a proxy in front of it may be down; "
                        "try again later")  # fmt: skip
    return CliError(f"the server at {url} did not answer as a Zhisuan API (HTTP {status}, "
                    f"{content_type}): is the URL the platform's base address, e.g. "
                    "http://host:8000?")  # fmt: skip


def cmd_login(args: argparse.Namespace, out: TextIO) -> int:
    stored = _config.load_file()
    url = _base_url(args.url or os.environ.get("ZS_API_URL") or stored.get("url") or "")
    if not url:
        raise CliError("give the server: zs login --url https://zhisuan.example.com", EXIT_USAGE)
    token = _read_token(args)
    tenant = args.tenant or os.environ.get("ZS_TENANT") or None
    client = ApiClient(url, token, tenant or "-", timeout=args.timeout)
    try:
        page = client.get("/api/v1/tenants/")
    except ApiError as exc:
        if exc.status == 404 and not isinstance(exc, NotApiError):  # the list always exists
            raise _not_api(url, 404, "application/json") from None
        raise
    rows = page.get("results", page) if isinstance(page, dict) else page
    if not isinstance(rows, list) or not all(isinstance(t, dict) and "slug" in t for t in rows):
        raise _not_api(url, 200, "application/json")
    slugs = [str(t["slug"]) for t in rows]
    if tenant is None and not slugs:
        # A new platform's first admin: `zs user ...` needs no tenant; other commands say so.
        path = _config.save_file(url=url, token=token, tenant="")
        print(f"Logged in to {url} (no tenant yet). Settings saved to {path}.", file=out)
        return 0
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


def cmd_logout(args: argparse.Namespace, out: TextIO) -> int:
    """Forget the stored token (the server and tenant stay, for the next `zs login`)."""
    stored = _config.load_file()
    path = _config.config_path()
    url = stored.get("url", "")
    if not stored.get("token"):
        print(f"Not logged in: no token is stored in {path}.", file=out)
    elif args.url and args.url.rstrip("/") != url:
        print(f"No token is stored for {args.url}; the one in {path} is for {url}. Nothing "
              "changed.", file=out)  # fmt: skip
    else:
        _config.forget_token()
        print(f"Logged out of {url}: the token is removed from {path}. It still works until "
              "you revoke it under your profile: API tokens.", file=out)  # fmt: skip
    if os.environ.get("ZS_TOKEN"):
        print("zs: ZS_TOKEN is set in your environment and still logs you in; unset it too",
              file=sys.stderr)  # fmt: skip
    return 0


def _pool_ref(pool: dict[str, Any], pools: list[dict[str, Any]]) -> str:
    """The pool's name, as ``cluster/name`` where another cluster has a pool of that name."""
    same = [p for p in pools if p.get("name") == pool.get("name")]
    return f"{pool.get('cluster')}/{pool.get('name')}" if len(same) > 1 else str(pool.get("name"))


def _and(words: Sequence[str]) -> str:
    return ", ".join(words[:-1]) + f" and {words[-1]}" if len(words) > 1 else "".join(words)


def _resolve_pool(client: ApiClient, body: dict[str, Any]) -> None:
    """``pool`` by id, by name or by ``cluster/name``: the id the API wants."""
    pool = body.get("pool")
    if not isinstance(pool, str) or pool.strip().isdigit():
        return
    pools: list[dict[str, Any]] = client.get("/api/v1/pools/")
    cluster, sep, name = pool.rpartition("/")
    found = [
        p for p in pools if p.get("name") == name and (not sep or str(p.get("cluster")) == cluster)
    ]
    if len(found) == 1:
        body["pool"] = found[0]["id"]
        return
    if len(found) > 1:
        clusters = sorted({str(p.get("cluster")) for p in found})
        if len(clusters) > 1:
            raise CliError(f"pool name {pool!r} is in clusters {_and(clusters)}: write "
                           "cluster/pool (e.g. "f"{clusters[0]}/{name}) or the pool id",
                           EXIT_USAGE)  # fmt: skip
        ids = ", ".join(str(p["id"]) for p in found)
        raise CliError(f"{len(found)} pools are named {pool!r} (ids {ids}): give the pool id",
                       EXIT_USAGE)  # fmt: skip
    names = ", ".join(sorted(_pool_ref(p, pools) for p in pools)) or "none"
    raise CliError(f"no pool named {pool!r}; pools: {names}", EXIT_USAGE)


_FIELD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _read_body(args: argparse.Namespace) -> dict[str, Any]:
    """The mapping in the YAML or JSON file of ``--file`` ('-': stdin), ``--set`` applied.
    The file is read as UTF-8 whatever the machine's locale."""
    try:
        if args.file == "-":
            stdin: Any = sys.stdin
            data = stdin.buffer.read() if hasattr(stdin, "buffer") else stdin.read().encode()
        else:
            data = Path(args.file).read_bytes()
    except OSError as exc:
        raise CliError(f"cannot read {args.file}: {exc.strerror or exc}", EXIT_USAGE) from exc
    try:
        text = data.decode("utf-8-sig")  # a byte-order mark (Windows editors) is dropped
    except UnicodeDecodeError as exc:
        raise CliError(f"{args.file} is not UTF-8 text (byte {exc.start}): save it as UTF-8",
                       EXIT_USAGE) from None  # fmt: skip
    try:
        body = load_job_file(text, args.file)
    except YamlError as exc:
        raise CliError(str(exc), EXIT_USAGE) from None
    if not isinstance(body, dict):
        raise CliError(f"{args.file}: expected a mapping of fields", EXIT_USAGE)
    if PIPELINE in body:
        return body  # --set applies to each step (``_steps``)
    if SWEEP in body:
        return body  # --set applies to the job template (``_sweep``)
    _apply_sets(body, args.set)
    return body


def _apply_sets(body: dict[str, Any], overrides: list[str] | None) -> None:
    for override in overrides or []:
        key, sep, value = override.partition("=")
        key = key.strip()
        if not sep or not _FIELD.fullmatch(key):
            raise CliError(f"--set wants KEY=VALUE (a top-level field), got {override!r}",
                           EXIT_USAGE)  # fmt: skip
        try:
            body[key] = parse_override(key, value)
        except YamlError as exc:
            raise CliError(f"--set {override!r}: the value is not valid YAML ({exc}); quote "
                           f"text, e.g. --set '{key}=\"...\"'", EXIT_USAGE) from None  # fmt: skip


def _steps(body: dict[str, Any], args: argparse.Namespace) -> list[dict[str, Any]]:
    """A pipeline file's steps, each a job body: the fields beside ``pipeline`` are every
    step's defaults, a step's own fields win, then ``--set``. A step's ``after`` may name
    earlier steps (by ``name``) as well as jobs by id; checked here, before anything is
    submitted."""
    defaults = {k: v for k, v in body.items() if k != PIPELINE}
    raw = body[PIPELINE]
    if not isinstance(raw, list) or not raw or not all(isinstance(s, dict) for s in raw):
        raise CliError(f"{args.file}: pipeline: expected a list of job mappings", EXIT_USAGE)
    steps: list[dict[str, Any]] = []
    seen: set[str] = set()
    for number, step in enumerate(raw, start=1):
        merged = {**defaults, **step}
        _apply_sets(merged, args.set)
        name = merged.get("name")
        if not isinstance(name, str) or not name:
            raise CliError(f"{args.file}: pipeline step {number} has no name", EXIT_USAGE)
        if name in seen:
            raise CliError(f"{args.file}: two pipeline steps are named {name!r}", EXIT_USAGE)
        after = merged.get("after", [])
        if not isinstance(after, list):
            raise CliError(f"{args.file}: step {name!r}: after: expected a list of step names "
                           "or job ids", EXIT_USAGE)  # fmt: skip
        for ref in after:
            if isinstance(ref, str) and ref not in seen:
                raise CliError(f"{args.file}: step {name!r} starts after {ref!r}, which is not "
                               "an earlier step of the pipeline", EXIT_USAGE)  # fmt: skip
        seen.add(name)
        steps.append(merged)
    return steps


def _submit_pipeline(
    client: ApiClient, steps: list[dict[str, Any]], after: list[int], out: TextIO
) -> int:
    """Submits every step in one request: the server queues all of them or none. A step's
    ``after`` names go as they are (the server turns them into the jobs it makes); ``--after``
    ids go to the steps that start after no other step of the file."""
    pools: dict[str, Any] = {}
    for step in steps:
        refs = step.get("after", [])
        if not any(isinstance(ref, str) for ref in refs):
            refs = [*refs, *after]  # follows no other step: after the --after jobs
        if refs:
            step["after"] = refs
        step.setdefault("kind", "training")
        pool = step.get("pool")
        if isinstance(pool, str) and pool in pools:
            step["pool"] = pools[pool]  # looked up once for all the steps that name it
            continue
        _resolve_pool(client, step)
        if isinstance(pool, str):
            pools[pool] = step["pool"]
    try:
        answer = client.post(client.tenant_path("jobs/pipeline/"), {"steps": steps})
    except ApiError as exc:
        # "steps[1].image" says less than "step 'train': image" to the file's author.
        exc.errors = {_step_path(path, steps): said for path, said in exc.errors.items()}
        print("zs: the pipeline was not submitted (no step of it was queued)", file=sys.stderr)
        raise
    for job in answer["jobs"]:
        starts = ", ".join(str(j["id"]) for j in job.get("after_jobs", []))
        print(f"Submitted job {job['id']} ({job['name']}): {job['state']}"
              + (f", starts after {starts}" if starts else ""), file=out)  # fmt: skip
    return 0


_STEP_PATH = re.compile(r"^steps\[(\d+)\]\.?")


def _step_path(path: str, steps: list[dict[str, Any]]) -> str:
    found = _STEP_PATH.match(path)
    if not found or int(found.group(1)) >= len(steps):
        return path
    rest = path[found.end() :]
    name = f"step {steps[int(found.group(1))].get('name')!r}"
    return f"{name}: {rest}" if rest else name


def _sweep(body: dict[str, Any], args: argparse.Namespace) -> dict[str, Any]:
    """A sweep file's request: the fields under ``sweep`` (name, method, parameters...) and,
    as its template, every other field of the file (``--set`` applied to them)."""
    spec = body[SWEEP]
    if not isinstance(spec, dict):
        raise CliError(f"{args.file}: sweep: expected a mapping (name, method, parameters, "
                       "...)", EXIT_USAGE)  # fmt: skip
    if PIPELINE in body:
        raise CliError(f"{args.file}: a file is a pipeline or a sweep, not both", EXIT_USAGE)
    if args.after:
        raise CliError("--after does not apply to a sweep's trials", EXIT_USAGE)
    template = {k: v for k, v in body.items() if k != SWEEP}
    _apply_sets(template, args.set)
    return {**spec, "template": template}


def _submit_sweep(client: ApiClient, sweep: dict[str, Any], out: TextIO) -> int:
    _resolve_pool(client, sweep["template"])
    try:
        made = client.post(client.tenant_path("sweeps/"), sweep)
    except ApiError:
        print("zs: the sweep was not submitted (no trial was queued)", file=sys.stderr)
        raise
    print(f"Submitted sweep {made['id']} ({made['name']}): {made['trials']} trials, "
          f"{made['counts']['active']} queued now, at most {made['parallel']} at a time "
          f"(seed {made['seed']})", file=out)  # fmt: skip
    return 0


def cmd_submit(args: argparse.Namespace, out: TextIO) -> int:
    body = _read_body(args)
    if SWEEP in body:
        return _submit_sweep(_client(args), _sweep(body, args), out)
    after = [i for ids in args.after or [] for i in ids]
    if PIPELINE in body:
        return _submit_pipeline(_client(args), _steps(body, args), after, out)
    body.setdefault("kind", "training")
    if after:
        body["after"] = [*body.get("after", []), *after]
    client = _client(args)
    _resolve_pool(client, body)
    job = client.post(client.tenant_path("jobs/"), body)
    print(f"Submitted job {job['id']} ({job['name']}): {job['state']}", file=out)
    return 0


def cmd_list(args: argparse.Namespace, out: TextIO) -> int:
    client = _client(args)
    filters = {"state": args.state, "kind": args.kind, "name": args.name, "owner": args.owner,
               "sweep": args.sweep}  # fmt: skip
    params = {key: value for key, value in filters.items() if value}
    jobs, more = client.list_more(client.tenant_path("jobs/"), args.limit, **params)
    rows = [
        (j["id"], j["name"], j["kind"], j["state"], f"P{j['priority']}",
         _devices(j), j.get("owner") or "", _when(j.get("submitted_at")))
        for j in jobs
    ]  # fmt: skip
    _table(rows, ["ID", "NAME", "KIND", "STATE", "PRIO", "DEVICES", "OWNER", "SUBMITTED"], out)
    if more:
        _more(len(jobs), "jobs")
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
            (pool["id"], pool.get("cluster"), pool["name"], s["devices"], s["free"],
             s["whole_free_nodes"], s["stranded"], ", ".join(largest) or "-",
             f"{queue['jobs']} ({queue['devices']})")
        )  # fmt: skip
    _table(rows, ["ID", "CLUSTER", "POOL", "GPUS", "FREE", "WHOLE-NODES", "STRANDED",
                  "LARGEST-NOW(LEAF/SU/POOL)", "QUEUED(GPUS)"], out)  # fmt: skip
    return 0


def cmd_quotas(args: argparse.Namespace, out: TextIO) -> int:
    """The tenant's quotas: per pool and accelerator model, the guarantee, how many more it
    may borrow from idle capacity, and how many it uses now (the dashboard's Quotas page)."""
    client = _client(args)
    rows = [
        (q.get("pool_name") or q["pool"], q.get("accelerator_model") or "any", q["guarantee"],
         q["borrow_limit"], f"{float(q.get('used') or 0):g}")
        for q in client.get(client.tenant_path("quotas/"))
    ]  # fmt: skip
    _table(rows, ["POOL", "MODEL", "GUARANTEE", "BORROW-LIMIT", "USED"], out)
    return 0


def cmd_checkpoint(args: argparse.Namespace, out: TextIO) -> int:
    """Ask a running training job to save a checkpoint soon (the job page's "Request
    checkpoint"): its code hears of it through ``zhisuan.checkpoint_requested()``."""
    client = _client(args)
    body = {"reason": args.reason} if args.reason else {}
    state = client.post(client.tenant_path(f"jobs/{args.id}/checkpoint/"), body)
    if state.get("pending"):
        # A repeat while one is pending keeps the first (its time and reason): say "since".
        print(f"Job {args.id}: a checkpoint is requested (since "
              f"{_when(state.get('requested_at'))}, {state.get('reason')}); any checkpoint it "
              "completes from now on serves it.", file=out)  # fmt: skip
    else:
        print(f"Job {args.id}: the request was served by the checkpoint of step "
              f"{state.get('served_step')}.", file=out)  # fmt: skip
    if state.get("newest_step") is not None:
        print(f"Newest complete checkpoint: step {state['newest_step']} at "
              f"{state.get('newest_path')}", file=out)  # fmt: skip
    return 0


def _pending(code: str | None, message: str | None) -> str:
    """The pending message, with its code in brackets unless the message starts with it."""
    code, message = code or "", message or ""
    if not message or not code or message.lower().startswith(code.lower()):
        return message or code
    return f"{message} [{code}]"


def _pool_name(client: ApiClient, pool_id: Any) -> str:
    """``cluster/name (id N)`` of a pool; its id alone where the pools list lacks it."""
    try:
        pools: list[dict[str, Any]] = client.get("/api/v1/pools/")
    except ApiError:
        return str(pool_id)
    for p in pools:
        if p.get("id") == pool_id:
            where = f"{p['cluster']}/" if p.get("cluster") else ""
            return f"{where}{p.get('name')} (id {pool_id})"
    return str(pool_id)


def _groups(spec: dict[str, Any]) -> list[str]:
    lines = []
    for g in spec.get("replica_groups") or []:
        if g.get("accelerator_milli"):
            each = f"{g['accelerator_milli'] / 1000:g} accelerator"
        else:
            each = f"{g.get('accelerators', 0)} accelerators"
        lines.append(f"{g.get('name')}: {g.get('replicas', 1)} x {each}")
    return lines


def _job_ids(text: str) -> list[int]:
    """``--after 12,13``: job ids, comma-separated."""
    try:
        ids = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"job ids separated by commas, got {text!r}") from None
    if not ids or min(ids) < 1:
        raise argparse.ArgumentTypeError(f"job ids separated by commas, got {text!r}")
    return ids


def _linked(job: dict[str, Any], field: str) -> str | None:
    """The jobs this one starts after (``after_jobs``) or that start after it
    (``next_jobs``), with their state ('#12 prep (succeeded)')."""
    jobs = job.get(field) or []
    return ", ".join(f"#{b['id']} {b['name']} ({b['state']})" for b in jobs) or None


def cmd_describe(args: argparse.Namespace, out: TextIO) -> int:
    client = _client(args)
    job = client.get(client.tenant_path(f"jobs/{args.id}/"))
    spec = job.get("spec") or {}
    groups = _groups(spec)
    fields = [
        ("ID", job["id"]), ("Name", job["name"]), ("Kind", job["kind"]),
        ("State", job["state"]), ("Reason", job.get("state_reason")),
        ("Priority", f"P{job['priority']}"),
        ("Pool", _pool_name(client, job.get("pool")) if job.get("pool") is not None else None),
        ("Accelerator", job.get("accelerator_model") or "any"),
        ("Devices", _devices(job)), ("Owner", job.get("owner")),
        ("Attempt", job.get("attempt")), ("Failures", job.get("failures")),
        ("Queue position", job.get("queue_position")),
        ("Starts after", _linked(job, "after_jobs")),
        ("Then starts", _linked(job, "next_jobs")),
        ("Expected start", _expected_start(job)),
        ("Pending", _pending(job.get("pending_code"), job.get("pending_message"))),
        ("Submitted", _when(job.get("submitted_at"))), ("Started", _when(job.get("started_at"))),
        ("Finished", _when(job.get("finished_at"))),
        ("Image", spec.get("image")),
        ("Command", shlex.join(str(c) for c in spec.get("command") or [])),
        ("Args", shlex.join(str(a) for a in spec.get("args") or [])),
        ("Replica groups", groups[0] if groups else None),
    ]  # fmt: skip
    for label, value in fields:
        if value not in (None, ""):
            print(f"{label + ':':<16}{value}", file=out)
    for more in groups[1:]:
        print(f"{'':<16}{more}", file=out)
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


def cmd_pipeline(args: argparse.Namespace, out: TextIO) -> int:
    """The pipeline a job belongs to, a row per job in the order they can start: STEP is the
    longest chain of jobs before it, plus one; the job asked for is marked with '*'."""
    client = _client(args)
    answer = client.get(client.tenant_path(f"jobs/{args.id}/pipeline/"))
    jobs: list[dict[str, Any]] = answer["jobs"]
    step: dict[int, int] = {}
    for job in jobs:  # id order, and a job starts only after older jobs: each after is known
        step[job["id"]] = 1 + max((step.get(b, 0) for b in job["after"]), default=0)
    rows = [
        (step[j["id"]], f"{j['id']}{'*' if j['id'] == args.id else ''}", j["name"], j["kind"],
         j["state"], ", ".join(str(b) for b in j["after"]) or "-", j.get("owner") or "",
         _when(j.get("finished_at") or j.get("started_at") or j.get("submitted_at")))
        for j in sorted(jobs, key=lambda j: (step[j["id"]], j["id"]))
    ]  # fmt: skip
    _table(rows, ["STEP", "ID", "NAME", "KIND", "STATE", "AFTER", "OWNER", "SINCE"], out)
    if answer.get("truncated"):
        print(f"zs: showing the {len(jobs)} nearest jobs of a larger pipeline", file=sys.stderr)
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
    if last is None:
        print("zs: no log lines are collected yet; the job's events so far:", file=sys.stderr)
        _print_events(client.get(client.tenant_path(f"jobs/{args.id}/events/")), out)
    while args.follow:
        state = client.get(client.tenant_path(f"jobs/{args.id}/"))["state"]
        time.sleep(args.interval)
        params: dict[str, Any] = {"tail": MAX_LOG_TAIL, **({"since": last} if last else {})}
        last = _print_log_lines(client.get(path, **params)["lines"], out) or last
        if state in FINISHED:  # one more read after the end picks up the last lines
            # Followed to its end, the exit status is the job's (`zs submit ... && zs logs -f`
            # in a script goes on only when the job succeeded).
            if state != "succeeded":
                print(f"zs: job {args.id} ended {state}", file=sys.stderr)
                return EXIT_FAILURE
            break
    return 0


def cmd_cancel(args: argparse.Namespace, out: TextIO) -> int:
    client = _client(args)
    # The API answers a cancel of a finished job with the job as it is (200): look first.
    job = client.get(client.tenant_path(f"jobs/{args.id}/"))
    if job["state"] not in FINISHED:
        job = client.post(client.tenant_path(f"jobs/{args.id}/cancel/"))
        if job["state"] == "cancelled":
            print(f"Job {job['id']} ({job['name']}): cancelled", file=out)
            return 0
    print(f"Job {job['id']} ({job['name']}) had already finished ({job['state']}); nothing to "
          "cancel.", file=out)  # fmt: skip
    return 0


def cmd_clone(args: argparse.Namespace, out: TextIO) -> int:
    client = _client(args)
    job = client.post(client.tenant_path(f"jobs/{args.id}/clone/"))
    print(f"Submitted job {job['id']} ({job['name']}) as a copy of {args.id}: {job['state']}",
          file=out)  # fmt: skip
    return 0


def _value(value: Any) -> str:
    if value is None:
        return "-"
    return f"{value:.4g}" if isinstance(value, float) else str(value)


def cmd_sweep_list(args: argparse.Namespace, out: TextIO) -> int:
    client = _client(args)
    params = {"state": args.state} if args.state else {}
    sweeps, more = client.list_more(client.tenant_path("sweeps/"), args.limit, **params)
    rows = []
    for s in sweeps:
        counts, best = s["counts"], s.get("best")
        done = counts["succeeded"] + counts["failed"] + counts["cancelled"]
        said = f"{s['metric']} {_value(best['value'])} (#{best['index']})" if best else "-"
        rows.append((s["id"], s["name"], s["method"], s["state"], f"{done}/{s['trials']}",
                     counts["active"], said, s.get("owner") or "",
                     _when(s.get("created_at"))))  # fmt: skip
    _table(rows, ["ID", "NAME", "METHOD", "STATE", "DONE", "ACTIVE", "BEST", "OWNER",
                  "CREATED"], out)  # fmt: skip
    if more:
        _more(len(sweeps), "sweeps")
    return 0


def cmd_sweep_show(args: argparse.Namespace, out: TextIO) -> int:
    """A sweep and its trials, best first (by the newest value of its metric, or by the best
    over its steps with rank_by best); trials without a value follow in order. The best is
    marked '*'."""
    client = _client(args)
    if getattr(args, "csv", False):  # every trial as the server's CSV, in trial order
        out.write(client.get_text(client.tenant_path(f"sweeps/{args.id}/csv/")))
        return 0
    s = client.get(client.tenant_path(f"sweeps/{args.id}/"))
    goal = {"min": "lowest", "max": "highest"}.get(s["goal"], s["goal"])
    print(f"Sweep {s['id']} ({s['name']}): {s['state']}, {s['method']}, {s['trials']} trials, "
          f"at most {s['parallel']} at a time, seed {s['seed']}", file=out)  # fmt: skip
    by_best = s.get("rank_by") == "best"
    if s["metric"]:
        which = ", each trial's best over its steps" if by_best else ""
        print(f"Ranked by: {s['metric']}{which} ({goal} first)", file=out)
    if s["method"] == "tpe":
        print(f"Adaptive: the first {s['startup_trials']} trials at random, each later one chosen "
              "by TPE from the results when it starts", file=out)  # fmt: skip
    if s.get("early_stop") == "median":
        print(f"Early stopping: median rule from step {s['stop_after_step']}, judged against "
              f"at least {s['stop_min_trials']} other trials", file=out)  # fmt: skip
    elif s.get("early_stop") == "asha":
        first, factor = s["stop_after_step"], s["reduction_factor"]
        rungs = ", ".join(str(first * factor**k) for k in range(3))
        brackets = s.get("brackets") or 1
        starts = ", ".join(str(first * factor**k) for k in range(brackets))
        more = (f"; {brackets} brackets (Hyperband), more trials in those that stop earlier, "
                f"their first rungs at steps {starts}") if brackets > 1 else ""  # fmt: skip
        print(f"Early stopping: successive halving (ASHA), at steps {rungs}, ..., only the best "
              f"1/{factor} go on, judged against at least {s['stop_min_trials']} other trials"
              f"{more}", file=out)  # fmt: skip
    if s.get("note"):
        print(f"Note: {s['note']}", file=out)
    names = sorted({k for r in s["outcomes"] for k in r["params"]})
    ranked = sorted(s["outcomes"], key=lambda r: (r["rank"] is None, r["rank"] or 0, r["index"]))
    bracketed = (s.get("brackets") or 1) > 1
    rows = [
        (f"{r['rank'] or '-'}{'*' if r['rank'] == 1 else ''}", r["index"],
         *(_value(r["params"].get(n)) for n in names),
         r["job"]["id"] if r["job"] else "-", _trial_state(r),
         *([_value(r.get("bracket"))] if bracketed else []),
         _value(r["value"]), _value(r["step"]),
         *([_value(r.get("last_value"))] if by_best else []))
        for r in ranked
    ]  # fmt: skip
    headers = ["RANK", "TRIAL", *(n.upper() for n in names), "JOB", "STATE",
               *(["BRACKET"] if bracketed else []),
               (s["metric"] or "value").upper(), "STEP",
               *(["NEWEST"] if by_best else [])]  # fmt: skip
    _table(rows, headers, out)
    return 0


def _trial_state(outcome: dict[str, Any]) -> str:
    if outcome["job"] is None:
        return "waiting"
    if outcome.get("stopped_step") is not None:
        return f"stopped@{outcome['stopped_step']}"  # by the early-stopping rule
    return str(outcome["job"]["state"])


def cmd_sweep_cancel(args: argparse.Namespace, out: TextIO) -> int:
    client = _client(args)
    s = client.get(client.tenant_path(f"sweeps/{args.id}/"))
    if s["state"] != "running":
        print(f"Sweep {s['id']} ({s['name']}) had already ended ({s['state']}); nothing to "
              "cancel.", file=out)  # fmt: skip
        return 0
    s = client.post(client.tenant_path(f"sweeps/{args.id}/cancel/"))
    waiting = s["counts"]["waiting"]
    print(f"Sweep {s['id']} ({s['name']}): cancelled; {waiting} trial{'' if waiting == 1 else 's'} "
          "will not start", file=out)  # fmt: skip
    return 0


# ------------------------------------------------------------------------- inference services
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


def _rev(service: dict[str, Any]) -> str:
    """The service's revision, ``*`` appended while it is rolled out, ``!`` when it did not
    roll out (and was not rolled back)."""
    state = service.get("rollout_state") or ""
    return f"{service.get('revision')}{'!' if state == 'failed' else '*' if state else ''}"


def cmd_inference_list(args: argparse.Namespace, out: TextIO) -> int:
    client = _client(args)
    services, more = client.list_more(client.tenant_path("inference/services/"), args.limit)
    rows = [
        (s["id"], s["name"], s["state"], _rev(s), s["model_uri"], s["ready_replicas"],
         s["desired_replicas"], f"{s['min_replicas']}..{s['max_replicas']}")
        for s in services
    ]  # fmt: skip
    _table(rows, ["ID", "NAME", "STATE", "REV", "MODEL", "READY", "DESIRED", "RANGE"], out)
    if more:
        _more(len(services), "services")
    return 0


def cmd_inference_show(args: argparse.Namespace, out: TextIO) -> int:
    """One service: what it serves (revision, image, model, port and probes), its replicas
    and scaling target, and how a rollout goes when one runs."""
    client = _client(args)
    s = client.get(client.tenant_path(f"inference/services/{args.id}/"))
    print(f"{_service_ref(s)}: {s['state']}, revision {s['revision']}, job {s['job']}"
          + (" (simulated cluster: made-up traffic)" if s.get("simulated") else ""),
          file=out)  # fmt: skip
    line = _rollout_line(s)
    if line:
        print(line, file=out)
    each = (f"{s['accelerator_milli'] / 1000:g} of an accelerator" if s.get("accelerator_milli")
            else f"{s['accelerators']} accelerator(s)")  # fmt: skip
    print(f"Image: {s['runtime_image']}\nModel: {s['model_uri']}", file=out)
    print(f"Port and probes: port {s['port']}, readiness {s['readiness_path']}, liveness "
          f"{s['liveness_path']}, probes from {s['probe_initial_delay_s']} s, every "
          f"{s['probe_period_s']} s", file=out)  # fmt: skip
    print(f"Replicas: {s['ready_replicas']} ready, {s['loading_replicas']} loading, "
          f"{s['desired_replicas']} desired (range {s['min_replicas']}..{s['max_replicas']}), "
          f"{each} each; target {s['target_metric']} {s['target_value']:g} per replica",
          file=out)  # fmt: skip
    print(f"Rolling updates: up to {s['max_surge']} surge replica(s), at most "
          f"{s['max_unavailable']} unavailable", file=out)  # fmt: skip
    return 0


def _service_ref(service: dict[str, Any]) -> str:
    return f"Service {service['id']} ({service['name']})"


# `zs inference update` options and the service fields they set: what the replicas run.
_UPDATE_OPTIONS = {
    "image": "runtime_image", "model": "model_uri", "port": "port",
    "readiness_path": "readiness_path", "liveness_path": "liveness_path",
    "probe_delay": "probe_initial_delay_s", "probe_period": "probe_period_s",
}  # fmt: skip
_SERVING_SETTINGS = ("port", "readiness_path", "liveness_path", "probe_initial_delay_s",
                     "probe_period_s")  # fmt: skip


def cmd_inference_update(args: argparse.Namespace, out: TextIO) -> int:
    """A new runtime image, model, port or probe: the server makes a new revision and rolls
    it out replica by replica (or the service starts on it, when it does not run now)."""
    wanted = {field: getattr(args, option) for option, field in _UPDATE_OPTIONS.items()}
    wanted = {key: value for key, value in wanted.items() if value is not None}
    if not wanted:
        raise CliError("give --image, --model, --port or a probe option", EXIT_USAGE)
    client = _client(args)
    path = client.tenant_path(f"inference/services/{args.id}/")
    current = client.get(path)
    changes = {key: value for key, value in wanted.items() if current.get(key) != value}
    if not changes:
        print(f"{_service_ref(current)}: already runs that (revision {current['revision']}); "
              "nothing changed", file=out)  # fmt: skip
        return 0
    service = client.patch(path, changes)
    what = f"image {service['runtime_image']}, model {service['model_uri']}"
    settings = [f"{key} {service[key]}" for key in _SERVING_SETTINGS if key in changes]
    if settings:
        what += ", " + ", ".join(settings)
    if service.get("rollout_state"):
        serving = service.get("serving_revision") or 0
        now = f"serving revision {serving}" if serving else "no revision served yet"
        print(f"{_service_ref(service)}: rolling out revision {service['revision']} ({now}): "
              f"{what}", file=out)  # fmt: skip
    else:
        print(f"{_service_ref(service)}: revision {service['revision']} takes effect when the "
              f"service starts: {what}", file=out)  # fmt: skip
    return 0


def _rollout_line(service: dict[str, Any]) -> str | None:
    """What the service serves and how its rollout goes; None when there is nothing to say."""
    state, revision = service.get("rollout_state") or "", service.get("revision")
    serving = service.get("serving_revision") or 0
    if not state:
        if revision != serving and service.get("state") not in FINISHED:
            return f"Revision {revision} takes effect when the service starts"
        return None
    now = f"Serving revision {serving}" if serving else "No revision served yet"
    if state == "failed":
        return (f"{now}; revision {revision} did not roll out and was not rolled back: update "
                "the model or roll back")  # fmt: skip
    reason = service.get("rollout_reason") or ""
    if state == "waiting":
        progress = "waiting for room for a surge replica" + (f": {reason}" if reason else "")
    else:
        progress = (f"{service.get('updated_replicas') or 0} of "
                    f"{service.get('desired_replicas') or 0} replicas updated")  # fmt: skip
        if state == "finishing":
            progress += "; giving back the surge room"
        elif reason:
            progress += f" (less surge room than asked: {reason})"
    return f"{now}; rolling out revision {revision}: {progress}"


def _revision_note(revision: dict[str, Any]) -> str:
    notes = []
    if revision.get("rollback_of") is not None:
        notes.append(f"rollback of {revision['rollback_of']}")
    if revision.get("message"):
        notes.append(str(revision["message"]))
    return "; ".join(notes)


def cmd_inference_revisions(args: argparse.Namespace, out: TextIO) -> int:
    """A service's revisions, newest first, after how its rollout goes (when one runs)."""
    client = _client(args)
    path = client.tenant_path(f"inference/services/{args.id}/")
    service = client.get(path)
    revisions, more = client.list_more(path + "revisions/", args.limit)
    line = _rollout_line(service)
    if line:
        print(line, file=out)
    rows = [
        (r["number"], r["state"], r["runtime_image"], r["model_uri"],
         r.get("created_by") or "automatic", _when(r.get("created_at")), _revision_note(r))
        for r in revisions
    ]  # fmt: skip
    _table(rows, ["REVISION", "STATE", "IMAGE", "MODEL", "BY", "CREATED", "NOTE"], out)
    if more:
        _more(len(revisions), "revisions")
    return 0


def cmd_inference_rollback(args: argparse.Namespace, out: TextIO) -> int:
    """Serve an earlier revision's runtime image, model, port and probes again, as a new
    revision."""
    client = _client(args)
    service = client.post(client.tenant_path(f"inference/services/{args.id}/rollback/"),
                          {"revision": args.revision})  # fmt: skip
    if service.get("rollout_state"):
        print(f"{_service_ref(service)}: rolling back to revision {args.revision} as revision "
              f"{service['revision']}", file=out)  # fmt: skip
    else:
        print(f"{_service_ref(service)}: revision {service['revision']}, a rollback to revision "
              f"{args.revision}, takes effect when the service starts", file=out)  # fmt: skip
    return 0


# ---------------------------------------------------------------------------------- notebooks
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


def cmd_notebook_restart(args: argparse.Namespace, out: TextIO) -> int:
    """Queue a stopped notebook again with its files (the same home volume)."""
    client = _client(args)
    job = client.post(client.tenant_path(f"jobs/{args.id}/restart/"))
    files = (
        "a new, empty home (it never started, so it kept no files)"
        if job.get("home_job") == job["id"]
        else f"the files of notebook {job.get('home_job')}"
    )
    print(f"Restarted notebook {args.id} as job {job['id']} ({job['name']}) with {files}: "
          f"{job['state']}", file=out)  # fmt: skip
    return 0


def cmd_notebook_delete_files(args: argparse.Namespace, out: TextIO) -> int:
    """Delete the home volume a stopped notebook mounts (for its whole chain of restarts)."""
    if not args.yes:
        raise CliError(f"this deletes the files of notebook {args.id} for good; add --yes to "
                       "confirm", EXIT_USAGE)  # fmt: skip
    client = _client(args)
    job = client.post(client.tenant_path(f"jobs/{args.id}/delete-home/"))
    print(f"Deleted the home volume of notebook {job.get('home_job')} (the files notebook "
          f"{args.id} used); it can no longer be restarted with them.", file=out)  # fmt: skip
    return 0


# ---------------------------------------------------------------------------- users (admins)
def _read_password(args: argparse.Namespace) -> str:
    """--password-stdin: stdin's first line (scripts); else typed twice at a hidden prompt.
    Never an argument, which other users of the machine could read in the process list."""
    if args.password_stdin:
        password = sys.stdin.readline().rstrip("\r\n")
    elif sys.stdin.isatty():
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("error", getpass.GetPassWarning)
                password = getpass.getpass("Password: ")
                if getpass.getpass("Again: ") != password:
                    raise CliError("the two passwords differ", EXIT_USAGE)
        except getpass.GetPassWarning:
            raise CliError("this terminal cannot hide the password: give it on stdin with "
                           "--password-stdin", EXIT_USAGE) from None  # fmt: skip
        except EOFError:
            print(file=sys.stderr)
            password = ""
    else:
        raise CliError("no terminal to ask for the password on: give it on stdin with "
                       "--password-stdin", EXIT_USAGE)  # fmt: skip
    if not password:
        raise CliError("the password was empty", EXIT_USAGE)
    return password


def _user_ref(user: dict[str, Any]) -> str:
    return f"User {user['username']} (id {user['id']})"


def _user_by_name(client: ApiClient, username: str) -> dict[str, Any]:
    """The user of this username (the API's search matches parts of names: pick the exact)."""
    found, _ = client.list_more("/api/v1/users/", 500, search=username)
    for user in found:
        if user["username"] == username:
            return dict(user)
    raise CliError(f"no user {username!r}", EXIT_NOT_FOUND)


def cmd_user_list(args: argparse.Namespace, out: TextIO) -> int:
    """The platform's users by username (platform admins only)."""
    client = _client(args, tenant=False)
    params: dict[str, Any] = {}
    if args.search:
        params["search"] = args.search
    if not args.all:
        params["is_active"] = "true"
    users, more = client.list_more("/api/v1/users/", args.limit, **params)
    rows = [
        (u["username"], u["display_name"], u["email"],
         ",".join(f"{m['tenant']}:{m['role']}" for m in u["memberships"]) or "-",
         "admin" if u["is_platform_admin"] else "",
         "active" if u["is_active"] else "deactivated",
         _when(u["last_login"]) if u["last_login"] else "never")
        for u in users
    ]  # fmt: skip
    _table(rows, ["USERNAME", "NAME", "EMAIL", "TENANTS", "PLATFORM", "STATE", "LAST-LOGIN"], out)
    if more:
        print(f"zs: showing the first {len(users)} users by name; there are more: raise --limit "
              "to see them", file=sys.stderr)  # fmt: skip
    return 0


def cmd_user_create(args: argparse.Namespace, out: TextIO) -> int:
    """A new user with a first password; add them to a tenant in its Members afterwards."""
    password = _read_password(args)
    client = _client(args, tenant=False)
    body: dict[str, Any] = {"username": args.username, "password": password,
                            "is_platform_admin": args.platform_admin}  # fmt: skip
    if args.name is not None:
        body["display_name"] = args.name
    if args.email is not None:
        body["email"] = args.email
    user = client.post("/api/v1/users/", body)
    admin = ", a platform admin" if user["is_platform_admin"] else ""
    print(f"Created {_user_ref(user)}{admin}. Add them to a tenant: Settings, Members (a tenant "
          "admin).", file=out)  # fmt: skip
    return 0


def cmd_user_active(args: argparse.Namespace, out: TextIO) -> int:
    """Deactivate or activate a user (``zs user deactivate|activate USERNAME``)."""
    client = _client(args, tenant=False)
    user = _user_by_name(client, args.username)
    active = args.user_command == "activate"
    if user["is_active"] == active:
        print(f"{_user_ref(user)} is already {'active' if active else 'deactivated'}; nothing "
              "to do.", file=out)  # fmt: skip
        return 0
    user = client.patch(f"/api/v1/users/{user['id']}/", {"is_active": active})
    said = ("can sign in again; their API tokens work again" if active else
            "deactivated: cannot sign in, API tokens refused; jobs and history stay")  # fmt: skip
    print(f"{_user_ref(user)}: {said}.", file=out)
    return 0


def cmd_user_password(args: argparse.Namespace, out: TextIO) -> int:
    """Set a new password for a user who lost theirs; their signed-in browsers are signed out."""
    password = _read_password(args)
    client = _client(args, tenant=False)
    user = _user_by_name(client, args.username)
    client.post(f"/api/v1/users/{user['id']}/password/", {"password": password})
    print(f"{_user_ref(user)}: new password set; their browsers are signed out.", file=out)
    return 0


# ---------------------------------------------------------------------------------- main
def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="zs", description="Zhisuan (智算) command line")
    p.add_argument("--version", action="version", version=f"zs {__version__}")
    url_help = "server URL (default: ZS_API_URL or `zs login`)"
    tenant_help = "tenant slug (default: ZS_TENANT or `zs login`)"
    timeout_help = "seconds per request (default 30)"
    p.add_argument("--url", help=url_help)
    p.add_argument("--tenant", help=tenant_help)
    p.add_argument("--timeout", type=_seconds, default=30.0, help=timeout_help)
    # The same options after the command (`zs login --url URL`); given there, they win.
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--url", default=argparse.SUPPRESS, help=url_help)
    common.add_argument("--tenant", default=argparse.SUPPRESS, help=tenant_help)
    common.add_argument("--timeout", type=_seconds, default=argparse.SUPPRESS, help=timeout_help)
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def add(name: str, fn: Callable[[argparse.Namespace, TextIO], int], help_: str
            ) -> argparse.ArgumentParser:  # fmt: skip
        sp = sub.add_parser(name, help=help_, description=help_, parents=[common])
        sp.set_defaults(func=fn)
        return sp

    login = add("login", cmd_login, "store the server URL, token and tenant")
    login.add_argument("--token", help="API token (default: ZS_TOKEN, else prompted, or stdin)")
    add("logout", cmd_logout, "forget the stored token")
    submit = add("submit", cmd_submit, "submit a job (or a pipeline of jobs, or a sweep) "
                 "from a YAML or JSON file")  # fmt: skip
    submit.add_argument("-f", "--file", required=True, help="job file ('-' for stdin); a "
                        "'pipeline:' list submits its steps in order, each after the steps "
                        "it names; a 'sweep:' mapping runs the file's job as a sweep's "
                        "trials")  # fmt: skip
    submit.add_argument("--set", action="append", metavar="KEY=VALUE",
                        help="override a top-level field, e.g. --set priority=3")  # fmt: skip
    submit.add_argument("--after", action="append", type=_job_ids, metavar="ID[,ID...]",
                        help="start only after these training jobs succeed (cancelled if "
                        "one fails)")  # fmt: skip
    lst = add("list", cmd_list, "list jobs, newest first")
    lst.add_argument("--state", choices=JOB_STATES, help="only jobs in this state")
    lst.add_argument("--kind", choices=["training", "notebook", "inference"])
    lst.add_argument("--name", help="only jobs whose name contains this (any case)")
    lst.add_argument("--owner", help="only jobs submitted by this user (username)")
    lst.add_argument("--sweep", type=_positive, help="only the trials' jobs of this sweep (id)")
    lst.add_argument("--limit", type=_positive, default=50, help="at most this many (newest)")
    add("pools", cmd_pools, "pools: free GPUs, wholly free nodes, largest job that fits now, queue")
    add("quotas", cmd_quotas, "your tenant's quotas: guarantee, borrowing limit and use per pool")
    for name, fn, text in (
        ("describe", cmd_describe,
         "show a job: state, spec (image, command, replica groups), placement, recent events"),
        ("events", cmd_events, "show a job's events"),
        ("pipeline", cmd_pipeline,
         "show the pipeline a job belongs to: the jobs before and after it, in start order"),
        ("cancel", cmd_cancel, "cancel a job"),
        ("clone", cmd_clone, "submit a copy of a job"),
    ):  # fmt: skip
        add(name, fn, text).add_argument("id", type=int, help="job id")
    ckpt = add("checkpoint", cmd_checkpoint, "ask a running training job to save a checkpoint "
               "soon (before stopping it, say)")  # fmt: skip
    ckpt.add_argument("id", type=int, help="job id")
    ckpt.add_argument("--reason", help="why (shown to the job and in its events)")
    logs = add("logs", cmd_logs, "show a job's output (all replicas, oldest first); its events "
               "while no output is collected yet")  # fmt: skip
    logs.add_argument("id", type=int, help="job id")
    logs.add_argument("--tail", type=_log_tail, default=500, help="the newest N lines (max 5000)")
    logs.add_argument(
        "-f",
        "--follow",
        action="store_true",
        help="keep printing until it ends; then exit 1 unless it succeeded",
    )
    logs.add_argument("--interval", type=float, default=2.0, help=argparse.SUPPRESS)
    inference = sub.add_parser("inference", help="deploy, list, update and roll back inference "
                               "services", description="deploy, list, update (roll out a new "
                               "image or model) and roll back inference services",
                               parents=[common])  # fmt: skip
    inference_sub = inference.add_subparsers(dest="inference_command", required=True,
                                             metavar="ACTION")  # fmt: skip
    deploy = inference_sub.add_parser("deploy", help="deploy a service from a YAML or JSON file",
                                      parents=[common])  # fmt: skip
    deploy.set_defaults(func=cmd_inference_deploy)
    deploy.add_argument("-f", "--file", required=True, help="service file ('-' for stdin)")
    deploy.add_argument("--set", action="append", metavar="KEY=VALUE",
                        help="override a top-level field, e.g. --set max_replicas=8")  # fmt: skip
    show = inference_sub.add_parser(
        "show", help="one service: revision, image, model, port and probes, replicas",
        parents=[common],
    )  # fmt: skip
    show.set_defaults(func=cmd_inference_show)
    show.add_argument("id", type=int, help="service id")
    inf_list = inference_sub.add_parser("list", help="list inference services", parents=[common])
    inf_list.set_defaults(func=cmd_inference_list)
    inf_list.add_argument("--limit", type=_positive, default=50, help="at most this many")
    update = inference_sub.add_parser(
        "update", parents=[common],
        help="serve a new runtime image, model, port or probes: a new revision, rolled out "
        "replica by replica",
    )  # fmt: skip
    update.set_defaults(func=cmd_inference_update)
    update.add_argument("id", type=int, help="service id")
    update.add_argument("--image", help="the new runtime image")
    update.add_argument("--model", metavar="URI", help="the new model URI")
    update.add_argument("--port", type=int, help="the port the runtime listens on")
    update.add_argument("--readiness-path", metavar="PATH", help="the readiness probe's path")
    update.add_argument("--liveness-path", metavar="PATH", help="the liveness probe's path")
    update.add_argument("--probe-delay", type=int, metavar="S",
                        help="seconds before the probes start")  # fmt: skip
    update.add_argument("--probe-period", type=int, metavar="S",
                        help="seconds between probes")  # fmt: skip
    revisions = inference_sub.add_parser(
        "revisions", help="a service's revisions, newest first, and its rollout",
        parents=[common],
    )  # fmt: skip
    revisions.set_defaults(func=cmd_inference_revisions)
    revisions.add_argument("id", type=int, help="service id")
    revisions.add_argument("--limit", type=_positive, default=50, help="at most this many")
    rollback = inference_sub.add_parser(
        "rollback", parents=[common],
        help="serve an earlier revision's image and model again (as a new revision)",
    )  # fmt: skip
    rollback.set_defaults(func=cmd_inference_rollback)
    rollback.add_argument("id", type=int, help="service id")
    rollback.add_argument("revision", type=_positive, help="the earlier revision")
    sweep = sub.add_parser("sweep", help="list, show and cancel hyperparameter sweeps "
                           "(submit one with zs submit -f sweep.yaml)",
                           description="list, show and cancel hyperparameter sweeps",
                           parents=[common])  # fmt: skip
    sweep_sub = sweep.add_subparsers(dest="sweep_command", required=True, metavar="ACTION")
    sweep_list = sweep_sub.add_parser("list", help="list sweeps, newest first", parents=[common])
    sweep_list.set_defaults(func=cmd_sweep_list)
    sweep_list.add_argument("--state", choices=["running", "finished", "cancelled", "stopped"])
    sweep_list.add_argument("--limit", type=_positive, default=50, help="at most this many")
    for name, fn, text in (
        ("show", cmd_sweep_show, "show a sweep's trials, best first"),
        ("cancel", cmd_sweep_cancel, "cancel a sweep: no more trials start, running ones stop"),
    ):  # fmt: skip
        action = sweep_sub.add_parser(name, help=text, parents=[common])
        action.set_defaults(func=fn)
        action.add_argument("id", type=int, help="sweep id")
        if name == "show":
            action.add_argument(
                "--csv", action="store_true", help="every trial as CSV (values, rank, metric)"
            )
    notebook = sub.add_parser("notebook", help="work with notebooks",
                              description="work with notebooks", parents=[common])  # fmt: skip
    notebook_sub = notebook.add_subparsers(dest="notebook_command", required=True, metavar="ACTION")
    notebook_actions: dict[str, argparse.ArgumentParser] = {}
    for name, fn, text in (
        ("open", cmd_notebook_open,
         "open a running notebook in the browser (through the platform)"),
        ("restart", cmd_notebook_restart, "start a stopped notebook again with its files"),
        ("delete-files", cmd_notebook_delete_files,
         "delete a stopped notebook's home volume (its files) for good"),
    ):  # fmt: skip
        action = notebook_sub.add_parser(name, help=text, parents=[common])
        action.set_defaults(func=fn)
        action.add_argument("id", type=int, help="notebook (job) id")
        notebook_actions[name] = action
    notebook_actions["open"].add_argument(
        "--print-only", action="store_true", help="print the address only"
    )
    notebook_actions["delete-files"].add_argument(
        "--yes", action="store_true", help="confirm: the files are lost"
    )
    user = sub.add_parser("user", help="the platform's users (platform admins): list, create, "
                          "deactivate, activate, set a password",
                          description="the platform's users (platform admins only)",
                          parents=[common])  # fmt: skip
    user_sub = user.add_subparsers(dest="user_command", required=True, metavar="ACTION")
    user_list = user_sub.add_parser("list", help="users by username", parents=[common])
    user_list.set_defaults(func=cmd_user_list)
    user_list.add_argument("--search", help="only users whose username, name or email contains "
                           "this")  # fmt: skip
    user_list.add_argument("--all", action="store_true", help="deactivated users too")
    user_list.add_argument("--limit", type=_positive, default=200, help="at most this many")
    stdin_help = "read the password from stdin's first line (else asked twice, hidden)"
    create = user_sub.add_parser("create", help="a new user with a first password",
                                 parents=[common])  # fmt: skip
    create.set_defaults(func=cmd_user_create)
    create.add_argument("username")
    create.add_argument("--name", help="display name")
    create.add_argument("--email", help="where notices about their jobs are emailed")
    create.add_argument("--platform-admin", action="store_true", help="operates the platform")
    create.add_argument("--password-stdin", action="store_true", help=stdin_help)
    for name, text in (
        ("deactivate", "stop a user signing in (API tokens refused; jobs and history stay)"),
        ("activate", "let a deactivated user sign in again"),
    ):
        action = user_sub.add_parser(name, help=text, parents=[common])
        action.set_defaults(func=cmd_user_active)
        action.add_argument("username")
    password = user_sub.add_parser("password", help="set a new password for a user who lost "
                                   "theirs", parents=[common])  # fmt: skip
    password.set_defaults(func=cmd_user_password)
    password.add_argument("username")
    password.add_argument("--password-stdin", action="store_true", help=stdin_help)
    return p


def main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    out = out or sys.stdout
    args = build_parser().parse_args(argv)
    try:
        code = int(args.func(args, out))
        out.flush()
        return code
    except BrokenPipeError:
        # The reader went away (`zs list | head -1`): stop quietly, as Python's docs advise,
        # pointing stdout at devnull so that the flush at exit does not fail again.
        if out is sys.stdout:
            with contextlib.suppress(OSError, ValueError):
                os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_FAILURE
    except CliError as exc:
        print(f"zs: error: {exc}", file=sys.stderr)
        return exc.code
    except NotApiError as exc:
        print(f"zs: error: {_not_api(exc.url, exc.status, exc.content_type)}", file=sys.stderr)
        return EXIT_FAILURE
    except ApiError as exc:
        return _report(exc)
    except requests.Timeout as exc:
        print(f"zs: error: no answer from {_server(exc)} within {args.timeout:g} s: try again, "
              "or allow longer with --timeout", file=sys.stderr)  # fmt: skip
        return EXIT_FAILURE
    except requests.RequestException as exc:
        print(f"zs: error: cannot reach the server at {_server(exc)} ({_reason(exc)}): check "
              "the URL and your network", file=sys.stderr)  # fmt: skip
        return EXIT_FAILURE
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # noqa: BLE001 - a last resort: no traceback reaches users
        print(f"zs: error: unexpected {type(exc).__name__}: {exc} (please report this with "
              "the command you ran)", file=sys.stderr)  # fmt: skip
        return EXIT_FAILURE


def _server(exc: requests.RequestException) -> str:
    url = getattr(exc.request, "url", None) or ""
    parts = urlsplit(str(url))
    return f"{parts.scheme}://{parts.netloc}" if parts.netloc else "the server"


def _reason(exc: requests.RequestException) -> str:
    """The short cause (``Connection refused``) inside requests' long message."""
    text = str(exc)
    found = re.search(r"\[Errno -?\d+\] ([^'\"()]+)", text)
    if found:
        return found.group(1).strip()
    if "Failed to resolve" in text or "NameResolution" in text:
        return "unknown host name"
    return text if len(text) <= 120 else type(exc).__name__


def _report(exc: ApiError) -> int:
    print(f"zs: error: {exc.detail} (HTTP {exc.status})", file=sys.stderr)
    for field, messages in exc.errors.items():
        for msg in messages:
            print(f"  {field}: {msg}" if field else f"  {msg}", file=sys.stderr)
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
