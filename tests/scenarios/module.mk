# The race scenario corpus: fake legacy frameworks (libfakemx.so "mxnet", libfaketvm.so "tvm"),
# the simulator backend of scen_backend.h (libscenbackend.so), one program per scenario
# ($(SCEN_DIR)/scen_<name>, argument racy|correct), and the test binaries that run them with and
# without the shim: test_scenarios (every mode, assertions on the log), test_scenarios_fix
# (fix mode, 100 runs of every racy scenario), test_profilers (dlsync beside a CUPTI profiler) and
# test_pipelines (a hand-synchronized loader pipeline: no report, no wait).
#
# A GPU build compiles the same scenario and framework sources with a CUDA backend instead of
# scen_backend_sim.c; nothing else here includes cudasim.h.

SCEN_DIR   := $(B)/scenarios
SCEN_NAMES := $(patsubst tests/scenarios/s_%.c,%,$(sort $(wildcard tests/scenarios/s_*.c)))
SCEN_PROGS := $(SCEN_NAMES:%=$(SCEN_DIR)/scen_%)
SCEN_LIBS  := $(SCEN_DIR)/libscenbackend.so $(SCEN_DIR)/libfakemx.so $(SCEN_DIR)/libfaketvm.so
SCEN_OBJ   := $(B)/obj/tests/scenarios
SCEN_RPATH := -L$(SCEN_DIR) -Wl,-rpath,$(ABSB)/scenarios

$(SCEN_OBJ)/%.o: EXTRA_CFLAGS += $(CUDASIM_CFLAGS) -fvisibility=default

$(SCEN_DIR)/libscenbackend.so: $(SCEN_OBJ)/scen_backend_sim.o $(CUDASIM_LIBS)
	@mkdir -p $(@D)
	$(if $(Q),@echo "  LD      $@")
	$(Q)$(CC) -shared -Wl,-soname,libscenbackend.so $(LDFLAGS) $(CUDASIM_LDFLAGS) -o $@ $< -lcudart -lcuda $(LDLIBS)

$(SCEN_DIR)/libfake%.so: $(SCEN_OBJ)/fake%.o $(SCEN_DIR)/libscenbackend.so $(CUDASIM_LIBS)
	@mkdir -p $(@D)
	$(if $(Q),@echo "  LD      $@")
	$(Q)$(CC) -shared -Wl,-soname,libfake$*.so $(LDFLAGS) $(CUDASIM_LDFLAGS) $(SCEN_RPATH) -o $@ $< \
	    -lscenbackend -lcudart $(LDLIBS)

$(SCEN_DIR)/scen_%: $(SCEN_OBJ)/s_%.o $(SCEN_OBJ)/scen.o $(SCEN_LIBS) $(CUDASIM_LIBS)
	@mkdir -p $(@D)
	$(if $(Q),@echo "  LD      $@")
	$(Q)$(CC) -rdynamic $(LDFLAGS) $(CUDASIM_LDFLAGS) $(SCEN_RPATH) -o $@ $(filter %.o,$^) \
	    -lfakemx -lfaketvm -lscenbackend -lcudart $(LDLIBS)

# stress_sync: exchanges while other threads synchronize (simulator only: it sets a kernel
# duration); run by test_scenarios_fix.
$(SCEN_OBJ)/stress_sync.o $(SCEN_OBJ)/stall_host_wait.o: EXTRA_CFLAGS += $(CUDASIM_CFLAGS)
STRESS_SYNC := $(SCEN_DIR)/stress_sync
$(STRESS_SYNC): $(SCEN_OBJ)/stress_sync.o $(SCEN_LIBS) $(CUDASIM_LIBS)
	@mkdir -p $(@D)
	$(if $(Q),@echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) $(CUDASIM_LDFLAGS) $(SCEN_RPATH) -o $@ $(filter %.o,$^) \
	    -lfakemx -lfaketvm -lscenbackend -lcudart -lcuda $(LDLIBS)
ALL += $(STRESS_SYNC)

# stall_host_wait: launches on one thread while the shim waits on the host on another; run by
# test_scenarios_fix.
STALL := $(SCEN_DIR)/stall_host_wait
$(STALL): $(SCEN_OBJ)/stall_host_wait.o $(SCEN_OBJ)/scen.o $(SCEN_LIBS) $(CUDASIM_LIBS)
	@mkdir -p $(@D)
	$(if $(Q),@echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) $(CUDASIM_LDFLAGS) $(SCEN_RPATH) -o $@ $(filter %.o,$^) \
	    -lfakemx -lfaketvm -lscenbackend -lcudart $(LDLIBS)
