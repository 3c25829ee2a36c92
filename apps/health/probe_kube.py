"""Slow-node probes on Kubernetes: one nccl-tests run per node pair, all pairs of a round at once.

Design (MPI Operator style, the unchanged nccl-tests binaries over ``mpirun``):

* Per probe run, once: a Secret with a fresh SSH key pair (``zs-probe-<run>-ssh``) and a
  headless Service ``zs-probe-<run>`` (``publishNotReadyAddresses``) that gives each worker
  pod a DNS name through its ``hostname``/``subdomain``.
* Per pair ``(a, b)`` of a round: a *worker* pod pinned to ``b`` runs ``sshd`` as the
  unprivileged probe user; a *launcher* pod pinned to ``a`` waits until it can ssh into the
  worker, then runs ``mpirun -np 2`` with one rank on each node and the nccl-tests binary
  (``sendrecv_perf`` by default) over RDMA. Both pods are created at once; no pod waits for
  the other to be scheduled first. ``nodeName`` bypasses the scheduler, so cordoned suspects
  are probed too.
* The runner polls the round's pods (one list call per poll) until every launcher has ended
  or the round's deadline passes. A launcher that succeeded has its log read and "Avg bus
  bandwidth" parsed; a failed, hanging or unreadable pair is left out of the result (a failed
  probe, not a stuck round). The round's pods are always deleted, and the runner waits for
  them to be gone, because the next round pins pods to the same nodes' GPUs.
* ``close()`` deletes whatever is left with the run's label, the Service and the Secret.

The pods satisfy Pod Security "restricted" except for the IPC_LOCK capability RDMA needs to
pin memory. They run in ``zhisuan-nodes`` (``platform/agent/namespace.yaml``), which holds the
node-level pieces (the agent DaemonSet too) and is enforced at "privileged" with audit and
warn at "restricted", the same exception tenants get for RDMA jobs.
"""

from __future__ import annotations

import base64
import json
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from kubernetes import client as k8s

from apps.clusters.backends.base import BackendError, NotFoundError
from apps.clusters.backends.kubernetes.backend import translate_error
from apps.clusters.backends.spec import LABEL_MANAGED_BY, MANAGED_BY_VALUE
from apps.health.probe_output import parse_bus_bandwidth
from apps.health.slownode import Pair

log = logging.getLogger(__name__)

Manifest = dict[str, Any]

LABEL_RUN = "zhisuan.io/probe-run"
LABEL_ROUND = "zhisuan.io/probe-round"
LABEL_PAIR = "zhisuan.io/probe-pair"
LABEL_ROLE = "zhisuan.io/probe-role"
ANNOTATION_NODES = "zhisuan.io/probe-nodes"
SSH_PORT = 2222
SSH_DIR = "/etc/zhisuan-probe-ssh"
_TERMINAL = frozenset({"Succeeded", "Failed"})


@dataclass(frozen=True)
class ProbeConfig:
    """What every probe pod looks like; an operator sets these (``HEALTH_PROBE_*``)."""

    namespace: str = "zhisuan-nodes"  # platform/agent/namespace.yaml
    image: str = "registry.example.com/zhisuan/nccl-tests:2.13"
    test: str = "sendrecv_perf"  # or all_reduce_perf
    size: str = "1G"
    iterations: int = 20
    gpus: int = 8
    rdma_nics: int = 4
    gpu_resource: str = "nvidia.com/gpu"
    rdma_resource: str = "rdma/hca"
    rdma_networks: tuple[str, ...] = tuple(f"zhisuan-system/rdma-net-{i}" for i in range(8))
    nccl_ib_hca: str = "mlx5"
    nccl_socket_ifname: str = "eth0"
    run_as_user: int = 1000
    deadline_s: float = 180.0  # per round, from the creation of its pods
    cleanup_s: float = 60.0  # how long to wait for a round's pods to be gone
    poll_s: float = 3.0
    request_timeout: tuple[float, float] = (5.0, 30.0)


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def ssh_keypair() -> tuple[bytes, bytes]:
    """A fresh ed25519 key pair (OpenSSH private key, public key line) for one probe run."""
    key = Ed25519PrivateKey.generate()
    private = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.OpenSSH,
        serialization.NoEncryption(),
    )
    public = key.public_key().public_bytes(
        serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH
    )
    return private, public + b" zhisuan-probe\n"


