# The randomized exchange-program tester: gen_exchange and gen_pipeline build and run one generated
# program from a seed (gen_exchange: threads with their own producers and consumers on every
# stream kind, two simulated devices, host synchronizations of every kind; gen_pipeline: loader and
# consumer threads through a bounded host queue, a buffer pool recycled across threads, events
# recorded on one thread and waited for on another, streams made per use; gen_loader: the same in
# long programs, events made per item and destroyed after their wait). test_generated runs
# many seeds plainly and under check and fix with the simulator's trace on, and judges every run by
# the reference (oracle.h) and dlsync's log (judge.h). GEN_PROGRAMS, GEN_SEED: how many programs,
# and from which seed; CI runs a longer set.
GEN_DIR := $(B)/synth
GEN_OBJ := $(B)/obj/tests/synth
GEN_PROG := $(GEN_DIR)/gen_exchange
GEN_PIPE := $(GEN_DIR)/gen_pipeline
GEN_LOAD := $(GEN_DIR)/gen_loader

# The reference (oracle.h): judges a run from the simulator's trace. A library of its own, the
# oracle command over it (replays), and its unit tests on hand-written traces.
ORACLE_OBJ := $(addprefix $(GEN_OBJ)/,oracle.o oracle_parse.o oracle_past.o oracle_pairs.o)
ORACLE_CLI := $(GEN_DIR)/oracle

$(ORACLE_CLI): $(GEN_OBJ)/oracle_main.o $(ORACLE_OBJ)
	@mkdir -p $(@D)
	$(if $(Q),@echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(B)/tests/test_oracle: $(GEN_OBJ)/test_oracle.o $(ORACLE_OBJ) $(TEST_COMMON_OBJ)
	@mkdir -p $(@D)
	$(if $(Q),@echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ -lcmocka $(LDLIBS)

$(B)/tests/test_judge: $(GEN_OBJ)/test_judge.o $(GEN_OBJ)/judge.o $(ORACLE_OBJ) $(TEST_COMMON_OBJ)
	@mkdir -p $(@D)
	$(if $(Q),@echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ -lcmocka $(LDLIBS)

ALL   += $(ORACLE_CLI) $(B)/tests/test_oracle $(B)/tests/test_judge
TESTS += $(B)/tests/test_oracle $(B)/tests/test_judge

$(GEN_OBJ)/%.o: EXTRA_CFLAGS += $(CUDASIM_CFLAGS) -I tests/scenarios

$(GEN_PROG): $(GEN_OBJ)/gen_exchange.o $(SCEN_LIBS) $(CUDASIM_LIBS)
	@mkdir -p $(@D)
	$(if $(Q),@echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) $(CUDASIM_LDFLAGS) $(SCEN_RPATH) -o $@ $(filter %.o,$^) \
	    -lfakemx -lfaketvm -lscenbackend -lcudart -lcuda $(LDLIBS)

$(GEN_PIPE): $(GEN_OBJ)/gen_pipeline.o $(SCEN_LIBS) $(CUDASIM_LIBS)
	@mkdir -p $(@D)
	$(if $(Q),@echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) $(CUDASIM_LDFLAGS) $(SCEN_RPATH) -o $@ $(filter %.o,$^) \
	    -lfakemx -lfaketvm -lscenbackend -lcudart -lcuda $(LDLIBS)

$(GEN_LOAD): $(GEN_OBJ)/gen_loader.o $(SCEN_LIBS) $(CUDASIM_LIBS)
	@mkdir -p $(@D)
	$(if $(Q),@echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) $(CUDASIM_LDFLAGS) $(SCEN_RPATH) -o $@ $(filter %.o,$^) \
	    -lfakemx -lfaketvm -lscenbackend -lcudart -lcuda $(LDLIBS)

$(B)/tests/test_generated: $(GEN_OBJ)/test_generated.o $(GEN_OBJ)/judge.o $(ORACLE_OBJ) $(TEST_COMMON_OBJ) \
                           $(GEN_PROG) $(GEN_PIPE) $(GEN_LOAD) $(ORACLE_CLI) $(SHIM_LIB)
	@mkdir -p $(@D)
	$(if $(Q),@echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $(filter %.o,$^) -lcmocka $(LDLIBS)

ALL   += $(GEN_PROG) $(GEN_PIPE) $(GEN_LOAD) $(B)/tests/test_generated
TESTS += $(B)/tests/test_generated

# make test-generated: CI's longer run of the tester: 2,000 programs of both shapes, each plainly
# and under check and fix, two at a time, judged as make test judges its 120 (GEN_STRICT=1: check's
# false positives and the misses its callbacks could have seen fail their runs; the misses at a
# callback's edge are counted and printed), and 30 gen_loader programs of each seed's length (100
# to 4,000 items).
.PHONY: test-generated
test-generated: $(B)/tests/test_generated
	GEN_SEED=1000 GEN_PROGRAMS=2000 GEN_LOADERS=30 GEN_LOADER_ITEMS=0 GEN_JOBS=2 $(B)/tests/test_generated
