# dplit: the two commands of the README, plus helpers for developers.
#   make tutorial   set up and run every notebook at full size (build/notebooks, build/html)
#   make test       set up and run the whole test suite (what CI runs)
# The oldest Python we support runs everything (PYTHON); the newest (PYTHON_NEWEST) runs the core of
# the suite with the newest NumPy, SciPy, numba and ArviZ that pip resolves (make test-newest).
PYTHON ?= python3
PYTHON_NEWEST ?= python3.13
PYENV_NEWEST  ?= 3.13.0
VENV   := .venv
BIN    := $(abspath $(VENV))/bin
STAMP  := $(VENV)/.installed
# Kernels started by nbconvert/nbval must find the venv's python first. (No MPLBACKEND here:
# the kernels use the inline backend, so executed notebooks keep their figures.)
export PATH := $(BIN):$(PATH)
# The development copy of the data sets, when it sits beside the checkout (CI's machines, not a user's
# clone): the loaders of dplit.datasets read $DPLIT_DATA first. Absolute, as notebooks run in notebooks/.
ifneq ($(wildcard ../shared/data),)
export DPLIT_DATA ?= $(abspath ../shared/data)
endif
export PIP_DISABLE_PIP_VERSION_CHECK := 1
# Installs keep pip's byte-compilation (about 20 s of a fresh setup): where PYTHONDONTWRITEBYTECODE is set, as on
# the CI machines, Python never writes a .pyc, and without pip's every process of the suite would compile every
# module it imports from source (about 180 s more for a clean-clone `make test` on the 2-core machine).

# Execute one notebook in place at full size. No cell takes more than a few minutes, so a cell
# still running after 15 minutes is a hung kernel connection (rare, seen with ipykernel 7): fail
# it and retry the notebook once, rather than wait an hour.
EXECUTE := DPLIT_QUICK=0 $(BIN)/jupyter nbconvert --log-level WARN --to notebook --execute --inplace \
           --ExecutePreprocessor.timeout=900

# Library notebooks in notebooks/ (number = import order); checks, paper reproductions and how-tos in its folders.
# Every number is unique, so a name (21_mcmc, 73_mcmc_checks) finds its notebook wherever it lives.
NOTEBOOKS := $(wildcard notebooks/[0-9][0-9]_*.py notebooks/*/[0-9][0-9]_*.py)
NAMES     := $(sort $(basename $(notdir $(NOTEBOOKS))))
nbpath     = $(firstword $(wildcard notebooks/$(1).py notebooks/*/$(1).py))

.PHONY: setup tutorial lab test doctest coverage export notebooks nb bench clean docs check-docs check-widgets \
        check-browser test-newest check-wheel test-fast setup-newest setup-docs

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e ".[dev]"
	touch $(STAMP)

setup: $(STAMP)

# The newest supported Python, in its own venv (pyenv's PYENV_NEWEST where pyenv provides python3.13).
VENV_NEWEST  := .venv-newest
BIN_NEWEST   := $(abspath $(VENV_NEWEST))/bin
STAMP_NEWEST := $(VENV_NEWEST)/.installed
$(STAMP_NEWEST): pyproject.toml
	PYENV_VERSION=$(PYENV_NEWEST) $(PYTHON_NEWEST) -m venv $(VENV_NEWEST)
	$(BIN_NEWEST)/python -m pip install -q --upgrade pip
	$(BIN_NEWEST)/python -m pip install -q --upgrade --upgrade-strategy eager -e ".[dev]"
	touch $(STAMP_NEWEST)
# Below STAMP_NEWEST's definition on purpose: make expands a rule's prerequisites as it reads the rule.
setup-newest: $(STAMP_NEWEST)

