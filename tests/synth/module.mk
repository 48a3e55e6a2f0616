# The randomized exchange-program tester: gen_exchange builds and runs one generated program from
# a seed (threads, producers and consumers on every stream kind, two simulated devices, delays,
# host synchronizations, events, releases and reuse), and test_generated runs many seeds plainly
# and under check and fix and checks every read against host order (GEN_PROGRAMS, GEN_SEED:
# how many programs, and from which seed; CI runs a longer set).
GEN_DIR := $(B)/synth
GEN_OBJ := $(B)/obj/tests/synth
GEN_PROG := $(GEN_DIR)/gen_exchange

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

ALL   += $(ORACLE_CLI) $(B)/tests/test_oracle
TESTS += $(B)/tests/test_oracle

$(GEN_OBJ)/%.o: EXTRA_CFLAGS += $(CUDASIM_CFLAGS) -I tests/scenarios

$(GEN_PROG): $(GEN_OBJ)/gen_exchange.o $(SCEN_LIBS) $(CUDASIM_LIBS)
	@mkdir -p $(@D)
	$(if $(Q),@echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) $(CUDASIM_LDFLAGS) $(SCEN_RPATH) -o $@ $(filter %.o,$^) \
	    -lfakemx -lfaketvm -lscenbackend -lcudart -lcuda $(LDLIBS)

$(B)/tests/test_generated: $(GEN_OBJ)/test_generated.o $(TEST_COMMON_OBJ) $(GEN_PROG) $(SHIM_LIB)
	@mkdir -p $(@D)
	$(if $(Q),@echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $(filter %.o,$^) -lcmocka $(LDLIBS)

ALL   += $(GEN_PROG) $(B)/tests/test_generated
TESTS += $(B)/tests/test_generated

# make test-generated: CI's longer run of the tester: 300 programs plainly and under check and
# fix, then 2,000 more under fix alone.
.PHONY: test-generated
test-generated: $(B)/tests/test_generated
	GEN_SEED=1000 GEN_PROGRAMS=300 $(B)/tests/test_generated
	GEN_SEED=100000 GEN_PROGRAMS=2000 GEN_MODES=fix $(B)/tests/test_generated
