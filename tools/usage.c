/* The help texts of the dlsync command; tools/dlsync.1 says the same. */
#include "commands.h"

#define SYNOPSIS                                                                                           \
    "usage: dlsync run [--mode trace|check|fix|off] [--log FILE] [--log-limit SIZE] [--profiles FILE]\n"   \
    "                  [--suppressions FILE] [--quiet] [--verbose] [--fail-on-race]\n"                     \
    "                  [--error-exitcode N] [--] PROGRAM [ARGS...]\n"                                      \
    "       dlsync scan FILE...\n"                                                                         \
    "       dlsync report [--html OUT.html] [--chrome-trace OUT.json] [--json] [--debug-dir DIR] LOG...\n" \
    "       dlsync SUBCOMMAND --help\n"                                                                    \
    "       dlsync --help\n"                                                                               \
    "       dlsync --version\n"

#define RUN_HELP                                                                                             \
    "dlsync run runs PROGRAM with libdlsync.so preloaded and waits for it: the library is put in\n"          \
    "front of an existing LD_PRELOAD (nothing there is dropped), CUDA_INJECTION64_PATH is set to it\n"       \
    "when unset, and the options become DLSYNC_* variables for the shim. The library is looked for\n"        \
    "at ../lib/libdlsync.so from the directory of the dlsync executable (build tree and installed\n"         \
    "tree alike). A relative FILE is taken from the directory dlsync run started in.\n"                      \
    "  --mode M            DLSYNC_MODE: fix (default) makes exchanged tensors safe on the consumer's\n"      \
    "                      stream; check reports unsynchronized uses; trace only records exchanges;\n"       \
    "                      off passes everything through\n"                                                  \
    "  --log FILE          DLSYNC_LOG: JSON-lines log; the shim expands %p to the process id, %r to\n"       \
    "                      the launcher rank (norank when there is none) and %n to the smallest\n"           \
    "                      number that names a new file, so each process of an MPI/torchrun job,\n"          \
    "                      or each run of a container's pid 1, writes its own\n"                             \
    "  --log-limit SIZE    DLSYNC_LOG_LIMIT: past SIZE bytes (k, m, g; 0 for none; default 64m) a\n"         \
    "                      log gets no more exchange records; races, warnings and the summary still\n"       \
    "                      come, and the log says it was capped\n"                                           \
    "  --profiles FILE     DLSYNC_PROFILES: extra profile rows (see dlsync scan)\n"                          \
    "  --suppressions FILE DLSYNC_SUPPRESSIONS: races not to report, one KIND:PATTERN per line\n"            \
    "                      (KIND race, write-read, read-write, write-write, host-read,\n"                    \
    "                      release-reuse, write-after-use, use-after-write, use-after-release,\n"            \
    "                      kernel-pair or free-during-use; PATTERN found in a frame, the framework,\n"       \
    "                      the export or an operation of either side; * is any text, ^ and $\n"              \
    "                      anchor it); suppressed\n"                                                         \
    "                      races are logged and counted; a bad line stops the run (status 2)\n"              \
    "  --quiet             DLSYNC_QUIET=1: no summary lines (each process's and the run's)\n"                \
    "  --verbose           DLSYNC_VERBOSE=1: also every counter on one line at each process's exit\n"        \
    "  --fail-on-race      implies --mode check; once the program ended, read the logs this run\n"           \
    "                      wrote (a temporary one when --log is not given, removed afterwards) and\n"        \
    "                      the run's own record of its processes; when the program exited with 0,\n"         \
    "                      exit with status 3 when a race was reported, else with status 4 when\n"           \
    "                      some process could not be checked (no CUPTI observer, a log that could\n"         \
    "                      not be written or read back, a program dlsync could not enter, a process\n"       \
    "                      it did not see end)\n"                                                            \
    "  --error-exitcode N  the status for a reported race instead of 3 (1-255, not 4); implies\n"            \
    "                      --fail-on-race\n"                                                                 \
    "In check mode each process prints one summary line at exit (in fix mode when it injected or\n"          \
    "fell back), and dlsync run one for the whole run:\n"                                                    \
    "  dlsync run: check summary: 2 processes checked, 1 race reported, 0 suppressed, 3 exchanges checked\n" \
    "or \"NOT CHECKED: ...\", followed by one line per process that was not.\n"                              \
    "Exit status: the program's, 128+N when it was killed by signal N, 3 and 4 as above, 2 for a bad\n"      \
    "command line, 125 when dlsync could not set up the run, 126 when PROGRAM cannot be executed,\n"         \
    "127 when it is not found.\n"

