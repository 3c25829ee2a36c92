"""Token format, generation and verification, kept apart from HTTP so services and the CLI share it.

A token reads ``zs_<prefix>_<secret>``: the prefix finds the row, the secret is checked against
a SHA-256 digest in constant time. Secrets carry 256 bits of entropy, so a fast hash is enough
(no password-style stretching is needed) and verification stays cheap on every request.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass

TOKEN_PREFIX = "zs_"  # noqa: S105 - a public marker, not a secret


@dataclass(frozen=True)
class NewToken:
    plaintext: str
    prefix: str
    digest: str


def digest_secret(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def generate() -> NewToken:
    prefix = secrets.token_hex(6)
    secret = secrets.token_urlsafe(32)
    return NewToken(
        plaintext=f"{TOKEN_PREFIX}{prefix}_{secret}", prefix=prefix, digest=digest_secret(secret)
    )


def split(plaintext: str) -> tuple[str, str] | None:
    """(prefix, secret) of a well-formed token, else None."""
    if not plaintext.startswith(TOKEN_PREFIX):
        return None
    prefix, sep, secret = plaintext[len(TOKEN_PREFIX) :].partition("_")
    if not sep or not prefix or not secret:
        return None
    return prefix, secret


def matches(secret: str, digest: str) -> bool:
    return hmac.compare_digest(digest_secret(secret), digest)
