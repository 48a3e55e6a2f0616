# Tests of the public C API (shim/include/dlsync.h): libapi_fakeprod.so, a fake legacy producer
# exporting MXNDArrayToDLPack and TVMFFITensorToDLPackVersioned on the CUDA simulator, and
# test_api, which runs itself with the real libdlsync.so preloaded (fix, check, trace) and
# without it. This fragment is read before tests/cudasim and tests/common, so prerequisites
# name their files directly and flags are expanded late.
API_DIR     := $(B)/tests/api
API_FAKE    := $(API_DIR)/libapi_fakeprod.so
API_TEST    := $(B)/tests/test_api
API_CFLAGS   = $(CUDASIM_CFLAGS) -I shim/include -I tests/api

$(B)/obj/tests/api/%.o: EXTRA_CFLAGS += $(API_CFLAGS) $(TEST_CFLAGS)
$(B)/obj/tests/api/fakeprod.o: EXTRA_CFLAGS += -fvisibility=default

API_SIMLIBS := $(addprefix $(B)/cudasim/,libcuda.so.1 libcudart.so.13 libcupti.so.13)
API_COMMON  := $(B)/obj/tests/common/dls_test.o

$(API_FAKE): $(B)/obj/tests/api/fakeprod.o $(API_SIMLIBS)
	@mkdir -p $(@D)
	$(if $(Q),@echo "  LD      $@")
	$(Q)$(CC) -shared -Wl,-soname,libapi_fakeprod.so $(LDFLAGS) $(CUDASIM_LDFLAGS) -o $@ $< -lcudart -lcuda $(LDLIBS)

$(API_TEST): $(B)/obj/tests/api/test_api.o $(API_COMMON) $(API_FAKE) $(SHIM_LIB) $(API_SIMLIBS)
	@mkdir -p $(@D)
	$(if $(Q),@echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) $(CUDASIM_LDFLAGS) -L$(API_DIR) -Wl,-rpath,$(abspath $(API_DIR)) -o $@ \
	    $(filter %.o,$^) -lapi_fakeprod -lcudart -lcuda -lcmocka $(LDLIBS)

ALL   += $(API_FAKE) $(API_TEST)
TESTS += $(API_TEST)
