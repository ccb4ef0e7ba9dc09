# Makefile - sets up what is missing, builds build/ddt, runs tests, benchmarks and the nightly job.
#
#   make            build build/ddt (installing missing Debian packages first)
#   make test       build and run every test; ends with "N passed, N failed"
#   make nightly    build and run the whole nightly job on this machine's defaults
#   make bench      build and run the benchmarks, which print their figures
#   make gpu-check  validate and time every CUDA kernel on the local GPU

SHELL := /bin/bash
BUILD ?= build

# Use every core unless the caller chose a -j (sub-makes share the top one's
# job slots).
ifeq ($(filter -j%,$(MAKEFLAGS))$(filter-out 0,$(MAKELEVEL)),)
  MAKEFLAGS += -j$(shell nproc)
endif

# Debian packages ddt builds against, as pkg-config names and package names
# (python3-venv: the benches' and sass-check's virtual environments).
PKGS := yaml-0.1 xlsxwriter cairo pango pangocairo cmocka gsl fontconfig zlib sqlite3
APT_PKGS := pkg-config libyaml-dev libxlsxwriter-dev libcairo2-dev libpango1.0-dev \
            libcmocka-dev libgsl-dev libfontconfig-dev fonts-dejavu-core poppler-utils qpdf \
            zlib1g-dev libsqlite3-dev python3-venv

# The CUDA backend, build/libddt-cuda.so: the kernels (engine/cuda/) with
# cudart, cuBLAS and NCCL behind them. ddt links none of it: it opens the
# driver and then the backend at run time, only when a device is there
# (engine/cuda_load.c). Built where a GPU is (for its archs only), when asked
# (CUDA=1: CUDA_ARCHS, every arch by default), and by `make test` for every
# arch so CI compiles the kernels; CUDA=0 never builds it.
CUDA_HOME ?= /usr/local/cuda
comma := ,
NVCC ?= $(shell command -v nvcc 2>/dev/null || { test -x $(CUDA_HOME)/bin/nvcc && echo $(CUDA_HOME)/bin/nvcc; })
CUDA_ARCHS_ALL := 90 100 103 120
GPU_ARCHS := $(shell nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | tr -d ' .' | sort -u)
ifneq ($(filter test,$(MAKECMDGOALS)),)
  CUDA ?= $(if $(NVCC),1,0)
  CUDA_ARCHS ?= $(CUDA_ARCHS_ALL)
else
  CUDA ?= $(if $(and $(NVCC),$(GPU_ARCHS)),1,0)
  CUDA_ARCHS ?= $(or $(GPU_ARCHS),$(CUDA_ARCHS_ALL))
endif
ifeq ($(CUDA)$(NVCC),1)
  $(error CUDA=1 but nvcc is not on PATH nor in CUDA_HOME=$(CUDA_HOME): install the CUDA toolkit or set CUDA_HOME)
endif

# Deferred (=) so pkg-config runs after the packages are installed.
PKG_CFLAGS = $(shell pkg-config --cflags $(PKGS))
PKG_LIBS = $(shell pkg-config --libs $(PKGS))

OPT ?= -O2 -march=native
CFLAGS ?= $(OPT) -g
WARN := -Wall -Wextra -Werror
# The layers, lowest first (docs/layout.md). A layer's objects are built
# with the -I of its own folder and those below only, so an include that
# points up fails to build; tests, benchmarks and fuzz targets see every
# layer. check-layers checks every #include line the same way.
LAYER_DIRS := lib engine pipeline/record pipeline/stage pipeline/render pipeline/job pipeline/cmd
LAYER_INC = $(addprefix -I,$(LAYER_DIRS))
layer_upto = $(addprefix -I,$(wordlist 1,$(1),$(LAYER_DIRS)))
$(foreach i,1 2 3 4 5 6 7,$(eval $$(BUILD)/$(word $(i),$(LAYER_DIRS))/%.o: private LAYER_INC = $$(call layer_upto,$(i))))
$(BUILD)/sim/engine/%.o: private LAYER_INC = $(call layer_upto,2)
CPPFLAGS += -D_GNU_SOURCE $(LAYER_INC)
ALL_CFLAGS = -std=c11 $(WARN) $(CFLAGS) $(CPPFLAGS) $(PKG_CFLAGS) -pthread -MMD -MP
LDLIBS = $(PKG_LIBS) -lm -pthread

