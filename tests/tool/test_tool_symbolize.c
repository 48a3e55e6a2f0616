/* Tests of the source lines `dlsync report` gives native frames (issue 36): a frame of an object
 * built with -g resolves to its file:line, with the function inlined there, through
 * llvm-symbolizer and through addr2line alone, in the text, --json and --html; a stripped copy
 * keeps function+0xOFF (library) and says nothing; its build id finds the debug information under
 * a --debug-dir; an object whose build id changed is not trusted; the shim, reading a loaded
 * object's notes in memory, finds the build id the command reads from its file; without a symbolizer on the
 * PATH one line says so, once; and a real check run's log carries each native frame's object,
 * offset and build id, which resolve to the scenario's own source lines. */
#include <dlfcn.h>
#include <link.h>
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

#include "dls_test.h"
#include "elfdebug.h"
#include "json.h"
#include "report/objinfo.h"

static char g_dir[64], g_bin[512], g_lib[512], g_stripped[512], g_debug[512], g_log[128];
static char g_build_id[DLS_BUILD_ID_HEX];
static uintptr_t g_offset; /* of the frame in symfix_outer, inside the inlined symfix_inner */
static int g_inner_line, g_outer_line;

/* The line of tests/tool/symfix.c that holds marker. */
static int line_of(const char *marker)
{
    char *src = dls_read_file(DLS_SRC_DIR "/tests/tool/symfix.c");
    assert_non_null(src);
    const char *at = strstr(src, marker);
    assert_non_null(at);
    int line = 1;
    for (const char *p = src; p < at; p++)
        line += *p == '\n';
    free(src);
    return line;
}

static int setup(void **state)
{
    (void)state;
    snprintf(g_dir, sizeof g_dir, "/tmp/dlsync-sym-XXXXXX");
    if (!mkdtemp(g_dir))
        return -1;
    dls_build_path(g_bin, sizeof g_bin, "bin/dlsync");
    dls_build_path(g_lib, sizeof g_lib, "tests/tool/libsymfix.so");
    dls_build_path(g_stripped, sizeof g_stripped, "tests/tool/libsymfix_stripped.so");
    dls_build_path(g_debug, sizeof g_debug, "tests/tool/symfix.debug");
    snprintf(g_log, sizeof g_log, "%s/log.jsonl", g_dir);
    void *h = dlopen(g_lib, RTLD_NOW);
    if (!h)
        return -1;
    void *(*outer)(void) = (void *(*)(void))dlsym(h, "symfix_outer");
    struct link_map *map = NULL;
    Dl_info info;
    if (!outer || !dladdr1((void *)outer, &info, (void **)&map, RTLD_DL_LINKMAP) || !map)
        return -1;
    g_offset = (uintptr_t)outer() - 1 - (uintptr_t)map->l_addr; /* as the shim logs a return address */
    dlt_elf_debug d;
    if (dlt_elf_debug_read(g_lib, &d) != 0 || !d.build_id[0] || !d.debug_info)
        return -1;
    snprintf(g_build_id, sizeof g_build_id, "%s", d.build_id);
    g_inner_line = line_of("/* SYMFIX_INNER */");
    g_outer_line = line_of("/* SYMFIX_OUTER */");
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    return dls_remove_tree(g_dir);
}

/* Writes a check log with one race whose producer has one native frame in `object` (logged
 * with build id `bid`, NULL for none) and whose consumer has `extra` more frames there. */
