# The GPU validation kit: the scenario corpus (tests/scenarios sources) and a demo pipeline built
# against the REAL CUDA runtime ($(CUDA_HOME)/lib64, not the simulator), with the CUDA backend
# of scen_backend.h (scen_backend_cuda.cu, built with nvcc). Everything lands in $(GPU_DIR):
#   scen_<name>       one program per tests/scenarios/s_<name>.c, argument racy|correct
#   libscenbackend.so libfakemx.so libfaketvm.so   the backend and fake frameworks, real CUDA
#   gpu_pipeline      producer -> consumer pipeline (racy | devsync, two release patterns), figures
#                     for gpu-check.sh
#   gpu_launch        a loop of launches, or of sets and copies (optionally with an exported tensor
#                     pending), figures for gpu-check.sh
#   libnullsub.so     tests/scenarios/nullsub.c on the real CUPTI: a subscriber enabling the callbacks
#                     dlsync enables and doing nothing (CUDA_INJECTION64_PATH), the floor of those figures
#   gpu_probe         says whether a CUDA device is usable (exit 0) or not (exit 1)
#   gpu_cupti_share   two CUPTI clients side by side: does the real CUPTI match the simulator's model
#
# `make test-gpu` builds them with the shim and runs tests/gpu/run-gpu-tests.sh: every scenario,
# racy and correct, plain / check / fix, one row each; without a usable GPU it reports them all as
# skipped and succeeds. Nothing here is in ALL: `make` and `make test` never need nvcc.
#   GPU_ARCH   nvcc code generation (default: Hopper machine code + PTX any newer GPU can JIT)

NVCC     ?= $(CUDA_HOME)/bin/nvcc
GPU_ARCH ?= -gencode arch=compute_90,code=sm_90 -gencode arch=compute_75,code=compute_75
GPU_DIR  := $(B)/gpu
GPU_OBJ  := $(B)/obj/gpu
GPU_CUDART := -L$(CUDA_HOME)/lib64 -Wl,-rpath,$(abspath $(CUDA_HOME))/lib64 -lcudart
GPU_RPATH  := -L$(GPU_DIR) -Wl,-rpath,$(ABSB)/gpu
GPU_NVFLAGS := -std=c++17 -O2 $(GPU_ARCH) -cudart shared -I tests/scenarios \
               -Xcompiler -fPIC,-Wall,-Wextra -Werror all-warnings

GPU_SCEN_NAMES := $(patsubst tests/scenarios/s_%.c,%,$(sort $(wildcard tests/scenarios/s_*.c)))
GPU_SCEN_PROGS := $(GPU_SCEN_NAMES:%=$(GPU_DIR)/scen_%)
GPU_SCEN_LIBS  := $(GPU_DIR)/libscenbackend.so $(GPU_DIR)/libfakemx.so $(GPU_DIR)/libfaketvm.so
GPU_TOOLS      := $(GPU_DIR)/gpu_pipeline $(GPU_DIR)/gpu_launch $(GPU_DIR)/gpu_probe $(GPU_DIR)/gpu_cupti_share \
                  $(GPU_DIR)/libnullsub.so
GPU_BINS       := $(GPU_SCEN_LIBS) $(GPU_SCEN_PROGS) $(GPU_TOOLS)

# C sources: the scenario corpus compiled unchanged, and this folder's C programs.
$(GPU_OBJ)/scenarios/%.o: tests/scenarios/%.c
	@mkdir -p $(@D)
	$(if $(Q),@echo "  CC      $< (real CUDA)")
	$(Q)$(CC) $(CFLAGS) -fvisibility=default -I tests/scenarios -I $(CUDA_INC) -c $< -o $@
$(GPU_OBJ)/%.o: tests/gpu/%.c
	@mkdir -p $(@D)
	$(if $(Q),@echo "  CC      $<")
	$(Q)$(CC) $(CFLAGS) -I tests/scenarios -I $(CUDA_INC) -c $< -o $@
$(GPU_OBJ)/%.o: tests/gpu/%.cu
	@mkdir -p $(@D)
	$(if $(Q),@echo "  NVCC    $<")
	$(Q)$(NVCC) $(GPU_NVFLAGS) -MMD -MP -c $< -o $@

$(GPU_DIR)/libscenbackend.so: $(GPU_OBJ)/scen_backend_cuda.o
	@mkdir -p $(@D)
	$(if $(Q),@echo "  LD      $@")
	$(Q)$(NVCC) -shared -cudart shared -Xlinker -soname,libscenbackend.so -o $@ $< \
	    -Xlinker -rpath,$(abspath $(CUDA_HOME))/lib64