# The programs' main()s: build/ddt's and build/ddt-allreduce's.
MAINS := pipeline/cmd/main.c pipeline/cmd/allreduce_main.c
PIPE_SRC := $(filter-out $(MAINS),$(wildcard lib/*.c pipeline/*/*.c))
ENGINE_SRC := $(wildcard engine/*.c engine/cpu/*.c)
CUDA_SRC := $(wildcard engine/cuda/*.cu)
TEST_SRC := $(wildcard tests/test_*.c)
BENCH_SRC := $(wildcard bench/bench_*.c)

LDLIBS += -ldl
CUDA_LIB := $(BUILD)/libddt-cuda.so
ifeq ($(CUDA),1)
  NVCC_FLAGS := -O3 --threads 0 -std=c++17 -Ilib -Iengine -MMD -MP \
                $(foreach a,$(CUDA_ARCHS),-gencode arch=compute_$(a),code=sm_$(a)) \
                -Xcompiler -fPIC,-Wall,-Wextra,-Werror
  CUDA_OBJ := $(CUDA_SRC:%.cu=$(BUILD)/%.o) $(BUILD)/engine/cuda/backend.o
  # NCCL from the toolkit or the system, else from NVIDIA's Python wheels
  # (nvidia-nccl-cu12/13: tools/find_nvidia_lib.py), else none: the
  # all-reduce rows then say "built without NCCL".
  NCCL_SYS := $(wildcard $(CUDA_HOME)/include/nccl.h /usr/include/nccl.h)
  NCCL_PIP := $(if $(NCCL_SYS),,$(shell python3 tools/find_nvidia_lib.py libnccl nccl.h 2>/dev/null))
  NCCL_CFLAGS := $(if $(NCCL_SYS),,$(if $(NCCL_PIP),-I$(word 1,$(NCCL_PIP)),-DDDT_NO_NCCL))
  NCCL_LIBS := $(if $(NCCL_SYS),-lnccl,$(if $(NCCL_PIP),-L$(word 2,$(NCCL_PIP)) -Wl$(comma)-rpath$(comma)$(word 2,$(NCCL_PIP)) -l:$(word 3,$(NCCL_PIP))))
  NVCC_FLAGS += $(NCCL_CFLAGS)
  CUDA_LIBS := -L$(CUDA_HOME)/lib64 -Wl,-rpath,$(CUDA_HOME)/lib64 -lcudart -lcublas $(NCCL_LIBS)
  CUDA_NOTE := building $(CUDA_LIB) for $(CUDA_ARCHS:%=sm_%) with $(NVCC)
else
  CUDA_NOTE := not built ($(if $(NVCC),$(if $(GPU_ARCHS),CUDA=0,no GPU here; make CUDA=1 builds it),nvcc not found)): CUDA ops report skipped
endif
# One line on what this build does with CUDA, from the top-level make only.
ifeq ($(MAKELEVEL),0)
  ifneq ($(filter-out clean,$(or $(MAKECMDGOALS),all)),)
    $(info ddt: CUDA backend $(CUDA_NOTE); GPUs here: $(or $(GPU_ARCHS:%=sm_%),none))
  endif
endif

# Made here: docs/*.md built into ddt for `ddt help TOPIC` (tools/embed-docs;
# built in, so help works wherever the binary goes and matches its build),
# and the version `ddt --version` prints.
GEN_OBJ := $(BUILD)/gen/help_docs.o $(BUILD)/gen/version.o
OBJ := $(PIPE_SRC:%.c=$(BUILD)/%.o) $(ENGINE_SRC:%.c=$(BUILD)/%.o) $(GEN_OBJ)
LIB := $(BUILD)/libddt.a
TESTS := $(TEST_SRC:tests/%.c=$(BUILD)/tests/%)
BENCHES := $(BENCH_SRC:bench/%.c=$(BUILD)/bench/%)
DEPS_OK := $(BUILD)/.deps-ok

.SECONDARY:
.PHONY: all deps FORCE test nightly bench gpu-check clean
all: $(BUILD)/ddt
ifeq ($(CUDA),1)
all test bench nightly install-cron: $(CUDA_LIB)
endif

# Installs what pkg-config cannot find (apt-get update once first), then says
# which optional parts are here.
$(DEPS_OK): Makefile tools/ensure-deps
	@tools/ensure-deps "$(PKGS)" "$(APT_PKGS)"
	@mkdir -p $(BUILD) && touch $@
deps: $(DEPS_OK)

# Objects rebuild when their flags change (another OPT; for the kernels
# other archs), each compiler's apart.
FLAGS_NOW = $(CC) $(ALL_CFLAGS) | $(CXX) $(SIM_CXXFLAGS)
$(BUILD)/.flags: FORCE | $(DEPS_OK)
	@echo '$(FLAGS_NOW)' | cmp -s - $@ || echo '$(FLAGS_NOW)' > $@
$(BUILD)/.cuflags: FORCE | $(DEPS_OK)
	@echo '$(NVCC) $(NVCC_FLAGS) $(CUDA_LIBS)' | cmp -s - $@ || echo '$(NVCC) $(NVCC_FLAGS) $(CUDA_LIBS)' > $@
FORCE:

$(BUILD)/%.o: %.c $(BUILD)/.flags | $(DEPS_OK)
	@mkdir -p $(dir $@)
	@echo "  CC    $<"
	@$(CC) $(ALL_CFLAGS) -c $< -o $@

$(BUILD)/%.o: %.cu $(BUILD)/.cuflags | $(DEPS_OK)
	@mkdir -p $(dir $@)
	@echo "  NVCC  $<"
	@$(NVCC) $(NVCC_FLAGS) -c $< -o $@

DOCS := $(sort $(wildcard docs/*.md))
$(BUILD)/gen/help_docs.c: $(DOCS) tools/embed-docs
	@mkdir -p $(dir $@)
	@tools/embed-docs $(DOCS) > $@.tmp && mv $@.tmp $@
# `git describe` of the checkout, else "unknown" (a tarball); rewritten only
# when it changed, so an unchanged tree relinks nothing.
DDT_VERSION = $(shell git describe --always --dirty --tags 2>/dev/null || echo unknown)
$(BUILD)/gen/version.c: FORCE
	@mkdir -p $(dir $@)
	@v='const char help_version[] = "$(DDT_VERSION)";'; \
	 printf '#include "help.h"\n%s\n' "$$v" | cmp -s - $@ || printf '#include "help.h"\n%s\n' "$$v" > $@
$(BUILD)/gen/%.o: $(BUILD)/gen/%.c $(BUILD)/.flags | $(DEPS_OK)
	@echo "  CC    $<"
	@$(CC) $(ALL_CFLAGS) -Ipipeline/cmd -c $< -o $@

$(LIB): $(OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/ddt: $(BUILD)/pipeline/cmd/main.o $(LIB)
	$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS)

# The backend exports its entry point only (engine/cuda/backend.map) and
# binds its own symbols first; nothing is left for the loader to find in ddt.
$(BUILD)/engine/cuda/backend.o: CFLAGS += -fPIC
$(CUDA_LIB): $(CUDA_OBJ) engine/cuda/backend.map $(BUILD)/.cuflags
	@echo "  LD    $@"
	@$(CXX) -shared -o $@ $(CUDA_OBJ) -Wl,--version-script=engine/cuda/backend.map \
		-Wl,-Bsymbolic -Wl,--no-undefined $(CUDA_LIBS) -ldl -lm -pthread

$(BUILD)/tests/%: $(BUILD)/tests/%.o $(BUILD)/tests/helpers.o $(LIB)
	$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/bench/%: $(BUILD)/bench/%.o $(LIB)
	$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS)

# The CUDA kernels' own sources built by the host compiler and run on the CPU
# (engine/cuda/sim): tests/test_cuda_sim validates them with or without nvcc.
SIM_OPS := moe_w4a16 tree_attn tree_build accept memcpy
SIM_OBJ := $(SIM_OPS:%=$(BUILD)/sim/engine/cuda/%.o) $(BUILD)/engine/cuda/sim/sim.o
SIM_CXXFLAGS = -std=c++17 -fno-exceptions -fno-rtti $(WARN) -Wno-unknown-pragmas $(CFLAGS) $(CPPFLAGS) -MMD -MP

$(BUILD)/sim/%.o: %.cu $(BUILD)/.flags | $(DEPS_OK)
	@mkdir -p $(dir $@)
	@echo "  CXX   $< (CPU)"
	@$(CXX) -x c++ $(SIM_CXXFLAGS) -c $< -o $@
	@objcopy -w -G 'op_sim_*' $@  # only the op table is global: no clash with nvcc's objects

$(BUILD)/%.o: %.cpp $(BUILD)/.flags | $(DEPS_OK)
	@mkdir -p $(dir $@)
	@echo "  CXX   $<"
	@$(CXX) $(SIM_CXXFLAGS) -c $< -o $@

# A driver that counts one device and does nothing else: test_cuda_load opens
# the backend behind it on machines without a GPU.
$(BUILD)/tests/fake-driver/libcuda.so.1: tests/fake_driver.c | $(DEPS_OK)
	@mkdir -p $(dir $@)
	@$(CC) -std=c11 $(WARN) -shared -fPIC -Wl,-soname,libcuda.so.1 -o $@ $<
$(BUILD)/tests/test_cuda_load: | $(BUILD)/tests/fake-driver/libcuda.so.1

# A second user planting a run id at the moment ddt renames a folder into
# place (test_trust preloads it into ddt: the commit race made certain).
$(BUILD)/tests/plant_shim.so: tests/plant_shim.c | $(DEPS_OK)
	@mkdir -p $(dir $@)
	@$(CC) -std=c11 $(WARN) -shared -fPIC -o $@ $< -ldl
$(BUILD)/tests/test_trust: | $(BUILD)/tests/plant_shim.so

$(BUILD)/tests/test_cuda_sim: $(SIM_OBJ)
$(BUILD)/tests/test_cuda_sim: LDLIBS += -lstdc++

# tools/gpu-check's row runner with the simulator inside (--sim): its tests
# run the watchdog, the recovery and the exit codes without a GPU.
$(BUILD)/tools/gpu_check_main.o: CPPFLAGS += -DGC_SIM -Itests
$(BUILD)/tools/gpu-check-sim: $(BUILD)/tools/gpu_check_main.o $(SIM_OBJ) $(LIB)
	$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS) -lstdc++
$(BUILD)/tests/test_gpu_check: | $(BUILD)/tools/gpu-check-sim

# The CPU kernels come in three instruction sets (engine/cpu/kern.h) and
# -march=native builds only one: the ops' tests are also built for the other
# two, so a path this CPU does not pick still gets checked (x86-64 only).
ifeq ($(shell uname -m),x86_64)
KERN_ISAS := avx2=x86-64-v3 scalar=x86-64
endif
KERN_TESTS := $(foreach v,$(KERN_ISAS),build-kern-$(firstword $(subst =, ,$(v)))/tests/test_ops)
.PHONY: kern-tests
kern-tests: | $(DEPS_OK)
	@for v in $(KERN_ISAS); do \
		$(MAKE) --no-print-directory BUILD=build-kern-$${v%%=*} CUDA=0 \
			OPT="-O2 -march=$${v#*=}" build-kern-$${v%%=*}/tests/test_ops || exit 1; \
	done

# ---- the kernels' machine code (tools/sass_check.py): for sm_90 and sm_100,
# no local memory, HMMA where it matters, registers within each kernel's
# planned occupancy, hot-loop instruction budgets. Part of `make test` when
# nvcc is here; cuobjdump comes from its PyPI wheel in a virtual environment.
SASS_ARCHS := 90 100
SASS_SRC := moe_w4a16 tree_attn tree_build accept
SASS_CUBINS := $(foreach a,$(SASS_ARCHS),$(SASS_SRC:%=$(BUILD)/sass/%.sm_$(a).cubin))
SASS_VENV := $(BUILD)/sass-venv
SASS_PKGS := nvidia-cuda-cuobjdump==13.2.86 nvidia-cuda-nvdisasm==13.2.86

define SASS_RULE
$(BUILD)/sass/%.sm_$(1).cubin: engine/cuda/%.cu $(wildcard engine/cuda/*.cuh) $(BUILD)/.flags | $(DEPS_OK)
	@mkdir -p $$(dir $$@)
	@echo "  CUBIN $$< sm_$(1)"
	@$(NVCC) -cubin -arch=sm_$(1) -O3 -std=c++17 -Ilib -Iengine -DDDT_HAVE_CUDA -o $$@ $$<
endef
$(foreach a,$(SASS_ARCHS),$(eval $(call SASS_RULE,$(a))))

$(SASS_VENV)/.ok:
	@echo "  VENV  $(SASS_VENV) ($(SASS_PKGS))"
	@python3 -m venv $(SASS_VENV) && $(SASS_VENV)/bin/pip install -q --disable-pip-version-check $(SASS_PKGS)
	@touch $@

.PHONY: sass-check
ifneq ($(NVCC),)
sass-check: $(SASS_CUBINS) $(SASS_VENV)/.ok
	@python3 tools/sass_check.py $$(ls $(SASS_VENV)/lib/python3*/site-packages/nvidia/cu*/bin/cuobjdump | head -1) $(SASS_CUBINS)
