# libFuzzer harnesses (tests/fuzz), built and run by `make fuzz` only: clang with
# -fsanitize=fuzzer,address,undefined in build/fuzz/ (every object there is compiled with
# -fsanitize=fuzzer-no-link for coverage). Each harness runs FUZZ_SECONDS from its in-tree seed
# corpus tests/fuzz/corpus/<name>/; new inputs go to build/fuzz/corpus/<name>/, crashes to
# build/fuzz/artifacts/, each run's output to build/fuzz/fuzz_<name>.log.
#   fuzz_json      tools/json.c and tools/logread.c (dlsync report's readers)
#   fuzz_profiles  the DLSYNC_PROFILES row parser (shim/hooks/profiles.c)
#   fuzz_elf       the ELF symbol reader of dlsync scan (tools/elfsyms.c)
#   fuzz_tensor    DLTensor validation (shim/hooks/extent.c)
#   fuzz_suppress  the race suppressions parser and matcher (shim/report/suppress.c)
#   fuzz_report_args  the command line of dlsync report (tools/report_opts.c)
FUZZ_NAMES   := json profiles elf tensor suppress report_args
FUZZ_BINS    := $(FUZZ_NAMES:%=$(B)/tests/fuzz_%)
FUZZ_SECONDS ?= 60

$(B)/obj/tests/fuzz/%.o: EXTRA_CFLAGS += -I tools -I shim -I shim/include

$(B)/tests/fuzz_json: $(B)/obj/tools/json.o $(B)/obj/tools/logread.o $(B)/obj/tools/textesc.o $(B)/obj/tools/filekind.o \
                     $(B)/obj/tools/grow.o $(B)/obj/shim/common/utf8.o
$(B)/tests/fuzz_profiles: $(B)/obj/shim/hooks/profiles.o
$(B)/tests/fuzz_elf: $(B)/obj/tools/elfsyms.o $(B)/obj/tools/filekind.o $(B)/obj/tools/tally.o $(B)/obj/tools/grow.o
$(B)/tests/fuzz_tensor: $(B)/obj/shim/hooks/extent.o $(B)/obj/shim/report/json.o $(B)/obj/shim/common/utf8.o
$(B)/tests/fuzz_suppress: $(B)/obj/shim/report/suppress.o
$(B)/tests/fuzz_report_args: $(B)/obj/tools/report_opts.o $(B)/obj/tools/textesc.o $(B)/obj/shim/common/utf8.o

$(B)/tests/fuzz_%: $(B)/obj/tests/fuzz/fuzz_%.o
	@mkdir -p $(@D)
	$(if $(Q),@echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -fsanitize=fuzzer -o $@ $^ $(LDLIBS)

fuzz-run: $(FUZZ_BINS)
	@scripts/run-fuzz.sh $(FUZZ_SECONDS) $(ABSB) $(FUZZ_NAMES)
