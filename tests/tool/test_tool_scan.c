/* Tests of `dlsync scan`: Debian's libtorch (skipped when absent) and a fixture shared object
 * with DLPack-named symbols of every kind; suggested rows must parse as profile rows; corrupt
 * and hostile copies of the fixture are refused; without a C++ runtime names stay mangled. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include <elf.h>

#include "dls_test.h"
#include "hooks/profiles.h"

#define TORCH_CPU "/usr/lib/x86_64-linux-gnu/libtorch_cpu.so.1.13"
#define TORCH_PY "/usr/lib/x86_64-linux-gnu/libtorch_python.so.1.13"

static char g_bin[512];

/* The listing line of `name` in the section of `file` (up to the next file header), copied
 * into buf; NULL when there is none. */
static const char *row_of(const char *out, const char *file, const char *name, char *buf, size_t n)
{
    char header[600];
    snprintf(header, sizeof header, "%s: ", file);
    const char *sec = strstr(out, header);
    if (!sec)
        return NULL;
    const char *end = strstr(sec + 1, "\n/");
    const char *blank = strstr(sec, "\n\n");
    if (!end || (blank && blank < end))
        end = blank;
    for (const char *p = strchr(sec, '\n'); p && (!end || p < end); p = strchr(p + 1, '\n')) {
        const char *eol = strchr(p + 1, '\n');
        size_t len = eol ? (size_t)(eol - p - 1) : strlen(p + 1);
        snprintf(buf, n, "%.*s", (int)len, p + 1);
        char needle[300];
        snprintf(needle, sizeof needle, "  %s", name);
        if (strstr(buf, needle))
            return buf;
    }
    return NULL;
}

/* Asserts the three columns of a listing line. */
static void assert_columns(const char *line, const char *def, const char *wrapped, const char *reach)
{
    char d[8], w[16], r[32];
    if (!line)
        fail_msg("row missing");
    assert_int_equal(sscanf(line, "%7s %15s %31s", d, w, r), 3);
    if (strcmp(d, def) != 0 || strcmp(w, wrapped) != 0 || strcmp(r, reach) != 0)
        fail_msg("row \"%s\": expected %s %s %s", line, def, wrapped, reach);
}

static void torch_rows(void **state)
{
    (void)state;
    if (access(TORCH_CPU, R_OK) != 0 || access(TORCH_PY, R_OK) != 0)
        skip();
    const char *argv[] = {g_bin, "scan", TORCH_CPU, TORCH_PY, NULL};
    dls_run_result r;
    assert_int_equal(dls_run(argv, NULL, &r), 0);
    assert_int_equal(r.status, 0);
    char line[1024];
    assert_columns(row_of(r.out, TORCH_CPU, "at::toDLPack(at::Tensor const&)", line, sizeof line), "def", "wrapped",
                   "reachable");
    assert_non_null(strstr(line, "[_ZN2at8toDLPackERKNS_6TensorE]"));
    assert_columns(row_of(r.out, TORCH_CPU, "at::fromDLPack(DLManagedTensor const*)", line, sizeof line), "def",
                   "wrapped", "reachable");
    assert_columns(row_of(r.out, TORCH_PY, "at::toDLPack(at::Tensor const&)", line, sizeof line), "imp", "wrapped",
                   "reachable");
    assert_columns(row_of(r.out, TORCH_PY, "at::fromDLPack(DLManagedTensor const*)", line, sizeof line), "imp",
                   "wrapped", "reachable");
    assert_columns(row_of(r.out, TORCH_PY, "THPModule_toDLPack(_object*, _object*)", line, sizeof line), "def", "-",
                   "reachable");
    /* Python-object functions get only commented-out suggestions: nothing proves where a tensor is. */
    assert_non_null(strstr(r.out, "# _Z18THPModule_toDLPackP7_objectS0_ torch_python export ret v0"));
    assert_null(strstr(r.out, "\n_Z18THPModule_toDLPack"));
    dls_run_free(&r);
}

