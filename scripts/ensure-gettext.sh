#!/usr/bin/env bash
# tests/test_locale.py and `make messages` run GNU gettext (xgettext, msgfmt); the server itself
# only reads the committed .mo.
set -euo pipefail
command -v msgfmt >/dev/null && command -v xgettext >/dev/null && exit 0
. "$(dirname "$0")/lib/apt.sh"
apt_install "the translation checks" --no-install-recommends gettext