def run_name(run_id: int) -> str:
    return f"zs-probe-{run_id}"


def _labels(run_id: int, **extra: str) -> dict[str, str]:
    return {
        "app.kubernetes.io/name": "zhisuan-probe",
        LABEL_MANAGED_BY: MANAGED_BY_VALUE,
        LABEL_RUN: str(run_id),
        **extra,
    }


def render_ssh_secret(run_id: int, config: ProbeConfig, keypair: tuple[bytes, bytes]) -> Manifest:
    private, public = keypair
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {
            "name": f"{run_name(run_id)}-ssh",
            "namespace": config.namespace,
            "labels": _labels(run_id),
        },
        "type": "Opaque",
        "data": {"id_ed25519": _b64(private), "authorized_keys": _b64(public)},
    }


def render_service(run_id: int, config: ProbeConfig) -> Manifest:
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {
            "name": run_name(run_id),
            "namespace": config.namespace,
            "labels": _labels(run_id),
        },
        "spec": {
            "clusterIP": "None",
            "publishNotReadyAddresses": True,  # DNS as soon as the worker has an IP
            "selector": {LABEL_RUN: str(run_id), LABEL_ROLE: "worker"},
            "ports": [{"name": "ssh", "port": SSH_PORT, "targetPort": SSH_PORT}],
        },
    }


_SSH_OPTS = (
    f"-p {SSH_PORT} -i {SSH_DIR}/id_ed25519 -o StrictHostKeyChecking=no "
    "-o UserKnownHostsFile=/dev/null -o BatchMode=yes -o LogLevel=ERROR"
)

_WORKER_SCRIPT = (
    "set -eu; mkdir -p /tmp/sshd; "
    "ssh-keygen -q -t ed25519 -N '' -f /tmp/sshd/host_key; "
    f"exec /usr/sbin/sshd -D -e -p {SSH_PORT} -h /tmp/sshd/host_key "
    "-o PidFile=/tmp/sshd/sshd.pid -o StrictModes=no -o UsePAM=no "
    f"-o PasswordAuthentication=no -o AuthorizedKeysFile={SSH_DIR}/authorized_keys"
)


def _launcher_script(config: ProbeConfig) -> str:
    binary = f"/opt/nccl-tests/build/{config.test}"
    return (
        "set -eu; "
        # The worker's DNS name appears when its pod has an IP; sshd starts a moment later.
        f'until ssh {_SSH_OPTS} -o ConnectTimeout=2 "$ZS_PROBE_PEER" true; do sleep 1; done; '
        "exec mpirun -np 2 --bind-to none "
        '-H "localhost:1,$ZS_PROBE_PEER:1" '
        f'--mca plm_rsh_args "{_SSH_OPTS}" '
        "-x NCCL_IB_HCA -x NCCL_SOCKET_IFNAME -x NCCL_DEBUG -x LD_LIBRARY_PATH -x PATH "
        f"{binary} -b {config.size} -e {config.size} -g {config.gpus} "
        f"-n {config.iterations} -w 5 -c 1"
    )


