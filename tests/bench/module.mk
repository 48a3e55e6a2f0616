# Benchmarks of the exchange path on the CUDA simulator (no assertions; make bench prints them):
# bench_pipeline, which links the API tests' fake producer (tests/api/module.mk). Read before
# tests/cudasim and tests/common, so prerequisites name their files directly.
# bench_pipeline splits its whole-path figures with callgrind_calls (what a profile's calls out of
# some functions cost), which test_callgrind_calls tests.
# The budgets of the held figures (budget.h), which bench_cost (tests/scenarios) and bench_hooks
# (tests/fixtures) link, modules read after this one; bench_verdict, the one-line verdict that
# ends make bench; and test_budget, the tests of both. bench_soak: memory over a long
# hand-synchronized pipeline (make bench), whose short run test_soak makes in make test.
BENCH_PIPELINE := $(B)/tests/bench_pipeline
BENCH_BUDGET_OBJ := $(B)/obj/tests/bench/budget.o
BENCH_VERDICT := $(B)/tests/bench_verdict

$(B)/obj/tests/bench/%.o: EXTRA_CFLAGS += -I shim/include -I tests/api -I tests/cudasim -I $(CUDA_INC)

$(BENCH_PIPELINE): $(B)/obj/tests/bench/bench_pipeline.o $(B)/obj/tests/bench/callgrind_calls.o \
                   $(B)/obj/tests/common/dls_test.o $(BENCH_BUDGET_OBJ) \
                   $(B)/tests/api/libapi_fakeprod.so $(B)/lib/libdlsync.so
	@mkdir -p $(@D)
	$(if $(Q),@echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -L$(B)/cudasim -Wl,-rpath,$(ABSB)/cudasim -L$(B)/tests/api -Wl,-rpath,$(ABSB)/tests/api \
	    -o $@ $(filter %.o,$^) -lapi_fakeprod -lcudart -lcuda $(LDLIBS)

# bench_soak: dlsync's extra peak RSS over a long hand-synchronized pipeline (make bench).
BENCH_SOAK := $(B)/tests/bench_soak
$(BENCH_SOAK): $(B)/obj/tests/bench/bench_soak.o $(B)/obj/tests/common/dls_test.o $(BENCH_BUDGET_OBJ) \
               $(B)/tests/api/libapi_fakeprod.so $(B)/lib/libdlsync.so
	@mkdir -p $(@D)
	$(if $(Q),@echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -L$(B)/cudasim -Wl,-rpath,$(ABSB)/cudasim -L$(B)/tests/api -Wl,-rpath,$(ABSB)/tests/api \
	    -o $@ $(filter %.o,$^) -lapi_fakeprod -lcudart -lcuda $(LDLIBS)

$(BENCH_VERDICT): $(B)/obj/tests/bench/bench_verdict.o $(BENCH_BUDGET_OBJ)
	@mkdir -p $(@D)
	$(if $(Q),@echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# test_budget runs scripts/run-bench.sh with bench_verdict on benchmarks of its own.
$(B)/tests/test_budget: $(B)/obj/tests/bench/test_budget.o $(BENCH_BUDGET_OBJ) $(B)/obj/tests/common/dls_test.o \
                        | $(BENCH_VERDICT)
	@mkdir -p $(@D)
	$(if $(Q),@echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $(filter %.o,$^) -lcmocka $(LDLIBS)

$(B)/tests/test_callgrind_calls: $(B)/obj/tests/bench/test_callgrind_calls.o $(B)/obj/tests/bench/callgrind_calls.o
	@mkdir -p $(@D)
	$(if $(Q),@echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ -lcmocka $(LDLIBS)

# test_soak runs bench_soak's short run (CI).
$(B)/tests/test_soak: $(B)/obj/tests/bench/test_soak.o $(B)/obj/tests/common/dls_test.o | $(BENCH_SOAK)
	@mkdir -p $(@D)
	$(if $(Q),@echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $(filter %.o,$^) -lcmocka $(LDLIBS)

ALL     += $(BENCH_PIPELINE) $(BENCH_SOAK) $(BENCH_VERDICT) $(B)/tests/test_budget $(B)/tests/test_soak \
           $(B)/tests/test_callgrind_calls
BENCHES += $(BENCH_PIPELINE) $(BENCH_SOAK)
TESTS   += $(B)/tests/test_budget $(B)/tests/test_soak $(B)/tests/test_callgrind_calls
