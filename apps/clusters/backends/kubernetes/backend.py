"""``KubernetesBackend``: the cluster interface over the official Kubernetes client.

Built from an ``ApiClient`` so that production passes one configured from the service account
(``api_client_from_environment``) and tests pass one pointed at an HTTP emulator. Every call
carries a client-side timeout; every failure leaves as a typed error from ``..base``.

The client's own retries should be off (``Configuration.retries = False``, as
``api_client_from_environment`` does): the caller (a Celery task) owns retrying, with backoff and
the ``retry_after_s`` we report.
"""

from __future__ import annotations

import contextlib
import copy
import email.utils
import itertools
import json
import math
import os
import queue
import socket
import threading
import time
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from types import TracebackType
from typing import Any, Self
from urllib.parse import parse_qsl, urlencode

import urllib3
from kubernetes import client as k8s
from kubernetes import config as k8s_config
from kubernetes import watch as k8s_watch
from pydantic import ValidationError as PydanticValidationError

from ..base import (
    BackendError,
    ConflictError,
    NotFoundError,
    PermanentError,
    Quantities,
    ResyncRequired,
    TransientError,
)
from ..spec import (
    ANNOTATION_CORDON_REASON,
    LABEL_JOB_ID,
    LABEL_MANAGED_BY,
    MANAGED_BY_VALUE,
    ApplyResult,
    DrainResult,
    LogLine,
    NetworkTopology,
    NodeInventory,
    NotebookEndpoint,
    ObjectRef,
    WatchEvent,
    WorkloadKind,
    WorkloadSpec,
    WorkloadStatus,
    namespace_for,
    workload_name,
)
from .manifests import (
    ANNOTATION_MULTUS,
    DEFAULT_OPTIONS,
    Manifest,
    RenderOptions,
    notebook_base_path,
    notebook_home_claim,
    render_hypernodes,
    render_inference,
    render_priority_classes,
    render_queue,
    render_tenant,
    render_workload,
    serve_label,
)
from .status import status_from_object

# Parts of the client without annotations, used through Any on purpose.
_load_incluster_config: Any = k8s_config.load_incluster_config
_load_kube_config: Any = k8s_config.load_kube_config
_Watch: Any = k8s_watch.Watch

MANAGED_SELECTOR = f"{LABEL_MANAGED_BY}={MANAGED_BY_VALUE}"
FIELD_MANAGER = "zhisuan"
MERGE_PATCH = "application/merge-patch+json"
LIST_PAGE_SIZE = 500
# Lower than the default (0): on a scale-down the ReplicaSet removes these pods first.
ANNOTATION_DELETION_COST = "controller.kubernetes.io/pod-deletion-cost"
LEAVING_POD_COST = "-1000"
_TRANSIENT_STATUSES = frozenset({0, 408, 429, 500, 502, 503, 504})
# What ``update_template`` brings to the rendered state: never ``replicas`` (the scale's).
TEMPLATE_FIELDS = ("template", "strategy", "progressDeadlineSeconds")
# Keys of an inference pod spec that a render may leave out and that nobody else sets: a new
# render without one removes it (a merge patch keeps every key it does not name).
_OPTIONAL_POD_KEYS = ("affinity", "tolerations")


@dataclass(frozen=True)
class KindInfo:
    """How to reach one kind through the client: a typed API or CustomObjectsApi."""

    api_version: str
    kind: str
    plural: str
    namespaced: bool
    api: str  # "core" | "apps" | "networking" | "custom"
    snake: str = ""  # typed method suffix, e.g. "stateful_set"

    @property
    def group(self) -> str:
        return self.api_version.rpartition("/")[0]

    @property
    def version(self) -> str:
        return self.api_version.rpartition("/")[2]


KINDS: dict[tuple[str, str], KindInfo] = {
    (info.api_version, info.kind): info
    for info in (
        KindInfo("batch.volcano.sh/v1alpha1", "Job", "jobs", True, "custom"),
        KindInfo("scheduling.volcano.sh/v1beta1", "Queue", "queues", False, "custom"),
        KindInfo("topology.volcano.sh/v1alpha1", "HyperNode", "hypernodes", False, "custom"),
        KindInfo("v1", "Namespace", "namespaces", False, "core", "namespace"),
        KindInfo("v1", "ResourceQuota", "resourcequotas", True, "core", "resource_quota"),
        KindInfo("v1", "Secret", "secrets", True, "core", "secret"),
        KindInfo("v1", "Service", "services", True, "core", "service"),
        KindInfo(
            "v1",
            "PersistentVolumeClaim",
            "persistentvolumeclaims",
            True,
            "core",
            "persistent_volume_claim",
        ),
        KindInfo("apps/v1", "StatefulSet", "statefulsets", True, "apps", "stateful_set"),
        KindInfo("apps/v1", "Deployment", "deployments", True, "apps", "deployment"),
        KindInfo(
            "networking.k8s.io/v1",
            "NetworkPolicy",
            "networkpolicies",
            True,
            "networking",
            "network_policy",
        ),
    )
}
VOLCANO_JOB = KINDS["batch.volcano.sh/v1alpha1", "Job"]
HYPERNODE = KINDS["topology.volcano.sh/v1alpha1", "HyperNode"]
STATEFULSET = KINDS["apps/v1", "StatefulSet"]
DEPLOYMENT = KINDS["apps/v1", "Deployment"]
SERVICE = KINDS["v1", "Service"]
SECRET = KINDS["v1", "Secret"]
CLAIM = KINDS["v1", "PersistentVolumeClaim"]

