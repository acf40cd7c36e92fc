# nttgen tasks. `make run` and `make test` each set up what they need on a fresh machine.
VENV   ?= .venv
PYTHON ?= python3
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
RUN_STAMP := $(VENV)/.installed-run

.DEFAULT_GOAL := help
.PHONY: help setup toolchain run test test-fast gen bench lint format clean

help: ## list the tasks
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-10s %s\n", $$1, $$2}'

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[test]'
	touch $(STAMP)

# `make run` installs only what it uses: nttgen, numpy and matplotlib (for bench.png)
$(RUN_STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --disable-pip-version-check -e '.[plot]'
	touch $(RUN_STAMP)

setup: $(STAMP) ## create the virtual environment and install nttgen with its test tools

toolchain: ## install the C toolchains the tests use (apt-get, when missing)
	./scripts/install-toolchain.sh

run: $(RUN_STAMP) ## generate every preset; verify it and time its headline ops on every ISA this CPU runs
	@start=$$(date +%s); \
	$(BIN)/nttgen generate --presets -o generated && \
	$(BIN)/nttgen verify && \
	$(BIN)/nttgen bench --samples 200 --png bench.png && \
	echo "make run: done in $$(( $$(date +%s) - start )) s"

# pytest with one worker per CPU (pytest-xdist; an idle worker takes queued tests from a busy
# one); it prints the 25 slowest tests and its wall time
PYTEST = $(BIN)/python -m pytest -n auto --dist worksteal --durations=25

test: setup toolchain ## run the whole test suite (docs/testing.md); PYTEST_ARGS="-k mlkem" narrows it
	$(PYTEST) $(PYTEST_ARGS)

test-fast: setup toolchain ## the inner loop: all but the slow tier (no QEMU, proofs, valgrind)
	$(PYTEST) -m "not slow" $(PYTEST_ARGS)

gen: setup ## regenerate the checked-in C of the presets under generated/
	rm -rf generated
	$(BIN)/nttgen generate --presets -o generated

bench: setup ## the full benchmark matrix (every preset, ISA and op); writes bench.json and bench.png
	$(BIN)/nttgen bench --op all --k 3 --k 5 --json bench.json --png bench.png

lint: setup toolchain ## ruff check, ruff format --check, clang-format check of generated C
	$(BIN)/ruff check src tests scripts
	$(BIN)/ruff format --check src tests scripts
	clang-format-19 --dry-run --Werror generated/*/*.c generated/*/*.h

format: setup ## ruff format the Python sources
	$(BIN)/ruff format src tests scripts
	$(BIN)/ruff check --fix src tests scripts

clean: ## remove the virtual environment and caches
	rm -rf $(VENV) .pytest_cache .ruff_cache build src/*.egg-info
