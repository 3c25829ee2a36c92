"""Two-stage asynchronous checkpoints, sharded per rank (capability C8).

Stage 1, the only part that blocks training, copies the state to host memory: numpy arrays
into staging buffers, torch tensors with ``.detach()`` into (pinned, when on CUDA) host
tensors. Staging buffers are kept and reused by the next save, the way PyTorch's async
distributed checkpointing caches pinned buffers, so steady-state saves copy into memory that
is already mapped instead of page-faulting a fresh allocation. Stage 2, on a background
thread, writes this rank's shard and then its manifest:

    <dir>/step_000000001000/rank_00003.zsc    the shard (header + raw array bytes)
    <dir>/step_000000001000/rank_00003.json   its manifest, written last

each through a temporary name, ``fsync``, ``rename`` and an ``fsync`` of the folder. A
checkpoint is complete when every rank's manifest is there and names a shard of the right
size; a writer killed at any moment leaves at most a temporary file or a shard without a
manifest, which loading ignores. After the manifest the shard is registered with the
platform (when the SDK knows its run), which marks the checkpoint complete once all ranks
registered and passes the newest complete one to a restarted job as ``ZS_RESUME_FROM``.

At most one snapshot per rank is in flight: ``save`` first waits for the previous write.

The state is a tree of dicts, lists, tuples, numbers, strings, None, numpy arrays and
scalars, and torch tensors. Nothing is pickled, so loading a checkpoint never runs code.
Arrays load bit-exactly, as numpy arrays (or torch tensors when saved from torch and torch is
importable; bfloat16 and other dtypes numpy lacks come back as raw unsigned integers without
torch).
"""

from __future__ import annotations

import atexit
import base64
import functools
import hashlib
import json
import logging
import os
import re
import shutil
import struct
import threading
import time
import weakref
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from zhisuan import _config

log = logging.getLogger("zhisuan")

FORMAT = "zhisuan-checkpoint/1"
MAGIC = b"ZSCKPT01"
ALIGN = 64
STEP_DIR = re.compile(r"^step_(\d{12,})$")
CHUNK = 64 << 20  # bytes per write() call and per parallel copy piece


class CheckpointError(Exception):
    """A checkpoint could not be written or read."""


# ---------------------------------------------------------------------------------- stage 1
@dataclass
class _Leaf:
    kind: str  # "numpy" | "npscalar" | "torch"
    buf: Any  # numpy array or torch tensor on the host (staged copy)
    dtype: str  # numpy dtype str, or torch dtype name for kind "torch"
    shape: tuple[int, ...]


@dataclass
class _Snapshot:
    step: int
    tree: Any
    leaves: list[_Leaf]
    copy_s: float = 0.0


def _is_torch(x: Any) -> bool:
    return type(x).__module__.split(".")[0] == "torch" and hasattr(x, "detach")


