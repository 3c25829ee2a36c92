"""Guards against known traps: the stdlib `platform` shadow, undocumented env vars, bypassing
tenant scoping, and models without migrations."""

from __future__ import annotations

import re
import subprocess
import sys
import sysconfig
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command

from config import env

ROOT = Path(__file__).resolve().parents[1]


def test_stdlib_platform_module_is_the_one_imported() -> None:
    code = "import platform, sys; print(platform.__file__); print(platform.python_version())"
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.splitlines()
    stdlib = Path(sysconfig.get_paths()["stdlib"]).resolve()
    assert Path(out[0]).resolve().parent == stdlib
    assert out[1] == sys.version.split()[0]
    assert not list((ROOT / "platform").rglob("*.py")), "platform/ must hold no Python files"


def test_readme_documents_every_environment_variable() -> None:
    readme = (ROOT / "README.md").read_text()
    missing = [name for name in env.DOCUMENTED if f"`{name}`" not in readme]
    assert missing == []


def test_settings_read_only_declared_variables() -> None:
    pattern = re.compile(r"env\.(?:get_\w+|require_str)\(\s*\"([A-Z_]+)\"")
    used = set()
    for path in [*(ROOT / "config").rglob("*.py"), *(ROOT / "apps").rglob("*.py")]:
        used.update(pattern.findall(path.read_text()))
    assert used and used <= set(env.DOCUMENTED)


def test_tenant_scoped_viewsets_cannot_override_get_queryset() -> None:
    from apps.core.viewsets import TenantScopedViewSet
    from apps.tenancy.models import Project

    with pytest.raises(TypeError, match="must not override get_queryset"):

        class Leaky(TenantScopedViewSet[Project]):
            def get_queryset(self):
                return Project.objects.all()


@pytest.mark.django_db
def test_models_and_migrations_are_in_step() -> None:
    out = StringIO()
    call_command("makemigrations", "--check", "--dry-run", stdout=out)
    assert "No changes detected" in out.getvalue()
