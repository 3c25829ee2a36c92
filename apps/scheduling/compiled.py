"""The scheduling core and the simulator's engine compiled to C with mypyc, for long replays.

The core (``apps/scheduling/core``) and the simulator's hot modules are plain, fully typed
Python, which is what mypyc (mypy's compiler, the one mypy and black ship with) turns
into C extension modules: the same source, type-checked, with the same behaviour, about
1.7x faster on the simulator's runs. The product imports the Python modules as usual;
only a process that calls ``enable()`` before it imports the core runs the compiled one
(``bench/sched_sim.py --compiled``). A test runs the same workloads both ways and
compares every decision.

Builds go under ``build/compiled-core/<key>/`` (not on ``sys.path``, so a build never
shadows the source being edited), where the key hashes the sources, the Python version
and the mypy version: a changed source builds anew on the next ``enable()`` instead of
running stale code. A build needs a C compiler and the Python headers (about two minutes
on two cores).
"""

from __future__ import annotations

import hashlib
import importlib.abc
import importlib.machinery
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from importlib.machinery import ModuleSpec
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]
BUILD_ROOT = ROOT / "build" / "compiled-core"
PACKAGE = "apps.scheduling.core"
SIM_MODULES = ("engine", "metrics", "workload", "policies")
# Sources mypy reads to type-check the compiled ones but that stay Python (a NamedTuple
# with a default, which mypyc does not compile).
SIM_READ_ONLY = ("events",)


def compiled_sources() -> list[Path]:
    """The files compiled, relative to the repository root."""
    core = sorted((ROOT / "apps" / "scheduling" / "core").glob("*.py"))
    sim = [ROOT / "apps" / "scheduling" / "sim" / f"{m}.py" for m in SIM_MODULES]
    return [p.relative_to(ROOT) for p in core + sim]


def module_name(source: Path) -> str:
    parts = list(source.with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def build_key() -> str:
    """Hash of what a build depends on: the sources, the interpreter and mypyc."""
    import mypy.version

    h = hashlib.sha256()
    h.update(sys.version.encode())
    h.update(mypy.version.__version__.encode())
    for rel in compiled_sources() + _read_only_sources():
        h.update(str(rel).encode())
        h.update((ROOT / rel).read_bytes())
    return h.hexdigest()[:16]


def _read_only_sources() -> list[Path]:
    return [Path("apps", "scheduling", "sim", f"{m}.py") for m in SIM_READ_ONLY]


def build_dir() -> Path:
    return BUILD_ROOT / build_key()


_SETUP = """
import sys
from setuptools import setup
from mypyc.build import mypycify

files = sys.argv[1:]
setup(
    name="zhisuan-compiled-core",
    # Its own (empty) mypy config: mypy would otherwise find the repository's, whose
    # Django plugin needs the settings.
    ext_modules=mypycify(["--config-file", "mypy.ini", *files], opt_level="3"),
    script_args=["-q", "build_ext", "--inplace", "--parallel", str(len(files))],
)
"""


def build(*, quiet: bool = True) -> Path:
    """Compile the sources (unless a build for them exists) and return its directory."""
    target = build_dir()
    if (target / "done").exists():
        return target
    if shutil.which(os.environ.get("CC", "cc")) is None:
        raise RuntimeError("compiling the core needs a C compiler (apt-get install gcc)")
    BUILD_ROOT.mkdir(parents=True, exist_ok=True)
    stage = Path(tempfile.mkdtemp(prefix=f"{target.name}.", suffix=".tmp", dir=BUILD_ROOT))
    (stage / "mypy.ini").write_text("[mypy]\n")
    sources = compiled_sources()
    for rel in sources + _read_only_sources():
        dest = stage / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / rel, dest)
    # The packages above stay Python: empty ones are enough to type-check and build.
    for pkg in ("apps", "apps/scheduling", "apps/scheduling/sim"):
        (stage / pkg / "__init__.py").touch()
    out = subprocess.run(  # noqa: S603 - our interpreter, fixed arguments
        [sys.executable, "-c", _SETUP, *map(str, sources)],
        cwd=stage,
        capture_output=quiet,
        text=True,
        check=False,
    )
    if out.returncode != 0:
        tail = (out.stdout or "")[-2000:] + (out.stderr or "")[-2000:]
        raise RuntimeError(f"mypyc build failed (in {stage}):\n{tail}")
    _collect(stage, sources, target.name)
    try:
        stage.rename(target)
    except OSError:  # another process finished the same build first
        shutil.rmtree(stage, ignore_errors=True)
    # Builds of older sources are never loaded again (a process that loaded one keeps its
    # mapped files).
    for old in BUILD_ROOT.iterdir():
        if old != target and not old.name.endswith(".tmp"):
            shutil.rmtree(old, ignore_errors=True)
    return target


def _collect(stage: Path, sources: Sequence[Path], key: str) -> None:
    """Moves each module's extension to ``mods/<dotted name>.so`` and the shared library
    the group's modules call into to ``lib/`` (imported by name, so it goes on sys.path)."""
    suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
    (stage / "mods").mkdir()
    (stage / "lib").mkdir()
    for rel in sources:
        built = stage / rel.with_name(rel.stem + suffix)
        built.rename(stage / "mods" / f"{module_name(rel)}.so")
    for shared in stage.glob(f"*__mypyc{suffix}"):
        shared.rename(stage / "lib" / shared.name)
    # Only the extensions stay: the copied sources would look like a second ``apps``.
    for leftover in stage.iterdir():
        if leftover.name not in ("mods", "lib"):
            if leftover.is_dir():
                shutil.rmtree(leftover)
            else:
                leftover.unlink()
    (stage / "done").write_text(key)


class _Finder(importlib.abc.MetaPathFinder):
    """Serves the compiled modules of one build in place of their sources."""

    def __init__(self, directory: Path) -> None:
        self.mods = {p.stem: p for p in (directory / "mods").glob("*.so")}

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None,
        target: ModuleType | None = None,
    ) -> ModuleSpec | None:
        so = self.mods.get(fullname)
        if so is None:
            return None
        package = fullname == PACKAGE
        return importlib.util.spec_from_file_location(
            fullname,
            so,
            loader=importlib.machinery.ExtensionFileLoader(fullname, str(so)),
            submodule_search_locations=[str(ROOT / "apps" / "scheduling" / "core")]
            if package
            else None,
        )


def enable(*, quiet: bool = True) -> Path:
    """Build if needed, and make this process import the compiled modules. Call it before
    anything imports the core (``RuntimeError`` otherwise: both would end up mixed)."""
    names = {module_name(rel) for rel in compiled_sources()}
    loaded = sorted(n for n in names if n in sys.modules)
    if loaded:
        raise RuntimeError(f"enable() comes too late: already imported {', '.join(loaded)}")
    directory = build(quiet=quiet)
    if not any(isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.insert(0, _Finder(directory))
        sys.path.append(str(directory / "lib"))
    return directory


def active() -> bool:
    """Whether this process runs the compiled core."""
    module = sys.modules.get(f"{PACKAGE}.scheduler")
    return module is not None and not str(getattr(module, "__file__", "")).endswith(".py")
