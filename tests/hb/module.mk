# The happens-before engine's test support: the brute-force reference model linked into the
# differential test, and the benchmark.
HB_REF_OBJ := $(B)/obj/tests/hb/hb_reference.o

$(B)/obj/tests/hb/%.o: EXTRA_CFLAGS += -I shim/include -I shim

$(B)/tests/test_hb_diff: $(B)/obj/tests/unit/test_hb_diff.o $(HB_REF_OBJ) $(SHIM_AR) $(TEST_COMMON_OBJ)
	@mkdir -p $(@D)
	$(if $(Q),@echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $< $(HB_REF_OBJ) $(TEST_COMMON_OBJ) $(SHIM_AR) -lcmocka $(LDLIBS)

$(B)/bench/bench_hb: $(B)/obj/tests/hb/bench_hb.o $(SHIM_AR)
	@mkdir -p $(@D)
	$(if $(Q),@echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $< $(SHIM_AR) $(LDLIBS)

ALL     += $(B)/bench/bench_hb
BENCHES += $(B)/bench/bench_hb
