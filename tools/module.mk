# The dlsync command ($(B)/bin/dlsync) and the install / uninstall targets.
#
# Every tools/*.c but main.c also goes into an archive the tests link against. The command
# compiles in the shim's profile table (shim/hooks/profiles.c, libc only) so `dlsync scan` knows
# exactly what the library wraps, its suppressions syntax (shim/report/suppress.c, libc only)
# so `dlsync run --suppressions` refuses a file the shim would not read, its test of whether
# the loader preloads into a program (shim/common/preloadable.c, libc only), and the shim's
# build-id reader (shim/common/buildid.c, libc only), so the build id a report names is read the
# way the shim read it. The command finds libdlsync.so at ../lib/ from its own directory, which holds in the build tree ($(B)/bin, $(B)/lib) and in the installed tree
# ($(PREFIX)/bin, $(PREFIX)/lib). It links the C library alone: `dlsync scan` reads ELF itself
# (elfsyms.c, on <elf.h>) and finds the C++ demangler at run time (demangle.c).

TOOL_SRCS     := $(sort $(wildcard tools/*.c))
TOOL_OBJS     := $(TOOL_SRCS:%.c=$(B)/obj/%.o)
TOOL_MAIN_OBJ := $(B)/obj/tools/main.o
TOOL_AR       := $(B)/lib/libdlsync_tool.a
TOOL_BIN      := $(B)/bin/dlsync
TOOL_PROFILES := $(B)/obj/shim/hooks/profiles.o $(B)/obj/shim/report/suppress.o $(B)/obj/shim/common/preloadable.o \
                 $(B)/obj/shim/common/buildid.o $(B)/obj/shim/common/utf8.o

# The sanitizer runtime goes in front of the shim in LD_PRELOAD when the build is instrumented.
$(B)/obj/tools/%.o: EXTRA_CFLAGS += -I tools -I shim -DDLT_SAN_RUNTIME='"$(SAN_RUNTIME)"'

$(TOOL_AR): $(filter-out $(TOOL_MAIN_OBJ),$(TOOL_OBJS)) $(TOOL_PROFILES)
	@mkdir -p $(@D)
	$(Q)rm -f $@ && ar rcs $@ $^

$(TOOL_BIN): $(TOOL_MAIN_OBJ) $(TOOL_AR)
	@mkdir -p $(@D)
	$(if $(Q),@echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $< $(TOOL_AR) $(LDLIBS)

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
