"""OpenAPI description of job tokens (loaded by RunsConfig.ready)."""

from typing import Any

from drf_spectacular.extensions import OpenApiAuthenticationExtension


class JobTokenScheme(OpenApiAuthenticationExtension):  # type: ignore[no-untyped-call]
    target_class = "apps.runs.authentication.JobTokenAuthentication"
    name = "jobTokenAuth"

    def get_security_definition(self, auto_schema: Any) -> dict[str, str]:
        return {
            "type": "http",
            "scheme": "bearer",
            "bearerFormat": "zsj_<job id>_<signature> (only the runs API of its own job)",
        }
