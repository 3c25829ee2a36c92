"""Where the agent's node token comes from.

The DaemonSet mounts the Secret ``zhisuan-agent-tokens`` (one key per node name) as a folder;
the agent reads the file named after its node (``ZS_AGENT_NODE_NAME``, from the downward API).
It is read again every round: when the platform rotates a token it rewrites the Secret and
the kubelet updates the mounted file, so the new token is used without a restart. A single
file (``--token-file``) still works for a node set up by hand.
"""

from __future__ import annotations

from pathlib import Path


def token_path(token_file: str, token_dir: str, node: str) -> Path | None:
    if token_file:
        return Path(token_file)
    if token_dir and node and "/" not in node and node not in (".", ".."):
        return Path(token_dir) / node
    return None


def read_token(token_file: str, token_dir: str, node: str) -> str | None:
    """This node's token, or None when it has not been distributed (yet)."""
    path = token_path(token_file, token_dir, node)
    if path is None:
        return None
    try:
        token = path.read_text().strip()
    except OSError:
        return None
    return token or None
