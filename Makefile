# make demo: the memory core on a bundled sample, no API key, no server.
# make test: ruff, mypy and the whole pytest suite in .venv (Python 3.12).
SHELL := /bin/bash
VENV := .venv
BIN := $(VENV)/bin
# The first Python 3.12 that actually runs (a pyenv shim may exist but fail).
PYTHON ?= $(shell for p in python3.12 $$HOME/.pyenv/versions/3.12*/bin/python3.12 /usr/local/bin/python3.12 /usr/bin/python3.12; do \
	$$p -c 'import sys; assert sys.version_info[:2] == (3, 12)' 2>/dev/null && { echo $$p; break; }; done)
# uv installs AstrBot's ~170 packages in about a minute (pip takes seven); versions from constraints.txt.
UV_VERSION := 0.13.9
PIP := $(BIN)/uv pip install -q --python $(BIN)/python --compile-bytecode -c constraints.txt

.PHONY: demo test lint browser postgres bench clean

$(BIN)/python:
	@test -n "$(PYTHON)" || { echo "Python 3.12 not found: install it or run make PYTHON=/path/to/python3.12"; exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --disable-pip-version-check uv==$(UV_VERSION)

# The repository root is importable as the package astrbot_plugin_engram (as inside AstrBot).
$(VENV)/.runtime: $(BIN)/python requirements.txt constraints.txt
	$(PIP) -r requirements.txt
	ln -sfn "$(CURDIR)" "$$($(BIN)/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/astrbot_plugin_engram"
	touch $@

$(VENV)/.dev: $(VENV)/.runtime requirements-dev.txt
	$(PIP) -r requirements.txt -r requirements-dev.txt
	touch $@

demo: $(VENV)/.runtime
	$(BIN)/python -m astrbot_plugin_engram.memory demo

# mypy checks the repository as the package AstrBot imports (astrbot_plugin_engram, a link to this
# checkout in a folder of its own, outside it), so the plugin's, dashboard's and tests' imports of the
# core are typed, not Any; the link's folder is the same for a checkout each time (mypy's cache holds).
MYPY_ROOT = $${TMPDIR:-/tmp}/engram-mypy-$$(printf %s "$(CURDIR)" | cksum | cut -d' ' -f1)
lint: $(VENV)/.dev
	$(BIN)/ruff check .
	root=$(MYPY_ROOT) && mkdir -p "$$root" && ln -sfn "$(CURDIR)" "$$root/astrbot_plugin_engram" && \
	  cd "$$root" && "$(CURDIR)/$(BIN)/mypy" --config-file "$(CURDIR)/pyproject.toml" \
	    --cache-dir "$(CURDIR)/.mypy_cache" -p astrbot_plugin_engram

# The dashboard's browser test drives Debian's chromium headless (no browser download at test time).
browser:
	@command -v chromium >/dev/null || { echo "installing chromium (apt-get) for the dashboard's browser test"; \
	  sudo=$$([ "$$(id -u)" = 0 ] || echo sudo); $$sudo apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y -qq --no-install-recommends chromium fonts-noto-cjk; }

# The PostgreSQL store's tests start a throwaway server from Debian's postgresql package (initdb, pg_ctl;
# as root, run as the package's own postgres user): installed where missing, its cluster service unused.
postgres:
	@ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || { echo "installing postgresql (apt-get) for the PostgreSQL store's tests"; \
	  sudo=$$([ "$$(id -u)" = 0 ] || echo sudo); $$sudo apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y -qq --no-install-recommends postgresql; }

test: lint browser postgres
	$(BIN)/python -m pytest

bench: $(VENV)/.runtime
	$(BIN)/python bench/locomo.py
	$(BIN)/python bench/perf.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache build
