# Python frames in the shim's reports and the query API seen from Python (tests/python):
#   test_pyframes    cmocka: a legacy producer and consumer called from Python through ctypes
#                    (CDLL and PyDLL, scen_ctypes.py) on the simulator, under Debian's python3
#                    (libpython in the executable) and tests/python3-shared (the shared libpython):
#                    Python frames in the text report, the log and the Chrome trace, DLSYNC_STACK,
#                    and the in-tree `dlsync` module (query.py)
#   bench_pyframes   the cost of the GIL hooks per ctypes call and of Python frames per exchange
# The pytest cases (cases/) run in make test-frameworks, from the wheel.
# tests/scenarios and tools are read after this file: their paths are spelled out here.
PYTEST_DIR := $(B)/tests
PYTEST_NEEDS := $(SHIM_LIB) $(B)/scenarios/libfakemx.so $(B)/scenarios/libfaketvm.so \
                $(B)/scenarios/libscenbackend.so $(B)/bin/dlsync

$(B)/obj/tests/python/%.o: EXTRA_CFLAGS += -I tests/python

$(PYTEST_DIR)/test_pyframes: $(B)/obj/tests/python/test_pyframes.o $(TEST_COMMON_OBJ) | $(PYTEST_NEEDS)
	@mkdir -p $(@D)
	$(if $(Q),@echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $< $(TEST_COMMON_OBJ) -lcmocka $(LDLIBS)

$(PYTEST_DIR)/bench_pyframes: $(B)/obj/tests/python/bench_pyframes.o $(TEST_COMMON_OBJ) $(BENCH_BUDGET_OBJ) \
		| $(PYTEST_NEEDS)
	@mkdir -p $(@D)
	$(if $(Q),@echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $< $(TEST_COMMON_OBJ) $(BENCH_BUDGET_OBJ) $(LDLIBS)

ALL     += $(PYTEST_DIR)/test_pyframes $(PYTEST_DIR)/bench_pyframes
TESTS   += $(PYTEST_DIR)/test_pyframes
BENCHES += $(PYTEST_DIR)/bench_pyframes
