"""The core is pure Python: importing it must not import Django, Celery or Kubernetes."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_importing_the_core_imports_no_framework():
    code = (
        "import sys, apps.scheduling.core, apps.scheduling.core.synthetic\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in "
        "{'django', 'celery', 'kubernetes', 'rest_framework', 'numpy'})\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == ""