class _Stager:
    """Copies a state tree to host memory, reusing buffers across saves."""

    def __init__(self, threads: int) -> None:
        self.threads = max(1, threads)
        self._cache: dict[str, Any] = {}
        self._pool: ThreadPoolExecutor | None = None

    def snapshot(self, state: Any, step: int) -> _Snapshot:
        started = time.perf_counter()
        leaves: list[_Leaf] = []
        copies: list[Callable[[], None]] = []
        needs_sync: list[bool] = []
        tree = self._walk(state, "", leaves, copies, needs_sync)
        if copies:
            if self.threads > 1 and len(copies) > 1:
                if self._pool is None:
                    self._pool = ThreadPoolExecutor(self.threads, "zhisuan-ckpt-copy")
                for f in [self._pool.submit(c) for c in copies]:
                    f.result()
            else:
                for c in copies:
                    c()
        if any(needs_sync):
            import torch  # only reached when tensors were on an accelerator

            torch.cuda.synchronize()
        return _Snapshot(step, tree, leaves, copy_s=time.perf_counter() - started)

    def _walk(
        self,
        x: Any,
        path: str,
        leaves: list[_Leaf],
        copies: list[Callable[[], None]],
        sync: list[bool],
    ) -> Any:
        if x is None:
            return {"n": 0}
        if isinstance(x, bool):
            return {"b": x}
        if isinstance(x, int):
            return {"i": x}
        if isinstance(x, float):
            return {"f": x.hex()}
        if isinstance(x, str):
            return {"s": x}
        if isinstance(x, bytes):
            return {"y": base64.b64encode(x).decode()}
        if isinstance(x, dict):
            if all(isinstance(k, str) for k in x):
                return {"d": {k: self._walk(v, f"{path}/{k}", leaves, copies, sync)
                              for k, v in x.items()}}  # fmt: skip
            return {"m": [[self._walk(k, f"{path}/#k{i}", leaves, copies, sync),
                           self._walk(v, f"{path}/#{i}", leaves, copies, sync)]
                          for i, (k, v) in enumerate(x.items())]}  # fmt: skip
        if isinstance(x, (list, tuple)):
            items = [self._walk(v, f"{path}/{i}", leaves, copies, sync) for i, v in enumerate(x)]
            return {"t": items} if isinstance(x, tuple) else {"l": items}
        if _is_torch(x):
            return {"a": self._stage_torch(x, path, leaves, copies, sync)}
        np = _numpy()
        if np is not None and isinstance(x, np.generic):
            x = np.asarray(x)
            leaves.append(_Leaf("npscalar", x.copy(), x.dtype.str, ()))
            return {"a": len(leaves) - 1}
        if np is not None and isinstance(x, np.ndarray):
            return {"a": self._stage_numpy(x, path, leaves, copies)}
        raise TypeError(
            f"checkpoint state at {path or '/'}: cannot save a {type(x).__name__} "
            "(use dicts, lists, numbers, strings, numpy arrays or torch tensors)"
        )

    def _cached(
        self, path: str, shape: tuple[int, ...], dtype: Any, make: Callable[[], Any]
    ) -> Any:
        buf = self._cache.get(path)
        if buf is None or tuple(buf.shape) != shape or buf.dtype != dtype:
            buf = make()
            self._cache[path] = buf
        return buf

    def _stage_numpy(
        self, a: Any, path: str, leaves: list[_Leaf], copies: list[Callable[[], None]]
    ) -> int:
        np = _numpy()
        assert np is not None
        if a.dtype.hasobject:
            raise TypeError(f"checkpoint state at {path}: object arrays cannot be saved")
        shape = tuple(int(d) for d in a.shape)
        buf = self._cached(path, shape, a.dtype, lambda: np.empty(shape, dtype=a.dtype))
        if a.flags.c_contiguous and a.nbytes > CHUNK:
            src, dst = a.reshape(-1), buf.reshape(-1)
            per = max(1, CHUNK // a.itemsize)
            for lo in range(0, src.size, per):
                copies.append(functools.partial(_copy_slice, dst, src, lo, lo + per))
        else:
            copies.append(lambda: np.copyto(buf, a))
        leaves.append(_Leaf("numpy", buf, a.dtype.str, shape))
        return len(leaves) - 1

    def _stage_torch(
        self,
        t: Any,
        path: str,
        leaves: list[_Leaf],
        copies: list[Callable[[], None]],
        sync: list[bool],
    ) -> int:
        import torch

        t = t.detach()
        shape = tuple(int(d) for d in t.shape)
        on_host = t.device.type == "cpu"
        pin = not on_host and torch.cuda.is_available()
        buf = self._cached(
            path, shape, t.dtype,
            lambda: torch.empty(shape, dtype=t.dtype, device="cpu", pin_memory=pin),
        )  # fmt: skip
        if on_host:
            copies.append(lambda: buf.copy_(t))
        elif pin:  # CUDA: queued on the current stream into pinned memory; synced at the end
            buf.copy_(t, non_blocking=True)
            sync.append(True)
        else:  # another accelerator (an NPU...): a plain synchronous copy
            buf.copy_(t)
        leaves.append(_Leaf("torch", buf, str(t.dtype).removeprefix("torch."), shape))
        return len(leaves) - 1

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False)
            self._pool = None


def _copy_slice(dst: Any, src: Any, lo: int, hi: int) -> None:
    _numpy().copyto(dst[lo:hi], src[lo:hi])


def _torch() -> Any:
    try:
        import torch
    except ImportError:
        return None
    return torch


