# Two commands on a fresh Debian machine with Python 3.11: `make demo` and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
# Everything the engine keeps (embedded database, keys, caches) lives here for the demo.
export EVIDENCE_HOME ?= $(CURDIR)/.evidence
export XDG_RUNTIME_DIR ?= $(CURDIR)/.evidence/run
export HF_HUB_OFFLINE := 1
export TOKENIZERS_PARALLELISM := false

.PHONY: install sysdeps demo test lint bench-obliqa clean stop

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

# torch first and pinned: here it is a CPU wheel on local disk; unpinned it pulls gigabytes.
$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q torch==2.13.0
	$(BIN)/pip install -q -e '.[test]'
	touch $@

# System libraries: Pango for WeasyPrint, poppler-utils for rendering report pages to PNG, Chromium and its
# driver for the web view's browser test (tests/web/test_browser.py).
sysdeps:
	@missing=""; \
	ldconfig -p | grep -q 'libpango-1.0.so' || missing="$$missing libpango-1.0-0 libpangoft2-1.0-0"; \
	ldconfig -p | grep -q 'libharfbuzz-subset.so' || missing="$$missing libharfbuzz-subset0"; \
	command -v pdftoppm >/dev/null || missing="$$missing poppler-utils"; \
	command -v chromium >/dev/null || missing="$$missing chromium"; \
	command -v chromedriver >/dev/null || missing="$$missing chromium-driver"; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q $$missing; \
	  else echo "please install:$$missing (sudo apt-get install$$missing)"; fi; \
	fi

install: sysdeps $(VENV)/.installed
	@mkdir -p $(XDG_RUNTIME_DIR) && chmod 700 $(XDG_RUNTIME_DIR)

demo: install
	$(BIN)/evidence ingest examples/corpus
	$(BIN)/evidence search "How long must transaction records be kept?" -k 3
	$(BIN)/evidence ask "How long must transaction records be kept, and when must a personal data breach be notified?"
	@# The sample checklist includes a question the corpus cannot answer: show the gate, don't fail the demo on it.
	$(BIN)/evidence audit run audits/sample.yaml --pdf out/sample-audit.pdf --fail-on never
	@# The demo's own witness: one kept from a demo with another EVIDENCE_HOME holds another key's checkpoints.
	rm -rf out/witness
	$(BIN)/evidence trail checkpoint --out out/witness
	$(BIN)/evidence trail verify --published out/witness
	@# What an outside auditor runs: the report and the trail's public key, no engine, no database.
	$(BIN)/evidence trail public-key --out out/trail-key.pem
	$(BIN)/python -m engine.trail.standalone_build out/evidence_verify.py
	$(BIN)/python -I out/evidence_verify.py out/sample-audit.pdf --public-key out/trail-key.pem
	pdftoppm -png -r 60 -f 1 -l 1 -singlefile out/sample-audit.pdf out/sample-audit-page1
	@echo "batch report: out/sample-audit.pdf (page 1: out/sample-audit-page1.png)"

# The type check runs first: CI ('.ci/run' -> make test) refuses a change that mypy refuses.
test: install
	$(BIN)/mypy agents engine
	$(BIN)/pytest -q -p no:cacheprovider

lint: install
	$(BIN)/ruff check engine agents tests bench
	$(BIN)/mypy agents engine

.PHONY: typecheck
typecheck: install
	$(BIN)/mypy agents engine

bench-obliqa: install
	$(BIN)/python bench/obliqa.py --documents ../shared/obliqa/documents --questions ../shared/obliqa/ObliQA_dev.json --run out/obliqa.trec

stop:
	-$(BIN)/evidence db stop

clean: stop
	rm -rf $(VENV) .evidence out