else
sass-check:
	@echo "sass-check: nvcc not found: nothing to check"
endif

# Tests run from the project folder; DDT_BIN is the binary under test.
test: check-layers check-functions $(BUILD)/ddt $(TESTS) kern-tests $(if $(NVCC),sass-check)
	@tools/ensure-test-tools
	@DDT_BIN=$(abspath $(BUILD)/ddt) DDT_NVCC=$(NVCC) tools/run-tests $(TESTS) $(KERN_TESTS)


# Every #include points down the layers; no include cycle across folders;
# no document (render/) calls a function of a stage.
.PHONY: check-layers
check-layers:
	@tools/check_layers.py --self-test && tools/check_layers.py --render-calls

# No function outside the tests over 100 lines; the pipeline's median <= 15.
.PHONY: check-functions
check-functions:
	@tools/check_functions.py --self-test && tools/check_functions.py

bench: $(BUILD)/ddt $(BENCHES) $(if $(NVCC),$(BUILD)/bench/ddt-cuda-linked)
	@set -e; for b in $(BENCHES); do echo "== $$b"; $$b; done

# bench_startup's peer: ddt linked against cudart, cuBLAS and NCCL, as it was
# before its CUDA backend became a shared object (loaded at every start).
$(BUILD)/bench/ddt-cuda-linked: $(BUILD)/pipeline/cmd/main.o $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS) -Wl,--no-as-needed -L$(CUDA_HOME)/lib64 \
		-Wl,-rpath,$(CUDA_HOME)/lib64 -lcudart -lcublas -lnccl

