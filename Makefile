# `make claims` regenerates every verdict in reports/; `make test` runs the test suite.
PY ?= .venv/bin/python
VENV_STAMP := .venv/.installed

.PHONY: claims test venv vendor validate render bench clean-cache

$(VENV_STAMP): pyproject.toml
	python3 -m venv .venv
	.venv/bin/pip install --quiet --upgrade pip
	.venv/bin/pip install --quiet -e '.[test]'
	touch $(VENV_STAMP)

venv: $(VENV_STAMP)

vendor: $(VENV_STAMP)
	$(PY) -m harness vendor

claims: $(VENV_STAMP)
	-$(PY) -m harness vendor
	$(PY) -m harness run

validate: $(VENV_STAMP)
	$(PY) -m harness validate --data

render: $(VENV_STAMP)
	$(PY) -m harness render

test: $(VENV_STAMP)
	$(PY) -m pytest -q

bench: $(VENV_STAMP)
	$(PY) -m benchmarks

clean-cache:
	rm -rf .cache/upstream
