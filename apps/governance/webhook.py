"""Tenant webhooks without server-side request forgery.

A tenant admin chooses the webhook URL and the server POSTs to it, so an unchecked URL would
let them reach what only the server can: the cloud metadata service (169.254.169.254), the
database or Redis on loopback, the cluster's private network. A target is refused unless every
address its host name resolves to is public (not loopback, link-local, private, multicast,
unspecified or reserved). The check runs when the URL is saved and again at each delivery,
which then connects to the very address it checked (so a DNS answer changed in between, DNS
rebinding, cannot redirect it) and follows no redirects.

``ZS_WEBHOOK_ALLOW_PRIVATE=true`` (settings.WEBHOOK_ALLOW_PRIVATE) lifts the address check for
on-premises installations whose receivers live on the private network.
"""

from __future__ import annotations

import http.client
import ipaddress
import json
import socket
import ssl
from urllib.parse import urlsplit

from django.conf import settings
from django.utils.translation import gettext as _

TIMEOUT_S = 10


class UnsafeTargetError(ValueError):
    """A webhook URL the server must not call; the message says why."""


def _refused(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> str | None:
    """Why ``ip`` is not a public address, or None."""
    mapped = getattr(ip, "ipv4_mapped", None)  # ::ffff:127.0.0.1 is 127.0.0.1
    if mapped is not None:
        ip = mapped
    for kind in ("loopback", "link_local", "private", "multicast", "unspecified", "reserved"):
        if getattr(ip, f"is_{kind}"):
            return kind.replace("_", "-")
    return None if ip.is_global else "non-public"


def resolve(url: str) -> tuple[str, int, str]:
    """(host, port, address) of ``url``'s target, the address checked; UnsafeTargetError if the
    URL is not http(s), does not resolve, or resolves to any address the server must not
    call (one bad address among several refuses them all: the resolver may pick it later)."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise UnsafeTargetError(_("Use an http:// or https:// URL with a host name."))
    host = parts.hostname
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError as exc:
        raise UnsafeTargetError(_("The URL's port is not a number from 1 to 65535.")) from exc
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError) as exc:
        raise UnsafeTargetError(
            _("The host name {host} does not resolve.").format(host=host)
        ) from exc
    addresses = [str(info[4][0]) for info in infos]
    if not addresses:
        raise UnsafeTargetError(_("The host name {host} does not resolve.").format(host=host))
    if not settings.WEBHOOK_ALLOW_PRIVATE:
        for address in addresses:
            why = _refused(ipaddress.ip_address(address.split("%", 1)[0]))
            if why is not None:
                raise UnsafeTargetError(
                    _(
                        "{host} resolves to {address}, a {kind} address: webhooks may only call "
                        "public addresses (an operator can allow private ones with "
                        "ZS_WEBHOOK_ALLOW_PRIVATE)."
                    ).format(host=host, address=address, kind=why)
                )
    return host, port, addresses[0]


class _PinnedHTTP(http.client.HTTPConnection):
    """Connects to the checked address, whatever the host name resolves to now."""

    def __init__(self, host: str, port: int, address: str) -> None:
        super().__init__(host, port, timeout=TIMEOUT_S)
        self.address = address

    def connect(self) -> None:
        self.sock = socket.create_connection((self.address, self.port), self.timeout)


class _PinnedHTTPS(http.client.HTTPSConnection):
    """As _PinnedHTTP, with TLS verified against the host name (not the address)."""

    def __init__(self, host: str, port: int, address: str) -> None:
        super().__init__(host, port, timeout=TIMEOUT_S, context=ssl.create_default_context())
        self.address = address

    def connect(self) -> None:
        raw = socket.create_connection((self.address, self.port), self.timeout)
        self.sock = self._context.wrap_socket(raw, server_hostname=self.host)  # type: ignore[attr-defined]


def post_json(url: str, body: dict[str, object]) -> str:
    """POST ``body`` to a checked ``url``; the outcome as "http <status>". Raises UnsafeTargetError
    for a refused target, OSError for a failed connection."""
    host, port, address = resolve(url)
    parts = urlsplit(url)
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    pinned = _PinnedHTTPS if parts.scheme == "https" else _PinnedHTTP
    connection = pinned(host, port, address)
    try:
        connection.request(
            "POST", path, body=json.dumps(body).encode(),
            headers={"Content-Type": "application/json"},
        )  # fmt: skip
        return f"http {connection.getresponse().status}"
    finally:
        connection.close()
