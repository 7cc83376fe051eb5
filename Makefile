# The two commands of the README:
#   make demo                      install into .venv, then run docassay on the bundled examples
#   .venv/bin/python -m pytest     run the tests (CI runs exactly this after `make install-dev`)
#
# Install time (issue 15): torch is pinned (pyproject.toml) and PyPI's Linux wheel of it pulls the
# CUDA libraries (several GB of nvidia-* wheels) that docassay never uses; the pinned torch is
# installed first, on its own, so that a CPU wheel the machine provides (pip's find-links) meets the
# pin before docassay's other requirements are resolved. `make TORCH_INDEX=URL` adds a package index
# that serves CPU wheels (`2.13.0+cpu`) where the machine has none. `install` is the runtime only,
# `install-dev` adds the `dev` extra (test tools); `make demo` installs both, so that the README's
# second command (the tests) runs right after it.
PY ?= python3
VENV ?= .venv
BIN = $(VENV)/bin
TORCH_INDEX ?=
TORCH_PIN = $(shell sed -n 's/^ *"\(torch==[^"]*\)".*/\1/p' pyproject.toml)

.PHONY: install install-dev demo test test-quick clean-demo

install: $(BIN)/docassay

install-dev: $(BIN)/.dev-installed

$(BIN)/docassay: pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q "$(TORCH_PIN)" $(if $(TORCH_INDEX),--extra-index-url $(TORCH_INDEX))
	$(BIN)/pip install -q -e .
	touch $@

$(BIN)/.dev-installed: $(BIN)/docassay
	$(BIN)/pip install -q -e ".[dev]"
	touch $@

demo: install-dev
	$(BIN)/docassay extract examples/invoices/documents --schema examples/invoices/schema.json \
		--rules examples/invoices/rules --out out/invoices --overwrite
	$(BIN)/docassay extract examples/receipts/documents --schema examples/receipts/schema.json \
		--rules examples/receipts/rules --out out/receipts --overwrite

test: install-dev
	$(BIN)/python -m pytest

test-quick: install-dev
	$(BIN)/python -m pytest -m "not slow"