# The main job: every notebook at full size, executed copies and an HTML rendering under build/.
# Notebooks are independent (each reads only committed files), so they run TUTORIAL_JOBS at a time
# (default 2, one per core of the reference machine: most cells use one core). Each notebook's time
# goes to build/tutorial-times.txt; the last line gives the wall time and the sum over notebooks.
TUTORIAL_JOBS ?= 2
# The kernel starts in notebooks/ (as in a reader's JupyterLab), so relative paths such as
# ../../shared/data resolve the same; the executed copy is written to build/notebooks/.
RUN_NOTEBOOK := DPLIT_QUICK=0 $(BIN)/python scripts/run_notebook.py
tutorial: $(STAMP)
	mkdir -p build/notebooks build/html
	@rm -f build/tutorial-times.txt
	@all0=$$(date +%s); \
	$(MAKE) --no-print-directory -j$(TUTORIAL_JOBS) $(addprefix tutorial-,$(NAMES)) || exit 1; \
	sort -o build/tutorial-times.txt build/tutorial-times.txt; \
	summed=$$(awk '{s += $$2} END {print s}' build/tutorial-times.txt); \
	echo "== all notebooks: $$(( $$(date +%s) - all0 )) s wall, $$summed s summed over notebooks, $(TUTORIAL_JOBS) at a time" \
	  | tee -a build/tutorial-times.txt
	@echo "Executed notebooks: build/notebooks/  HTML: build/html/  Times: build/tutorial-times.txt"

# One notebook of the tutorial (make tutorial-21_mcmc).
tutorial-%: $(STAMP)
	@echo "== $* started"; t0=$$(date +%s); \
	{ $(RUN_NOTEBOOK) $(call nbpath,$*) build/notebooks || { echo "== $* failed or timed out: one retry"; \
	  $(RUN_NOTEBOOK) $(call nbpath,$*) build/notebooks; }; } && \
	$(BIN)/jupyter nbconvert --log-level WARN --to html --output-dir build/html build/notebooks/$*.ipynb || exit 1; \
	echo "$* $$(( $$(date +%s) - t0 )) s" | tee -a build/tutorial-times.txt

lab: $(STAMP)
	$(BIN)/jupyter lab notebooks/

# The whole test suite: literate checks, lint, docstring examples, unit tests and every notebook
# (quick size), in parallel.
test: $(STAMP)
	$(BIN)/python -m dplit.export --check
	$(BIN)/ruff check .
	DPLIT_QUICK=1 $(BIN)/python -m pytest -n auto --dist loadscope -q --durations=15 --doctest-modules dplit tests notebooks

# The inner loop: the tests and notebooks a change touches (scripts/fast_tests.py; BASE=main for a branch).
BASE ?= HEAD
test-fast: $(STAMP)
	$(BIN)/python scripts/fast_tests.py --base $(BASE)

# The core of the suite on the newest Python: docstring examples, the unit tests (the README's example
# among them) and one notebook of each method family under nbval, at quick size. Left to `make test`:
# the export check (the same files under any Python) and the widget smoke test of every notebook.
NEWEST_NOTEBOOKS := notebooks/02_mechanisms.ipynb notebooks/21_mcmc.ipynb notebooks/checks/73_mcmc_checks.ipynb \
                    notebooks/30_dirichlet_mechanism.ipynb \
                    notebooks/41_augmentation.ipynb notebooks/51_latent_class.ipynb
# The newest libraries run every test but the `slow` ones other than the exact answers: the whole-sampler SBC and
# the other long Monte Carlo checks have their power in the 3.11 run, while the exact-answer, unit and property tests
# here tie the samplers to the newest NumPy, SciPy, numba and ArviZ.
test-newest: $(STAMP_NEWEST)
	@$(BIN_NEWEST)/python -c "import sys, importlib.metadata as m; print('test-newest: Python', sys.version.split()[0], '|', ', '.join(f'{p} {m.version(p)}' for p in ('numpy', 'scipy', 'numba', 'arviz', 'xarray')))"
	DPLIT_QUICK=1 PATH=$(BIN_NEWEST):$$PATH $(BIN_NEWEST)/python -m pytest -n auto --dist loadscope -q -m "exact or not slow" \
	  --ignore=tests/test_literate.py --ignore=tests/test_widgets.py --ignore=tests/test_jupyterlab.py \
	  --doctest-modules dplit tests $(NEWEST_NOTEBOOKS)

# The wheel, installed in a fresh venv in a temporary folder and used from there (README example, CLI).
check-wheel: $(STAMP) $(STAMP_NEWEST)
	$(BIN)/python scripts/check_wheel.py --python $(BIN_NEWEST)/python