$(GPU_DIR)/libfake%.so: $(GPU_OBJ)/scenarios/fake%.o $(GPU_DIR)/libscenbackend.so
	@mkdir -p $(@D)
	$(if $(Q),@echo "  LD      $@")
	$(Q)$(CC) -shared -Wl,-soname,libfake$*.so $(LDFLAGS) $(GPU_RPATH) -o $@ $< -lscenbackend $(GPU_CUDART) $(LDLIBS)

$(GPU_DIR)/scen_%: $(GPU_OBJ)/scenarios/s_%.o $(GPU_OBJ)/scenarios/scen.o $(GPU_SCEN_LIBS)
	@mkdir -p $(@D)
	$(if $(Q),@echo "  LD      $@")
	$(Q)$(CC) -rdynamic $(LDFLAGS) $(GPU_RPATH) -o $@ $(filter %.o,$^) \
	    -lfakemx -lfaketvm -lscenbackend $(GPU_CUDART) $(LDLIBS)

$(GPU_DIR)/gpu_pipeline: $(GPU_OBJ)/gpu_pipeline.o $(GPU_SCEN_LIBS)
	@mkdir -p $(@D)
	$(if $(Q),@echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) $(GPU_RPATH) -o $@ $< -lfakemx -lfaketvm -lscenbackend $(GPU_CUDART) $(LDLIBS)

$(GPU_DIR)/gpu_launch: $(GPU_OBJ)/gpu_launch.o $(GPU_SCEN_LIBS)
	@mkdir -p $(@D)
	$(if $(Q),@echo "  LD      $@")
	$(Q)$(NVCC) -cudart shared -o $@ $< -L$(GPU_DIR) -Xlinker -rpath,$(ABSB)/gpu -lfakemx -lscenbackend \
	    -Xlinker -rpath,$(abspath $(CUDA_HOME))/lib64

# The toolkit's CUPTI, the one dlsync finds beside this libcudart (CUDA 13: lib64; before: extras).
$(GPU_DIR)/libnullsub.so: $(GPU_OBJ)/scenarios/nullsub.o $(B)/obj/shim/cuda/cbids.o
	@mkdir -p $(@D)
	$(if $(Q),@echo "  LD      $@")
	$(Q)$(CC) -shared -Wl,-soname,libnullsub.so $(LDFLAGS) -o $@ $^ \
	    $(foreach d,lib64 extras/CUPTI/lib64,-L$(CUDA_HOME)/$(d) -Wl,-rpath,$(abspath $(CUDA_HOME))/$(d)) -lcupti $(LDLIBS)

$(GPU_DIR)/gpu_probe: $(GPU_OBJ)/gpu_probe.o
	@mkdir -p $(@D)
	$(if $(Q),@echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $< $(GPU_CUDART) $(LDLIBS)

$(GPU_DIR)/gpu_cupti_share: $(GPU_OBJ)/gpu_cupti_share.o
	@mkdir -p $(@D)
	$(if $(Q),@echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $< $(LDLIBS)

.PHONY: gpu test-gpu
gpu: $(SHIM_LIB) $(GPU_BINS)

# GPU_TEST_LOGS=folder keeps each scenario run's shim log and stderr there.
GPU_TEST_LOGS ?=
test-gpu: gpu
	@tests/gpu/run-gpu-tests.sh $(ABSB) $(GPU_TEST_LOGS)

# test_frameworks_dryrun (in `make test`, no nvcc): frameworks.py's plan, its rows on the simulator
# with the scenario corpus's fake frameworks, and its timeouts. tests/scenarios/module.mk is read
# after this file, so the fake frameworks' paths are spelled out.
GPU_DRYRUN := $(B)/tests/test_frameworks_dryrun
$(B)/obj/tests/gpu/test_frameworks_dryrun.o: EXTRA_CFLAGS += $(TEST_CFLAGS)
$(GPU_DRYRUN): $(B)/obj/tests/gpu/test_frameworks_dryrun.o $(TEST_COMMON_OBJ) $(SHIM_LIB) \
               $(B)/scenarios/libfakemx.so $(B)/scenarios/libfaketvm.so $(CUDASIM_LIBS)
	@mkdir -p $(@D)
	$(if $(Q),@echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $(filter %.o,$^) -lcmocka $(LDLIBS)
ALL   += $(GPU_DRYRUN)
TESTS += $(GPU_DRYRUN)
