# Tests of the dlsync command and of the shim's NVTX marks: cmocka binaries in $(B)/tests/tool/,
# plus what they drive: a fake NVTX tool, a program that calls the NVTX marks, a shared object
# with DLPack-named symbols of every kind for `dlsync scan`, and for the run's gate a scenario
# program that makes itself hard to check (gate_app.c) and a statically linked program, and a
# C++ runtime without a demangler (no_cxx_runtime/: libstdc++.so.6 and libc++abi.so.1), and for
# the source lines of `dlsync report` an object with debug information (libsymfix.so, -g -O0, a
# function inlined), its copy without (libsymfix_stripped.so) and that information alone
# (symfix.debug), one build id for the three.
TOOLTEST_SRCS := $(sort $(wildcard tests/tool/test_*.c))
TOOLTEST_BINS := $(TOOLTEST_SRCS:tests/tool/%.c=$(B)/tests/tool/%)
TOOLTEST_FAKE_NVTX := $(B)/tests/tool/libfake_nvtx.so
TOOLTEST_NVTX_DRIVER := $(B)/tests/tool/nvtx_driver
TOOLTEST_SCANFIX := $(B)/tests/tool/libscanfix.so
TOOLTEST_GATE_APP := $(B)/tests/tool/gate_app
TOOLTEST_STATIC := $(B)/tests/tool/static_app
TOOLTEST_NO_CXX := $(addprefix $(B)/tests/tool/no_cxx_runtime/,libstdc++.so.6 libc++abi.so.1)
TOOLTEST_SYMFIX := $(addprefix $(B)/tests/tool/,libsymfix.so libsymfix_stripped.so symfix.debug)
# The shim end-to-end NVTX test runs a scenario program of tests/scenarios.
TOOLTEST_HELPERS := $(TOOLTEST_FAKE_NVTX) $(TOOLTEST_NVTX_DRIVER) $(TOOLTEST_SCANFIX) $(B)/scenarios/scen_side_stream \
                    $(TOOLTEST_GATE_APP) $(TOOLTEST_STATIC) $(TOOLTEST_NO_CXX) $(TOOLTEST_SYMFIX)

$(B)/obj/tests/tool/%.o: EXTRA_CFLAGS += -I tools -I shim -I shim/include -I $(CUDA_INC) \
    -DDLS_TEST_CUDA_HOME='"$(CUDA_HOME)"'

# tools/module.mk is read after this file, so its paths are spelled out here (prerequisites are
# expanded when the rule is read).
TOOLTEST_TOOL_AR  := $(B)/lib/libdlsync_tool.a
TOOLTEST_TOOL_BIN := $(B)/bin/dlsync

$(B)/tests/tool/test_%: $(B)/obj/tests/tool/test_%.o $(TOOLTEST_TOOL_AR) $(SHIM_AR) $(TEST_COMMON_OBJ) \
                        | $(TOOLTEST_TOOL_BIN) $(SHIM_LIB) $(TOOLTEST_HELPERS)
	@mkdir -p $(@D)
	$(if $(Q),@echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $< $(TEST_COMMON_OBJ) $(TOOLTEST_TOOL_AR) $(SHIM_AR) -lcmocka $(LDLIBS)

$(TOOLTEST_FAKE_NVTX): $(B)/obj/tests/tool/fake_nvtx.o
	@mkdir -p $(@D)
	$(Q)$(CC) -shared $(LDFLAGS) -o $@ $<

$(TOOLTEST_SCANFIX): $(B)/obj/tests/tool/scanfix.o
	@mkdir -p $(@D)
	$(Q)$(CC) -shared $(LDFLAGS) -o $@ $<

$(TOOLTEST_NO_CXX): $(B)/obj/tests/tool/no_cxx_runtime.o
	@mkdir -p $(@D)
	$(Q)$(CC) -shared $(LDFLAGS) -Wl,-soname,$(@F) -o $@ $<

# Without the build's optimization and sanitizer flags: the inlined call must stay where the test
# expects it (always_inline at -O0).
$(B)/tests/tool/libsymfix.so: tests/tool/symfix.c
	@mkdir -p $(@D)
	$(Q)$(CC) -g -O0 -fPIC -shared -fvisibility=hidden -Wl,--build-id=sha1 -o $@ $<

$(B)/tests/tool/libsymfix_stripped.so: $(B)/tests/tool/libsymfix.so
	$(Q)objcopy --strip-debug $< $@

$(B)/tests/tool/symfix.debug: $(B)/tests/tool/libsymfix.so
	$(Q)objcopy --only-keep-debug $< $@

# The driver links the NVTX module alone, so it tests that module and nothing else of the shim.
$(TOOLTEST_NVTX_DRIVER): $(B)/obj/tests/tool/nvtx_driver.o $(B)/obj/shim/report/nvtx.o
	@mkdir -p $(@D)
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# gate_app is a scenario program (tests/scenarios is read before this file).
$(B)/obj/tests/tool/gate_app.o: EXTRA_CFLAGS += $(CUDASIM_CFLAGS) -I tests/scenarios -fvisibility=default
$(TOOLTEST_GATE_APP): $(B)/obj/tests/tool/gate_app.o $(SCEN_OBJ)/scen.o $(SCEN_LIBS) $(CUDASIM_LIBS)
	@mkdir -p $(@D)
	$(if $(Q),@echo "  LD      $@")
	$(Q)$(CC) -rdynamic $(LDFLAGS) $(CUDASIM_LDFLAGS) $(SCEN_RPATH) -o $@ $(filter %.o,$^) \
	    -lfakemx -lfaketvm -lscenbackend -lcudart $(LDLIBS)

# Static, so without the sanitizer flags of an instrumented build.
$(TOOLTEST_STATIC): tests/tool/static_app.c
	@mkdir -p $(@D)
	$(Q)$(CC) -static -O2 -o $@ $<

ALL   += $(TOOLTEST_BINS) $(TOOLTEST_HELPERS)
TESTS += $(TOOLTEST_BINS)
