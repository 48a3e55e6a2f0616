# The CUDA simulator: libcuda.so.1, libcudart.so.13 and libcupti.so.13 built from C against the
# real CUDA headers, with the real sonames, in $(CUDASIM_DIR); its cmocka suite
# ($(B)/tests/test_sim_<area>), and the race demo program.
#
# For other fragments:
#   CUDASIM_DIR      folder holding the three libraries (and libcuda.so, libcudart.so, libcupti.so,
#                    made with them)
#   CUDASIM_LIBS     the three library files, as prerequisites
#   CUDASIM_CFLAGS   compile flags for programs that include cuda.h / cudasim.h
#   CUDASIM_LDFLAGS  link flags: finds the libraries at link and at run time (rpath)
#   CUDASIM_LINK     recipe linking $@ from the .o/.a prerequisites with -lcudart -lcuda; append
#                    more libraries after it, e.g.
#       $(B)/tests/foo: $(B)/obj/tests/x/foo.o $(TEST_COMMON_OBJ) $(CUDASIM_LIBS)
#       	$(CUDASIM_LINK) -lcmocka
#   (objects compiled under $(B)/obj/tests/cudasim/ get CUDASIM_CFLAGS automatically; others add
#    `$(B)/obj/<dir>/%.o: EXTRA_CFLAGS += $(CUDASIM_CFLAGS)`.)

CUDASIM_DIR     := $(B)/cudasim
CUDASIM_CFLAGS  := -I tests/cudasim -I $(CUDA_INC)
# DT_RPATH, not DT_RUNPATH: the simulator must win over an LD_LIBRARY_PATH that names the real
# CUDA libraries (GPU machines point it at the driver's folder).
CUDASIM_LDFLAGS := -L$(CUDASIM_DIR) -Wl,-rpath,$(ABSB)/cudasim -Wl,--disable-new-dtags
CUDASIM_LIBS    := $(CUDASIM_DIR)/libcuda.so.1 $(CUDASIM_DIR)/libcudart.so.13 \
                   $(CUDASIM_DIR)/libcupti.so.13

define CUDASIM_LINK
	@mkdir -p $(@D)
	$(if $(Q),@echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) $(CUDASIM_LDFLAGS) -o $@ $(filter %.o %.a,$^) -lcudart -lcuda $(LDLIBS)
endef

# Sources: drv_* make libcuda, rt_* libcudart, cupti_* libcupti. The files listed in *_PTDS are
# compiled a second time with CUDA_API_PER_THREAD_DEFAULT_STREAM, which renames their functions
# to the _ptsz / _ptds exports.
CUDASIM_DRV_PTDS := drv_queue drv_work drv_capture
CUDASIM_RT_PTDS  := rt_work rt_capture
CUDASIM_OBJDIR   := $(B)/obj/tests/cudasim
cudasim_objs = $(patsubst tests/cudasim/%.c,$(CUDASIM_OBJDIR)/%.o,$(wildcard tests/cudasim/$(1)_*.c)) \
               $(patsubst %,$(CUDASIM_OBJDIR)/%_ptds.o,$(2))

# trace.c (the trace writer, trace.h) is part of libcuda too.
CUDASIM_DRV_OBJS   := $(call cudasim_objs,drv,$(CUDASIM_DRV_PTDS)) $(CUDASIM_OBJDIR)/trace.o
CUDASIM_RT_OBJS    := $(call cudasim_objs,rt,$(CUDASIM_RT_PTDS))
CUDASIM_CUPTI_OBJS := $(call cudasim_objs,cupti,)

$(CUDASIM_OBJDIR)/%.o: EXTRA_CFLAGS += $(CUDASIM_CFLAGS) -fvisibility=default

$(CUDASIM_OBJDIR)/%_ptds.o: tests/cudasim/%.c
	@mkdir -p $(@D)
	$(if $(Q),@echo "  CC      $< (per-thread)")
	$(Q)$(CC) $(CFLAGS) $(EXTRA_CFLAGS) -DCUDA_API_PER_THREAD_DEFAULT_STREAM=1 -c $< -o $@