# The status-bearing object of each workload kind, and the cursor key of its watch stream.
STATUS_KINDS: tuple[tuple[str, WorkloadKind, KindInfo], ...] = (
    ("jobs", "training", VOLCANO_JOB),
    ("statefulsets", "notebook", STATEFULSET),
    ("deployments", "inference", DEPLOYMENT),
)

# Map keys whose entries we own entirely: a key we no longer want is removed on ensure_*.
_OWNED_MAPS = frozenset(
    {
        ("spec", "hard"),
        ("spec", "capability"),
        ("spec", "deserved"),
        ("spec", "guarantee", "resource"),
    }
)


def api_client_from_environment(kubeconfig: str | None = None, context: str | None = None) -> Any:
    """An ``ApiClient`` from the in-cluster service account (when running in a pod) or a
    kubeconfig, with urllib3 retries off so failures surface as typed errors at once."""
    configuration = k8s.Configuration()
    if kubeconfig is None and os.environ.get("KUBERNETES_SERVICE_HOST"):
        _load_incluster_config(client_configuration=configuration)
    else:
        _load_kube_config(
            config_file=kubeconfig, context=context, client_configuration=configuration
        )
    configuration.retries = False
    return k8s.ApiClient(configuration)


# ---------------------------------------------------------------------------------------------
# Errors


def _parse_retry_after(value: str | None) -> float | None:
    if not value:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        seconds = (when - datetime.now(UTC)).total_seconds()
    return max(0.0, seconds) if math.isfinite(seconds) else None


def _status_body(exc: Any) -> Mapping[str, Any]:
    body = getattr(exc, "body", None)
    if not body:
        return {}
    try:
        parsed = json.loads(body)
    except (TypeError, ValueError):
        return {}
    return parsed if isinstance(parsed, dict) else {}


def translate_error(exc: BaseException, what: str) -> BackendError:
    """The typed error for a failure of the client (HTTP status, transport, validation)."""
    if isinstance(exc, BackendError):
        return exc
    if isinstance(exc, k8s.ApiException):
        status = int(exc.status or 0)
        body = _status_body(exc)
        detail = body.get("message") or exc.reason or ""
        message = f"{what}: HTTP {status} {detail}".rstrip()
        if status == 410:
            return ResyncRequired(message, status=status)
        if status in _TRANSIENT_STATUSES:
            headers = exc.headers or {}
            retry_after = _parse_retry_after(headers.get("Retry-After"))
            if retry_after is None:
                details = body.get("details") or {}
                raw = details.get("retryAfterSeconds") if isinstance(details, dict) else None
                retry_after = float(raw) if isinstance(raw, int | float) else None
            return TransientError(message, status=status, retry_after_s=retry_after)
        if status == 404:
            return NotFoundError(message, status=status)
        if status == 409:
            # On anything but create, 409 means "changed underneath you": read and retry.
            return TransientError(message, status=status)
        return PermanentError(message, status=status)
    if isinstance(exc, urllib3.exceptions.HTTPError | OSError):
        # Timeouts, refused or reset connections: the request may or may not have been applied.
        return TransientError(f"{what}: {type(exc).__name__}: {exc}")
    if isinstance(exc, PydanticValidationError):
        return PermanentError(f"{what}: rejected by the client: {exc}")
    return PermanentError(f"{what}: {type(exc).__name__}: {exc}")


def _is_ours(obj: Mapping[str, Any], job_id: int | None = None) -> bool:
    labels = (obj.get("metadata") or {}).get("labels") or {}
    if labels.get(LABEL_MANAGED_BY) != MANAGED_BY_VALUE:
        return False
    return job_id is None or labels.get(LABEL_JOB_ID) == str(job_id)


class _Missing:
    pass


_SAME: Any = _Missing()


def _merge_diff(old: Any, new: Any, path: tuple[str, ...]) -> Any:
    """A JSON merge patch turning ``old`` into ``new`` for the fields ``new`` names (fields the
    server defaults are left alone, except inside maps we own)."""
    if isinstance(old, dict) and isinstance(new, dict):
        diff: dict[str, Any] = {}
        for key, value in new.items():
            sub = _merge_diff(old.get(key, _SAME), value, (*path, key))
            if sub is not _SAME:
                diff[key] = sub
        if path in _OWNED_MAPS:
            for key in old:
                if key not in new:
                    diff[key] = None
        return diff or _SAME
    return _SAME if old == new else new


def desired_patch(existing: Mapping[str, Any], desired: Mapping[str, Any]) -> dict[str, Any]:
    """Merge patch for ``ensure_*``: our labels plus every field outside metadata and status."""
    patch: dict[str, Any] = {}
    labels = desired.get("metadata", {}).get("labels") or {}
    existing_labels = (existing.get("metadata") or {}).get("labels") or {}
    if any(existing_labels.get(key) != value for key, value in labels.items()):
        patch["metadata"] = {"labels": dict(labels)}
    for key, value in desired.items():
        if key in ("apiVersion", "kind", "metadata", "status"):
            continue
        diff = _merge_diff(existing.get(key, _SAME), value, (key,))
        if diff is not _SAME:
            patch[key] = diff
    return patch


def _drop_stale_keys(existing: Mapping[str, Any], template: dict[str, Any]) -> None:
    """Set to None (a merge patch's "remove") the optional keys ``existing``'s pod template has
    and the rendered ``template`` no longer does: node affinity of a service no longer pinned,
    accelerator tolerations, the RDMA networks annotation."""
    old_pod = existing.get("spec") or {}
    for key in _OPTIONAL_POD_KEYS:
        if key in old_pod and key not in template["spec"]:
            template["spec"][key] = None
    old_annotations = (existing.get("metadata") or {}).get("annotations") or {}
    annotations = template["metadata"].setdefault("annotations", {})
    if ANNOTATION_MULTUS in old_annotations and ANNOTATION_MULTUS not in annotations:
        annotations[ANNOTATION_MULTUS] = None


