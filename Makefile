# `make claims` regenerates every verdict in reports/; `make test` runs the test suite.
PY ?= .venv/bin/python
VENV_STAMP := .venv/.installed

.PHONY: claims status calibration test test-all lint venv vendor validate render list diff bench clean-cache

# requirements.lock pins every package at the version the committed records name (a record's lock entry goes stale
# when one moves). After editing pyproject.toml's dependencies, run the command in its header with .venv/bin/uv
# (--upgrade-package NAME moves one on purpose: then `make claims`, and commit the reports).
$(VENV_STAMP): pyproject.toml requirements.lock
	python3 -m venv .venv
	.venv/bin/pip install --quiet --upgrade pip
	.venv/bin/pip install --quiet -c requirements.lock -e '.[test]'
	touch $(VENV_STAMP)

venv: $(VENV_STAMP)

vendor: $(VENV_STAMP)
	$(PY) -m harness vendor

# Re-runs only the claims whose report is out of date (see `python -m harness run --help`), and first,
# in the same build, the coverage studies that are stale (--studies): the authors' requests start at once
# and the studies' data sets fill the cores beside them. The run checks out the pinned upstream itself and
# says why when it cannot. JOBS is the number of cores the build may use (JOBS=1: one thing at a time).
# FORCE=1 recomputes every verdict even when its report is up to date (the authors' answers still come
# from .cache/upstream when it holds them); FORCE_UPSTREAM=1 reruns the authors' code as well.
# `make status` says what `make claims` would run and why, running nothing.
JOBS ?= $(shell nproc 2>/dev/null || echo 1)
RUN_FLAGS = $(if $(filter-out 0,$(FORCE)),--force) $(if $(filter-out 0,$(FORCE_UPSTREAM)),--force-upstream)
claims: $(VENV_STAMP)
	$(PY) -m harness run --studies -j $(JOBS) $(RUN_FLAGS)

status: $(VENV_STAMP)
	$(PY) -m harness status

# The coverage studies of the claims' interval methods (reports/calibration/): re-run only when a claim's
# design changed; a claim's report cites its study and reads its measured coverage from it.
calibration: $(VENV_STAMP)
	$(PY) -m harness calibrate -j $(JOBS)

validate: $(VENV_STAMP)
	$(PY) -m harness validate --data

render: $(VENV_STAMP)
	$(PY) -m harness render

list: $(VENV_STAMP)
	$(PY) -m harness list

diff: $(VENV_STAMP)
	$(PY) -m harness diff

# `make test` leaves out the tests marked slow: the corpus of claims at other parameters on the protocols whose
# fits take tens of seconds, the whole-claim checks of the heavy claims (tests/claimset.py: a protocol card's
# cost >= 4; their protocols still run end to end at cheap parameters in the corpus), the second whole runs
# and builds that check determinism (000 is checked here), and the tests that run other tests again in a
# scratch copy (a sixth protocol, two claims added). `make test-all` runs everything, as CI does (.ci/run).
# Both spread the test files over TEST_JOBS processes (pytest-xdist; each file stays on one worker, so a
# file's shared runs are made once), the files that took longest in the last run first (tests/conftest.py);
# TEST_JOBS=0 runs them in this process. --durations names the slowest.
TEST_JOBS ?= 2
test: $(VENV_STAMP)
	$(PY) -m pytest -q -m "not slow" -n $(TEST_JOBS) --dist loadfile --durations=15

test-all: $(VENV_STAMP)
	$(PY) -m pytest -q -n $(TEST_JOBS) --dist loadfile --durations=15

lint: $(VENV_STAMP)
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .

bench: $(VENV_STAMP)
	$(PY) -m benchmarks

clean-cache:
	rm -rf .cache/upstream