# The Examples sections of the docstrings, run as doctests.
doctest: $(STAMP)
	DPLIT_QUICK=1 $(BIN)/python -m pytest -q --doctest-modules dplit

# Developers: line coverage of dplit/ with the JIT off (numba kernels run as Python, so their lines
# count), unit tests only, quick size, slow statistical tests skipped. Not part of `make test`.
coverage: $(STAMP)
	NUMBA_DISABLE_JIT=1 DPLIT_QUICK=1 $(BIN)/python -m pytest -q -n auto -m "not slow" \
	  --cov=dplit --cov-report=term:skip-covered tests

# Developers: regenerate modules from notebooks.
export: $(STAMP)
	$(BIN)/python -m dplit.export

# Developers: re-execute committed notebooks in place at full size (all, or NB=NN_topic).
NB ?= $(NAMES)
notebooks nb: $(STAMP)
	$(BIN)/python -m dplit.export --sync $(NB)
	$(BIN)/python -m dplit.export $(NB)
	for nb in $(NB); do \
	  echo "== $$nb"; \
	  path=$$(ls notebooks/$$nb.ipynb notebooks/*/$$nb.ipynb 2>/dev/null | head -1); \
	  (cd $$(dirname $$path) && { $(EXECUTE) $$nb.ipynb || { echo "== $$nb failed or timed out: one retry"; $(EXECUTE) $$nb.ipynb; }; }) || exit 1; \
	done

# The documentation site from the committed, executed notebooks (no re-execution) and the docstrings:
# build/site/. Nothing is downloaded at build or view time (theme and MathJax come from PyPI packages).
DOCS_STAMP := $(VENV)/.installed-docs
$(DOCS_STAMP): pyproject.toml $(STAMP)
	$(BIN)/python -m pip install -q -e ".[dev,docs]"
	touch $(DOCS_STAMP)
# Below DOCS_STAMP's definition, like setup-newest: .ci/run installs the docs extras while the 3.13 suite runs.
setup-docs: $(DOCS_STAMP)

docs: $(DOCS_STAMP)
	rm -rf build/site build/docs-src build/docs-doctrees
	$(BIN)/python docs/prepare.py build/docs-src
	$(BIN)/python -m sphinx -q -b html -c docs -d build/docs-doctrees build/docs-src build/site
	@echo "Documentation site: build/site/index.html"

# Every page of build/site in headless Chromium (Debian's package; never installed by this target: when
# it is missing, check-browser prints the command and stops): first a planted page that must fail in every class,
# then console errors, links and anchors, images, math, Markdown or TeX shown as source, unlinked mentions of
# notebooks and API, horizontal scrollbars, figures shrunk below 0.8 (beyond docs/check_site_allow.toml);
# screenshots in build/site-shots/. Then the widgets in a real JupyterLab (loopback server, token, the
# same browser): tests/test_jupyterlab.py.
CHROMIUM ?= /usr/bin/chromium
check-browser:
	@test -x $(CHROMIUM) || { echo "check-docs needs Debian's chromium at $(CHROMIUM), which is missing. Install it, then run again:"; \
	  echo "  sudo apt-get install -y chromium"; exit 1; }

check-docs: check-browser docs
	$(BIN)/python docs/check_site.py
	DPLIT_QUICK=1 DPLIT_REQUIRE_BROWSER=1 $(BIN)/python -m pytest -q -p no:cacheprovider tests/test_jupyterlab.py

# Widgets only: the kernel-level smoke test of every notebook's widgets (also in `make test`) and the
# real JupyterLab test (also in `make check-docs`).
check-widgets: $(DOCS_STAMP)
	DPLIT_QUICK=1 $(BIN)/python -m pytest -q -p no:cacheprovider tests/test_widgets.py tests/test_jupyterlab.py

bench: $(STAMP)
	for b in benchmarks/bench_*.py; do echo "== $$b"; $(BIN)/python $$b || exit 1; done

clean:
	rm -rf build $(VENV) $(VENV_NEWEST)
