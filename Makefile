# shifteval: two commands do everything.
#   make book   set up .venv (first time), execute every chapter on the embedded data, build the HTML and the labs
#               (make book PARAMS=real: the real-data edition into _build/real/html, data fetched into DATA=data)
#   make labs   the autograded labs (student and solution notebooks, autograder bundles) into _build/labs
#   make lab    the chapter sources in JupyterLab, on the project's kernel (jupytext opens each .py as a
#               notebook and pairs it with an .ipynb beside it, which git ignores)
#   make test   set up .venv (first time), run the test suite that protects a landing (what CI runs)
#   make test-all   make test and the heavy checks (real-data training runs, one-thread re-runs, every
#               lab's planted wrong answer, every page in a browser, the labs in a fresh environment)
#   make test-fast  the tests not marked slow: the library, its doctests, types, style (a developer's loop)
#   make clean  remove built outputs (keeps .venv; `make distclean` removes it too)

PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
PARAMS ?=
EDITION ?= full
DATA ?= data

.PHONY: book labs lab test test-all test-fast clean distclean lock

book: $(STAMP)
	$(BIN)/shifteval build $(if $(PARAMS),--params $(PARAMS),--labs) --edition $(EDITION) --data $(DATA)

labs: $(STAMP)
	$(BIN)/shifteval labs

# Both build the book first, on every core, then run the tests in one process per core (pytest-xdist):
# the tests that read the built book share it; the others' chapters run on one thread each.
test: $(STAMP)
	$(BIN)/python -m pytest -m "not heavy" -n auto --dist loadgroup --book-first

test-all: $(STAMP)
	$(BIN)/python -m pytest -n auto --dist loadgroup --book-first

# JupyterLab opens a chapter's jupytext source as a notebook (notebooks/jupytext.toml pairs it with an
# .ipynb); the settings override makes that the default viewer of a .py file in this environment.
LAB_SETTINGS := $(VENV)/share/jupyter/lab/settings/overrides.json
lab: $(STAMP)
	mkdir -p $(dir $(LAB_SETTINGS))
	printf '%s\n' '{"@jupyterlab/docmanager-extension:plugin": {"defaultViewers": {"python": "Jupytext Notebook"}}}' > $(LAB_SETTINGS)
	$(BIN)/jupyter lab --notebook-dir=notebooks $(if $(filter 0,$(shell id -u)),--allow-root)

test-fast: $(STAMP)
	$(BIN)/python -m pytest -m "not slow" -q

# torch 2.13.0 first: it resolves to the local CPU build, so nothing later pulls CUDA wheels.
# requirements.lock pins every package (regenerate with `make lock`).
$(STAMP): pyproject.toml requirements.lock
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check torch==2.13.0
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -c requirements.lock -e ".[test]"
	touch $(STAMP)

lock: $(STAMP)
	$(BIN)/python -m pip freeze --exclude-editable | grep -v '^shifteval' > requirements.lock

clean:
	rm -rf _build .pytest_cache
	find book/chapters -type f ! -name README.md -delete

distclean: clean
	rm -rf $(VENV)
