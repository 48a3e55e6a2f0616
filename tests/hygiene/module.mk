# Process hygiene (tests/hygiene): dlsync inside programs that close and reuse descriptors, start
# children without LD_PRELOAD, and dlclose the library; the log on files that cannot be written.
#   hygiene_app    fixture program (see hygiene_app.c), linked with libfw_capi.so
#   hygiene_cuda   a CUDA program with its own CUPTI subscriber, on the simulator
#   test_hygiene   cmocka: runs them with the real libdlsync.so
HYG_APP  := $(B)/tests/hygiene/hygiene_app
HYG_CUDA := $(B)/tests/hygiene/hygiene_cuda
HYG_TEST := $(B)/tests/test_hygiene

$(B)/obj/tests/hygiene/%.o: EXTRA_CFLAGS += -I shim/include -I tests/fixtures $(CUDASIM_CFLAGS)

$(HYG_APP): $(B)/obj/tests/hygiene/hygiene_app.o $(FIX_DIR)/libfw_capi.so
	@mkdir -p $(@D)
	$(if $(Q),@echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $< -L$(FIX_DIR) -lfw_capi $(FIX_RPATH) $(LDLIBS)

$(HYG_CUDA): $(B)/obj/tests/hygiene/hygiene_cuda.o $(CUDASIM_LIBS)
	$(CUDASIM_LINK) -lcupti

$(HYG_TEST): $(B)/obj/tests/hygiene/test_hygiene.o $(TEST_COMMON_OBJ) $(HYG_APP) $(HYG_CUDA) $(SHIM_LIB)
	@mkdir -p $(@D)
	$(if $(Q),@echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $(filter %.o,$^) -lcmocka $(LDLIBS)

ALL   += $(HYG_APP) $(HYG_CUDA) $(HYG_TEST)
TESTS += $(HYG_TEST)
