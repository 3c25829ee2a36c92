# Zhisuan: the two commands are `make run` and `make test`. Everything they need is installed
# by the targets below, so both work on a fresh machine.
SHELL := /bin/bash
PY := .venv/bin/python
VENV_STAMP := .venv/.installed
NPM_STAMP := frontend/node_modules/.installed

.PHONY: run test lint typecheck test-backend test-frontend e2e schema messages frontend fuzz-api bench bench-sched bench-governance bench-autoscale bench-health bench-telemetry bench-heatmap bench-sweeps migrate seed manifests

run: $(VENV_STAMP) frontend migrate seed ## the whole product on http://127.0.0.1:8000
	$(PY) manage.py serve

$(VENV_STAMP): pyproject.toml sdk/pyproject.toml agent/pyproject.toml
	test -x $(PY) || python3 -m venv .venv
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev]' -e ./sdk -e ./agent
	touch $@

$(NPM_STAMP): frontend/package.json frontend/package-lock.json
	cd frontend && npm ci --no-audit --no-fund --loglevel=error
	touch $@

frontend: $(NPM_STAMP)
	cd frontend && npm run --silent build

migrate: $(VENV_STAMP)
	$(PY) manage.py migrate --noinput -v0

seed: $(VENV_STAMP)
	$(PY) manage.py seed_demo

test: lint test-backend test-frontend e2e ## every suite: lint, types, backend, frontend, browser
	@echo "make test: all suites passed"

lint: $(VENV_STAMP)
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .
	$(PY) -m mypy .

test-backend: $(VENV_STAMP)
	scripts/ensure-services.sh
	scripts/ensure-prometheus.sh
	scripts/ensure-gettext.sh
	$(PY) -m pytest

test-frontend: $(NPM_STAMP)
	cd frontend && npm run --silent check:api && npm run --silent typecheck && npm run --silent lint && npm test --silent

e2e: $(VENV_STAMP) frontend
	scripts/ensure-chromium.sh
	scripts/e2e.sh

schema: $(VENV_STAMP) ## regenerate the committed OpenAPI schema and the frontend client
	DJANGO_SETTINGS_MODULE=config.settings.dev $(PY) manage.py spectacular --file openapi/schema.yaml --validate --fail-on-warn
	cd frontend && npm run --silent gen:api

# Only the code under apps/ and config/ holds the API's sentences.
MESSAGE_IGNORES := $(foreach d,.venv frontend sdk agent bench tests docs platform var openapi scripts locale,--ignore '$(d)/*')
messages: $(VENV_STAMP) ## refresh locale/zh_Hans/.../django.po from the marked sentences (translate the new ones), then compile it; copy the dashboard's Chinese notes for email (apps/jobs/notes.zh.json)
	scripts/ensure-gettext.sh
	DJANGO_SETTINGS_MODULE=config.settings.dev $(PY) manage.py makemessages -l zh_Hans --no-obsolete --no-location $(MESSAGE_IGNORES)
	msgfmt --check -o locale/zh_Hans/LC_MESSAGES/django.mo locale/zh_Hans/LC_MESSAGES/django.po
	$(PY) scripts/export_notes.py

fuzz-api: $(VENV_STAMP) ## a deeper schemathesis run than make test's: FUZZ_EXAMPLES random cases per operation and mode, per kind of caller
	scripts/ensure-services.sh
	FUZZ_EXAMPLES=$${FUZZ_EXAMPLES:-30} $(PY) -m pytest tests/security/test_deep_fuzz.py -p no:randomly -q -s

bench: $(VENV_STAMP) ## scheduling-core benchmark (prints a table)
	$(PY) bench/sched_core.py

bench-sched: $(VENV_STAMP) ## trace-driven simulator: policies side by side, charts in docs/benchmarks/ (core compiled with mypyc)
	$(PY) bench/sched_sim.py --compiled openb
	$(PY) bench/sched_sim.py --compiled speed
	$(PY) bench/sched_sim.py --compiled llm --jobs 20000 --load 0.95 --policies ours,volcano,best-fit,fifo-spread

bench-sweeps: $(VENV_STAMP) ## a sweep's early-stopping rules on simulated learning curves: GPU-hours saved, best trial kept
	$(PY) bench/sweep_bench.py

bench-governance: $(VENV_STAMP) ## idle-GPU reclamation on the openb trace (issue 11), tables to stdout
	$(PY) bench/governance_sim.py

bench-autoscale: $(VENV_STAMP) ## inference autoscaler replay on the GenAI trace
	$(PY) bench/autoscale_bench.py --charts docs/benchmarks

bench-health: $(VENV_STAMP) ## slow-node location and the failure soak
	$(PY) bench/slow_node_bench.py
	$(PY) bench/failure_soak.py

bench-telemetry: $(VENV_STAMP) ## 10,000 GPUs at 1 Hz to 1/10/100 dashboard clients (needs Redis)
	$(PY) bench/telemetry_bench.py --gpus 10000 --seconds 20 --clients 1,10,100,100

bench-heatmap: $(NPM_STAMP) ## GPU heatmap render time per update at 1k/10k GPUs in headless Chromium
	scripts/ensure-chromium.sh
	cd frontend && npm run --silent bench:heatmap

manifests: ## print the Kubernetes install (kubectl apply -k platform/ does the same)
	@for f in $$(python3 -c "import yaml; print(' '.join(yaml.safe_load(open('platform/kustomization.yaml'))['resources']))" 2>/dev/null || .venv/bin/python -c "import yaml; print(' '.join(yaml.safe_load(open('platform/kustomization.yaml'))['resources']))"); do echo "---"; cat platform/$$f; done
