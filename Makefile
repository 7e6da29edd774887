# hetlab: `make lab` opens the workbench, `make test` runs every test, `make demo` the main job.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
JOBS ?= 2  # test workers (pytest-xdist); JOBS=0 runs the tests in one process

.PHONY: lab test test-fast demo bench lint deps clean thirdparty

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[dev]'
	@# an editable install leaves out data files: JupyterLab finds our extension by a link
	mkdir -p $(VENV)/share/jupyter/labextensions
	ln -sfn $(CURDIR)/hetlab/widgets/labextension $(VENV)/share/jupyter/labextensions/hetlab-widgets
	touch $(STAMP)

lab: $(STAMP)
	@if [ -f notebooks/workbench.ipynb ]; then target=notebooks/workbench.ipynb; else target=notebooks; fi; \
	root=$$( [ "$$(id -u)" = 0 ] && echo --allow-root ); $(BIN)/jupyter lab $$root $$target

thirdparty: $(STAMP)
	-$(BIN)/python tests/thirdparty/fetch.py

test: $(STAMP) thirdparty
	$(BIN)/python -m pytest -p no:cacheprovider --timeout 900 -n $(JOBS) --dist worksteal $(PYTEST_ARGS)

test-fast: $(STAMP)
	$(BIN)/python -m pytest -p no:cacheprovider -m "not slow" -n $(JOBS) --dist worksteal $(PYTEST_ARGS)

demo: $(STAMP)
	$(BIN)/hetlab demo

lint: $(STAMP)
	$(BIN)/ruff check hetlab tests benchmarks
	$(BIN)/ruff format --check hetlab tests benchmarks
	PYTHONPATH=$(CURDIR) $(BIN)/lint-imports  # the layering contract in pyproject.toml
	$(BIN)/python -m pytest -p no:cacheprovider -q tests/test_public_faces.py  # private names

deps: $(STAMP)
	$(BIN)/python docs/imports.py  # docs/imports.md: the packages' import graph, from the code

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache
