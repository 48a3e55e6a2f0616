# End-to-end tests of the CUDA observer (shim/cuda): programs on the CUDA simulator run with the
# real libdlsync.so preloaded and CUDA_INJECTION64_PATH unset.
OBSERVE_APP    := $(B)/tests/observe/observe_app
OBSERVE_NOCUDA := $(B)/tests/observe/observe_nocuda
OBSERVE_TEST   := $(B)/tests/test_observe

$(B)/obj/tests/observe/%.o: EXTRA_CFLAGS += $(CUDASIM_CFLAGS)

$(OBSERVE_APP): $(B)/obj/tests/observe/observe_app.o $(CUDASIM_LIBS) $(CUDASIM_LINKS)
	$(CUDASIM_LINK)

$(OBSERVE_NOCUDA): $(B)/obj/tests/observe/observe_nocuda.o
	@mkdir -p $(@D)
	$(if $(Q),@echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $< $(LDLIBS)

$(OBSERVE_TEST): $(B)/obj/tests/observe/test_observe.o $(TEST_COMMON_OBJ) $(OBSERVE_APP) $(OBSERVE_NOCUDA) \
                 $(SHIM_LIB) $(CUDASIM_LIBS)
	@mkdir -p $(@D)
	$(if $(Q),@echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $(filter %.o,$^) -lcmocka $(LDLIBS)

ALL   += $(OBSERVE_APP) $(OBSERVE_NOCUDA) $(OBSERVE_TEST)
TESTS += $(OBSERVE_TEST)
