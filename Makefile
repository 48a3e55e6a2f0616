# dlsync — top-level build.
#
# Everything is built out of tree into $(BUILD) (default build/). Each area of the tree adds
# its own targets from a `module.mk` fragment; this file holds only the shared machinery:
# flags, the generic compile rule, the test runner, and the sanitizer variants.
#
#   make            build everything
#   make tool       the dlsync command alone ($(BUILD)/bin/dlsync); needs no CUDA headers
#   make check-tools-standalone   build the command from nothing with CUDA_HOME an empty folder
#   make test       build and run every test binary (ends with "N passed, N failed")
#   make demo       run the headline story (simulator when there is no GPU)
#   make bench      run the benchmarks, print their figures and check the budgets
#                   (tests/bench/budget.h: fails when a figure is over its budget)
#   make test-generated  the randomized exchange-program tester's longer run (CI)
#   make test-gpu   the scenario corpus on a real GPU (skipped without one); scripts/gpu-check.sh for the full check
#   make asan | ubsan | tsan | sanitize   the test suite under a sanitizer, in build/<name>/
#   make sim-sanitize | sim-tsan   only the simulator and its own tests (test_sim_*), under
#                   ASan+UBSan / ThreadSanitizer, in build/sim-sanitize/, build/sim-tsan/
#   make fuzz       the libFuzzer harnesses (clang), each for FUZZ_SECONDS, in build/fuzz/
#   make format | format-check   apply / check .clang-format on every tracked C, C++ and CUDA file
#   V=1             print full commands

CUDA_HOME ?= /usr/local/cuda
BUILD     ?= build
SAN       ?=
FUZZ      ?= 0
V         ?= 0

# The shim and the tests need the CUDA headers; the dlsync command does not (tools/module.mk), so
# `make tool`, and the goals that compile nothing, work without them.
CUDA_FREE_GOALS := tool check-tools-standalone clean format format-check
ifneq ($(filter-out $(CUDA_FREE_GOALS),$(or $(MAKECMDGOALS),all)),)
ifeq ($(wildcard $(CUDA_HOME)/include/cuda.h $(CUDA_HOME)/include/cupti_callbacks.h),)
$(error CUDA headers not found under CUDA_HOME=$(CUDA_HOME) (need include/cuda.h and include/cupti_callbacks.h). Install the CUDA 13 toolkit or run `make CUDA_HOME=/path/to/cuda` (`make tool` builds the dlsync command alone, without them))
endif
endif

B    := $(BUILD)
ABSB := $(abspath $(B))
Q    := $(if $(filter 1,$(V)),,@)
CC   ?= cc

# The compiler of what is shipped: libdlsync.so, the dlsync command and their objects (so also
# the internal archives the tests link). The test programs and libraries are built with CC.
# `make wheel` sets it to scripts/zig-cc, which links against glibc 2.28.
SHIP_CC  ?= $(CC)

CUDA_INC := $(CUDA_HOME)/include
WARN     := -Wall -Wextra -Werror
CFLAGS   := -std=gnu11 $(WARN) -g -O2 -fPIC -fvisibility=hidden -MMD -MP -D_GNU_SOURCE
LDFLAGS  :=
LDLIBS   := -lpthread -ldl

ifneq ($(SAN),)
CFLAGS  += -fsanitize=$(SAN) -fno-omit-frame-pointer -fno-sanitize-recover=all
LDFLAGS += -fsanitize=$(SAN)
endif

# make fuzz: every object gets libFuzzer's coverage instrumentation (clang only).
ifeq ($(FUZZ),1)
CFLAGS  += -fsanitize=fuzzer-no-link
endif

# The sanitizer runtime a preloaded shim needs in front of it when it is injected into a
# program that was not built with the sanitizer (python3, /bin/true). Empty without SAN.
SAN_RUNTIME := $(strip $(if $(filter address%,$(SAN)),$(shell $(CC) -print-file-name=libasan.so),\
               $(if $(filter thread,$(SAN)),$(shell $(CC) -print-file-name=libtsan.so),\
               $(if $(filter undefined,$(SAN)),$(shell $(CC) -print-file-name=libubsan.so),))))

