# The dlsync command ($(B)/bin/dlsync, or `make tool` alone) and the install / uninstall targets.
#
# Every tools/*.c but main.c also goes into an archive the tests link against. The command
# compiles in a few libc-only shim files (TOOL_SHARED): the shim's profile table
# (shim/hooks/profiles.c) so `dlsync scan` knows exactly what the library wraps, its
# suppressions syntax (shim/report/suppress.c) so `dlsync run --suppressions` refuses a file the
# shim would not read, its test of whether the loader preloads into a program
# (shim/common/preloadable.c), its build-id reader (shim/common/buildid.c), so the build id a
# report names is read the way the shim read it, and its rule for text that is not UTF-8
# (shim/common/utf8.c), which the log's writer and its reader share. The command finds
# libdlsync.so at ../lib/ from its own directory, which holds in the build tree ($(B)/bin,
# $(B)/lib) and in the installed tree ($(PREFIX)/bin, $(PREFIX)/lib). It links the C library
# alone: `dlsync scan` reads ELF itself (elfsyms.c, on <elf.h>) and finds the C++ demangler at run
# time (demangle.c).
#
# The command builds without the CUDA headers. Its objects, and its own copies of the shared
# shim files ($(B)/obj/tools/shim/...), are compiled with TOOL_CFLAGS, which name no CUDA
# directory and put first a folder of headers named like CUDA's ($(B)/tools/no-cuda: cuda.h,
# cupti*.h, every CUDA header the tree includes) that stop the compiler with #error, so even a
# CUDA installed under /usr/include cannot slip in. `make tool` needs no CUDA headers at all (the
# top Makefile asks for them only for other goals). `make check-tools-standalone` (a CI stage)
# builds the command so in $(B)/tools-standalone/, with CUDA_HOME an empty folder, and
# test_tool_standalone (make test) does the same in a folder of its own and checks each compile
# line.

