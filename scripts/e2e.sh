#!/usr/bin/env bash
# Browser end-to-end test against the product as `make run` serves it (embedded default),
# in a throwaway data folder on a spare port.
set -euo pipefail
cd "$(dirname "$0")/.."

PORT=${E2E_PORT:-8765}
DATA=$(mktemp -d)
LOG="$DATA/serve.log"
export DJANGO_SETTINGS_MODULE=config.settings.dev ZS_DATA_DIR="$DATA" ZS_PORT="$PORT"
export ZS_ALLOWED_HOSTS=127.0.0.1,localhost ZS_CSRF_TRUSTED_ORIGINS="http://127.0.0.1:$PORT"
unset DATABASE_URL REDIS_URL

.venv/bin/python manage.py migrate --noinput -v0
.venv/bin/python manage.py seed_demo >/dev/null
.venv/bin/python manage.py serve --port "$PORT" >"$LOG" 2>&1 &
SERVER=$!
trap 'kill $SERVER 2>/dev/null || true; wait $SERVER 2>/dev/null || true; rm -rf "$DATA"' EXIT

for _ in $(seq 1 100); do
  curl -fsS "http://127.0.0.1:$PORT/readyz" >/dev/null 2>&1 && break
  sleep 0.2
done
curl -fsS "http://127.0.0.1:$PORT/readyz" >/dev/null || { cat "$LOG"; echo "server did not become ready" >&2; exit 1; }

GPUS=$(.venv/bin/python -c "import django; django.setup(); from apps.core.demo import demo_gpu_count; print(demo_gpu_count())")
# On failure the server log comes first and the failing checks are repeated after it, so a
# log that keeps only its tail (CI's) still says which check failed and why.
E2E_BASE_URL="http://127.0.0.1:$PORT" E2E_USER=admin E2E_PASSWORD=zhisuan-demo E2E_EXPECT_GPUS="$GPUS" \
  npm --prefix frontend run --silent e2e 2>&1 | tee "$DATA/e2e.log" && exit 0
echo "--- server log (last 50 lines) ---"
tail -50 "$LOG"
echo "--- failed checks ---"
{ grep -E '^e2e: (FAILED|page was)' "$DATA/e2e.log" || tail -20 "$DATA/e2e.log"; } | cut -c1-600
exit 1
