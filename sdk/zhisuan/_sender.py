"""The background sender: buffers metric points and run updates, sends them in batches.

``add`` never blocks training for more than a short lock and never raises because of the
network. Points wait in a bounded buffer (oldest dropped first, counted) while one batch at a
time is sent with exponential backoff and jitter; an answer of 4xx other than 408/425/429
means the batch can never succeed, so it is dropped (counted) instead of retried. The server
ignores points it already has, so re-sending a batch whose answer was lost stores nothing
twice.
"""

from __future__ import annotations

import functools
import logging
import random
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import requests

from zhisuan.client import ApiError

log = logging.getLogger("zhisuan")

Row = tuple[int, dict[str, float]]  # (step, {key: value}): one log() call
Outcome = Literal["sent", "rejected", "expired"]


@dataclass
class SenderStats:
    """Counters since start, in values (key-step pairs) except ``batches`` and ``retries``."""

    sent: int = 0
    batches: int = 0
    retries: int = 0
    dropped_overflow: int = 0  # the offline buffer was full: oldest dropped
    dropped_rejected: int = 0  # the platform refused them (400, 403, 404...)
    dropped_at_exit: int = 0  # still unsent when the close deadline passed


class MetricSender:
    def __init__(
        self,
        post_batch: Callable[[list[dict[str, Any]]], object],
        *,
        patch_run: Callable[[dict[str, Any]], object] | None = None,
        poll: Callable[[], object] | None = None,
        poll_interval_s: float = 60.0,
        batch_values: int = 5000,
        flush_interval_s: float = 2.0,
        max_buffer_rows: int = 100_000,
        initial_backoff_s: float = 0.5,
        max_backoff_s: float = 30.0,
        name: str = "zhisuan-metrics",
    ) -> None:
        self._post_batch = post_batch
        self._patch_run = patch_run
        # Called when nothing was sent for poll_interval_s (a run that logs rarely still hears
        # of a checkpoint request); one try, errors ignored: the next interval tries again.
        self._poll = poll
        self.poll_interval_s = poll_interval_s
        self._last_contact = time.monotonic()
        self.batch_values = batch_values
        self.flush_interval_s = flush_interval_s
        self.initial_backoff_s = initial_backoff_s
        self.max_backoff_s = max_backoff_s
        self._buf: deque[Row] = deque(maxlen=max_buffer_rows)
        self._buffered_values = 0
        self._inflight_values = 0
        self._update: dict[str, Any] | None = None
        self._cond = threading.Condition()
        self._wake = threading.Event()  # cuts a retry wait short at close
        self._added = 0  # rows ever added
        self._settled = 0  # rows sent or dropped
        self._flush_wanted = False
        self._closing = False
        self._deadline: float | None = None
        self.stats = SenderStats()
        self._thread = threading.Thread(target=self._loop, name=name, daemon=True)
        self._thread.start()

    # ------------------------------------------------------------------ producer side
    def add(self, step: int, values: dict[str, float]) -> None:
        with self._cond:
            if len(self._buf) == self._buf.maxlen:
                _, oldest = self._buf[0]  # the deque drops it on append
                self.stats.dropped_overflow += len(oldest)
                self._buffered_values -= len(oldest)
                self._settled += 1
            self._buf.append((step, values))
            self._buffered_values += len(values)
            self._added += 1
            if self._buffered_values >= self.batch_values:
                self._cond.notify()

    def update_run(self, changes: dict[str, Any]) -> None:
        """Queue a PATCH of the run (config merged, tags to add collected); for other fields
        the latest values win."""
        with self._cond:
            current = self._update or {}
            for k, v in changes.items():
                if k == "config":
                    current[k] = {**current.get("config", {}), **v}
                elif k == "add_tags":
                    current[k] = list(dict.fromkeys([*current.get(k, []), *v]))
                else:
                    current[k] = v
            self._update = current
            self._cond.notify()

    def flush(self, timeout_s: float = 30.0) -> bool:
        """Wait until everything added so far is sent or dropped. False on timeout."""
        end = time.monotonic() + timeout_s
        with self._cond:
            target = self._added
            self._flush_wanted = True
            self._cond.notify_all()
            while self._settled < target or self._update is not None:
                left = end - time.monotonic()
                if left <= 0 or not self._thread.is_alive():
                    return False
                self._cond.wait(min(left, 0.1))
            return True

    def close(self, timeout_s: float = 30.0) -> int:
        """Send what is left, trying for at most ``timeout_s``; returns the values lost."""
        with self._cond:
            self._closing = True
            self._deadline = time.monotonic() + timeout_s
            self._cond.notify_all()
        self._wake.set()
        self._thread.join(timeout_s + 1.0)
        with self._cond:
            self.stats.dropped_at_exit += self._buffered_values
            self._buf.clear()
            self._buffered_values = 0
            stuck = self._inflight_values if self._thread.is_alive() else 0
            return self.stats.dropped_at_exit + stuck

    @property
    def pending_values(self) -> int:
        with self._cond:
            return self._buffered_values + self._inflight_values

    # ------------------------------------------------------------------ sender thread
    def _take(self) -> list[Row]:
        batch: list[Row] = []
        n = 0
        while self._buf and (not batch or n + len(self._buf[0][1]) <= self.batch_values):
            row = self._buf.popleft()
            batch.append(row)
            n += len(row[1])
        self._buffered_values -= n
        self._inflight_values = n
        return batch

    def _expired(self) -> bool:
        return self._deadline is not None and time.monotonic() >= self._deadline

    def _idle(self) -> bool:
        """Nothing urgent: wait for more points (or the flush interval) before sending."""
        return (
            not self._closing
            and not self._flush_wanted
            and self._update is None
            and self._buffered_values < self.batch_values
        )

    def _loop(self) -> None:
        while True:
            with self._cond:
                if not self._buf and self._update is None:
                    if self._closing:
                        return
                    self._flush_wanted = False
                    self._cond.wait(self.flush_interval_s)
                elif self._idle():
                    self._cond.wait(self.flush_interval_s)
                update, self._update = self._update, None
                batch = self._take()
            if update is None and not batch:
                self._poll_if_quiet()
            if update is not None and self._patch_run is not None:
                self._deliver(functools.partial(self._patch_run, update), "the run update")
            if batch:
                body = [{"step": s, "values": v} for s, v in batch]
                n = self._inflight_values
                outcome = self._deliver(functools.partial(self._post_batch, body), f"{n} values")
                with self._cond:
                    if outcome == "sent":
                        self.stats.sent += self._inflight_values
                        self.stats.batches += 1
                    elif outcome == "rejected":
                        self.stats.dropped_rejected += self._inflight_values
                    else:
                        self.stats.dropped_at_exit += self._inflight_values
                    self._settled += len(batch)
                    self._inflight_values = 0
                    self._cond.notify_all()
            else:
                with self._cond:
                    self._cond.notify_all()
            if self._closing and self._expired():
                return

    def _poll_if_quiet(self) -> None:
        if self._poll is None or self._closing:
            return
        now = time.monotonic()
        if now - self._last_contact < self.poll_interval_s:
            return
        self._last_contact = now
        try:
            self._poll()
        except Exception as exc:  # noqa: BLE001 - the sender thread must never die
            log.debug("zhisuan: poll failed: %r", exc)

    def _deliver(self, send: Callable[[], object], what: str) -> Outcome:
        """Send until it succeeds, is refused for good, or the close deadline passes. ``what``
        names it in warnings (``500 values``, ``the run update``)."""
        backoff = self.initial_backoff_s
        warned = False
        while True:
            try:
                send()
                self._last_contact = time.monotonic()
                if warned:
                    log.warning("zhisuan: the platform is reachable again")
                return "sent"
            except ApiError as exc:
                if not exc.retryable:
                    log.warning("zhisuan: the platform refused %s: %s %s",
                                what, exc, exc.errors or "")  # fmt: skip
                    return "rejected"
                reason = str(exc)
            except requests.RequestException as exc:
                reason = type(exc).__name__
            except (TypeError, ValueError) as exc:
                # JSON cannot encode it: no retry will change that, and retrying would hold
                # back every later point behind it.
                log.warning("zhisuan: cannot send %s: %s; dropped", what, exc)
                return "rejected"
            except Exception as exc:  # noqa: BLE001 - the sender thread must never die
                reason = repr(exc)
            if not warned:
                log.warning("zhisuan: cannot reach the platform (%s); retrying", reason)
                warned = True
            with self._cond:
                self.stats.retries += 1
            if self._closing and self._expired():
                return "expired"
            wait = backoff * (0.5 + random.random())
            if self._deadline is not None:
                wait = min(wait, max(0.0, self._deadline - time.monotonic()))
            self._wake.wait(wait)
            backoff = min(self.max_backoff_s, backoff * 2)
