# Table Referee: `make demo` and `make test` each set up everything on a fresh Debian machine
# (system packages when missing, the venv, the Python packages) and then run.

PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
# espeak-ng: speech; chromium: browser tests; sox: audio checks; libportaudio2: audio output;
# shellcheck: checks hardware/install.sh; debootstrap: install.sh is tested in a Debian bookworm
# root (tests/test_pi_install.py), whose own systemd-analyze verifies the unit
APT_PACKAGES ?= espeak-ng chromium sox libportaudio2 shellcheck debootstrap

.PHONY: demo test test-all bench lint mutate setup system-packages clean

setup: system-packages $(VENV)/.installed

system-packages:
	@missing=""; for p in $(APT_PACKAGES); do \
	  dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "Installing system packages:$$missing"; \
	  if [ "$$(id -u)" -eq 0 ]; then sudo=""; else sudo="sudo"; fi; \
	  $$sudo apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y -qq --no-install-recommends $$missing; \
	fi

$(VENV)/.installed: pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "Python 3.11 or newer is needed")'
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install -q --disable-pip-version-check -e '.[test]'
	touch $@

demo: setup
	$(VENV)/bin/referee demo

# Much of the suite waits (servers, subprocesses, the browser, a chroot's installer), so more
# workers than cores: on 2 cores the quick tier took 98 s with 4 workers, 95-98 s with 5 and
# 96 s with 6 (each worker collects every file, about 3 CPU-s). No test depends on the
# machine being idle (the timing tests run on a simulated clock, or give a real process a generous
# window). Whole files go to one worker, so a module's server is started once; the longest files
# first, in tests/conftest.py's order.
TEST_WORKERS ?= 5

# Bytecode is cached even where the environment says not to (PYTHONDONTWRITEBYTECODE, set on
# this machine): each worker collects every test file, and the tests start `referee` processes by
# the hundred; compiling the project from source in each of them was a tenth of the suite's CPU.
# The speech the tables say is kept from run to run (tests/conftest.py speech_cache): a cold run
# renders it once with espeak-ng.
PYTEST := PYTHONDONTWRITEBYTECODE= REFEREE_TEST_SPEECH_CACHE=$(CURDIR)/.cache/test-speech \
	$(PY) -m pytest -q -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder --durations=12

# `make test`: the quick tier, every part and every game, under 90 s here: it leaves out the slow
# end-to-end tests (tests/conftest.py SLOW_FILES, SLOW_TESTS) and draws a tenth of each property's
# examples. `make test-all`: the whole suite, as CI runs it (.ci/run).
test: setup
	$(VENV)/bin/lint-imports
	REFEREE_TESTS=quick $(PYTEST) -m "not slow"

test-all: setup
	$(VENV)/bin/lint-imports
	$(PYTEST)

lint: setup
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy referee
	$(VENV)/bin/lint-imports

# Mutation testing of the decision modules (docs/mutation.md): `make mutate`, or a subset with
# `make mutate MODULES=referee/rules/race.py`; `make mutate SAMPLE=30` judges a seeded sample of
# 30 mutants per module (every mutant of every module takes hours here). mutmut comes from the `mutate` extra, installed
# here only, so `make test` and CI never need it.
MODULES ?=
SAMPLE ?=

mutate: setup
	@$(PY) -c 'import mutmut' 2>/dev/null || $(VENV)/bin/pip install -q --disable-pip-version-check -e '.[test,mutate]'
	$(PY) tools/mutate.py $(if $(SAMPLE),--sample $(SAMPLE)) $(MODULES)

bench: setup
	$(PY) benchmarks/run_all.py

clean:
	rm -rf $(VENV) build dist *.egg-info