def _numpy() -> Any:
    try:
        import numpy
    except ImportError:  # pragma: no cover - numpy is optional
        return None
    return numpy


# ---------------------------------------------------------------------------------- stage 2
def _raw_bytes(leaf: _Leaf) -> memoryview:
    """The leaf's bytes without copying (C order)."""
    if leaf.kind == "torch":
        import torch

        flat = leaf.buf.contiguous().reshape(-1)
        if flat.numel() == 0:
            return memoryview(b"")
        return memoryview(flat.view(torch.uint8).numpy()).cast("B")
    return memoryview(leaf.buf).cast("B") if leaf.buf.nbytes else memoryview(b"")


def _write_all(f: Any, data: memoryview, digest: Any) -> None:
    """Write ``data`` in chunks (a test replaces this to slow a writer down before killing it)."""
    for lo in range(0, len(data), CHUNK):
        piece = data[lo : lo + CHUNK]
        f.write(piece)
        if digest is not None:
            digest.update(piece)


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def step_dir(directory: str | os.PathLike[str], step: int) -> Path:
    return Path(directory) / f"step_{step:012d}"


def _shard_name(rank: int) -> str:
    return f"rank_{rank:05d}.zsc"


def _manifest_name(rank: int) -> str:
    return f"rank_{rank:05d}.json"