static void write_log(const char *object, const char *bid, int extra)
{
    const char *base = strrchr(object, '/') + 1;
    FILE *f = fopen(g_log, "w");
    assert_non_null(f);
    char native[1024], frame[256];
    snprintf(frame, sizeof frame, "symfix_outer+0x%jx (%s)", (uintmax_t)0x10, base);
    snprintf(native, sizeof native, "{\"object\":\"%s\",\"offset\":\"0x%jx\",\"build_id\":%s%s%s}", object,
             (uintmax_t)g_offset, bid ? "\"" : "", bid ? bid : "null", bid ? "\"" : "");
    fprintf(f, "{\"ev\":\"start\",\"t\":1,\"pid\":9,\"tid\":9,\"exe\":\"/bin/app\",\"mode\":\"check\"}\n");
    fprintf(f,
            "{\"ev\":\"race\",\"t\":2,\"pid\":9,\"tid\":9,\"xid\":1,\"key\":\"k1\",\"count\":1,\"kind\":\"write-read\","
            "\"producer\":{\"op\":\"fill\",\"stream\":{\"id\":2,\"handle\":\"0x2a\",\"kind\":\"non-blocking\","
            "\"device\":0},\"stack\":[\"%s\",\"Scenario.run (/src/app.py:12)\"],\"native\":[%s],\"python\":[{"
            "\"function\":\"Scenario.run\",\"file\":\"/src/app.py\",\"line\":12}]},"
            "\"consumer\":{\"op\":\"use\",\"stream\":{\"id\":3,\"handle\":\"0x3b\",\"kind\":\"non-blocking\","
            "\"device\":0},\"stack\":[",
            frame, native);
    for (int i = 0; i < extra; i++)
        fprintf(f, "%s\"%s\"", i ? "," : "", frame);
    fputs("],\"native\":[", f);
    for (int i = 0; i < extra; i++)
        fprintf(f, "%s%s", i ? "," : "", native);
    fputs("]},\"why\":\"no wait\",\"fix\":{\"id\":\"consumer-stream\",\"text\":\"wait\"}}\n", f);
    fprintf(f, "{\"ev\":\"summary\",\"t\":3,\"pid\":9,\"tid\":9,\"cupti\":\"shared\",\"checked\":true}\n");
    fclose(f);
}

/* Runs `dlsync report ARGS... LOG` with PATH set to path (NULL: unchanged). */
static void report(dls_run_result *r, const char *path, ...)
{
    const char *argv[16] = {g_bin, "report"};
    size_t n = 2;
    va_list ap;
    va_start(ap, path);
    for (const char *a; (a = va_arg(ap, const char *)) != NULL && n < 14;)
        argv[n++] = a;
    va_end(ap);
    argv[n++] = g_log;
    argv[n] = NULL;
    char env_path[600];
    snprintf(env_path, sizeof env_path, "PATH=%s", path ? path : "");
    const char *env[] = {path ? env_path : NULL, NULL};
    assert_int_equal(dls_run(argv, path ? env : NULL, r), 0);
    if (r->status != 0)
        fail_msg("dlsync report exited %d:\n%s", r->status, r->err);
}

/* A directory holding only the named tools of /usr/bin (symbolic links), for PATH. */
static const char *bin_with(const char *name, char *dir, size_t n)
{
    snprintf(dir, n, "%s/bin-%s", g_dir, name ? name : "none");
    mkdir(dir, 0755);
    if (name) {
        char from[256], to[700];
        snprintf(from, sizeof from, "/usr/bin/%s", name);
        snprintf(to, sizeof to, "%s/%s", dir, name);
        if (access(from, X_OK) != 0)
            return NULL;
        unlink(to);
        assert_int_equal(symlink(from, to), 0);
    }
    return dir;
}

/* The two source frames of the fixture's frame, as the report shows them, in object `lib`. */
static void expect_lines(const char *text, const char *lib, const char *prefix)
{
    char inner[256], outer[256];
    snprintf(inner, sizeof inner, "%ssymfix_inner (%s/tests/tool/symfix.c:%d) inlined in %s", prefix, DLS_SRC_DIR,
             g_inner_line, lib);
    snprintf(outer, sizeof outer, "%ssymfix_outer (%s/tests/tool/symfix.c:%d) in %s", prefix, DLS_SRC_DIR, g_outer_line,
             lib);
    if (!strstr(text, inner) || !strstr(text, outer))
        fail_msg("no source lines\n  %s\n  %s\nin:\n%s", inner, outer, text);
    if (strstr(text, inner) > strstr(text, outer))
        fail_msg("the inlined function does not come first:\n%s", text);
}