ALL += $(STALL)

# fence_exact: the release fence waits for the consumer's read, not for later work of its stream
# (simulator only: it settles and queries); run by test_scenarios_fix.
$(SCEN_OBJ)/fence_exact.o: EXTRA_CFLAGS += $(CUDASIM_CFLAGS)
FENCE_EXACT := $(SCEN_DIR)/fence_exact
$(FENCE_EXACT): $(SCEN_OBJ)/fence_exact.o $(SCEN_OBJ)/scen.o $(SCEN_LIBS) $(CUDASIM_LIBS)
	@mkdir -p $(@D)
	$(if $(Q),@echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) $(CUDASIM_LDFLAGS) $(SCEN_RPATH) -o $@ $(filter %.o,$^) \
	    -lfakemx -lfaketvm -lscenbackend -lcudart $(LDLIBS)
ALL += $(FENCE_EXACT)

# scen_profiled: the side_stream exchange beside a fake CUPTI profiler, libfakeprof.so, which
# also serves as a CUDA injection library (test_profilers).
SCEN_PROFILED := $(SCEN_DIR)/scen_profiled $(SCEN_DIR)/libfakeprof.so
$(SCEN_DIR)/libfakeprof.so: $(SCEN_OBJ)/fakeprof.o $(CUDASIM_LIBS)
	@mkdir -p $(@D)
	$(if $(Q),@echo "  LD      $@")
	$(Q)$(CC) -shared -Wl,-soname,libfakeprof.so $(LDFLAGS) $(CUDASIM_LDFLAGS) -o $@ $< -lcupti $(LDLIBS)

$(SCEN_DIR)/scen_profiled: $(SCEN_OBJ)/profiled.o $(SCEN_OBJ)/scen.o $(SCEN_LIBS) $(SCEN_DIR)/libfakeprof.so
	@mkdir -p $(@D)
	$(if $(Q),@echo "  LD      $@")
	$(Q)$(CC) -rdynamic $(LDFLAGS) $(CUDASIM_LDFLAGS) $(SCEN_RPATH) -o $@ $(filter %.o,$^) \
	    -lfakemx -lfaketvm -lscenbackend -lfakeprof -lcudart $(LDLIBS)

# scen_kineto: the side_stream exchange inside a program with a Kineto-shaped CUPTI client, linked
# to libcupti as libtorch_cuda is (test_profilers).
SCEN_KINETO := $(SCEN_DIR)/scen_kineto
$(SCEN_KINETO): $(SCEN_OBJ)/kineto.o $(SCEN_OBJ)/scen.o $(SCEN_LIBS) $(CUDASIM_LIBS)
	@mkdir -p $(@D)
	$(if $(Q),@echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) $(CUDASIM_LDFLAGS) $(SCEN_RPATH) -o $@ $(filter %.o,$^) \
	    -lfakemx -lfaketvm -lscenbackend -lcupti -lcudart -ldl $(LDLIBS)

# loader_pipeline: a hand-synchronized loader/consumer pipeline over libfakepool.so (arrays on
# streams of their own, a stream made per import); run by test_pipelines.
LOADER_PIPELINE := $(SCEN_DIR)/loader_pipeline
$(SCEN_DIR)/libfakepool.so: $(SCEN_OBJ)/fakepool.o $(CUDASIM_LIBS)
	@mkdir -p $(@D)
	$(if $(Q),@echo "  LD      $@")
	$(Q)$(CC) -shared -Wl,-soname,libfakepool.so $(LDFLAGS) $(CUDASIM_LDFLAGS) -o $@ $< -lcudart $(LDLIBS)
$(LOADER_PIPELINE): $(SCEN_OBJ)/loader_pipeline.o $(SCEN_DIR)/libfakepool.so $(CUDASIM_LIBS)
	@mkdir -p $(@D)
	$(if $(Q),@echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) $(CUDASIM_LDFLAGS) $(SCEN_RPATH) -o $@ $(filter %.o,$^) -lfakepool -lcudart -lpthread \
	    $(LDLIBS)
ALL += $(SCEN_DIR)/libfakepool.so $(LOADER_PIPELINE)

SCEN_TESTS := $(B)/tests/test_scenarios $(B)/tests/test_scenarios_fix $(B)/tests/test_profilers \
              $(B)/tests/test_pipelines
