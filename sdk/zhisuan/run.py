"""Runs: ``init`` finds the platform and the run, ``log`` reports metrics without blocking."""

from __future__ import annotations

import atexit
import contextlib
import json
import logging
import math
import os
import re
import sys
import threading
from collections.abc import Mapping
from typing import Any

import requests

from zhisuan import _config
from zhisuan._sender import MetricSender, SenderStats
from zhisuan.client import ApiClient, ApiError

log = logging.getLogger("zhisuan")
# \Z, not $ (which also matches before a trailing newline): keys are dict keys, never trimmed.
KEY_PATTERN = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_./@:-]{0,99}\Z")
# The server's rule for tags (apps.runs.api.serializers.TAG_PATTERN): one bad tag would make
# it refuse the whole run update, hyperparameters with it, so bad ones are dropped here.
TAG_PATTERN = re.compile(r"^[\w.:/@+-]{1,64}\Z")
MAX_STEP = 2**53 - 1


def _as_float(value: Any) -> float | None:
    """A plain float from a number, a numpy scalar or a one-element tensor; else None."""
    try:
        if isinstance(value, (bool, int, float)):
            return float(value)
        item = getattr(value, "item", None)
        return float(item() if callable(item) else value)
    except (TypeError, ValueError, OverflowError, RuntimeError):
        return None