nightly: $(BUILD)/ddt
	$(BUILD)/ddt nightly

# Runs the nightly every night for this user from cron (docs/nightly.md;
# tools/install-cron --systemd: a systemd user timer instead).
.PHONY: install-cron
install-cron: $(BUILD)/ddt
	tools/install-cron

gpu-check:
	tools/gpu-check

# The multi-node all-reduce (engine/mpi/, docs/cluster.md):
# build/ddt-allreduce, only where mpicc exists (NCCL inside when CUDA=1).
# test-fleet installs Slurm and OpenMPI, starts a one-host cluster, runs
# `ddt nightly --slurm` and the 2-rank all-reduce, and stops what it started.
MPICC ?= $(shell command -v mpicc 2>/dev/null)
ifneq ($(MPICC),)
all: $(BUILD)/ddt-allreduce
endif
ifeq ($(CUDA),1)
# (NCCL nowhere: the MPI backend only)
$(BUILD)/engine/mpi/%.o: CPPFLAGS += $(if $(filter -DDDT_NO_NCCL,$(NCCL_CFLAGS)),,-DDDT_HAVE_CUDA -I$(CUDA_HOME)/include $(NCCL_CFLAGS))
$(BUILD)/ddt-allreduce: LDLIBS += $(CUDA_LIBS)
endif
$(BUILD)/engine/mpi/%.o: engine/mpi/%.c $(BUILD)/.flags | $(DEPS_OK)
	@mkdir -p $(dir $@)
	@echo "  MPICC $<"
	@$(MPICC) $(ALL_CFLAGS) -c $< -o $@