$(B)/obj/tests/scenarios/test_%.o: EXTRA_CFLAGS += $(TEST_CFLAGS)
$(SCEN_TESTS): $(B)/tests/%: $(SCEN_OBJ)/%.o $(SCEN_OBJ)/scen_run.o $(TEST_COMMON_OBJ) $(SCEN_PROGS) \
               $(SCEN_PROFILED) $(SCEN_KINETO) $(SHIM_LIB) $(STRESS_SYNC) $(STALL) $(FENCE_EXACT) $(LOADER_PIPELINE)
	@mkdir -p $(@D)
	$(if $(Q),@echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $(filter %.o,$^) -lcmocka $(LDLIBS)
$(SCEN_OBJ)/scen_run.o: EXTRA_CFLAGS += $(TEST_CFLAGS)

ALL   += $(SCEN_LIBS) $(SCEN_PROGS) $(SCEN_PROFILED) $(SCEN_KINETO) $(SCEN_TESTS)
TESTS += $(SCEN_TESTS)

# bench_observer: per-launch cost of the observer in each mode (make bench).
BENCH_OBSERVER := $(B)/tests/bench_observer
$(BENCH_OBSERVER): $(SCEN_OBJ)/bench_observer.o $(TEST_COMMON_OBJ) $(SCEN_LIBS) $(SHIM_LIB) $(CUDASIM_LIBS)
	@mkdir -p $(@D)
	$(if $(Q),@echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) $(CUDASIM_LDFLAGS) $(SCEN_RPATH) -o $@ $(filter %.o,$^) \
	    -lfakemx -lfaketvm -lscenbackend -lcudart $(LDLIBS)
$(SCEN_OBJ)/bench_observer.o: EXTRA_CFLAGS += $(TEST_CFLAGS)
ALL     += $(BENCH_OBSERVER)
BENCHES += $(BENCH_OBSERVER)

# libnullsub.so: a CUPTI subscriber with an empty callback, enabling the ids dlsync enables (its
# cbids table), loaded through CUDA_INJECTION64_PATH: bench_cost's baseline for dlsync's own cost.
NULLSUB := $(SCEN_DIR)/libnullsub.so
$(NULLSUB): $(SCEN_OBJ)/nullsub.o $(B)/obj/shim/cuda/cbids.o $(CUDASIM_LIBS)
	@mkdir -p $(@D)
	$(if $(Q),@echo "  LD      $@")
	$(Q)$(CC) -shared -Wl,-soname,libnullsub.so $(LDFLAGS) $(CUDASIM_LDFLAGS) -o $@ $(filter %.o,$^) -lcupti $(LDLIBS)
ALL += $(NULLSUB)

# bench_cost: the instructions dlsync adds per stream operation, exchange and log record (make bench).
BENCH_COST := $(B)/tests/bench_cost
$(BENCH_COST): $(SCEN_OBJ)/bench_cost.o $(TEST_COMMON_OBJ) $(BENCH_BUDGET_OBJ) $(SCEN_LIBS) $(SHIM_LIB) $(CUDASIM_LIBS) \
               $(NULLSUB)
	@mkdir -p $(@D)
	$(if $(Q),@echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) $(CUDASIM_LDFLAGS) $(SCEN_RPATH) -o $@ $(filter %.o,$^) \
	    -lfakemx -lfaketvm -lscenbackend -lcudart $(LDLIBS)
$(SCEN_OBJ)/bench_cost.o: EXTRA_CFLAGS += $(TEST_CFLAGS)
ALL     += $(BENCH_COST)
BENCHES += $(BENCH_COST)

# bench_threads: launch throughput with 1-8 launching threads and the stall of a launch during
# another thread's host wait, without the shim and under fix (make bench).
BENCH_THREADS := $(B)/tests/bench_threads
$(BENCH_THREADS): $(SCEN_OBJ)/bench_threads.o $(TEST_COMMON_OBJ) $(SCEN_LIBS) $(SHIM_LIB) $(CUDASIM_LIBS)
	@mkdir -p $(@D)
	$(if $(Q),@echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) $(CUDASIM_LDFLAGS) $(SCEN_RPATH) -o $@ $(filter %.o,$^) \
	    -lfakemx -lfaketvm -lscenbackend -lcudart -lcuda $(LDLIBS)
$(SCEN_OBJ)/bench_threads.o: EXTRA_CFLAGS += $(TEST_CFLAGS)
ALL     += $(BENCH_THREADS)
BENCHES += $(BENCH_THREADS)
