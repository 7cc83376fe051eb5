# The two commands of the README:
#   make demo                      install into .venv, then run docassay on the bundled examples
#   .venv/bin/python -m pytest     run the tests (CI runs exactly this after `make install-dev`)
#
# Install time (issue 15): torch is pinned (pyproject.toml) and PyPI's Linux wheel of it pulls the
# CUDA libraries (several GB of nvidia-* wheels) that docassay never uses; the CPU wheel from
# PyTorch's index (`2.13.0+cpu` meets the pin and sorts above PyPI's `2.13.0`) is installed first,
# so the pin is already met when docassay is installed. `make TORCH_INDEX=` skips that index. The demo
# needs no test tools: `install` is the runtime only, `install-dev` adds the `dev` extra.
PY ?= python3
VENV ?= .venv
BIN = $(VENV)/bin
TORCH_INDEX ?= https://download.pytorch.org/whl/cpu
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

demo: install
	$(BIN)/docassay extract examples/invoices/documents --schema examples/invoices/schema.json \
		--rules examples/invoices/rules --out out/invoices
	$(BIN)/docassay extract examples/receipts/documents --schema examples/receipts/schema.json \
		--rules examples/receipts/rules --out out/receipts

test: install-dev
	$(BIN)/python -m pytest

test-quick: install-dev
	$(BIN)/python -m pytest -m "not slow"