static void fixture_rows_and_suggestions(void **state)
{
    (void)state;
    char lib[512], line[1024];
    dls_build_path(lib, sizeof lib, "tests/tool/libscanfix.so");
    const char *argv[] = {g_bin, "scan", lib, NULL};
    dls_run_result r;
    assert_int_equal(dls_run(argv, NULL, &r), 0);
    assert_int_equal(r.status, 0);
    assert_columns(row_of(r.out, lib, "Fix_ToDLPack", line, sizeof line), "def", "-", "reachable");
    assert_columns(row_of(r.out, lib, "Fix_ProtectedFromDLPack", line, sizeof line), "def", "-", "protected");
    assert_columns(row_of(r.out, lib, "fix_hidden_todlpack", line, sizeof line), "def", "-", "local");
    assert_columns(row_of(r.out, lib, "fix_local_dlpack_helper", line, sizeof line), "def", "-", "local");
    assert_columns(row_of(r.out, lib, "TVMArrayToDLPack", line, sizeof line), "imp", "wrapped", "reachable");
    assert_columns(row_of(r.out, lib, "fix::fromDLPack(DLManagedTensor*)", line, sizeof line), "def", "-", "reachable");
    assert_null(row_of(r.out, lib, "fix_uses_everything", line, sizeof line));
    assert_null(strstr(r.out, "PyInit_dlpackfix"));
    /* Only unwrapped reachable symbols get suggestions. The template instance shows it returns a
     * class by value: a live row that counts the hidden return slot. */
    assert_null(strstr(r.out, "fix_local_dlpack_helper scanfix"));
    assert_null(strstr(r.out, "TVMArrayToDLPack scanfix"));
    const char *live = strstr(r.out, "\n_ZN3fix14fromDLPackImplI15DLManagedTensorEENS_6HolderEPT_ ");
    assert_non_null(live);
    char row[512];
    snprintf(row, sizeof row, "%.*s", (int)strcspn(live + 1, "\n"), live + 1);
    dls_profile p;
    char err[128];
    assert_int_equal(dls_profile_parse_line(row, &p, err, sizeof err), 1);
    assert_string_equal(p.framework, "scanfix");
    assert_int_equal(p.role, DLS_ROLE_IMPORT);
    assert_int_equal(p.where, DLS_WHERE_ARG);
    assert_int_equal(p.index, 1);
    assert_int_equal(p.versioned, 0);
    /* A C++ symbol without its return type: commented out, saying why. */
    assert_non_null(strstr(r.out, "fix::fromDLPack(DLManagedTensor*): a C++ symbol does not show the return type"));
    assert_non_null(strstr(r.out, "\n# _ZN3fix10fromDLPackEP15DLManagedTensor scanfix import arg:0 v0\n"));
    /* A caller-owned DLTensor it fills: the fill:N form. */
    assert_non_null(strstr(r.out, "\n# _ZN3fix17toDLPackNonOwningEPvP8DLTensor scanfix export fill:1 v0\n"));
    /* Commented suggestions parse as comments. */
    const char *guess = strstr(r.out, "# Fix_ToDLPack scanfix export ret v0");
    assert_non_null(guess);
    snprintf(row, sizeof row, "%.*s", (int)strcspn(guess, "\n"), guess);
    assert_int_equal(dls_profile_parse_line(row, &p, err, sizeof err), 0);
    dls_run_free(&r);
}