$(BUILD)/ddt-allreduce: $(BUILD)/pipeline/cmd/allreduce_main.o $(BUILD)/engine/mpi/allreduce.o $(LIB)
	$(MPICC) $(CFLAGS) -o $@ $^ $(LDLIBS)
.PHONY: test-fleet
test-fleet: $(BUILD)/ddt
	tools/test-fleet $(BUILD)

clean:
	rm -rf $(BUILD) build-kern-avx2 build-kern-scalar

# ---- hardening (docs/reliability.md): fuzzing, sanitizers, valgrind ----
FUZZ_SECONDS ?= 60
SAN_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
FUZZ_SRC := $(wildcard fuzz/fuzz_*.c)
.PHONY: fuzz asan valgrind

# A fuzz target links the whole library: the records and stages it reaches
# call into the engine (a record's row parameters, the tree replay).
$(BUILD)/fuzz/%: $(BUILD)/fuzz/%.o $(LIB)
	$(CC) $(CFLAGS) -fsanitize=fuzzer -o $@ $^ $(LDLIBS)

# Each libFuzzer target (clang; ASan + UBSan) for FUZZ_SECONDS from fuzz/corpus/.
fuzz:
	@tools/ensure-sanitizers fuzz
	@$(MAKE) --no-print-directory BUILD=build-fuzz CC=clang CUDA=0 WARN='-Wall -Wextra' \
		CFLAGS='-O1 -g -fsanitize=fuzzer-no-link $(SAN_FLAGS)' $(FUZZ_SRC:fuzz/%.c=build-fuzz/fuzz/%)
	@fuzz/run build-fuzz $(FUZZ_SECONDS)

# The whole test suite built with AddressSanitizer + UBSan into build-asan/
# (CUDA objects left out: ASan cannot see into them; CUDA ops report skipped).
# Warnings do not stop it: sanitizer code paths make gcc warn where the plain
# build (which keeps -Werror) does not.
asan:
	@tools/ensure-sanitizers asan $(CC)
	@ASAN_OPTIONS=detect_leaks=1:strict_string_checks=1:check_initialization_order=1 \
	 LSAN_OPTIONS=suppressions=$(abspath tools/lsan.supp):print_suppressions=0 \
	 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
	 $(MAKE) --no-print-directory BUILD=build-asan CUDA=0 WARN='-Wall -Wextra' \
		CFLAGS='$(OPT) -g $(SAN_FLAGS)' test

# The nightly's CPU ops under valgrind memcheck, from a CPU-only build in
# build-valgrind/ (x86-64-v3: valgrind cannot run AVX-512).
valgrind:
	@tools/ensure-sanitizers valgrind
	@$(MAKE) --no-print-directory BUILD=build-valgrind CUDA=0 OPT='-O2 -march=x86-64-v3' build-valgrind/ddt
	tools/valgrind-nightly build-valgrind/ddt

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