# ---------------------------------------------------------------------------------------------
# Watch


def encode_cursor(versions: Mapping[str, str]) -> str:
    """One opaque cursor for several watch streams (one per status kind)."""
    return urlencode(sorted((key, value) for key, value in versions.items() if value))


def decode_cursor(cursor: str) -> dict[str, str]:
    if not cursor:
        return {}
    try:
        pairs = parse_qsl(cursor, keep_blank_values=False, strict_parsing=True)
    except ValueError as exc:
        raise ResyncRequired(f"unreadable watch cursor {cursor!r}") from exc
    known = {key for key, _, _ in STATUS_KINDS}
    versions = {key: value for key, value in pairs if key in known}
    if not versions:
        raise ResyncRequired(f"unreadable watch cursor {cursor!r}")
    return versions


def _shutdown(response: Any) -> None:
    """Shut the socket under a streaming response (a blocked read then returns)."""
    sock = getattr(getattr(response, "connection", None), "sock", None)
    if sock is None:
        return
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)


@dataclass
class _StreamSource:
    key: str
    kind: WorkloadKind
    fn: Callable[..., Any]
    args: tuple[Any, ...]


class KubernetesWatchStream:
    """Merges one watch per status kind (Volcano Jobs, StatefulSets, Deployments) into a single
    iterator; one thread per stream, stopped on close or when the time is up."""

    def __init__(
        self,
        sources: list[_StreamSource],
        versions: dict[str, str],
        timeout_s: float,
        connect_timeout_s: float,
    ) -> None:
        self._sources = sources
        self._versions = dict(versions)
        self._timeout_s = timeout_s
        self._connect_timeout_s = connect_timeout_s
        self._queue: queue.Queue[tuple[Any, ...]] = queue.Queue()
        self._watchers: list[Any] = []
        self._threads: list[threading.Thread] = []
        self._deadline: float | None = None
        self._done = 0
        self._closed = threading.Event()
        self._lock = threading.Lock()
        self._responses: list[Any] = []

    @property
    def resource_version(self) -> str:
        return encode_cursor(self._versions)

    def __iter__(self) -> Iterator[WatchEvent]:
        return self

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        """Stop every stream now: a read blocked in a pump thread returns at once."""
        with self._lock:
            if self._closed.is_set():
                return
            self._closed.set()
            responses = list(self._responses)
        for watcher in self._watchers:
            watcher.stop()
        for response in responses:
            _shutdown(response)

    def _start(self) -> None:
        self._deadline = time.monotonic() + self._timeout_s
        for source in self._sources:
            # "object" keeps events as dicts: no model building, nothing to fail on odd data.
            watcher = _Watch(return_type="object")
            self._watchers.append(watcher)
            thread = threading.Thread(
                target=self._pump,
                args=(source, watcher),
                name=f"zhisuan-watch-{source.key}",
                daemon=True,
            )
            self._threads.append(thread)
            thread.start()

    def _opener(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        """Wrap the list call so every streaming response is known to ``close``, even one that
        opens while ``close`` runs (the client's own ``stop`` can miss that one)."""

        def open_stream(*args: Any, **kwargs: Any) -> Any:
            response = fn(*args, **kwargs)
            with self._lock:
                if not self._closed.is_set():
                    self._responses.append(response)
                    return response
            _shutdown(response)
            return response

        return open_stream

    def _pump(self, source: _StreamSource, watcher: Any) -> None:
        kwargs: dict[str, Any] = {
            "label_selector": MANAGED_SELECTOR,
            "allow_watch_bookmarks": True,
            "timeout_seconds": max(1, math.ceil(self._timeout_s)),
            "_request_timeout": (self._connect_timeout_s, self._timeout_s + 5.0),
        }
        version = self._versions.get(source.key)
        if version:
            kwargs["resource_version"] = version
        try:
            if self._closed.is_set():
                return
            for event in watcher.stream(self._opener(source.fn), *source.args, **kwargs):
                if self._closed.is_set():
                    break
                self._queue.put(("event", source, event))
        except urllib3.exceptions.ReadTimeoutError:
            pass  # a quiet stream reached its read timeout: a normal end
        except Exception as exc:  # noqa: BLE001  # a thread must hand every failure to the consumer
            if not self._closed.is_set():
                self._queue.put(("error", translate_error(exc, f"watch {source.key}")))
        finally:
            self._queue.put(("done",))

    def __next__(self) -> WatchEvent:
        if self._deadline is None and not self._closed.is_set():
            self._start()
        while not self._closed.is_set():
            if self._done == len(self._sources):
                self.close()
                break
            assert self._deadline is not None
            remaining = self._deadline - time.monotonic()
            if remaining <= 0:
                self.close()
                break
            try:
                item = self._queue.get(timeout=remaining)
            except queue.Empty:
                self.close()
                break
            if item[0] == "done":
                self._done += 1
                continue
            if item[0] == "error":
                self.close()
                raise item[1]
            _, source, event = item
            result = self._handle(source, event)
            if result is not None:
                return result
        raise StopIteration

    def _handle(self, source: _StreamSource, event: Mapping[str, Any]) -> WatchEvent | None:
        raw = event.get("raw_object") or event.get("object") or {}
        if not isinstance(raw, dict):
            return None
        version = (raw.get("metadata") or {}).get("resourceVersion")
        if version:
            self._versions[source.key] = str(version)
        event_type = str(event.get("type", "")).lower()
        if event_type not in ("added", "modified", "deleted"):
            return None  # BOOKMARK: only the cursor moves
        status = status_from_object(source.kind, raw)
        if status is None:
            return None
        return WatchEvent(
            type=event_type,  # type: ignore[arg-type]  # narrowed by the check above
            status=status,
            resource_version=self.resource_version,
        )


# ---------------------------------------------------------------------------------------------
# The backend


class KubernetesBackend:
    """``ClusterBackend`` over the Kubernetes API with Volcano."""

    def __init__(
        self,
        api_client: Any,
        *,
        options: RenderOptions = DEFAULT_OPTIONS,
        request_timeout: tuple[float, float] = (5.0, 30.0),
    ) -> None:
        self._api_client = api_client
        self._options = options
        self._timeout = request_timeout
        self._core = k8s.CoreV1Api(api_client)
        self._apps = k8s.AppsV1Api(api_client)
        self._networking = k8s.NetworkingV1Api(api_client)
        self._scheduling = k8s.SchedulingV1Api(api_client)
        self._custom = k8s.CustomObjectsApi(api_client)

    # -- low level ------------------------------------------------------------------------

    def _fetch(self, what: str, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> bytes:
        """One API call; the raw response body."""
        kwargs.setdefault("_request_timeout", self._timeout)
        kwargs["_preload_content"] = False
        try:
            response = fn(*args, **kwargs)
            try:
                data = response.data  # reading the body is part of the call (and its timeout)
            finally:
                response.release_conn()
        except Exception as exc:
            raise translate_error(exc, what) from exc
        return bytes(data or b"")

    def _call(self, what: str, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """One API call; the response body as plain JSON (no model building: faster on big
        lists, and nothing to fail on fields the client's models do not know)."""
        data = self._fetch(what, fn, *args, **kwargs)
        if not data:
            return None
        try:
            return json.loads(data)
        except ValueError as exc:
            raise TransientError(f"{what}: unreadable response body") from exc

    def _typed(self, info: KindInfo) -> Any:
        return {"core": self._core, "apps": self._apps, "networking": self._networking}[info.api]

    @staticmethod
    def _as_dict(result: Any) -> dict[str, Any]:
        return result if isinstance(result, dict) else {}

    @staticmethod
    def _what(verb: str, info: KindInfo, namespace: str | None, name: str | None) -> str:
        where = f"{namespace}/" if namespace else ""
        return f"{verb} {info.kind} {where}{name or ''}".rstrip()

    def _route(
        self, verb: str, info: KindInfo, namespace: str | None, name: str | None = None
    ) -> tuple[Callable[..., Any], tuple[Any, ...]]:
        """The client method for one verb on one kind, and its leading positional arguments."""
        if info.api == "custom":
            scope = "namespaced" if info.namespaced else "cluster"
            method = "get" if verb == "read" else verb
            args: tuple[Any, ...] = (info.group, info.version)
            if info.namespaced:
                args += (namespace,)
            args += (info.plural,)
            if name is not None:
                args += (name,)
            return getattr(self._custom, f"{method}_{scope}_custom_object"), args
        api = self._typed(info)
        if info.namespaced:
            fn = getattr(api, f"{verb}_namespaced_{info.snake}")
            return fn, ((name, namespace) if name is not None else (namespace,))
        return getattr(api, f"{verb}_{info.snake}"), ((name,) if name is not None else ())

    def create(self, info: KindInfo, namespace: str | None, body: Manifest) -> dict[str, Any]:
        what = self._what("create", info, namespace, body["metadata"]["name"])
        fn, args = self._route("create", info, namespace)
        return self._as_dict(
            self._call(
                what, fn, *args, body, field_manager=FIELD_MANAGER, field_validation="Strict"
            )
        )

    def read(self, info: KindInfo, namespace: str | None, name: str) -> dict[str, Any]:
        fn, args = self._route("read", info, namespace, name)
        return self._as_dict(self._call(self._what("get", info, namespace, name), fn, *args))

    def patch(
        self, info: KindInfo, namespace: str | None, name: str, body: Mapping[str, Any]
    ) -> dict[str, Any]:
        """A JSON merge patch (custom objects default to it; typed APIs are told so)."""
        fn, args = self._route("patch", info, namespace, name)
        extra: dict[str, Any] = {"field_manager": FIELD_MANAGER}
        if info.api != "custom":
            extra["_content_type"] = MERGE_PATCH
        what = self._what("patch", info, namespace, name)
        return self._as_dict(self._call(what, fn, *args, dict(body), **extra))

    def remove(
        self, info: KindInfo, namespace: str | None, name: str, *, propagation: str = "Foreground"
    ) -> bool:
        """Delete one object; False when it was not there.

        Foreground by default: the object stays, marked for deletion, until its pods are gone,
        so an ``apply`` of the same job (a restart) gets a TransientError instead of racing
        pods of the old run that still hold the same names and devices.
        """
        fn, args = self._route("delete", info, namespace, name)
        try:
            self._call(
                self._what("delete", info, namespace, name),
                fn,
                *args,
                propagation_policy=propagation,
            )
        except NotFoundError:
            return False
        return True

    def _list_pages(
        self, what: str, fn: Callable[..., Any], *args: Any, **kwargs: Any
    ) -> tuple[list[dict[str, Any]], str]:
        """Every item of a list call, in pages; the resourceVersion of the snapshot."""
        items: list[dict[str, Any]] = []
        version = ""
        token: str | None = None
        while True:
            page_kwargs = dict(kwargs, limit=LIST_PAGE_SIZE)
            if token:
                page_kwargs["_continue"] = token
            page = self._as_dict(self._call(what, fn, *args, **page_kwargs))
            metadata = page.get("metadata") or {}
            version = version or str(metadata.get("resourceVersion") or "")
            items.extend(item for item in page.get("items") or [] if isinstance(item, dict))
            token = metadata.get("continue") or metadata.get("_continue")
            if not token:
                return items, version

    def _list_fn(
        self, info: KindInfo, namespace: str | None
    ) -> tuple[Callable[..., Any], tuple[Any, ...]]:
        if info.api == "custom":
            if namespace is not None:
                return self._custom.list_namespaced_custom_object, (
                    info.group,
                    info.version,
                    namespace,
                    info.plural,
                )
            return self._custom.list_cluster_custom_object, (
                info.group,
                info.version,
                info.plural,
            )
        api = self._typed(info)
        if not info.namespaced:
            return getattr(api, f"list_{info.snake}"), ()
        if namespace is not None:
            return getattr(api, f"list_namespaced_{info.snake}"), (namespace,)
        return getattr(api, f"list_{info.snake}_for_all_namespaces"), ()

    def _create_owned(self, manifest: Manifest, job_id: int) -> tuple[bool, ObjectRef]:
        info = KINDS[manifest["apiVersion"], manifest["kind"]]
        metadata = manifest["metadata"]
        namespace = metadata.get("namespace")
        ref = ObjectRef(info.api_version, info.kind, namespace, metadata["name"])
        try:
            self.create(info, namespace, manifest)
        except BackendError as exc:
            if exc.status != 409:
                raise
        else:
            return True, ref
        existing = self.read(info, namespace, metadata["name"])
        if not _is_ours(existing, job_id):
            raise ConflictError(
                f"{info.kind} {namespace}/{metadata['name']} exists and is not job {job_id}'s",
                status=409,
            )
        if (existing.get("metadata") or {}).get("deletionTimestamp"):
            # Ours, but on its way out: success now would lose the job when it disappears.
            raise TransientError(
                f"{info.kind} {namespace}/{metadata['name']} is being deleted; retry",
                status=409,
            )
        return False, ref

    def _ensure(self, manifest: Manifest) -> bool:
        """Create, or bring our existing object to the desired state. True if created."""
        info = KINDS[manifest["apiVersion"], manifest["kind"]]
        metadata = manifest["metadata"]
        namespace = metadata.get("namespace")
        try:
            self.create(info, namespace, manifest)
        except BackendError as exc:
            if exc.status != 409:
                raise
        else:
            return True
        existing = self.read(info, namespace, metadata["name"])
        if not _is_ours(existing):
            raise ConflictError(
                f"{info.kind} {metadata['name']} exists and is not managed by zhisuan",
                status=409,
            )
        patch = desired_patch(existing, manifest)
        if patch:
            self.patch(info, namespace, metadata["name"], patch)
        return False

    # -- workloads ----------------------------------------------------------------------------

    def apply(self, spec: WorkloadSpec) -> ApplyResult:
        if spec.kind == "inference":
            nodes = {node for group in spec.replica_groups for node in group.node_names}
            if nodes:
                # Before the Deployment exists, so its first pods find the labelled nodes. Only
                # adds: a repeated apply must not take back nodes a later ``scale`` granted.
                self._serve_nodes(spec.job_id, nodes, remove=False)
        refs: list[ObjectRef] = []
        created_any = False
        for manifest in render_workload(spec, self._options):
            created, ref = self._create_owned(manifest, spec.job_id)
            created_any = created_any or created
            refs.append(ref)
        return ApplyResult(job_id=spec.job_id, created=created_any, objects=tuple(refs))

    def delete(self, job_id: int, tenant: str, kind: WorkloadKind) -> bool:
        namespace = namespace_for(tenant)
        name = workload_name(job_id, kind)
        targets: list[tuple[KindInfo, str]]
        if kind == "training":
            targets = [(VOLCANO_JOB, name)]
        elif kind == "notebook":
            targets = [(STATEFULSET, name), (SERVICE, name), (SECRET, f"{name}-token")]
        else:
            targets = [(DEPLOYMENT, name), (SERVICE, name)]
        deleted = False
        for info, object_name in targets:
            deleted = self.remove(info, namespace, object_name) or deleted
        if kind == "inference":
            # After the objects: a failed delete is retried with the pods still placeable.
            self._serve_nodes(job_id, ())
        return deleted

    def delete_notebook_home(self, home_job_id: int, tenant: str) -> bool:
        # Background: nothing of ours waits on it, and a pod still mounting the claim (a
        # notebook being torn down) holds it through the claim's protection finalizer anyway.
        return self.remove(
            CLAIM, namespace_for(tenant), notebook_home_claim(home_job_id), propagation="Background"
        )

    def list_status(self, namespace: str | None = None) -> tuple[list[WorkloadStatus], str]:
        statuses: list[WorkloadStatus] = []
        versions: dict[str, str] = {}
        for key, kind, info in STATUS_KINDS:
            fn, args = self._list_fn(info, namespace)
            items, version = self._list_pages(
                f"list {info.kind}", fn, *args, label_selector=MANAGED_SELECTOR
            )
            versions[key] = version
            for item in items:
                status = status_from_object(kind, item)
                if status is not None:
                    statuses.append(status)
        statuses.sort(key=lambda status: (status.namespace, status.job_id, status.kind))
        return statuses, encode_cursor(versions)

    def watch(
        self, resource_version: str, timeout_s: float, namespace: str | None = None
    ) -> KubernetesWatchStream:
        if timeout_s <= 0:
            raise ValueError("timeout_s must be positive")
        versions = decode_cursor(resource_version)
        sources = []
        for key, kind, info in STATUS_KINDS:
            fn, args = self._list_fn(info, namespace)
            sources.append(_StreamSource(key=key, kind=kind, fn=fn, args=args))
        return KubernetesWatchStream(sources, versions, timeout_s, self._timeout[0])

    def scale(
        self,
        job_id: int,
        tenant: str,
        replicas: int,
        node_names: Sequence[str] | None = None,
    ) -> None:
        """Patch the inference Deployment's ``scale`` subresource: only ``spec.replicas``
        changes, so the pod template (and with it a rollout) is never touched.

        With ``node_names`` (every node the service may now run on), the service's node label
        follows: new nodes are labelled before the count changes, so added pods can be placed;
        pods on nodes that leave the set get a low deletion cost, so a scale-down removes
        exactly those; the label leaves those nodes after the count changed. Each step is
        idempotent, so a retry after any failure converges."""
        if replicas < 0:
            raise ValueError("replicas must be >= 0")
        namespace = namespace_for(tenant)
        name = workload_name(job_id, "inference")
        leaving: set[str] = set()
        if node_names is not None:
            leaving = self._serve_nodes(job_id, node_names, remove=False)
            if leaving:
                self._mark_leaving_pods(job_id, namespace, leaving)
        self._call(
            f"scale Deployment {namespace}/{name} to {replicas}",
            self._apps.patch_namespaced_deployment_scale,
            name,
            namespace,
            {"spec": {"replicas": replicas}},
            _content_type=MERGE_PATCH,
            field_manager=FIELD_MANAGER,
        )
        if leaving:
            self._unlabel_nodes(job_id, leaving)

    def update_template(self, spec: WorkloadSpec) -> bool:
        """Merge-patch the inference Deployment's pod template, rollout strategy and progress
        deadline to what ``render_inference`` makes of ``spec``, only where they differ; the
        Deployment then rolls its pods itself (within maxSurge/maxUnavailable). ``replicas`` is
        not part of the patch: the scale stays whatever ``scale`` last set.

        The comparison is with what the server stores, which includes fields it defaulted in
        the container list (a list is compared and replaced whole), so against a real API
        server an unchanged spec may still send a patch; it changes nothing there, and no pod
        rolls, because the server defaults the same fields again."""
        if spec.kind != "inference" or spec.inference is None:
            raise ValueError("update_template needs an inference spec")
        manifests = render_inference(spec, self._options)
        [deployment] = [m for m in manifests if m["kind"] == "Deployment"]
        namespace, name = spec.namespace, spec.object_name
        existing = self.read(DEPLOYMENT, namespace, name)
        if not _is_ours(existing, spec.job_id):
            raise ConflictError(
                f"Deployment {namespace}/{name} exists and is not job {spec.job_id}'s", status=409
            )
        if (existing.get("metadata") or {}).get("deletionTimestamp"):
            raise NotFoundError(f"Deployment {namespace}/{name} is being deleted", status=404)
        wanted = {key: copy.deepcopy(deployment["spec"][key]) for key in TEMPLATE_FIELDS}
        _drop_stale_keys((existing.get("spec") or {}).get("template") or {}, wanted["template"])
        patch = desired_patch(existing, {"spec": wanted})
        if not patch:
            return False
        self.patch(DEPLOYMENT, namespace, name, patch)
        return True

    def service_pods(self, job_id: int, tenant: str) -> dict[str, int]:
        namespace = namespace_for(tenant)
        pods, _ = self._list_pages(
            f"list pods of service {job_id}",
            self._core.list_namespaced_pod,
            namespace,
            label_selector=f"{LABEL_JOB_ID}={job_id}",
        )
        counts: dict[str, int] = {}
        for pod in pods:
            metadata = pod.get("metadata") or {}
            if (metadata.get("labels") or {}).get(LABEL_JOB_ID) != str(job_id):
                continue  # a server that ignores label selectors must not count other jobs
            node = (pod.get("spec") or {}).get("nodeName")
            if metadata.get("deletionTimestamp") or not isinstance(node, str) or not node:
                continue  # on its way out, or not placed yet
            if (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
                continue  # ended (an evicted pod stays listed): it holds nothing on the node
            counts[node] = counts.get(node, 0) + 1
        return dict(sorted(counts.items()))

    def _serve_labelled(self, job_id: int) -> set[str]:
        """Names of the nodes that carry the service's label."""
        key = serve_label(job_id)
        nodes, _ = self._list_pages(
            f"list nodes of service {job_id}", self._core.list_node, label_selector=key
        )
        # Filtered here too: a server that ignores label selectors must not make us unlabel
        # (or count) nodes that never served this job.
        return {
            str((node.get("metadata") or {}).get("name") or "")
            for node in nodes
            if key in ((node.get("metadata") or {}).get("labels") or {})
        } - {""}

    def _serve_nodes(
        self, job_id: int, node_names: Collection[str], *, remove: bool = True
    ) -> set[str]:
        """Make the service's label mark exactly ``node_names``: label the nodes that lack it,
        then (``remove``) unlabel the others. Returns the labelled nodes outside the set
        (already unlabelled when ``remove``)."""
        key = serve_label(job_id)
        wanted = set(node_names)
        labelled = self._serve_labelled(job_id)
        for node in sorted(wanted - labelled):
            self._call(
                f"label node {node} for service {job_id}",
                self._core.patch_node,
                node,
                {"metadata": {"labels": {key: "true"}}},
                _content_type=MERGE_PATCH,
                field_manager=FIELD_MANAGER,
            )
        leaving = labelled - wanted
        if remove and leaving:
            self._unlabel_nodes(job_id, leaving)
        return leaving

    def _unlabel_nodes(self, job_id: int, nodes: Collection[str]) -> None:
        key = serve_label(job_id)
        for node in sorted(nodes):
            try:
                self._call(
                    f"unlabel node {node} for service {job_id}",
                    self._core.patch_node,
                    node,
                    {"metadata": {"labels": {key: None}}},
                    _content_type=MERGE_PATCH,
                    field_manager=FIELD_MANAGER,
                )
            except NotFoundError:
                continue  # the node is gone, and its label with it

    def _mark_leaving_pods(self, job_id: int, namespace: str, leaving: Collection[str]) -> None:
        """Give the service's pods on ``leaving`` nodes a low deletion cost. Harmless when the
        count does not drop: the cost only decides which pods a scale-down removes."""
        pods, _ = self._list_pages(
            f"list pods of service {job_id}",
            self._core.list_namespaced_pod,
            namespace,
            label_selector=f"{LABEL_JOB_ID}={job_id}",
        )
        for pod in pods:
            metadata = pod.get("metadata") or {}
            name = str(metadata.get("name") or "")
            if (metadata.get("labels") or {}).get(LABEL_JOB_ID) != str(job_id):
                continue  # a server that ignores label selectors must not touch other jobs
            if not name or (pod.get("spec") or {}).get("nodeName") not in leaving:
                continue
            annotations = metadata.get("annotations") or {}
            if metadata.get("deletionTimestamp") or (
                annotations.get(ANNOTATION_DELETION_COST) == LEAVING_POD_COST
            ):
                continue  # on its way out already, or marked by an earlier try
            try:
                self._call(
                    f"mark pod {namespace}/{name} for removal",
                    self._core.patch_namespaced_pod,
                    name,
                    namespace,
                    {"metadata": {"annotations": {ANNOTATION_DELETION_COST: LEAVING_POD_COST}}},
                    _content_type=MERGE_PATCH,
                    field_manager=FIELD_MANAGER,
                )
            except NotFoundError:
                continue  # gone between the list and the patch

    # -- nodes --------------------------------------------------------------------------------

    def cordon(self, node: str, reason: str) -> None:
        body = {
            "spec": {"unschedulable": True},
            "metadata": {"annotations": {ANNOTATION_CORDON_REASON: reason}},
        }
        self._call(
            f"cordon node {node}",
            self._core.patch_node,
            node,
            body,
            _content_type=MERGE_PATCH,
            field_manager=FIELD_MANAGER,
        )

    def uncordon(self, node: str) -> None:
        body = {
            "spec": {"unschedulable": False},
            "metadata": {"annotations": {ANNOTATION_CORDON_REASON: None}},
        }
        self._call(
            f"uncordon node {node}",
            self._core.patch_node,
            node,
            body,
            _content_type=MERGE_PATCH,
            field_manager=FIELD_MANAGER,
        )

    def drain(self, node: str) -> DrainResult:
        pods, _ = self._list_pages(
            f"list pods on {node}",
            self._core.list_pod_for_all_namespaces,
            field_selector=f"spec.nodeName={node}",
        )
        evicted: list[str] = []
        skipped: list[str] = []
        blocked: list[str] = []
        for pod in pods:
            metadata = pod.get("metadata") or {}
            if (pod.get("spec") or {}).get("nodeName") != node:
                continue  # a server that ignores field selectors must not make us evict others
            namespace, name = metadata.get("namespace", ""), metadata.get("name", "")
            key = f"{namespace}/{name}"
            owners = metadata.get("ownerReferences") or []
            annotations = metadata.get("annotations") or {}
            phase = (pod.get("status") or {}).get("phase")
            if (
                any(owner.get("kind") == "DaemonSet" for owner in owners)
                or "kubernetes.io/config.mirror" in annotations
                or phase in ("Succeeded", "Failed")
            ):
                skipped.append(key)
                continue
            if metadata.get("deletionTimestamp"):
                evicted.append(key)
                continue
            eviction = {
                "apiVersion": "policy/v1",
                "kind": "Eviction",
                "metadata": {"name": name, "namespace": namespace},
            }
            try:
                self._call(
                    f"evict pod {key}",
                    self._core.create_namespaced_pod_eviction,
                    name,
                    namespace,
                    eviction,
                )
            except NotFoundError:
                evicted.append(key)  # already gone
            except TransientError as exc:
                if exc.status != 429:
                    raise
                blocked.append(key)  # a PodDisruptionBudget says not now
            else:
                evicted.append(key)
        return DrainResult(
            node=node, evicted=tuple(evicted), skipped=tuple(skipped), blocked=tuple(blocked)
        )

    def list_nodes(self) -> list[NodeInventory]:
        nodes, _ = self._list_pages("list nodes", self._core.list_node)
        inventory: list[NodeInventory] = []
        for node in nodes:
            metadata = node.get("metadata") or {}
            status = node.get("status") or {}
            ready = any(
                condition.get("type") == "Ready" and condition.get("status") == "True"
                for condition in status.get("conditions") or []
            )
            inventory.append(
                NodeInventory(
                    name=str(metadata.get("name", "")),
                    labels=dict(metadata.get("labels") or {}),
                    capacity={k: str(v) for k, v in (status.get("capacity") or {}).items()},
                    allocatable={k: str(v) for k, v in (status.get("allocatable") or {}).items()},
                    unschedulable=bool((node.get("spec") or {}).get("unschedulable")),
                    ready=ready,
                    cordon_reason=(metadata.get("annotations") or {}).get(ANNOTATION_CORDON_REASON),
                )
            )
        inventory.sort(key=lambda item: item.name)
        return inventory

    # -- cluster readiness --------------------------------------------------------------------

    def missing_priority_classes(self) -> list[str]:
        """PriorityClasses of platform/k8s that are absent or differ (value, preemption policy).

        Read-only: installing them is an operator's step (``kubectl apply -f platform/k8s``),
        not a grant of the platform's service account. Empty means the cluster is ready."""
        problems: list[str] = []
        for wanted in render_priority_classes():
            name = wanted["metadata"]["name"]
            try:
                found = self._as_dict(
                    self._call(
                        f"get PriorityClass {name}", self._scheduling.read_priority_class, name
                    )
                )
            except NotFoundError:
                problems.append(name)
                continue
            if (found.get("value"), found.get("preemptionPolicy")) != (
                wanted["value"],
                wanted["preemptionPolicy"],
            ):
                problems.append(name)
        return problems

    # -- tenants, queues, topology ------------------------------------------------------------

    def ensure_tenant(
        self, tenant: str, quota: Quantities, *, allow_ipc_lock: bool = False
    ) -> None:
        for manifest in render_tenant(
            tenant, quota, allow_ipc_lock=allow_ipc_lock, options=self._options
        ):
            self._ensure(manifest)

    def ensure_queue(
        self,
        name: str,
        guarantee: Quantities,
        capability: Quantities,
        *,
        deserved: Quantities | None = None,
        reclaimable: bool = True,
        weight: int = 1,
    ) -> None:
        self._ensure(
            render_queue(
                name,
                guarantee,
                capability,
                deserved=deserved,
                reclaimable=reclaimable,
                weight=weight,
            )
        )

    def ensure_topology(self, topology: NetworkTopology) -> None:
        manifests = render_hypernodes(topology)
        for manifest in manifests:
            self._ensure(manifest)
        wanted = {manifest["metadata"]["name"] for manifest in manifests}
        fn, args = self._list_fn(HYPERNODE, None)
        existing, _ = self._list_pages(
            "list HyperNodes", fn, *args, label_selector=MANAGED_SELECTOR
        )
        # Remove what the model no longer has, parents before the leaves they refer to.
        stale = [
            item for item in existing if _is_ours(item) and item["metadata"]["name"] not in wanted
        ]
        stale.sort(key=lambda item: -int((item.get("spec") or {}).get("tier") or 0))
        for item in stale:
            self.remove(HYPERNODE, None, item["metadata"]["name"], propagation="Background")

    def notebook_endpoint(self, spec: WorkloadSpec) -> NotebookEndpoint:
        """The notebook's Service by its cluster DNS name; no API call (the web process that
        proxies never talks to the Kubernetes API). JupyterLab serves under the proxy prefix
        (``--ServerApp.base_url``), so the upstream URL keeps it; code-server has no such
        setting and uses relative links, so the proxy strips the prefix for it."""
        if spec.kind != "notebook" or spec.notebook is None:
            raise NotFoundError(f"job {spec.job_id} is not a notebook", status=404)
        flavor = spec.notebook.flavor
        port = self._options.notebook_images[flavor].port
        host = f"{spec.object_name}.{spec.namespace}.svc"
        path = notebook_base_path(spec, self._options) if flavor == "jupyter" else "/"
        return NotebookEndpoint(
            base_url=f"http://{host}:{port}{path}", token=spec.notebook.token, flavor=flavor
        )

    # -- logs -----------------------------------------------------------------------------

    def read_logs(
        self, job_id: int, tenant: str, kind: WorkloadKind, *, since: float | None, limit: int
    ) -> list[LogLine]:
        """The pods' container logs (the first container of each pod) with the kubelet's
        timestamps, merged oldest first."""
        namespace = namespace_for(tenant)
        pods, _ = self._list_pages(
            f"list pods of job {job_id}",
            self._core.list_namespaced_pod,
            namespace,
            label_selector=f"{LABEL_JOB_ID}={job_id}",
        )
        lines: list[LogLine] = []
        for pod in pods:
            metadata = pod.get("metadata") or {}
            name = str(metadata.get("name") or "")
            if (metadata.get("labels") or {}).get(LABEL_JOB_ID) != str(job_id):
                continue  # a server that ignores label selectors must not mix jobs' output
            containers = (pod.get("spec") or {}).get("containers") or [{}]
            if (pod.get("status") or {}).get("phase") == "Pending" or not name:
                continue  # nothing written yet (and the kubelet would answer 400)
            options: dict[str, Any] = {"timestamps": True, "tail_lines": limit}
            if containers[0].get("name"):
                options["container"] = containers[0]["name"]
            if since is not None:  # whole seconds: re-read the boundary and filter below
                options["since_seconds"] = max(1, math.ceil(time.time() - since) + 1)
            try:
                body = self._fetch(
                    f"read log of pod {namespace}/{name}",
                    self._core.read_namespaced_pod_log,
                    name,
                    namespace,
                    **options,
                )
            except NotFoundError:
                continue  # the pod went away between the list and the read
            lines.extend(parse_log_lines(body.decode("utf-8", "replace"), name, since))
        lines.sort(key=lambda line: line.ts)
        return lines[-limit:] if limit > 0 else []


def parse_log_lines(text: str, replica: str, since: float | None) -> list[LogLine]:
    """Lines of ``kubectl logs --timestamps`` output (RFC 3339 time, a space, the text)."""
    lines: list[LogLine] = []
    for raw in text.splitlines():
        stamp, _, rest = raw.partition(" ")
        try:
            ts = datetime.fromisoformat(_trim_nanos(stamp)).timestamp()
        except ValueError:
            continue  # not a timestamped line (a kubelet notice): skip rather than misdate
        if since is None or ts > since:
            lines.append(LogLine(ts, replica, rest))
    return lines


def _trim_nanos(stamp: str) -> str:
    """RFC 3339 with nanoseconds -> what ``fromisoformat`` reads (microseconds)."""
    head, dot, frac = stamp.partition(".")
    if not dot:
        return stamp
    digits = "".join(itertools.takewhile(str.isdigit, frac))
    return f"{head}.{digits[:6].ljust(6, '0')}{frac[len(digits) :]}"