static void executables_and_bad_files(void **state)
{
    (void)state;
    char self[512], dir[] = "/tmp/dlsync-scan-XXXXXX", text[96];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    assert_true(n > 0);
    self[n] = '\0';
    assert_non_null(mkdtemp(dir));
    snprintf(text, sizeof text, "%s/not-elf.so", dir);
    FILE *f = fopen(text, "w");
    fputs("\x7f"
          "ELF but not really",
          f);
    fclose(f);
    const char *argv[] = {g_bin, "scan", self, text, "/nonexistent.so", NULL};
    dls_run_result r;
    assert_int_equal(dls_run(argv, NULL, &r), 0);
    assert_int_equal(r.status, 1);
    char header[600];
    snprintf(header, sizeof header, "%s: executable", self);
    assert_non_null(strstr(r.out, header));
    char line[1024];
    assert_columns(row_of(r.out, self, "test_exe_to_dlpack", line, sizeof line), "def", "-", "executable");
    assert_non_null(strstr(r.err, "not-elf.so: not an ELF object"));
    assert_non_null(strstr(r.err, "/nonexistent.so: No such file"));
    dls_run_free(&r);
    unlink(text);
    rmdir(dir);
    const char *none[] = {g_bin, "scan", NULL};
    assert_int_equal(dls_run(none, NULL, &r), 0);
    assert_int_equal(r.status, 2);
    dls_run_free(&r);
}

/* Runs `dlsync scan FILE` under a time limit (a FIFO must not be waited on); asserts status 1 and
 * one line on stderr holding `why`. */
static void refused(const char *file, const char *why)
{
    const char *argv[] = {"timeout", "60", g_bin, "scan", file, NULL};
    dls_run_result r;
    assert_int_equal(dls_run(argv, NULL, &r), 0);
    if (r.status != 1 || !strstr(r.err, why) || dls_count(r.err, "\n") != 1)
        fail_msg("scan %s: status %d, stderr %s", file, r.status, r.err);
    assert_null(strstr(r.out, "DLPack-related"));
    dls_run_free(&r);
}

/* Copies the fixture library to path, cut to `keep` bytes (0: whole), and returns its text. */
static char *copy_fixture(const char *path, size_t keep, size_t *len)
{
    char lib[512];
    char *text = dls_read_file(dls_build_path(lib, sizeof lib, "tests/tool/libscanfix.so"));
    assert_non_null(text);
    FILE *f = fopen(lib, "rb");
    fseek(f, 0, SEEK_END);
    *len = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    assert_int_equal(fread(text, 1, *len, f), *len);
    fclose(f);
    f = fopen(path, "wb");
    assert_non_null(f);
    fwrite(text, 1, keep ? keep : *len, f);
    fclose(f);
    return text;
}

/* Files scan cannot read are errors, one line each, never "0 symbols": a truncated object, one
 * whose sections point past its end, a directory, a FIFO; a listing that cannot be written too. */
static void files_it_cannot_read_are_errors(void **state)
{
    (void)state;
    char dir[] = "/tmp/dlsync-scan-XXXXXX", cut[96], bad[96], fifo[96];
    assert_non_null(mkdtemp(dir));
    snprintf(cut, sizeof cut, "%s/cut.so", dir);
    snprintf(bad, sizeof bad, "%s/bad.so", dir);
    snprintf(fifo, sizeof fifo, "%s/fifo.so", dir);
    size_t len;
    free(copy_fixture(cut, 0, &len));
    free(copy_fixture(cut, len / 2, &len));
    refused(cut, "truncated ELF object");
    /* every section's offset far past the end of the file */
    char *text = copy_fixture(bad, 0, &len);
    Elf64_Ehdr *eh = (Elf64_Ehdr *)text;
    for (int i = 1; i < eh->e_shnum; i++)
        ((Elf64_Shdr *)(text + eh->e_shoff + (size_t)i * eh->e_shentsize))->sh_offset = 0x7fffffff0000ull;
    FILE *f = fopen(bad, "wb");
    fwrite(text, 1, len, f);
    fclose(f);
    free(text);
    refused(bad, "truncated or corrupt ELF object");
    refused(dir, "a directory, not an ELF object");
    assert_int_equal(mkfifo(fifo, 0600), 0);
    refused(fifo, "a FIFO, not an ELF object");
    char lib[512], cmd[700];
    snprintf(cmd, sizeof cmd, "%s scan %s > /dev/full", g_bin,
             dls_build_path(lib, sizeof lib, "tests/tool/libscanfix.so"));
    const char *sh[] = {"/bin/sh", "-c", cmd, NULL};
    dls_run_result r;
    assert_int_equal(dls_run(sh, NULL, &r), 0);
    assert_int_equal(r.status, 1);
    assert_non_null(strstr(r.err, "dlsync scan: writing the listing failed"));
    dls_run_free(&r);
    unlink(cut);
    unlink(bad);
    unlink(fifo);
    rmdir(dir);
}