# Targets contributed by the module fragments.
ALL     :=
TESTS   :=
BENCHES :=
DEMOS   :=

# Test programs learn where the build is at compile time, so each one can be run by hand.
TEST_CFLAGS := -I tests/common -DDLS_BUILD_DIR='"$(ABSB)"' -DDLS_SRC_DIR='"$(abspath .)"' \
               -DDLS_SAN_RUNTIME='"$(SAN_RUNTIME)"' -DDLS_SAN='"$(SAN)"'

.PHONY: all test demo bench deps asan ubsan tsan sanitize sim-sanitize sim-tsan sim-test fuzz fuzz-run clean test-gpu gpu \
        format format-check
.SECONDARY:
all:

include $(sort $(wildcard */module.mk */*/module.mk))

all: $(ALL)

$(B)/obj/shim/%.o $(B)/obj/tools/%.o $(SHIM_LIB) $(TOOL_BIN): CC := $(SHIP_CC)

# Generic compile rules: $(B)/obj/<source path>.o from <source path>.c, or from an assembly
# file <source path>.S (run through the C preprocessor, so it may include a header's constants).
$(B)/obj/%.o: %.c
	@mkdir -p $(@D)
	$(if $(Q),@echo "  CC      $<")
	$(Q)$(CC) $(CFLAGS) $(EXTRA_CFLAGS) -c $< -o $@

$(B)/obj/%.o: %.S
	@mkdir -p $(@D)
	$(if $(Q),@echo "  AS      $<")
	$(Q)$(CC) $(CFLAGS) $(EXTRA_CFLAGS) -c $< -o $@

deps:
	@scripts/deps.sh

test: deps
	@$(MAKE) --no-print-directory all
	@scripts/run-tests.sh $(TESTS)

demo: deps
	@$(MAKE) --no-print-directory all
	@scripts/demo.sh $(ABSB)

bench: deps
	@$(MAKE) --no-print-directory all
	@scripts/run-bench.sh --verdict $(BENCH_VERDICT) $(BENCHES)

asan:
	@$(MAKE) --no-print-directory BUILD=build/asan SAN=address test
ubsan:
	@$(MAKE) --no-print-directory BUILD=build/ubsan SAN=undefined test
tsan:
	@$(MAKE) --no-print-directory BUILD=build/tsan SAN=thread test
sanitize:
	@$(MAKE) --no-print-directory BUILD=build/sanitize SAN=address,undefined test
sim-sanitize:
	@$(MAKE) --no-print-directory BUILD=build/sim-sanitize SAN=address,undefined sim-test
sim-tsan:
	@$(MAKE) --no-print-directory BUILD=build/sim-tsan SAN=thread sim-test
fuzz:
	@scripts/deps.sh --ci
	@$(MAKE) --no-print-directory BUILD=build/fuzz CC=clang SAN=address,undefined FUZZ=1 fuzz-run

# The sources clang-format owns: every tracked C, C++ and CUDA file.
FORMAT_FILES = $(shell git ls-files '*.c' '*.h' '*.cc' '*.cu')
CLANG_FORMAT ?= clang-format

format:
	@scripts/deps.sh --ci
	@$(CLANG_FORMAT) -i $(FORMAT_FILES)

# Lists each file whose formatting differs and fails when there is one.
format-check:
	@scripts/deps.sh --ci
	@bad=0; for f in $(FORMAT_FILES); do \
	    $(CLANG_FORMAT) --dry-run -Werror "$$f" >/dev/null 2>&1 || { echo "format: $$f"; bad=$$((bad+1)); }; \
	done; [ $$bad -eq 0 ] || { echo "format-check: $$bad files differ from .clang-format (make format)"; exit 1; }

clean:
	rm -rf build

-include $(shell find $(B)/obj -name '*.d' 2>/dev/null)
