# Two commands do everything on a fresh machine: `make run` and `make test` (README.md).
SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PORT ?= 8000
INSTALLED := $(VENV)/.installed-stamp

.PHONY: run test install services check-deploy clean

# Re-installs whenever pyproject.toml changes. --no-compile: pip would byte-compile every module of every
# package (CuPy's and Playwright's included), about 20 of the install's 50 s; Python compiles what is imported
# on first import instead, a small part of it.
$(INSTALLED): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' || { echo "Python 3.11 or newer is needed (found: $$($(PYTHON) --version))."; exit 1; }
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet --no-compile -e '.[judge,dev]'
	touch $@

install: $(INSTALLED)

# The site with its demo book on embedded defaults (SQLite, file cache, file-system Celery
# broker): the web server and a Celery worker (with beat) together; Ctrl-C stops both, and so does either one
# ending (make then exits with its status). On Ctrl-C `stop` sends one SIGTERM to each process started here
# and waits for them. It used to be `trap 'kill 0' EXIT INT TERM`: kill 0 signals the whole process group,
# the recipe's shell included, whose TERM trap then ran kill 0 again, and again, until bash overflowed its
# stack ("Segmentation fault", and thousands of SIGTERMs into the Celery worker's warm shutdown).
# Without STRIPE_SECRET_KEY, subscriptions run in test mode: a local Stripe stand-in (localstripe
# with Checkout and the Portal, `manage.py stripe_test_server`) on STRIPE_TEST_PORT takes the
# payments and sends its signed webhooks to this site (README: Subscriptions).
STRIPE_TEST_PORT ?= $(shell echo $$(( $(PORT) + 1 )))
run: export SITE_URL ?= http://127.0.0.1:$(PORT)
run: export DJANGO_SETTINGS_MODULE ?= config.settings.dev
run: $(INSTALLED)
	mkdir -p var
	$(PY) manage.py migrate --noinput
	$(PY) manage.py load_demo
	@echo
	@echo "Kernel Engineering: http://127.0.0.1:$(PORT)/   (admin: http://127.0.0.1:$(PORT)/admin/)"
	@echo "Submissions compile here; on a GPU machine also run: $(PY) manage.py gpu_worker --gpu 0"
	@if [ -z "$$STRIPE_SECRET_KEY" ]; then echo "Subscriptions in TEST MODE (no STRIPE_SECRET_KEY): pay with the test card 4242 4242 4242 4242"; fi
	@echo
	pids=(); \
	stop() { status=$${1:-$$?}; trap - EXIT INT TERM; kill -TERM "$${pids[@]}" 2>/dev/null; wait; echo "Stopped."; exit $$status; }; \
	trap 'stop 0' INT TERM; trap stop EXIT; \
	if [ -z "$$STRIPE_SECRET_KEY" ]; then \
	  export STRIPE_TEST_MODE=true STRIPE_API_BASE=http://127.0.0.1:$(STRIPE_TEST_PORT); \
	  $(PY) manage.py stripe_test_server & pids+=($$!); \
	fi; \
	bin/keep-running $(VENV)/bin/celery -A config worker --beat -Q default,compile -c 1 --loglevel INFO & pids+=($$!); \
	$(PY) manage.py runserver 127.0.0.1:$(PORT) & pids+=($$!); \
	wait -n

# Lint, then the whole suite, against real PostgreSQL and Redis (started here where they are not
# running) and Debian's chromium for the browser tests. pytest exits non-zero when it finds
# no tests, so an empty run fails. The suite runs in PYTEST_WORKERS processes (pytest-xdist),
# each with its own test database and two Redis databases of its own (config/settings/test.py).
# Measured on 2 cores: 4 processes, 352 s of pytest against 404 s with 3 (2026-12-03, 1243 tests; with
# fewer browser and server tests 3 had beaten 2 and 4): most tests wait on browsers, servers and worker
# processes. worksteal hands each process a run of consecutive tests, so a module's
# browser or Celery workers mostly start once, and lets an idle process take over the queue's tail.
PYTEST_WORKERS ?= 4
test: $(INSTALLED) services
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(PY) -m pytest -n $(PYTEST_WORKERS) --dist worksteal

services:
	bash .ci/services.sh

clean:
	rm -rf $(VENV) var staticfiles .pytest_cache