def write_shard(
    snap: _Snapshot, directory: str | os.PathLike[str], rank: int, world_size: int,
    *, checksum: bool = False,
) -> dict[str, Any]:  # fmt: skip
    """Persist one rank's snapshot atomically; returns its manifest."""
    folder = step_dir(directory, snap.step)
    folder.mkdir(parents=True, exist_ok=True)
    for stale in folder.glob(f".rank_{rank:05d}.*"):
        stale.unlink(missing_ok=True)
    views = [_raw_bytes(leaf) for leaf in snap.leaves]
    arrays, offset = [], 0
    for leaf, view in zip(snap.leaves, views, strict=True):
        arrays.append({"kind": leaf.kind, "dtype": leaf.dtype, "shape": list(leaf.shape),
                       "offset": offset, "nbytes": len(view)})  # fmt: skip
        offset += -(-len(view) // ALIGN) * ALIGN
    header = json.dumps({"format": FORMAT, "step": snap.step, "rank": rank,
                         "world_size": world_size, "tree": snap.tree,
                         "arrays": arrays}).encode()  # fmt: skip
    start = -(-(len(MAGIC) + 8 + len(header)) // ALIGN) * ALIGN
    data_name, tmp = _shard_name(rank), folder / f".{_shard_name(rank)}.tmp.{os.getpid()}"
    digest = hashlib.sha256() if checksum else None
    with open(tmp, "wb") as f:
        head = MAGIC + struct.pack("<Q", len(header)) + header
        head += b"\0" * (start - len(head))
        f.write(head)
        if digest is not None:
            digest.update(head)
        for view in views:
            _write_all(f, view, digest)
            pad = -len(view) % ALIGN
            if pad:
                f.write(b"\0" * pad)
                if digest is not None:
                    digest.update(b"\0" * pad)
        f.flush()
        os.fsync(f.fileno())
        size = f.tell()
    os.replace(tmp, folder / data_name)
    _fsync_dir(folder)
    manifest: dict[str, Any] = {
        "format": FORMAT, "step": snap.step, "rank": rank, "world_size": world_size,
        "files": [{"name": data_name, "bytes": size,
                   **({"sha256": digest.hexdigest()} if digest is not None else {})}],
        "created_at": time.time(),
    }  # fmt: skip
    mtmp = folder / f".{_manifest_name(rank)}.tmp.{os.getpid()}"
    with open(mtmp, "w") as f:
        json.dump(manifest, f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(mtmp, folder / _manifest_name(rank))
    _fsync_dir(folder)
    return manifest


# ---------------------------------------------------------------------------------- loading
@dataclass
class Loaded:
    step: int
    state: Any
    path: str
    world_size: int


def _read_manifest(folder: Path, rank: int) -> dict[str, Any] | None:
    try:
        m = json.loads((folder / _manifest_name(rank)).read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(m, dict) or m.get("format") != FORMAT or m.get("rank") != rank:
        return None
    for entry in m.get("files") or []:
        try:
            if (folder / entry["name"]).stat().st_size != entry["bytes"]:
                return None
        except (OSError, KeyError, TypeError):
            return None
    return m


def is_complete(folder: str | os.PathLike[str]) -> bool:
    """Every rank's manifest is present and names a shard of the recorded size."""
    return _complete_world(Path(folder)) is not None


def _complete_world(folder: Path) -> int | None:
    first = _read_manifest(folder, 0)
    if first is None:
        return None
    world = int(first["world_size"])
    step = first["step"]
    for r in range(1, world):
        m = _read_manifest(folder, r)
        if m is None or m["world_size"] != world or m["step"] != step:
            return None
    return world


def _decode(node: Any, arrays: list[Any]) -> Any:
    ((tag, v),) = node.items()
    if tag == "n":
        return None
    if tag in ("b", "i", "s"):
        return v
    if tag == "f":
        return float.fromhex(v)
    if tag == "y":
        return base64.b64decode(v)
    if tag == "d":
        return {k: _decode(x, arrays) for k, x in v.items()}
    if tag == "m":
        return {_decode(k, arrays): _decode(x, arrays) for k, x in v}
    if tag == "l":
        return [_decode(x, arrays) for x in v]
    if tag == "t":
        return tuple(_decode(x, arrays) for x in v)
    if tag == "a":
        return arrays[v]
    raise CheckpointError(f"unknown node {tag!r}")


def _load_array(meta: dict[str, Any], data: bytearray, base: int) -> Any:
    np = _numpy()
    if np is None:
        raise CheckpointError("loading arrays needs numpy")
    off, nbytes, shape = base + meta["offset"], meta["nbytes"], tuple(meta["shape"])
    if meta["kind"] == "torch":
        torch = _torch()
        if torch is not None:
            dtype = getattr(torch, meta["dtype"])
            raw = torch.frombuffer(data, dtype=torch.uint8, count=nbytes, offset=off) \
                if nbytes else torch.empty(0, dtype=torch.uint8)  # fmt: skip
            return (
                raw.view(dtype).reshape(shape).clone()
                if nbytes
                else torch.empty(shape, dtype=dtype)
            )
        try:
            dtype_np = np.dtype(meta["dtype"])
        except TypeError:  # bfloat16, float8...: raw unsigned integers of the same width
            width = {"bfloat16": 2}.get(meta["dtype"], 1)
            dtype_np = np.dtype(f"<u{width}")
        return np.frombuffer(data, dtype=dtype_np, count=nbytes // dtype_np.itemsize,
                             offset=off).reshape(shape)  # fmt: skip
    dtype_np = np.dtype(meta["dtype"])
    arr = np.frombuffer(data, dtype=dtype_np, count=nbytes // dtype_np.itemsize if nbytes else 0,
                        offset=off).reshape(shape)  # fmt: skip
    return arr[()] if meta["kind"] == "npscalar" else arr


def load(path: str | os.PathLike[str], *, rank: int | None = None, verify: bool = False) -> Loaded:
    """Load ``rank``'s shard (default: this process's RANK) of the complete checkpoint at
    ``path`` (a ``step_...`` folder). ``verify`` checks the shard's SHA-256 when recorded."""
    folder = Path(path)
    rank = _config.rank() if rank is None else rank
    world = _complete_world(folder)
    if world is None:
        raise CheckpointError(f"{folder} is not a complete checkpoint")
    if not 0 <= rank < world:
        raise CheckpointError(f"{folder} has {world} shards; rank {rank} has none")
    manifest = _read_manifest(folder, rank)
    assert manifest is not None
    entry = manifest["files"][0]
    data = bytearray(entry["bytes"])
    with open(folder / entry["name"], "rb", buffering=0) as f:
        view, got = memoryview(data), 0
        while got < len(data):
            n = f.readinto(view[got:])
            if not n:
                raise CheckpointError(f"{folder / entry['name']} is shorter than its manifest")
            got += n
    if verify and "sha256" in entry and hashlib.sha256(data).hexdigest() != entry["sha256"]:
        raise CheckpointError(f"{folder / entry['name']}: checksum mismatch")
    if bytes(data[:8]) != MAGIC:
        raise CheckpointError(f"{folder / entry['name']}: not a Zhisuan checkpoint shard")
    (hlen,) = struct.unpack("<Q", bytes(data[8:16]))
    header = json.loads(bytes(data[16 : 16 + hlen]))
    base = -(-(16 + hlen) // ALIGN) * ALIGN
    arrays = [_load_array(meta, data, base) for meta in header["arrays"]]
    return Loaded(step=int(header["step"]), state=_decode(header["tree"], arrays),
                  path=str(folder), world_size=world)  # fmt: skip


def complete_steps(directory: str | os.PathLike[str]) -> list[int]:
    """Steps with a complete checkpoint under ``directory``, newest first."""
    root = Path(directory)
    if not root.is_dir():
        return []
    steps = sorted(
        (int(m.group(1)) for p in root.iterdir() if (m := STEP_DIR.match(p.name))), reverse=True
    )
    return [s for s in steps if is_complete(step_dir(root, s))]


def load_latest(
    directory: str | os.PathLike[str], *, rank: int | None = None, verify: bool = False
) -> Loaded | None:
    """The newest complete checkpoint under ``directory`` (incomplete ones are ignored), or
    None when there is none."""
    for step in complete_steps(directory):
        try:
            return load(step_dir(directory, step), rank=rank, verify=verify)
        except CheckpointError as exc:
            log.warning("zhisuan: skipping checkpoint at step %d: %s", step, exc)
    return None


def resume(
    directory: str | os.PathLike[str] | None = None, *, rank: int | None = None
) -> Loaded | None:
    """What a (re)started job should resume from: ``ZS_RESUME_FROM`` (set by the platform
    for a restarted job) if it is complete, else the newest complete checkpoint under
    ``directory`` (default ``ZS_CHECKPOINT_DIR``), else None."""
    given = os.environ.get("ZS_RESUME_FROM")
    if given and is_complete(given):
        return load(given, rank=rank)
    directory = directory or os.environ.get("ZS_CHECKPOINT_DIR")
    return load_latest(directory, rank=rank) if directory else None


# ---------------------------------------------------------------------------------- saving
@dataclass
class SaveTimes:
    step: int
    blocked_s: float  # the call to save(): waiting for the previous write + the copy
    copy_s: float  # stage 1 alone
    write_s: float = 0.0  # stage 2 (filled when it finishes)


@dataclass(eq=False)
class Checkpointer:
    """Saves one rank's checkpoints under ``directory``; see the module's docstring."""

    directory: str
    rank: int = field(default_factory=_config.rank)
    world_size: int = field(default_factory=_config.world_size)
    register: bool = True
    checksum: bool = False
    keep_last: int | None = None
    copy_threads: int = field(default_factory=lambda: min(8, os.cpu_count() or 1))

    def __post_init__(self) -> None:
        self._stager = _Stager(self.copy_threads)
        self._thread: threading.Thread | None = None
        self._error: BaseException | None = None
        self._lock = threading.Lock()
        self.history: list[SaveTimes] = []
        _live.add(self)

    def save(self, state: Any, step: int) -> SaveTimes:
        """Snapshot ``state`` to host memory (blocking), then persist it in the background."""
        if isinstance(step, bool) or not isinstance(step, int) or step < 0:
            raise ValueError(f"step must be an int >= 0; got {step!r}")
        started = time.perf_counter()
        self._join()  # at most one snapshot in flight
        if self._error is not None:
            log.error("zhisuan: the previous checkpoint failed: %s", self._error)
            self._error = None
        snap = self._stager.snapshot(state, step)
        times = SaveTimes(step=step, blocked_s=0.0, copy_s=snap.copy_s)
        self._thread = threading.Thread(
            target=self._persist, args=(snap, times), name=f"zhisuan-ckpt-{step}", daemon=True
        )
        self._thread.start()
        times.blocked_s = time.perf_counter() - started
        self.history.append(times)
        return times

    def save_sync(self, state: Any, step: int) -> SaveTimes:
        """The same checkpoint written before returning (the baseline async saves beat)."""
        times = self.save(state, step)
        self.wait()
        times.blocked_s += times.write_s
        return times

    def wait(self) -> None:
        """Block until the snapshot in flight is written; raise if writing it failed."""
        self._join()
        if self._error is not None:
            err, self._error = self._error, None
            raise CheckpointError(f"checkpoint write failed: {err}") from err

    def _join(self) -> None:
        thread = self._thread
        if thread is not None:
            thread.join()
            self._thread = None

    def _persist(self, snap: _Snapshot, times: SaveTimes) -> None:
        started = time.perf_counter()
        try:
            manifest = write_shard(snap, self.directory, self.rank, self.world_size,
                                   checksum=self.checksum)  # fmt: skip
            times.write_s = time.perf_counter() - started
            if self.register:
                _register(snap.step, step_dir(self.directory, snap.step), self.rank,
                          self.world_size, manifest)  # fmt: skip
            if self.keep_last and self.rank == 0:
                self._prune(self.keep_last)
        except BaseException as exc:  # noqa: BLE001 - reported by wait() / the next save()
            times.write_s = time.perf_counter() - started
            self._error = exc
            log.error("zhisuan: writing checkpoint at step %d failed: %s", snap.step, exc)

    def _prune(self, keep: int) -> None:
        for step in complete_steps(self.directory)[keep:]:
            shutil.rmtree(step_dir(self.directory, step), ignore_errors=True)

    def close(self) -> None:
        self._join()
        self._stager.close()


_live: weakref.WeakSet[Checkpointer] = weakref.WeakSet()
_default: Checkpointer | None = None


_sleep = time.sleep  # registration backoff (tests make it instant)


def _register(step: int, folder: Path, rank: int, world: int, manifest: dict[str, Any]) -> None:
    """Tell the platform this rank's shard is durable (a few tries; never fatal). The run is
    this process's (``zhisuan.init``), else the job's (``ZS_RUN_ID``): a run created outside a
    job has no ``ZS_RUN_ID``, and its checkpoints went unregistered."""
    from zhisuan import run as runs
    from zhisuan.client import ApiClient, ApiError

    current = runs._current
    if current is not None and current.client is not None and current.id is not None:
        client, run_id = current.client.clone(timeout=15), current.id
    else:
        settings = _config.load()
        if not settings.complete or settings.run_id is None:
            return
        assert settings.url and settings.token and settings.tenant
        client = ApiClient(settings.url, settings.token, settings.tenant, timeout=15)
        run_id = settings.run_id
    body = {
        "step": step, "path": str(folder.resolve()), "rank": rank, "world_size": world,
        "shard_bytes": sum(f["bytes"] for f in manifest["files"]), "files": manifest["files"],
    }  # fmt: skip
    path = client.tenant_path(f"runs/{run_id}/checkpoints/")
    for attempt in range(5):
        try:
            client.post(path, body)
            return
        except ApiError as exc:
            if not exc.retryable:
                log.warning("zhisuan: platform refused checkpoint %d: %s %s", step, exc, exc.errors)
                return
        except Exception as exc:  # noqa: BLE001 - registration must never break training
            log.warning("zhisuan: registering checkpoint %d failed: %s", step, exc)
        _sleep(min(10.0, 0.5 * 2**attempt))


def _wait_all() -> None:
    for ck in list(_live):
        try:
            ck.wait()
        except CheckpointError as exc:
            log.error("zhisuan: %s", exc)


atexit.register(_wait_all)


def default(directory: str | os.PathLike[str] | None = None) -> Checkpointer:
    """The process's checkpointer for ``directory`` (default ``ZS_CHECKPOINT_DIR``)."""
    global _default
    where = str(directory or os.environ.get("ZS_CHECKPOINT_DIR") or "")
    if not where:
        raise CheckpointError("no checkpoint directory: pass one or set ZS_CHECKPOINT_DIR")
    if _default is None or _default.directory != where:
        if _default is not None:
            _default.close()
        _default = Checkpointer(where)
    return _default


def save(state: Any, step: int, directory: str | os.PathLike[str] | None = None) -> SaveTimes:
    """Two-stage save through the default checkpointer; returns once the copy is done."""
    return default(directory).save(state, step)


def wait() -> None:
    """Block until the default checkpointer's write in flight is durable."""
    if _default is not None:
        _default.wait()
