# The two commands of the README:
#   make demo                      install into .venv, then run docassay on the bundled examples
#   .venv/bin/python -m pytest     run the tests (CI runs exactly this after `make install`)
PY ?= python3
VENV ?= .venv
BIN = $(VENV)/bin

.PHONY: install demo test test-quick clean-demo

install: $(BIN)/docassay

$(BIN)/docassay: pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e ".[dev]"
	touch $@

demo: install
	$(BIN)/docassay extract examples/invoices/documents --schema examples/invoices/schema.json \
		--rules examples/invoices/rules --out out/invoices --overwrite
	$(BIN)/docassay extract examples/receipts/documents --schema examples/receipts/schema.json \
		--rules examples/receipts/rules --out out/receipts --overwrite

test: install
	$(BIN)/python -m pytest

test-quick: install
	$(BIN)/python -m pytest -m "not slow"
