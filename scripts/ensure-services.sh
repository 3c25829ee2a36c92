#!/usr/bin/env bash
# Make sure PostgreSQL and Redis answer at 127.0.0.1 before the backend tests run.
# Starts them when they are installed but down; fails fast with a clear message otherwise.
set -euo pipefail

PG_HOST=127.0.0.1 PG_PORT=5432 REDIS_PORT=6379

pg_up() { pg_isready -q -h "$PG_HOST" -p "$PG_PORT" 2>/dev/null; }
redis_up() { redis-cli -h 127.0.0.1 -p "$REDIS_PORT" ping 2>/dev/null | grep -q PONG; }

wait_for() { # name, check function, seconds
  local i
  for ((i = 0; i < $3 * 10; i++)); do "$2" && return 0; sleep 0.1; done
  return 1
}

if ! pg_up; then
  if command -v pg_ctlcluster >/dev/null && [ -d /etc/postgresql ]; then
    echo "PostgreSQL is down; starting it"
    pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -1)" main start || true
  fi
  wait_for postgres pg_up 20 || {
    echo "ERROR: PostgreSQL is not reachable at $PG_HOST:$PG_PORT and could not be started." >&2
    echo "Install it (apt-get install -y postgresql) or set DATABASE_URL." >&2
    exit 1
  }
fi

if ! redis_up; then
  if command -v redis-server >/dev/null; then
    echo "Redis is down; starting it"
    redis-server --daemonize yes --bind 127.0.0.1 --port "$REDIS_PORT" --save "" --appendonly no
  fi
  wait_for redis redis_up 10 || {
    echo "ERROR: Redis is not reachable at 127.0.0.1:$REDIS_PORT and could not be started." >&2
    echo "Install it (apt-get install -y redis-server) or set REDIS_URL." >&2
    exit 1
  }
fi
echo "services: PostgreSQL $(psql -h "$PG_HOST" -U postgres -tAc 'show server_version' | cut -d' ' -f1), Redis $(redis-cli info server | grep redis_version | cut -d: -f2 | tr -d '\r')"
