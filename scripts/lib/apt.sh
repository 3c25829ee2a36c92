# Sourced by the ensure-*.sh scripts: install Debian packages a test needs, as root; anyone
# else is told the command to run.
# apt_install WHY [--no-install-recommends] PACKAGE...
apt_install() {
  local why=$1
  shift
  local opts=()
  if [ "${1:-}" = "--no-install-recommends" ]; then
    opts+=("$1")
    shift
  fi
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "installing $* for $why"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${opts[@]}" "$@" >/dev/null
  else
    echo "ERROR: $why needs $*; install with: sudo apt-get install -y ${opts[*]} $*" >&2
    exit 1
  fi
}