static void debug_information_gives_file_line_and_inlined_chain(void **state)
{
    (void)state;
    write_log(g_lib, g_build_id, 1);
    dls_run_result r;
    report(&r, NULL, NULL);
    expect_lines(r.out, "libsymfix.so", "        at ");
    /* the Python frame first, then the native ones */
    const char *py = strstr(r.out, "        at Scenario.run (/src/app.py:12)\n"),
               *nat = strstr(r.out, "at symfix_inner");
    assert_non_null(py);
    assert_true(py < nat);
    assert_null(strstr(r.err, "symbolizer"));
    dls_run_free(&r);
    report(&r, NULL, "--json", NULL);
    dlt_json_error err;
    dlt_json_value *doc = dlt_json_parse(r.out, strlen(r.out), &err);
    assert_non_null(doc);
    const dlt_json_value *races = dlt_json_get(doc, "race_reports");
    assert_non_null(races);
    assert_int_equal(races->len, 1);
    const dlt_json_value *stack = dlt_json_get(dlt_json_get(races->items[0], "consumer"), "stack");
    assert_int_equal(stack->len, 2); /* the inlined function and the one it is in */
    assert_non_null(strstr(stack->items[0]->str, "symfix_inner ("));
    dlt_json_free(doc);
    dls_run_free(&r);
    char html[128];
    snprintf(html, sizeof html, "%s/page.html", g_dir);
    report(&r, NULL, "--html", html, NULL);
    char *page = dls_read_file(html);
    assert_non_null(page);
    expect_lines(page, "libsymfix.so", "at ");
    free(page);
    dls_run_free(&r);
}

static void addr2line_alone_gives_the_same(void **state)
{
    (void)state;
    char dir[128];
    if (!bin_with("addr2line", dir, sizeof dir))
        skip();
    write_log(g_lib, g_build_id, 1);
    dls_run_result r;
    report(&r, dir, NULL);
    expect_lines(r.out, "libsymfix.so", "        at ");
    dls_run_free(&r);
}

static void a_stripped_object_keeps_its_frame(void **state)
{
    (void)state;
    write_log(g_stripped, g_build_id, 1);
    dls_run_result r;
    report(&r, NULL, NULL);
    assert_non_null(strstr(r.out, "        at symfix_outer+0x10 (libsymfix_stripped.so)\n"));
    assert_null(strstr(r.out, "symfix.c:"));
    assert_string_equal(r.err, "");
    dls_run_free(&r);
}

static void the_build_id_finds_the_debug_information(void **state)
{
    (void)state;
    char dirs[256], path[400];
    snprintf(dirs, sizeof dirs, "%s/debug/.build-id/%.2s", g_dir, g_build_id);
    snprintf(path, sizeof path, "%s/debug", g_dir);
    mkdir(path, 0755);
    snprintf(path, sizeof path, "%s/debug/.build-id", g_dir);
    mkdir(path, 0755);
    mkdir(dirs, 0755);
    snprintf(path, sizeof path, "%s/%s.debug", dirs, g_build_id + 2);
    unlink(path);
    assert_int_equal(symlink(g_debug, path), 0);
    write_log(g_stripped, g_build_id, 1);
    snprintf(path, sizeof path, "%s/debug", g_dir);
    dls_run_result r;
    report(&r, NULL, "--debug-dir", path, NULL);
    expect_lines(r.out, "libsymfix_stripped.so", "        at ");
    dls_run_free(&r);
    /* the same object logged with another build id: the object is not trusted, the directory has
     * nothing for that id */
    write_log(g_lib, "00112233445566778899aabbccddeeff00112233", 1);
    report(&r, NULL, "--debug-dir", path, NULL);
    assert_null(strstr(r.out, "symfix.c:"));
    assert_non_null(strstr(r.out, "at symfix_outer+0x10 (libsymfix.so)"));
    dls_run_free(&r);
}

/* One build-id reader (shim/common/buildid.c) for both sides: what the shim logs for a frame of
 * the loaded object is what the command reads from the object's file and from its debug file. */
static void the_shim_and_the_command_read_one_build_id(void **state)
{
    (void)state;
    void *h = dlopen(g_lib, RTLD_NOW | RTLD_NOLOAD);
    assert_non_null(h);
    void *outer = dlsym(h, "symfix_outer");
    struct link_map *map = NULL;
    Dl_info info;
    assert_true(dladdr1(outer, &info, (void **)&map, RTLD_DL_LINKMAP) && map);
    dls_objinfo oi;
    dls_objinfo_get((uintptr_t)outer, (uintptr_t)map->l_addr, map->l_name, &oi);
    assert_string_equal(oi.build_id, g_build_id);
    dlt_elf_debug d;
    assert_int_equal(dlt_elf_debug_read(g_debug, &d), 0);
    assert_string_equal(d.build_id, g_build_id);
    assert_int_equal(dlt_elf_debug_read(g_stripped, &d), 0);
    assert_string_equal(d.build_id, g_build_id);
    dlclose(h);
}

