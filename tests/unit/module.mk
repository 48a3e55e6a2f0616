# Unit tests of the shim's internal modules: one cmocka binary per module, named
# tests/unit/test_<module>.c, linked against the shim's internal archive.
UNIT_SRCS := $(sort $(wildcard tests/unit/test_*.c))
UNIT_BINS := $(UNIT_SRCS:tests/unit/%.c=$(B)/tests/%)

$(B)/obj/tests/unit/%.o: EXTRA_CFLAGS += -I shim/include -I shim -I $(CUDA_INC)

$(B)/tests/test_%: $(B)/obj/tests/unit/test_%.o $(SHIM_AR) $(TEST_COMMON_OBJ)
	@mkdir -p $(@D)
	$(if $(Q),@echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $< $(TEST_COMMON_OBJ) $(SHIM_AR) -lcmocka $(LDLIBS)

ALL   += $(UNIT_BINS)
TESTS += $(UNIT_BINS)

# Allocation failures are injected into the policy's own allocations through the linker.
$(B)/tests/test_policy_memory: LDFLAGS += -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=dls_warn_once
$(B)/tests/test_policy_index_memory: LDFLAGS += -Wl,--wrap=malloc,--wrap=dls_warn_once

# The observer's test loads the simulated CUPTI, which finds the test's probe through dlsym.
$(B)/obj/tests/unit/test_cuda_observer.o: EXTRA_CFLAGS += -I tests/cudasim
$(B)/tests/test_cuda_observer: LDFLAGS += -rdynamic
$(B)/tests/test_cuda_observer: $(CUDASIM_LIBS)