def _jsonable(value: Any) -> Any:
    """A hyperparameter as JSON can carry it: numpy and torch scalars as numbers, tuples and
    sets as lists, anything else (a Path, a dtype, a NaN) as its text. Sent as it is, one
    such value made the whole update fail to encode, so every hyperparameter was lost."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [_jsonable(v) for v in value]
    item, tolist = getattr(value, "item", None), getattr(value, "tolist", None)
    if callable(item) and getattr(value, "ndim", 0) == 0:
        with contextlib.suppress(Exception):  # a scalar array or tensor: its number
            return _jsonable(item())
    if callable(tolist) and getattr(value, "ndim", 0) > 0:
        with contextlib.suppress(Exception):  # an array or tensor: its numbers
            return _jsonable(tolist())
    return str(value)


class Run:
    """A run on the platform. When the platform is not configured (or this is not rank 0),
    a disabled run accepts every call and sends nothing, so training code needs no guards."""

    def __init__(
        self,
        client: ApiClient | None,
        run_id: int | None,
        *,
        job_id: int | None = None,
        sender: MetricSender | None = None,
    ) -> None:
        self.client = client
        self.id = run_id
        self.job_id = job_id
        self.dropped_invalid = 0  # values never sent: non-finite, non-numeric or bad keys
        self._warned: set[str] = set()
        self._config: dict[str, Any] = {}
        self._tags: list[str] = []
        self._sender = sender
        # The platform's pending checkpoint request, as its latest metrics answer said (set by
        # the sender thread: one attribute store each, so no lock), and the one already seen.
        self._requested_at: str | None = None
        self._request_reason = ""
        self._seen_request: str | None = None
        if sender is None and client is not None and run_id is not None:
            base = client.tenant_path(f"runs/{run_id}/")

            def post_points(points: list[dict[str, Any]]) -> object:
                answer = client.post(f"{base}metrics/", {"points": points})
                self.heard(answer)
                return answer

            def poll() -> object:  # a run that logs rarely: the request, asked for directly
                answer = client.get(f"{base}checkpoint-request/")
                self.heard(answer)
                return answer

            self._sender = MetricSender(
                post_points,
                patch_run=lambda changes: client.patch(base, changes),
                poll=poll,
                poll_interval_s=_config.poll_interval_s(),
            )

    @property
    def enabled(self) -> bool:
        return self._sender is not None

    @property
    def stats(self) -> SenderStats:
        return self._sender.stats if self._sender else SenderStats()

    def _warn_once(self, what: str, message: str) -> None:
        if what not in self._warned:
            self._warned.add(what)
            log.warning("zhisuan: %s", message)

    def log(self, step: int, metrics: Mapping[str, Any] | None = None, /, **values: Any) -> None:
        """Report metrics at ``step`` (an int >= 0). Returns at once; never raises because of
        the platform. Keys that are not identifiers go in ``metrics``: ``{"perf/mfu": 0.4}``.
        Non-finite values (a NaN loss) are dropped and counted, not sent."""
        if self._sender is None:
            return
        if isinstance(step, bool) or not isinstance(step, int) or not 0 <= step <= MAX_STEP:
            self._warn_once("step", f"step must be an int between 0 and {MAX_STEP}; got {step!r}")
            return
        clean: dict[str, float] = {}
        for key, raw in {**(metrics or {}), **values}.items():
            if not isinstance(key, str) or not KEY_PATTERN.match(key):
                self._warn_once(f"key:{key}", f"metric key {key!r} is not valid; dropped")
                self.dropped_invalid += 1
                continue
            value = _as_float(raw)
            if value is None or not math.isfinite(value):
                self._warn_once(f"value:{key}", f"{key}={raw!r} is not a finite number; dropped")
                self.dropped_invalid += 1
                continue
            clean[key] = value
        if clean:
            self._sender.add(step, clean)

    def heard(self, answer: object) -> None:
        """Takes the checkpoint request out of a metrics answer (the sender calls it)."""
        if isinstance(answer, dict):
            at = answer.get("checkpoint_requested_at")
            self._request_reason = str(answer.get("checkpoint_request_reason") or "")
            self._requested_at = at if isinstance(at, str) else None

    def checkpoint_requested(self) -> bool:
        """True once for each request that this run save a checkpoint soon: the job is about
        to be stopped (idle GPUs, its runtime limit) or someone asked on the dashboard. The
        request arrives with the answer to a metrics batch, or, when the run has sent nothing
        for a minute (``ZS_CHECKPOINT_POLL_S``), by asking for it. Any checkpoint completed
        after the request serves it. Rank 0 only: broadcast it to the other ranks (see the
        SDK's README)."""
        at = self._requested_at
        if at is None or at == self._seen_request:
            return False
        self._seen_request = at
        return True

    @property
    def checkpoint_request_reason(self) -> str:
        """Why the pending request was made ('' when none is pending)."""
        return self._request_reason if self._requested_at is not None else ""

    def config(self, **hparams: Any) -> None:
        """Record hyperparameters (merged into what the run already has). Values JSON
        cannot carry are sent as numbers (numpy, torch scalars) or text (paths, dtypes)."""
        clean = {str(k): _jsonable(v) for k, v in hparams.items()}
        self._config.update(clean)
        if self._sender is not None:
            self._sender.update_run({"config": clean})

    def tag(self, *tags: str) -> None:
        """Add tags to the run: 1-64 letters, digits and ``_ . : / @ + -``; others are
        dropped with a warning."""
        added: list[str] = []
        for t in tags:
            if not isinstance(t, str) or not TAG_PATTERN.match(t):
                self._warn_once(f"tag:{t}", f"tag {t!r} is not valid (1-64 letters, digits "
                                "and _ . : / @ + -); dropped")  # fmt: skip
            elif t not in self._tags:
                self._tags.append(t)
                added.append(t)
        # Added to the server's tags, not replacing them: the dashboard may have set some.
        if self._sender is not None and added:
            self._sender.update_run({"add_tags": added})

    def flush(self, timeout_s: float = 30.0) -> bool:
        return self._sender.flush(timeout_s) if self._sender else True

    def finish(self, *, state: str = "finished", timeout_s: float | None = None) -> int:
        """Send what is left (at most ``timeout_s``, default ``ZS_FLUSH_TIMEOUT`` or 30 s),
        mark a standalone run finished, and stop the sender. Returns the values lost."""
        sender, self._sender = self._sender, None
        if sender is None:
            return 0
        if self.job_id is None:
            sender.update_run({"state": state})
        timeout = timeout_s if timeout_s is not None else _flush_timeout()
        lost = sender.close(timeout)
        dropped = sender.stats.dropped_overflow + sender.stats.dropped_rejected
        if lost or dropped:
            print(f"zhisuan: run {self.id}: {lost} metric values unsent at exit, "
                  f"{dropped} dropped earlier", file=sys.stderr)  # fmt: skip
        return lost


def _flush_timeout() -> float:
    try:
        return float(os.environ.get("ZS_FLUSH_TIMEOUT", "30"))
    except ValueError:
        return 30.0


_lock = threading.Lock()
_current: Run | None = None
_atexit_registered = False


# How this process ended, as sys.excepthook saw it: a standalone run whose script raised is
# "failed" (Ctrl-C: "cancelled"), not "finished". A job's run follows its job instead.
_ended_by: str | None = None
_hook_installed = False


def _watch_for_crash() -> None:
    global _hook_installed
    with _lock:
        if _hook_installed:
            return
        _hook_installed = True
    previous = sys.excepthook

    def hook(kind: type[BaseException], value: BaseException, tb: Any) -> None:
        global _ended_by
        _ended_by = "cancelled" if issubclass(kind, KeyboardInterrupt) else "failed"
        previous(kind, value, tb)

    sys.excepthook = hook


def _shutdown() -> None:
    run = _current
    if run is not None:
        run.finish(state=_ended_by or "finished")


def init(
    *,
    name: str | None = None,
    project: int | None = None,
    config: Mapping[str, Any] | None = None,
    tags: list[str] | None = None,
    url: str | None = None,
    token: str | None = None,
    tenant: str | None = None,
    run_id: int | None = None,
    all_ranks: bool = False,
) -> Run:
    """Start reporting. Inside a job the platform's ``ZS_*`` variables say everything; outside
    one, a new run is created from ``zs login``'s settings (or the arguments). Only rank 0
    reports unless ``all_ranks``. Without a reachable platform the run is disabled: training
    goes on, with a warning."""
    global _current, _atexit_registered
    settings = _config.load(url=url, token=token, tenant=tenant, run_id=run_id)
    run = _connect(settings, name=name, project=project, config=config, tags=tags,
                   all_ranks=all_ranks)  # fmt: skip
    with _lock:
        old, _current = _current, run
        if not _atexit_registered:
            atexit.register(_shutdown)
            _atexit_registered = True
    if old is not None and old is not run:
        old.finish()
    return run


def _connect(
    settings: _config.Settings,
    *,
    name: str | None,
    project: int | None,
    config: Mapping[str, Any] | None,
    tags: list[str] | None,
    all_ranks: bool,
) -> Run:
    if not all_ranks and _config.rank() != 0:
        return Run(None, settings.run_id, job_id=settings.job_id)
    if not settings.complete:
        log.warning("zhisuan: no platform configured (ZS_API_URL, ZS_TOKEN, ZS_TENANT or "
                    "`zs login`); metrics are not reported")  # fmt: skip
        return Run(None, None)
    assert settings.url and settings.token and settings.tenant
    client = ApiClient(settings.url, settings.token, settings.tenant)
    run_id = settings.run_id
    if run_id is None:
        # The checks of config() and tag() apply to these too (a Path in the config or a bad
        # tag would otherwise cost the whole run).
        probe = Run(None, None)
        probe.config(**(config or {}))
        probe.tag(*(tags or []))
        body: dict[str, Any] = {"name": name or _default_name(), "config": probe._config}
        if probe._tags:
            body["tags"] = probe._tags
        if project is not None:
            body["project"] = project
        try:
            run_id = int(client.post(client.tenant_path("runs/"), body)["id"])
        except (ApiError, requests.RequestException, KeyError, TypeError, ValueError) as exc:
            # Say which field was refused (`project: No such project in this tenant.`).
            fields = getattr(exc, "errors", None) or {}
            why = "; ".join(f"{k}: {' '.join(v)}" for k, v in fields.items())
            log.warning("zhisuan: could not create a run (%s%s); metrics are not reported",
                        exc, f" {why}" if why else "")  # fmt: skip
            return Run(None, None)
        _watch_for_crash()
        return Run(client, run_id, job_id=settings.job_id)
    run = Run(client, run_id, job_id=settings.job_id)
    if config:
        run.config(**config)
    if tags:
        run.tag(*tags)
    return run


def _default_name() -> str:
    return os.path.splitext(os.path.basename(sys.argv[0] or "run"))[0][:100] or "run"


def current() -> Run:
    """The run of this process, started from the environment on first use."""
    run = _current
    return run if run is not None else init()


def checkpoint_requested() -> bool:
    """True once for each checkpoint request the platform sent to this run (rank 0)."""
    return current().checkpoint_requested()


def log_metrics(step: int, metrics: Mapping[str, Any] | None = None, /, **values: Any) -> None:
    current().log(step, metrics, **values)


def set_config(**hparams: Any) -> None:
    current().config(**hparams)


def add_tags(*tags: str) -> None:
    current().tag(*tags)


def finish(*, timeout_s: float | None = None) -> int:
    global _current
    run, _current = _current, None
    return run.finish(timeout_s=timeout_s) if run is not None else 0


def trial_params() -> dict[str, Any]:
    """In a sweep's trial, its parameter values (``ZS_TRIAL_PARAMS``, set by the platform);
    ``{}`` elsewhere. The run's config already starts as these values."""
    try:
        values = json.loads(os.environ.get("ZS_TRIAL_PARAMS") or "{}")
    except ValueError:
        return {}
    return values if isinstance(values, dict) else {}
