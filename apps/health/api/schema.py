"""OpenAPI description of the node agent's token (loaded by HealthConfig.ready)."""

from typing import Any

from drf_spectacular.extensions import OpenApiAuthenticationExtension


class NodeTokenScheme(OpenApiAuthenticationExtension):  # type: ignore[no-untyped-call]
    target_class = "apps.health.api.auth.NodeTokenAuthentication"
    name = "nodeTokenAuth"

    def get_security_definition(self, auto_schema: Any) -> dict[str, str]:
        return {"type": "http", "scheme": "bearer", "bearerFormat": "zsn_<prefix>_<secret>"}