#define SCAN_HELP                                                                                   \
    "dlsync scan lists the DLPack-related symbols (names containing dlpack in any case,\n"          \
    "DLManagedTensor or DLTensor) each ELF shared object or executable defines or imports,\n"       \
    "demangled, one per line: def or imp; wrapped when a built-in profile wraps it, else -; then\n" \
    "whether preload interposition can replace calls to it:\n"                                      \
    "  reachable    exported with default visibility from a shared object (or imported: calls\n"    \
    "               leave the object through the PLT)\n"                                            \
    "  protected    exported, but calls from inside its own object are bound directly\n"            \
    "  local        static, or hidden and made local by the linker: never called across objects\n"  \
    "  hidden, internal   not exported (visibility attribute)\n"                                    \
    "  symtab-only  only in .symtab, not exported\n"                                                \
    "  executable   defined in an executable: its own calls never go through the dynamic linker\n"  \
    "Reachable candidates no built-in profile wraps come out as suggested DLSYNC_PROFILES rows:\n"  \
    "live when the signature shows the DLManagedTensor argument, commented out when guessed\n"      \
    "from the name. Exit status 1 when a file could not be read (not a 64-bit little-endian ELF\n"  \
    "object, truncated or corrupt, a directory, a FIFO: one line each) or the listing could not\n"  \
    "be written. Without a C++ runtime (libstdc++.so.6 or libc++abi.so.1) names stay mangled.\n"

#define REPORT_HELP                                                                                   \
    "dlsync report reads JSON-lines logs (\"-\" is standard input; regular files and pipes only)\n"   \
    "and prints, first, the check-mode processes that could not be checked (NOT CHECKED), then\n"     \
    "processes, exchanges per framework pair and device, injected syncs, races (deduplicated by\n"    \
    "key, with counts, grouped by fix, with both stacks: Python frames first), suppressed races,\n"   \
    "fallbacks, warnings and the logs that reached their size limit. Damaged lines are skipped\n"     \
    "with a FILE:LINE message; a file that is no dlsync log (its first line is no log record, a\n"    \
    "line is longer than 1 MiB, more than 20 lines are damaged) gets one message and is not read\n"   \
    "further. Values from the logs are printed with their control characters escaped. Native\n"       \
    "frames get their source file:line (and the functions inlined there) from the object's DWARF\n"   \
    "debug information, in the object or found by its build id under a debug directory\n"             \
    "(DIR/.build-id/xx/yyyy.debug), with llvm-symbolizer or addr2line from the PATH (one line says\n" \
    "so when neither is there); a stripped object keeps function+0xOFF (library). Options may\n"      \
    "come anywhere; -- ends them.\n"                                                                  \
    "  --html OUT.html  also write one self-contained HTML page (no script, nothing loaded from\n"    \
    "                   the network): the run at a glance, each race drawn on lanes (its streams\n"   \
    "                   and the host threads, both accesses, the missing ordering and the fix)\n"     \
    "                   beside both stacks, and the waits a fix run injected\n"                       \
    "  --chrome-trace OUT.json  also write a timeline for Perfetto / chrome://tracing: one track\n"   \
    "                   per host thread and per stream, exchanges with arrows from export to\n"       \
    "                   import, injected waits and races marked\n"                                    \
    "                   Each OUT must be named (- is standard output, the text then going to\n"       \
    "                   standard error); it is never one of the logs nor a file that looks like a\n"  \
    "                   dlsync log, and an existing one is replaced only once the new one is whole\n" \
    "  --json           the summary as one JSON object instead of text\n"                             \
    "  --debug-dir DIR  look for debug information by build id under DIR too (before\n"               \
    "                   /usr/lib/debug); may be given more than once\n"                               \
    "Exit status 1 when a log could not be read or was no dlsync log, or an OUT not written; 2\n"     \
    "for a bad command line or an OUT it refuses to write over.\n"

const char dlt_usage_run[] = "usage: dlsync run [OPTIONS] [--] PROGRAM [ARGS...]\n\n" RUN_HELP;
const char dlt_usage_scan[] = "usage: dlsync scan FILE...\n\n" SCAN_HELP;
const char dlt_usage_report[] = "usage: dlsync report [--html OUT.html] [--chrome-trace OUT.json] [--json] "
                                "[--debug-dir DIR] LOG...\n\n" REPORT_HELP;
const char dlt_usage_text[] = SYNOPSIS "\n" RUN_HELP "\n" SCAN_HELP "\n" REPORT_HELP;
