# libdlsync.so: every C file under shim/<area>/, and every assembly file under an area's
# architecture folder (shim/<area>/x86_64/), goes into the library. The same objects but the
# start-up's are also archived (libdlsync_internal.a) so unit tests can call internal functions
# directly: the start-up's constructor and its _exit must never enter a test program.
# -z nodelete: a program that dlopens the library and dlcloses it while tensors still carry the
# shim's deleter (or a CUPTI callback or thread-exit handler still points into it) must not
# find the code unmapped.
SHIM_SRCS := $(sort $(wildcard shim/*/*.c))
SHIM_ASM  := $(sort $(wildcard shim/*/x86_64/*.S))
SHIM_OBJS := $(SHIM_SRCS:%.c=$(B)/obj/%.o) $(SHIM_ASM:%.S=$(B)/obj/%.o)
SHIM_LIB  := $(B)/lib/libdlsync.so
SHIM_AR   := $(B)/lib/libdlsync_internal.a
SHIM_LIBS := -lpthread -ldl

# TLS descriptors: a thread-local access costs a call to a two-instruction resolver instead of
# __tls_get_addr while the shim's TLS is static (it is preloaded; glibc also gives a dlopened
# shim static TLS when the surplus allows, else the dynamic descriptor, which still works). The
# callbacks on every CUDA call make one or two such accesses. Only where the compiler has the
# dialect and no sanitizer tracks TLS through __tls_get_addr.
SHIM_TLS := $(if $(SAN),,$(shell $(CC) -mtls-dialect=gnu2 -x c -c /dev/null -o /dev/null 2>/dev/null && \
                                  echo -mtls-dialect=gnu2))

# clang checks the lock contracts (common/compiler.h: DLS_REQUIRES, DLS_UNLOCKED, ...) as errors.
SHIM_LOCKS := $(if $(shell $(CC) --version 2>/dev/null | grep -q clang && echo y),-Wthread-safety)

$(B)/obj/shim/%.o: EXTRA_CFLAGS += -I shim/include -I shim -I $(CUDA_INC) $(SHIM_TLS) $(SHIM_LOCKS)

$(SHIM_LIB): $(SHIM_OBJS) shim/dlsync.map
	@mkdir -p $(@D)
	$(if $(Q),@echo "  LD      $@")
	$(Q)$(CC) -shared -Wl,-soname,libdlsync.so -Wl,--version-script=shim/dlsync.map \
	    -Wl,-z,defs -Wl,-z,nodelete $(LDFLAGS) -o $@ $(SHIM_OBJS) $(SHIM_LIBS)

$(SHIM_AR): $(filter-out $(B)/obj/shim/startup/%,$(SHIM_OBJS))
	@mkdir -p $(@D)
	$(Q)rm -f $@ && ar rcs $@ $^

ALL += $(SHIM_LIB) $(SHIM_AR)

# make check-layers: the files of each module call one way only, per its shim/<module>/layers.txt,
# and so do the command's, per tools/layers.txt (scripts/check-layers.py says the rule; modules
# without a table are listed as not checked). tools/module.mk adds the command's objects.
.PHONY: check-layers
check-layers: $(SHIM_OBJS)
	@scripts/check-layers.py --obj $(B)/obj/shim --src shim --tool-obj $(B)/obj/tools --tool-src tools

# make check-architecture: docs/architecture.md's module table (every shim/<module>, its layers,
# what it calls) and lock table (every lock in shim/, in acquisition order) match the tree, the
# document keeps to 400 lines of 100 characters, and every extern dls_ declaration is DLS_HIDDEN
# (scripts/check-architecture.py says how).
.PHONY: check-architecture
check-architecture: $(SHIM_OBJS)
	@scripts/check-architecture.py --doc docs/architecture.md --src shim --obj $(B)/obj/shim
