# The demo's own program (scripts/demo.sh runs it and the scenario programs): demo_api, a new
# consumer using the C API against the scenario corpus's fake MXNet. This fragment is read
# before tests/scenarios, so prerequisites name their files directly.
DEMO_API  := $(B)/demo/demo_api
DEMO_SCEN := $(B)/scenarios

$(B)/obj/tests/demo/%.o: EXTRA_CFLAGS += -I shim/include -I tests/scenarios -I tests/cudasim -I $(CUDA_INC)

$(DEMO_API): $(B)/obj/tests/demo/demo_api.o $(DEMO_SCEN)/libfakemx.so $(DEMO_SCEN)/libscenbackend.so \
             $(B)/scenarios/scen_side_stream $(B)/bin/dlsync $(B)/lib/libdlsync.so
	@mkdir -p $(@D)
	$(if $(Q),@echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -L$(B)/cudasim -Wl,-rpath,$(ABSB)/cudasim -L$(DEMO_SCEN) -Wl,-rpath,$(ABSB)/scenarios \
	    -o $@ $< -lfakemx -lscenbackend -lcudart $(LDLIBS)

ALL   += $(DEMO_API)
DEMOS += $(DEMO_API)