TOOL_SRCS       := $(sort $(wildcard tools/*.c))
TOOL_OBJS       := $(TOOL_SRCS:%.c=$(B)/obj/%.o)
TOOL_MAIN_OBJ   := $(B)/obj/tools/main.o
TOOL_AR         := $(B)/lib/libdlsync_tool.a
TOOL_BIN        := $(B)/bin/dlsync
TOOL_SHARED     := shim/hooks/profiles.c shim/report/suppress.c shim/common/preloadable.c shim/common/buildid.c \
                   shim/common/utf8.c
TOOL_SHARED_OBJS := $(TOOL_SHARED:%.c=$(B)/obj/tools/%.o)
TOOL_NO_CUDA    := $(B)/tools/no-cuda

# The sanitizer runtime goes in front of the shim in LD_PRELOAD when the build is instrumented.
TOOL_CFLAGS := -I $(TOOL_NO_CUDA) -I tools -I shim -DDLT_SAN_RUNTIME='"$(SAN_RUNTIME)"'
$(B)/obj/tools/%.o: EXTRA_CFLAGS += $(TOOL_CFLAGS)

$(TOOL_OBJS) $(TOOL_SHARED_OBJS): | $(TOOL_NO_CUDA)/.made

$(B)/obj/tools/shim/%.o: shim/%.c
	@mkdir -p $(@D)
	$(if $(Q),@echo "  CC      $< (for the command)")
	$(Q)$(CC) $(CFLAGS) $(EXTRA_CFLAGS) -c $< -o $@

# One #error header per CUDA header name: the toolkit's main ones and every <cuda*>, <cupti*>
# or <nvtx*> the tree includes anywhere.
$(TOOL_NO_CUDA)/.made: tools/module.mk
	$(Q)rm -rf $(@D) && mkdir -p $(@D)
	$(Q)for h in cuda.h cuda_runtime.h cuda_runtime_api.h cupti.h \
	        $$(grep -rhoE '^[[:space:]]*#[[:space:]]*include[[:space:]]*<(cuda|cupti|nvtx|nvToolsExt)[^>]*>' shim tests tools \
	           | sed 's/.*<//; s/>.*//' | sort -u); do \
	    mkdir -p "$(@D)/$$(dirname "$$h")" && \
	    printf '#error "tools/ builds without the CUDA headers: nothing the command compiles may include <%s>"\n' \
	        "$$h" > "$(@D)/$$h"; \
	done
	$(Q)touch $@

# (tools/module.mk too: the list of what goes in may change)
$(TOOL_AR): $(filter-out $(TOOL_MAIN_OBJ),$(TOOL_OBJS)) $(TOOL_SHARED_OBJS) tools/module.mk
	@mkdir -p $(@D)
	$(Q)rm -f $@ && ar rcs $@ $(filter %.o,$^)

$(TOOL_BIN): $(TOOL_MAIN_OBJ) $(TOOL_AR)
	@mkdir -p $(@D)
	$(if $(Q),@echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $< $(TOOL_AR) $(LDLIBS)

# The layer check reads the command's objects too (tools/layers.txt).
check-layers $(LAYERS_TEST): $(TOOL_OBJS)

.PHONY: tool check-tools-standalone
tool: $(TOOL_BIN)

# The command built from nothing in $(B)/tools-standalone/, with CUDA_HOME an empty folder.
TOOL_ALONE := $(B)/tools-standalone
check-tools-standalone:
	@rm -rf $(TOOL_ALONE) && mkdir -p $(TOOL_ALONE)/no-cuda-home
	@$(MAKE) --no-print-directory BUILD=$(TOOL_ALONE)/build CUDA_HOME=$(abspath $(TOOL_ALONE)/no-cuda-home) tool
	@$(TOOL_ALONE)/build/bin/dlsync --version >/dev/null
	@echo "check-tools-standalone: the command builds and runs without the CUDA headers"

ALL += $(TOOL_BIN) $(TOOL_AR)

# ---- install / uninstall -------------------------------------------------------------------
# make install PREFIX=/usr/local DESTDIR=   (libdlsync.so goes to $(PREFIX)/lib: dlsync run
# looks for it there, next to $(PREFIX)/bin)
PREFIX        ?= /usr/local
DESTDIR       ?=
DLSYNC_VERSION := $(shell sed -n 's/^\#define DLS_VERSION "\(.*\)"/\1/p' shim/common/names.h)
INST_BIN      := $(DESTDIR)$(PREFIX)/bin
INST_LIB      := $(DESTDIR)$(PREFIX)/lib
INST_INC      := $(DESTDIR)$(PREFIX)/include
INST_PC       := $(DESTDIR)$(PREFIX)/lib/pkgconfig
INST_MAN      := $(DESTDIR)$(PREFIX)/share/man/man1
INST_HEADERS  := $(wildcard shim/include/dlsync.h shim/include/dlsync_dlpack.h)
TOOL_PC       := $(B)/tools/dlsync.pc

$(TOOL_PC): tools/dlsync.pc.in
	@mkdir -p $(@D)
	$(Q)sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@VERSION@|$(DLSYNC_VERSION)|g' $< > $@

# The prefix is baked into dlsync.pc, so it is regenerated on every install.
.PHONY: install uninstall $(TOOL_PC)
install: $(SHIM_LIB) $(TOOL_BIN) $(TOOL_PC)
	install -d $(INST_BIN) $(INST_LIB) $(INST_PC) $(INST_MAN)
	install -m 0755 $(TOOL_BIN) $(INST_BIN)/dlsync
	install -m 0755 $(SHIM_LIB) $(INST_LIB)/libdlsync.so
	install -m 0644 $(TOOL_PC) $(INST_PC)/dlsync.pc
	install -m 0644 tools/dlsync.1 $(INST_MAN)/dlsync.1
	$(if $(INST_HEADERS),install -d $(INST_INC) && install -m 0644 $(INST_HEADERS) $(INST_INC)/)

uninstall:
	rm -f $(INST_BIN)/dlsync $(INST_LIB)/libdlsync.so $(INST_PC)/dlsync.pc $(INST_MAN)/dlsync.1 \
	      $(addprefix $(INST_INC)/,dlsync.h dlsync_dlpack.h)
