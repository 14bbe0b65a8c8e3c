# bayesjudge — developer entry points. `make demo` and `make test` work on a fresh clone.
SHELL := /bin/bash
.DEFAULT_GOAL := help

VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

# A Python >= 3.12: pyenv's (via .python-version) first, then python3.13 / python3.12 / python3.
FIND_PYTHON := for c in "$$(pyenv which python 2>/dev/null)" python3.13 python3.12 python3; do \
	if [ -n "$$c" ] && command -v "$$c" >/dev/null 2>&1 && \
	   "$$c" -c 'import sys; sys.exit(sys.version_info < (3, 12))' 2>/dev/null; then \
	command -v "$$c"; break; fi; done

.PHONY: help install demo test test-slow test-browser docs lint format bench studies notebooks clean

help:  ## List the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-10s %s\n", $$1, $$2}'

$(STAMP): pyproject.toml
	@py="$$($(FIND_PYTHON))"; \
	if [ -z "$$py" ]; then echo "error: no Python >= 3.12 found; install one (e.g. 'pyenv install 3.12') and retry." >&2; exit 1; fi; \
	if [ ! -x $(BIN)/python ] || ! $(BIN)/python -c 'import sys; sys.exit(sys.version_info < (3, 12))' 2>/dev/null; then \
		rm -rf $(VENV) && echo "creating $(VENV) with $$py" && "$$py" -m venv $(VENV); fi
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[test,bench,docs,inspect,lm-eval]"
	@touch $(STAMP)

install: $(STAMP)  ## Build .venv and install bayesjudge with its test extras

demo: $(STAMP)  ## Run the main job: a simulated evaluation, naive vs corrected estimates
	$(BIN)/bayesjudge demo

lint: $(STAMP)  ## ruff lint and format check
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

test: lint  ## ruff, then the whole (fast) test suite with doctests, on two workers
	$(BIN)/python -m pytest -n 2

test-slow: $(STAMP)  ## Long validation studies (marked slow), on two workers; run by CI
	$(BIN)/python -m pytest -n 2 --dist worksteal -m slow

test-browser: $(STAMP)  ## The HTML report and the docs math in headless Chromium (Debian's chromium); run by CI
	$(BIN)/python -m pytest -m browser

docs: $(STAMP)  ## Build the documentation site (Sphinx, warnings are errors) into docs/_build/html
	$(BIN)/python -m sphinx -W --keep-going -b html docs docs/_build/html

format: $(STAMP)  ## Apply ruff fixes and formatting
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

bench: $(STAMP)  ## Benchmarks (not part of the test suite); results in benchmarks/results/
	$(BIN)/python benchmarks/bench_lang_reiczigel.py
	$(BIN)/python benchmarks/bench_bootstrap.py
	$(BIN)/python benchmarks/bench_fit.py
	$(BIN)/python benchmarks/bench_exact.py
	$(BIN)/python benchmarks/bench_engines.py
	$(BIN)/python benchmarks/bench_report.py
	$(BIN)/python benchmarks/bench_readers.py
	$(BIN)/python benchmarks/bench_categorical_fit.py

studies: $(STAMP)  ## Every study at full size; results recorded in benchmarks/studies/results/
	$(BIN)/python benchmarks/studies/run_all.py
	$(BIN)/python benchmarks/studies/run_full.py

notebooks: $(STAMP)  ## Re-execute every notebook in place at full draws (outputs committed)
	for nb in notebooks/*.ipynb; do echo "executing $$nb"; \
	$(BIN)/python -c "import sys, nbformat; from nbclient import NotebookClient; \
	p = sys.argv[1]; nb = nbformat.read(p, as_version=4); \
	NotebookClient(nb, kernel_name='python3', timeout=600, record_timing=False, \
	resources={'metadata': {'path': 'notebooks'}}).execute(); nbformat.write(nb, p)" "$$nb" || exit 1; done

clean:  ## Remove .venv and caches
	rm -rf $(VENV) .pytest_cache .ruff_cache .hypothesis build dist docs/_build docs/_generated
