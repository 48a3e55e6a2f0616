# Benchmarks of the exchange path on the CUDA simulator (no assertions; make bench prints them):
# bench_pipeline, which links the API tests' fake producer (tests/api/module.mk). Read before
# tests/cudasim and tests/common, so prerequisites name their files directly.
BENCH_PIPELINE := $(B)/tests/bench_pipeline

$(B)/obj/tests/bench/%.o: EXTRA_CFLAGS += -I shim/include -I tests/api -I tests/cudasim -I $(CUDA_INC)

$(BENCH_PIPELINE): $(B)/obj/tests/bench/bench_pipeline.o $(B)/obj/tests/common/dls_test.o \
                   $(B)/tests/api/libapi_fakeprod.so $(B)/lib/libdlsync.so
	@mkdir -p $(@D)
	$(if $(Q),@echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -L$(B)/cudasim -Wl,-rpath,$(ABSB)/cudasim -L$(B)/tests/api -Wl,-rpath,$(ABSB)/tests/api \
	    -o $@ $(filter %.o,$^) -lapi_fakeprod -lcudart -lcuda $(LDLIBS)

ALL     += $(BENCH_PIPELINE)
BENCHES += $(BENCH_PIPELINE)