/* Writes len bytes of text to path. */
static void write_bytes(const char *path, const char *text, size_t len)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(text, 1, len, f), len);
    assert_int_equal(fclose(f), 0);
}

/* The section header of the first section of `type` in an ELF image. */
static Elf64_Shdr *section_of(char *text, uint32_t type)
{
    Elf64_Ehdr *eh = (Elf64_Ehdr *)text;
    for (int i = 1; i < eh->e_shnum; i++) {
        Elf64_Shdr *sh = (Elf64_Shdr *)(text + eh->e_shoff + (size_t)i * eh->e_shentsize);
        if (sh->sh_type == type)
            return sh;
    }
    fail_msg("no section of type %u", type);
    return NULL;
}

/* The symbols of a symbol table section, and their count. */
static Elf64_Sym *symbols_of(char *text, const Elf64_Shdr *sh, size_t *n)
{
    *n = sh->sh_size / sizeof(Elf64_Sym);
    return (Elf64_Sym *)(text + sh->sh_offset);
}

/* Corrupt and hostile objects (each edit a copy of the fixture) are refused with one line naming
 * what is wrong: never a crash, a hang or a read outside the file (the ELF fuzzer searches
 * further). An object with more sections than its header can count is read as its twin. */
static void hostile_objects_are_refused(void **state)
{
    (void)state;
    char dir[] = "/tmp/dlsync-scan-XXXXXX", path[96];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/hostile.so", dir);
    size_t len, n;
    char *orig = copy_fixture(path, 0, &len), *t = malloc(len);
    assert_non_null(t);

    memcpy(t, orig, len);
    t[EI_CLASS] = ELFCLASS32;
    write_bytes(path, t, len);
    refused(path, "a 32-bit ELF object: dlsync scan reads 64-bit little-endian ones");
    write_bytes(path, "!<arch>\n/               0           0     0     644     4         `\n", 68);
    refused(path, "not an ELF object (an archive: scan its members)");
    write_bytes(path, orig, 40);
    refused(path, "truncated ELF object");

    memcpy(t, orig, len);
    ((Elf64_Ehdr *)t)->e_shentsize = 32;
    write_bytes(path, t, len);
    refused(path, "corrupt ELF object: its section headers cannot be read");

    memcpy(t, orig, len);
    section_of(t, SHT_DYNSYM)->sh_entsize = 12;
    write_bytes(path, t, len);
    refused(path, "(its entries are not of the size of Elf64_Sym)");

    memcpy(t, orig, len);
    section_of(t, SHT_DYNSYM)->sh_link = 0;
    write_bytes(path, t, len);
    refused(path, "(its sh_link names no string table)");

    memcpy(t, orig, len);
    Elf64_Sym *sym = symbols_of(t, section_of(t, SHT_DYNSYM), &n);
    for (size_t i = 1; i < n; i++)
        sym[i].st_name = 0x7fffff00u;
    write_bytes(path, t, len);
    refused(path, "(a name outside its string table)");

    memcpy(t, orig, len);
    Elf64_Shdr *dynstr = section_of(t, SHT_STRTAB);
    t[dynstr->sh_offset + dynstr->sh_size - 1] = 'x';
    write_bytes(path, t, len);
    refused(path, "(its string table does not end in a NUL)");

    memcpy(t, orig, len);
    section_of(t, SHT_SYMTAB)->sh_type = SHT_DYNSYM;
    write_bytes(path, t, len);
    refused(path, "(a second table of its type)");

    /* .symtab's functions named by every offset of one string that fills .strtab */
    memcpy(t, orig, len);
    Elf64_Shdr *symtab = section_of(t, SHT_SYMTAB);
    Elf64_Shdr *strtab = (Elf64_Shdr *)(t + ((Elf64_Ehdr *)t)->e_shoff) + symtab->sh_link;
    memset(t + strtab->sh_offset, 'a', strtab->sh_size - 1);
    sym = symbols_of(t, symtab, &n);
    for (size_t i = 1; i < n; i++) {
        sym[i].st_name = (uint32_t)i;
        sym[i].st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC);
    }
    write_bytes(path, t, len);
    refused(path, "(its names overlap far more than a linker writes them)");

    /* e_shnum 0 and the count in section 0's sh_size: the same listing */
    const char *argv[] = {g_bin, "scan", path, NULL};
    dls_run_result plain, extended;
    write_bytes(path, orig, len);
    assert_int_equal(dls_run(argv, NULL, &plain), 0);
    memcpy(t, orig, len);
    Elf64_Ehdr *eh = (Elf64_Ehdr *)t;
    ((Elf64_Shdr *)(t + eh->e_shoff))->sh_size = eh->e_shnum;
    eh->e_shnum = 0;
    write_bytes(path, t, len);
    assert_int_equal(dls_run(argv, NULL, &extended), 0);
    assert_int_equal(extended.status, 0);
    assert_non_null(strstr(extended.out, "8 DLPack-related symbols"));
    assert_string_equal(extended.out, plain.out);
    dls_run_free(&plain);
    dls_run_free(&extended);

    free(t);
    free(orig);
    unlink(path);
    rmdir(dir);
}