def render_probe_pods(
    run_id: int, round_no: int, index: int, pair: Pair, config: ProbeConfig
) -> tuple[Manifest, Manifest]:
    """The (worker, launcher) pods of one pair: the worker on ``pair[1]``, the launcher on
    ``pair[0]``; rank 0 (whose log holds the summary) runs in the launcher."""
    base = f"{run_name(run_id)}-r{round_no}-p{index}"
    hostname = f"w-r{round_no}-p{index}"
    peer = f"{hostname}.{run_name(run_id)}.{config.namespace}.svc"
    limits: dict[str, str] = {config.gpu_resource: str(config.gpus)}
    annotations = {ANNOTATION_NODES: f"{pair[0]},{pair[1]}"}
    if config.rdma_nics:
        limits[config.rdma_resource] = str(config.rdma_nics)
        networks = config.rdma_networks[: config.rdma_nics]
        if networks:
            annotations["k8s.v1.cni.cncf.io/networks"] = ",".join(networks)

    def pod(role: str, node: str, script: str, extra_env: Sequence[Manifest]) -> Manifest:
        spec: Manifest = {
            "restartPolicy": "Never",
            "nodeName": node,  # bypasses the scheduler: cordoned suspects are probed too
            "tolerations": [{"operator": "Exists"}],
            "activeDeadlineSeconds": int(config.deadline_s) + 60,  # in case we are gone
            "terminationGracePeriodSeconds": 5,
            "automountServiceAccountToken": False,
            "enableServiceLinks": False,
            "securityContext": {
                "runAsNonRoot": True,
                "runAsUser": config.run_as_user,
                "runAsGroup": config.run_as_user,
                "fsGroup": config.run_as_user,
                "seccompProfile": {"type": "RuntimeDefault"},
            },
            "containers": [
                {
                    "name": "probe",
                    "image": config.image,
                    "command": ["/bin/sh", "-c"],
                    "args": [script],
                    "env": [
                        {"name": "HOME", "value": "/tmp"},  # noqa: S108 - in the container
                        {"name": "NCCL_IB_HCA", "value": config.nccl_ib_hca},
                        {"name": "NCCL_SOCKET_IFNAME", "value": config.nccl_socket_ifname},
                        {"name": "NCCL_DEBUG", "value": "WARN"},
                        *extra_env,
                    ],
                    "ports": [{"name": "ssh", "containerPort": SSH_PORT}],
                    "resources": {"requests": dict(limits), "limits": dict(limits)},
                    "securityContext": {
                        "allowPrivilegeEscalation": False,
                        "runAsNonRoot": True,
                        "seccompProfile": {"type": "RuntimeDefault"},
                        # RDMA pins memory: the one exception to "restricted".
                        "capabilities": {"drop": ["ALL"], "add": ["IPC_LOCK"]},
                    },
                    "volumeMounts": [
                        {"name": "ssh", "mountPath": SSH_DIR, "readOnly": True},
                        {"name": "shm", "mountPath": "/dev/shm"},  # noqa: S108 - NCCL shm
                    ],
                }
            ],
            "volumes": [
                {
                    "name": "ssh",
                    "secret": {"secretName": f"{run_name(run_id)}-ssh", "defaultMode": 0o440},
                },
                {"name": "shm", "emptyDir": {"medium": "Memory", "sizeLimit": "8Gi"}},
            ],
        }
        if role == "worker":
            spec["hostname"] = hostname
            spec["subdomain"] = run_name(run_id)
        return {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": f"{base}-{role}",
                "namespace": config.namespace,
                "labels": _labels(
                    run_id, **{LABEL_ROUND: str(round_no), LABEL_PAIR: str(index), LABEL_ROLE: role}
                ),
                "annotations": dict(annotations),
            },
            "spec": spec,
        }

    worker = pod("worker", pair[1], _WORKER_SCRIPT, [])
    launcher = pod(
        "launcher", pair[0], _launcher_script(config), [{"name": "ZS_PROBE_PEER", "value": peer}]
    )
    return worker, launcher