static void without_a_symbolizer_one_line_says_so(void **state)
{
    (void)state;
    char dir[128];
    bin_with(NULL, dir, sizeof dir);
    write_log(g_lib, g_build_id, 3);
    dls_run_result r;
    report(&r, dir, NULL);
    assert_int_equal(dls_count(r.err, "no llvm-symbolizer or addr2line on the PATH"), 1);
    assert_int_equal(dls_count(r.err, "\n"), 1);
    assert_int_equal(dls_count(r.out, "at symfix_outer+0x10 (libsymfix.so)"), 4);
    assert_null(strstr(r.out, "symfix.c:"));
    dls_run_free(&r);
}

/* The shim logs where each native frame lies; the report turns the scenario's into its lines. */
static void a_real_run_logs_object_offset_and_build_id(void **state)
{
    (void)state;
    char shim[512], pv[1100], preload[1200], cupti[600], log[200], scen[512];
    dls_build_path(shim, sizeof shim, "lib/libdlsync.so");
    dls_build_path(scen, sizeof scen, "scenarios/scen_side_stream");
    snprintf(preload, sizeof preload, "LD_PRELOAD=%s", dls_preload_value(pv, sizeof pv, shim));
    snprintf(cupti, sizeof cupti, "DLSYNC_CUPTI=%s/cudasim/libcupti.so.13", DLS_BUILD_DIR);
    snprintf(log, sizeof log, "DLSYNC_LOG=%s", g_log);
    unlink(g_log);
    const char *argv[] = {scen, "racy", NULL};
    const char *env[] = {preload, cupti, log, "DLSYNC_MODE=check", "CUDA_INJECTION64_PATH=", "DLSYNC_QUIET=1", NULL};
    dls_run_result r;
    assert_int_equal(dls_run(argv, env, &r), 0);
    assert_int_equal(r.status, 0);
    dls_run_free(&r);
    char *text = dls_read_file(g_log), *line = text ? strstr(text, "{\"ev\":\"race\"") : NULL;
    assert_non_null(line);
    *strchr(line, '\n') = '\0';
    dlt_json_value *race = dlt_json_parse(line, strlen(line), NULL);
    assert_non_null(race);
    const dlt_json_value *producer = dlt_json_get(race, "producer"), *native = dlt_json_get(producer, "native");
    assert_non_null(native);
    assert_true(native->len >= 2 && native->len <= dlt_json_get(producer, "stack")->len);
    /* the scenario's own frame (a sanitizer's interceptor may come first) */
    const dlt_json_value *frame = NULL;
    for (size_t i = 0; i < native->len && !frame; i++) {
        const char *o = dlt_json_get_str(native->items[i], "object");
        if (o && strlen(o) >= strlen("/scen_side_stream") &&
            strcmp(o + strlen(o) - strlen("/scen_side_stream"), "/scen_side_stream") == 0)
            frame = native->items[i];
    }
    assert_non_null(frame);
    const char *object = dlt_json_get_str(frame, "object"), *bid = dlt_json_get_str(frame, "build_id"),
               *offset = dlt_json_get_str(frame, "offset");
    assert_true(offset && strncmp(offset, "0x", 2) == 0);
    dlt_elf_debug d;
    assert_int_equal(dlt_elf_debug_read(object, &d), 0);
    assert_non_null(bid);
    assert_string_equal(bid, d.build_id);
    dlt_json_free(race);
    free(text);
    report(&r, NULL, NULL);
    char want[256];
    snprintf(want, sizeof want, "at scen_side_exchange (%s/tests/scenarios/scen.c:", DLS_SRC_DIR);
    if (!strstr(r.out, want))
        fail_msg("the scenario's frame has no source line:\n%s", r.out);
    dls_run_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(debug_information_gives_file_line_and_inlined_chain),
        cmocka_unit_test(addr2line_alone_gives_the_same),
        cmocka_unit_test(a_stripped_object_keeps_its_frame),
        cmocka_unit_test(the_build_id_finds_the_debug_information),
        cmocka_unit_test(the_shim_and_the_command_read_one_build_id),
        cmocka_unit_test(without_a_symbolizer_one_line_says_so),
        cmocka_unit_test(a_real_run_logs_object_offset_and_build_id),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
