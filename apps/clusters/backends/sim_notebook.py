"""A tiny HTTP server standing in for a notebook on the simulated cluster.

The simulated cluster runs no containers, but opening a notebook should still be a real HTTP hop
through the platform's proxy, with the same token check a Jupyter server does. So each running
simulated notebook gets one of these: a threaded ``http.server`` on 127.0.0.1 and a random port
that answers only requests carrying ``Authorization: token <token>`` and serves a page that says
plainly it is a simulation.
"""

from __future__ import annotations

import hmac
import html
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from .spec import WorkloadSpec

SIMULATED_TITLE = "Simulated notebook (Zhisuan simulated cluster)"


def _devices(spec: WorkloadSpec) -> str:
    group = spec.replica_groups[0]
    if group.accelerator_milli:
        return f"{group.accelerator_milli / 1000:g} of one {group.accelerator_resource}"
    if group.accelerators:
        return f"{group.accelerators} x {group.accelerator_resource}"
    return "none (CPU only)"


def _page(spec: WorkloadSpec) -> bytes:
    group = spec.replica_groups[0]
    flavor = spec.notebook.flavor if spec.notebook else "jupyter"
    rows = {
        "Job": f"{spec.name} (#{spec.job_id})",
        "Tenant": spec.tenant,
        "Flavor": flavor,
        "Image": group.image or f"default {flavor} image",
        "Devices": _devices(spec),
        "Nodes": ", ".join(group.node_names) or "not pinned",
    }
    if spec.notebook and spec.notebook.home_job_id:
        rows["Home volume"] = f"kept from notebook #{spec.notebook.home_job_id}"
    elif spec.notebook:
        rows["Home volume"] = f"new, {spec.notebook.storage_gib} GiB"
    cells = "".join(
        f"<tr><th>{html.escape(k)}</th><td>{html.escape(v)}</td></tr>" for k, v in rows.items()
    )
    return (
        "<!doctype html><html><head><meta charset='utf-8'>"
        f"<title>{SIMULATED_TITLE}</title></head><body>"
        f"<h1>{SIMULATED_TITLE}</h1>"
        "<p>This page is served by the simulated cluster built into Zhisuan. No container, "
        "kernel or accelerator is behind it; on a Kubernetes cluster the same link opens "
        "JupyterLab or code-server.</p>"
        f"<table>{cells}</table></body></html>"
    ).encode()


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def _authorized(self) -> bool:
        header = self.headers.get("Authorization", "")
        scheme, _, value = header.partition(" ")
        return scheme.lower() == "token" and hmac.compare_digest(
            value.strip().encode(), self.server.token.encode()
        )

    def _send(self, status: int, body: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def do_GET(self) -> None:  # the name http.server dispatches to
        if not self._authorized():
            self._send(403, b"token required\n", "text/plain; charset=utf-8")
            return
        spec = self.server.spec
        if self.path.split("?", 1)[0].rstrip("/") == "/api/status":
            body = json.dumps(
                {"simulated": True, "job_id": spec.job_id, "name": spec.name}
            ).encode()
            self._send(200, body, "application/json")
            return
        self._send(200, _page(spec), "text/html; charset=utf-8")

    do_HEAD = do_GET  # noqa: N815  # http.server's method name

    def log_message(self, format: str, *args: Any) -> None:  # base signature
        """Quiet: the platform's proxy logs the requests that matter."""


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, spec: WorkloadSpec, token: str) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.spec = spec
        self.token = token


class SimulatedNotebookServer:
    """One running simulated notebook: start it, read its URL, stop it."""

    def __init__(self, spec: WorkloadSpec) -> None:
        if spec.notebook is None:
            raise ValueError("a simulated notebook server needs a notebook spec")
        self.token = spec.notebook.token
        self._server = _Server(spec, self.token)
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.2},
            name=f"sim-notebook-{spec.job_id}",
            daemon=True,
        )
        self._thread.start()

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/"

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)