@dataclass
class KubernetesProbeRunner:
    """``slownode.ProbeRunner`` over the Kubernetes API (official client, given an ApiClient)."""

    api_client: Any
    run_id: int
    config: ProbeConfig = field(default_factory=ProbeConfig)
    clock: Callable[[], float] = time.monotonic
    sleep: Callable[[float], None] = time.sleep

    def __post_init__(self) -> None:
        self._core = k8s.CoreV1Api(self.api_client)
        self._round = 0
        self._prepared = False
        self.failures: list[str] = []  # why pairs were left out, for the run's record

    # -- calls ------------------------------------------------------------------------------

    def _call(self, what: str, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        kwargs.setdefault("_request_timeout", self.config.request_timeout)
        try:
            return fn(*args, **kwargs)
        except Exception as exc:
            raise translate_error(exc, what) from exc

    def _create(self, kind: str, body: Manifest) -> None:
        name = body["metadata"]["name"]
        fn = getattr(self._core, f"create_namespaced_{kind}")
        self._call(
            f"create {kind} {self.config.namespace}/{name}",
            fn,
            self.config.namespace,
            body,
            field_validation="Strict",
            field_manager="zhisuan",
        )

    def _delete(self, kind: str, name: str, grace: int | None = None) -> bool:
        """Delete one object; False when it was already gone."""
        fn = getattr(self._core, f"delete_namespaced_{kind}")
        extra = {} if grace is None else {"grace_period_seconds": grace}
        try:
            self._call(f"delete {kind} {name}", fn, name, self.config.namespace, **extra)
        except NotFoundError:
            return False
        return True

    def _list_pods(self, **labels: str) -> list[Manifest]:
        selector = ",".join(f"{k}={v}" for k, v in {LABEL_RUN: str(self.run_id), **labels}.items())
        answer = self._call(
            f"list probe pods of run {self.run_id}",
            self._core.list_namespaced_pod,
            self.config.namespace,
            label_selector=selector,
            _preload_content=False,
        )
        try:
            items: list[Manifest] = json.loads(answer.data or b"{}").get("items") or []
        finally:
            answer.release_conn()
        # Filter here too: the label selector is a request, and another run must never mix in.
        return [
            pod
            for pod in items
            if all(
                ((pod.get("metadata") or {}).get("labels") or {}).get(k) == v
                for k, v in {LABEL_RUN: str(self.run_id), **labels}.items()
            )
        ]

    def _read_log(self, name: str) -> str:
        answer = self._call(
            f"read log of {name}",
            self._core.read_namespaced_pod_log,
            name,
            self.config.namespace,
            container="probe",
            _preload_content=False,
        )
        try:
            return bytes(answer.data or b"").decode("utf-8", "replace")
        finally:
            answer.release_conn()

    # -- a run ------------------------------------------------------------------------------

    def _prepare(self) -> None:
        """The run's SSH Secret and headless Service (once; a leftover of a retried task is
        replaced, because its key pair is not ours to know)."""
        if self._prepared:
            return
        for kind, body in (
            ("secret", render_ssh_secret(self.run_id, self.config, ssh_keypair())),
            ("service", render_service(self.run_id, self.config)),
        ):
            try:
                self._create(kind, body)
            except BackendError as exc:
                if exc.status != 409:
                    raise
                self._delete(kind, body["metadata"]["name"], grace=0)
                self._create(kind, body)
        self._prepared = True

    def _create_pod(self, body: Manifest) -> bool:
        """Create one probe pod; a leftover of the same name (a retried task) is removed and
        the create tried once more. False when the pod could not be created."""
        name = body["metadata"]["name"]
        for attempt in (1, 2):
            try:
                self._create("pod", body)
                return True
            except BackendError as exc:
                if exc.status == 409 and attempt == 1:
                    try:
                        self._delete("pod", name, grace=0)
                    except BackendError as delete_exc:
                        self.failures.append(f"{name}: {delete_exc}")
                        return False
                    continue
                self.failures.append(f"{name}: {exc}")
                return False
        return False

    def run_round(self, pairs: Sequence[Pair]) -> dict[Pair, float]:
        self._prepare()
        self._round += 1
        round_no = self._round
        launchers: dict[str, Pair] = {}
        created: list[str] = []
        results: dict[Pair, float] = {}
        try:
            for index, pair in enumerate(pairs):
                worker, launcher = render_probe_pods(
                    self.run_id, round_no, index, pair, self.config
                )
                ok = True
                for body in (worker, launcher):
                    if not ok:
                        break
                    # Removed at the end even when the create failed: after a 5xx or a
                    # timeout the server may still have made the pod.
                    created.append(body["metadata"]["name"])
                    ok = self._create_pod(body)
                if ok:
                    launchers[launcher["metadata"]["name"]] = pair
            phases = self._await_launchers(round_no, set(launchers))
            for name, pair in launchers.items():
                phase = phases.get(name)
                if phase != "Succeeded":
                    self.failures.append(f"{name}: {phase or 'missing'} at the deadline")
                    continue
                try:
                    value = parse_bus_bandwidth(self._read_log(name))
                except BackendError as exc:
                    self.failures.append(f"{name}: {exc}")
                    continue
                if value is None:
                    self.failures.append(f"{name}: no valid 'Avg bus bandwidth' in the log")
                else:
                    results[pair] = value
        finally:
            self._remove_round(round_no, created)
        return results

    def _await_launchers(self, round_no: int, names: set[str]) -> dict[str, str]:
        """Each launcher's last seen phase, once all have ended or the deadline passed."""
        phases: dict[str, str] = {}
        if not names:
            return phases
        deadline = self.clock() + self.config.deadline_s
        while True:
            try:
                pods = self._list_pods(**{LABEL_ROUND: str(round_no), LABEL_ROLE: "launcher"})
            except BackendError as exc:  # a blip of the API server: look again next poll
                log.warning("probe run %s: %s", self.run_id, exc)
            else:
                for pod in pods:
                    name = pod["metadata"]["name"]
                    if name in names:
                        phases[name] = (pod.get("status") or {}).get("phase") or "Pending"
            if all(phases.get(n) in _TERMINAL for n in names) or self.clock() >= deadline:
                return phases
            self.sleep(self.config.poll_s)

    def _remove_round(self, round_no: int, created: list[str]) -> None:
        """Delete the round's pods and wait (bounded) until they are gone: the next round
        pins pods to the same GPUs, and the kubelet rejects a pod it cannot fit."""
        for name in created:
            try:
                self._delete("pod", name, grace=5)
            except BackendError as exc:
                log.warning("probe run %s: %s", self.run_id, exc)
        deadline = self.clock() + self.config.cleanup_s
        wanted = set(created)
        while wanted:
            try:
                left = {
                    p["metadata"]["name"] for p in self._list_pods(**{LABEL_ROUND: str(round_no)})
                }
            except BackendError as exc:
                log.warning("probe run %s: %s", self.run_id, exc)
                left = wanted
            wanted &= left
            if not wanted or self.clock() >= deadline:
                break
            self.sleep(self.config.poll_s)
        if wanted:
            self.failures.append(f"round {round_no}: pods still terminating: {sorted(wanted)}")

    def close(self) -> None:
        """Remove everything of this run: pods a failed delete left, the Service, the Secret."""
        try:
            leftovers = [p["metadata"]["name"] for p in self._list_pods()]
        except BackendError as exc:
            log.warning("probe run %s: %s", self.run_id, exc)
            leftovers = []
        for name in leftovers:
            self._quiet_delete("pod", name, grace=0)
        self._quiet_delete("service", run_name(self.run_id))
        self._quiet_delete("secret", f"{run_name(self.run_id)}-ssh")

    def _quiet_delete(self, kind: str, name: str, grace: int | None = None) -> None:
        try:
            self._delete(kind, name, grace=grace)
        except BackendError as exc:
            log.warning("probe run %s: %s", self.run_id, exc)

    def __enter__(self) -> KubernetesProbeRunner:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def config_from(settings: Mapping[str, Any], *, gpus: int, rdma_nics: int) -> ProbeConfig:
    """A ``ProbeConfig`` from ``HEALTH_PROBE_*`` values (missing ones keep their default)."""
    defaults = ProbeConfig()
    values: dict[str, Any] = {"gpus": gpus, "rdma_nics": rdma_nics}
    for name in ("namespace", "image", "test", "size", "deadline_s", "poll_s", "nccl_ib_hca"):
        key = f"HEALTH_PROBE_{name.upper()}"
        if key in settings:
            values[name] = type(getattr(defaults, name))(settings[key])
    return ProbeConfig(**values)