/* Without a C++ runtime to demangle with, C++ names are listed mangled and scan says so once. */
static void without_a_cxx_runtime(void **state)
{
    (void)state;
    if (strstr(DLS_SAN, "undefined"))
        skip(); /* libubsan itself needs the real libstdc++.so.6 */
    char lib[512], dir[512], env[600];
    dls_build_path(lib, sizeof lib, "tests/tool/libscanfix.so");
    snprintf(env, sizeof env, "LD_LIBRARY_PATH=%s", dls_build_path(dir, sizeof dir, "tests/tool/no_cxx_runtime"));
    const char *argv[] = {g_bin, "scan", lib, lib, NULL}, *envp[] = {env, NULL};
    dls_run_result r;
    assert_int_equal(dls_run(argv, envp, &r), 0);
    assert_int_equal(r.status, 0);
    assert_int_equal(dls_count(r.err, "C++ names are shown mangled"), 1);
    assert_int_equal(dls_count(r.err, "\n"), 1);
    char line[1024];
    assert_columns(row_of(r.out, lib, "_ZN3fix10fromDLPackEP15DLManagedTensor", line, sizeof line), "def", "-",
                   "reachable");
    assert_null(strstr(r.out, "fix::fromDLPack"));
    assert_non_null(strstr(r.out, "Fix_ToDLPack"));
    dls_run_free(&r);
}

/* A DLPack-named function defined in this executable, for the "executable" row. */
__attribute__((noinline, used, visibility("default"))) void *test_exe_to_dlpack(void *p)
{
    return p;
}

int main(void)
{
    dls_build_path(g_bin, sizeof g_bin, "bin/dlsync");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(torch_rows),
        cmocka_unit_test(fixture_rows_and_suggestions),
        cmocka_unit_test(executables_and_bad_files),
        cmocka_unit_test(files_it_cannot_read_are_errors),
        cmocka_unit_test(hostile_objects_are_refused),
        cmocka_unit_test(without_a_cxx_runtime),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
