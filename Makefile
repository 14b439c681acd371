# strata developer entry points. Needs only python3 (>= 3.11) and network access to PyPI.
#   make demo      run the end-to-end demo
#   make test      fast suite (everything not marked slow)
#   make test-all  full suite
#   make lint      ruff + mypy
#   make bench     install the bench extras (numba, numba-cuda) and run benchmarks/run_all.py
#   make amd       install clang-19, lld-19 and llvm-19 (HIP -> AMD code objects; see docs/amd.md)
#   make programs  install the programs extra (NVIDIA's nvcc wheels) for `strata nvcc`; `make test` needs it
#   make ray       install Ray for STRATA_CLUSTER=ray (optional; CI installs it)

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.stamp
BENCH_STAMP := $(VENV)/.stamp-bench
PROGRAMS_STAMP := $(VENV)/.stamp-programs
RAY_STAMP := $(VENV)/.stamp-ray
# pytest workers for `make test` (pytest-xdist): one per core, at most 4 (each holds its own compiled kernels);
# both expanded where used, so other targets never run the count
JOBS ?= $(shell $(PYTHON) -c 'import os; print(max(1, min(4, os.cpu_count() or 1)))')
PYTEST_JOBS = -n $(JOBS) --dist loadfile

.PHONY: venv demo test test-all lint bench clean amd programs ray

venv: $(STAMP)

# Re-runs only when pyproject.toml is newer than the stamp, so repeated `make test` is instant.
$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	@$(BIN)/python -c 'import sys; sys.exit(sys.version_info < (3, 11))' || \
		{ echo "strata needs Python >= 3.11 in $(VENV); remove it and run: make PYTHON=python3.11 venv" >&2; exit 1; }
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[dev]'
	@touch $@

demo: venv
	$(BIN)/strata demo

# The whole-program tests (tests/cuda/test_whole_programs.py) build CUDA programs with NVIDIA's nvcc wheels.
$(PROGRAMS_STAMP): $(STAMP)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[programs]'
	@touch $@

programs: $(PROGRAMS_STAMP)

# Ray for STRATA_CLUSTER=ray (docs/distributed.md); its tests skip with the reason without it. CI installs it.
$(RAY_STAMP): $(STAMP)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[ray]'
	@touch $@

ray: $(RAY_STAMP)

# The library suites also run on a virtual MI300X (clang-19 compiles their kernels for gfx942), as rocBLAS,
# MIOpen, rocSOLVER and rocRAND run on ROCm; without clang-19 that pass is skipped with the reason.
# Test files run in parallel, one file per worker at a time (JOBS=0 runs them all in this process, in order).
test: venv $(PROGRAMS_STAMP)
	$(BIN)/python -m pytest -q -m "not slow" $(PYTEST_JOBS)
	@if command -v clang-19 >/dev/null 2>&1; then \
	    echo "library suites on a virtual MI300X:"; \
	    STRATA_GPU=mi300x $(BIN)/python -m pytest -q -m "not slow" -p no:cacheprovider $(PYTEST_JOBS) tests/libs \
	        --ignore=tests/libs/test_nccl.py --ignore=tests/libs/test_libs_amd.py; \
	else echo "make test: clang-19 is not installed (make amd): the library suites' MI300X pass is skipped"; fi

test-all: venv $(PROGRAMS_STAMP)
	$(BIN)/python -m pytest -q

lint: venv
	$(BIN)/ruff check .
	$(BIN)/mypy

$(BENCH_STAMP): $(STAMP)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[bench]'
	@touch $@

bench: $(BENCH_STAMP)
	$(BIN)/python benchmarks/run_all.py

# clang-19 compiles HIP for gfx942/gfx90a with strata's own device header; no ROCm needed (docs/amd.md).
AMD_PACKAGES := clang-19 lld-19 llvm-19
amd:
	@if command -v clang-19 >/dev/null 2>&1 && command -v ld.lld-19 >/dev/null 2>&1 && command -v llvm-objdump-19 >/dev/null 2>&1; then \
		echo "clang-19, lld-19 and llvm-19 are installed"; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q $(AMD_PACKAGES) || \
		{ apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q $(AMD_PACKAGES); }; \
	else \
		echo "install the AMD toolchain with: sudo apt-get install $(AMD_PACKAGES)"; \
	fi

clean:
	rm -rf build dist src/*.egg-info .pytest_cache .mypy_cache .ruff_cache .hypothesis