# $(call cudasim_shlib,soname,extra link flags): links $@ and its unversioned -l symlink.
define cudasim_shlib
	@mkdir -p $(@D)
	$(if $(Q),@echo "  LD      $@")
	$(Q)$(CC) -shared -Wl,-soname,$(1) -Wl,-z,defs $(LDFLAGS) -o $@ $(filter %.o,$^) $(2) -lpthread -ldl
	$(Q)ln -sf $(1) $(@D)/$(firstword $(subst .so, ,$(1))).so
endef

# libcudart and libcupti find the simulated libcuda.so.1 next to themselves.
CUDASIM_ON_DRIVER := -L$(CUDASIM_DIR) -l:libcuda.so.1 -Wl,-rpath,'$$ORIGIN' -Wl,--disable-new-dtags

$(CUDASIM_DIR)/libcuda.so.1: $(CUDASIM_DRV_OBJS)
	$(call cudasim_shlib,libcuda.so.1,)
$(CUDASIM_DIR)/libcudart.so.13: $(CUDASIM_RT_OBJS) $(CUDASIM_DIR)/libcuda.so.1
	$(call cudasim_shlib,libcudart.so.13,$(CUDASIM_ON_DRIVER))
$(CUDASIM_DIR)/libcupti.so.13: $(CUDASIM_CUPTI_OBJS) $(CUDASIM_DIR)/libcuda.so.1
	$(call cudasim_shlib,libcupti.so.13,$(CUDASIM_ON_DRIVER))
ALL += $(CUDASIM_LIBS)

# The simulator's test suite: one cmocka binary per area, plus the injection library one of
# them loads through CUDA_INJECTION64_PATH.
CUDASIM_TEST_SRCS   := $(wildcard tests/cudasim/tests/test_sim_*.c)
CUDASIM_TEST_BINS   := $(CUDASIM_TEST_SRCS:tests/cudasim/tests/%.c=$(B)/tests/%)
CUDASIM_TEST_HELPER := $(CUDASIM_OBJDIR)/tests/simtest.o
CUDASIM_INJECTION   := $(B)/tests/libsim_injection.so

$(CUDASIM_TEST_BINS): $(B)/tests/%: $(CUDASIM_OBJDIR)/tests/%.o $(CUDASIM_TEST_HELPER) \
                      $(TEST_COMMON_OBJ) $(CUDASIM_LIBS)
	$(CUDASIM_LINK) $(CUDASIM_EXTRA) -lcmocka

$(B)/tests/test_sim_cupti $(B)/tests/test_sim_cupti_modes $(B)/tests/test_sim_injection $(B)/tests/test_sim_capture: CUDASIM_EXTRA := -lcupti
$(B)/tests/test_sim_injection: $(CUDASIM_INJECTION)
$(CUDASIM_OBJDIR)/tests/test_sim_loading.o: EXTRA_CFLAGS += -DDLS_TEST_CUDA_HOME='"$(CUDA_HOME)"'

$(CUDASIM_INJECTION): $(CUDASIM_OBJDIR)/tests/sim_injection.o $(CUDASIM_LIBS)
	@mkdir -p $(@D)
	$(if $(Q),@echo "  LD      $@")
	$(Q)$(CC) -shared $(LDFLAGS) $(CUDASIM_LDFLAGS) -o $@ $(filter %.o,$^) -lcupti -lcuda $(LDLIBS)

# The race demo (scripts/demo.sh runs it).
CUDASIM_DEMO := $(B)/cudasim/demo_race
$(CUDASIM_DEMO): $(CUDASIM_OBJDIR)/demo_race.o $(CUDASIM_LIBS)
	$(CUDASIM_LINK)

ALL   += $(CUDASIM_TEST_BINS) $(CUDASIM_INJECTION) $(CUDASIM_DEMO)
TESTS += $(CUDASIM_TEST_BINS)

# make sim-test: builds only the simulator and its suite, and runs the suite (make sim-sanitize and
# make sim-tsan run it in a sanitizer build).
sim-test: $(CUDASIM_TEST_BINS) $(CUDASIM_INJECTION)
	@scripts/run-tests.sh $(CUDASIM_TEST_BINS)
