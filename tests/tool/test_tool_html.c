/* Tests of `dlsync report --html` (issue 36): the page of real runs (the racy side_stream scenario
 * under check, the same under fix, its correct twin under check) and of a log full of hostile
 * strings is one self-contained file (a strict Content-Security-Policy, no script, no element or
 * attribute that loads anything, no event handler, every log value escaped), shows what each run
 * holds (lanes, marks, the missing ordering and the fix, stacks, injected waits, a clean run said
 * clean), and follows --chrome-trace's output-file rules. Then each page is rendered in headless
 * Chromium (skipped, with a message, where it is not installed: scripts/deps.sh --ci installs
 * it): the DOM it builds holds the lanes, marks and stacks, the console shows no error and no
 * blocked load, a copy measured at 1280x800 does not scroll sideways (a race with 6 streams
 * included), its marks are reached with Tab and its text is selectable; a screenshot of each is
 * kept under build/tests/tool/html-report/. */
#include <ctype.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "dls_test.h"

#define CSP                                                                                                  \
    "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; " \
    "base-uri 'none'; form-action 'none'\">"

static char g_dir[64], g_bin[512], g_scen[512], g_preload[1200], g_cupti[600], g_chromium[512], g_shots[512];

/* The runs whose pages are tested: a log each, made in setup. */
enum { RACY, FIX, CLEAN, HOSTILE, NPAGES };
static const char *const g_names[NPAGES] = {"racy", "fix", "clean", "hostile"};

/* The first executable `name` on the PATH into buf; 1 when found. */
static int on_path(const char *name, char *buf, size_t n)
{
    const char *path = getenv("PATH");
    for (const char *p = path ? path : ""; *p;) {
        size_t len = strcspn(p, ":");
        snprintf(buf, n, "%.*s/%s", (int)len, p, name);
        if (len && access(buf, X_OK) == 0)
            return 1;
        p += len + (p[len] == ':');
    }
    return 0;
}

static void path_of(char *buf, size_t n, const char *name, const char *ext)
{
    snprintf(buf, n, "%s/%s.%s", g_dir, name, ext);
}

/* Runs the side_stream scenario (racy or correct) preloaded in mode, logging to name.jsonl. */
static int run_scenario(const char *name, const char *mode, const char *arg)
{
    char log[200], logenv[220], modeenv[64];
    path_of(log, sizeof log, name, "jsonl");
    snprintf(logenv, sizeof logenv, "DLSYNC_LOG=%s", log);
    snprintf(modeenv, sizeof modeenv, "DLSYNC_MODE=%s", mode);
    const char *argv[] = {g_scen, arg, NULL};
    const char *env[] = {g_preload, g_cupti, logenv, modeenv, "CUDA_INJECTION64_PATH=", "DLSYNC_QUIET=1", NULL};
    dls_run_result r;
    if (dls_run(argv, env, &r) != 0)
        return -1;
    int rc = r.status == 0 ? 0 : -1;
    dls_run_free(&r);
    return rc;
}

#define STREAM(id) "{\"id\":" #id ",\"handle\":\"0x" #id "00\",\"kind\":\"non-blocking\",\"device\":0}"
#define INJECT(from)                                                                                        \
    "{\"ev\":\"inject\",\"t\":1600,\"pid\":7,\"tid\":7,\"xid\":1,\"what\":\"event-wait\",\"from\":" STREAM( \
        from) ",\"to\":" STREAM(2) ",\"reason\":\"first use on this stream <b>\"}\n"

/* A check log whose every string tries to become markup, script or a link, with a race whose
 * exchange also got waits from four more streams: six streams in all. */
static const char g_hostile[] =
    "{\"ev\":\"start\",\"t\":1000,\"pid\":7,\"tid\":7,\"exe\":\"/bin/<b>x</b>\\u001b[31m\",\"mode\":\"check\"}\n"
    "{\"ev\":\"export\",\"t\":1100,\"pid\":7,\"tid\":7,\"xid\":1,\"framework\":\"<script>alert(1)</script>\","
    "\"symbol\":\"x\\\" onmouseover=\\\"alert(2)\",\"device\":{\"type\":\"cuda\",\"id\":0}}\n"
    "{\"ev\":\"import\",\"t\":1200,\"pid\":7,\"tid\":8,\"xid\":1,\"framework\":\"tvm'><img src=x onerror=alert(3)>\","
    "\"device\":{\"type\":\"cuda\",\"id\":0}}\n"
    "{\"ev\":\"race\",\"t\":1300,\"pid\":7,\"tid\":8,\"xid\":1,\"key\":\"<k>\",\"count\":1,\"kind\":\"write-read\","
    "\"tensor\":{\"device\":{\"type\":\"cuda\",\"id\":0},\"dtype\":\"float32\",\"shape\":[4],\"data\":\"0x10\"},"
    "\"framework\":\"<script>alert(1)</script>\",\"symbol\":\"s\","
    "\"producer\":{\"op\":\"<svg onload=alert(4)>\",\"stream\":" STREAM(
        1) ",\"stack\":[\"</pre><script>alert(5)</script>\",\"evil (https://evil.example/x.js:1)\"],"
           "\"native\":[{\"object\":\"/nonexistent/<lib>.so\",\"offset\":\"0x10\",\"build_id\":null}],"
           "\"python\":[{\"function\":\"evil\",\"file\":\"https://evil.example/x.js\",\"line\":1}]},"
           "\"consumer\":{\"op\":\"use\\u202eevil\",\"stream\":" STREAM(
               2) ",\"stack\":[\"<iframe src=https://evil.example>\"]},"
                  "\"why\":\"\\u202e<style>body{display:none}</style>\","
                  "\"fix\":{\"id\":\"consumer-stream\",\"text\":\"<a "
                  "href=\\\"https://evil.example\\\">click</a>\"}}\n" INJECT(3) INJECT(4) INJECT(5) INJECT(
                      6) "{\"ev\":\"summary\",\"t\":2000,\"pid\":7,\"tid\":7,\"cupti\":\"shared\",\"checked\":true}\n";

static int setup(void **state)
{
    (void)state;
    char shim[512], pv[1100];
    snprintf(g_dir, sizeof g_dir, "/tmp/dlsync-html-XXXXXX");
    if (!mkdtemp(g_dir))
        return -1;
    dls_build_path(g_bin, sizeof g_bin, "bin/dlsync");
    dls_build_path(g_scen, sizeof g_scen, "scenarios/scen_side_stream");
    dls_build_path(shim, sizeof shim, "lib/libdlsync.so");
    dls_build_path(g_shots, sizeof g_shots, "tests/tool/html-report");
    mkdir(g_shots, 0755);
    snprintf(g_preload, sizeof g_preload, "LD_PRELOAD=%s", dls_preload_value(pv, sizeof pv, shim));
    snprintf(g_cupti, sizeof g_cupti, "DLSYNC_CUPTI=%s/cudasim/libcupti.so.13", DLS_BUILD_DIR);
    if (!on_path("chromium", g_chromium, sizeof g_chromium) &&
        !on_path("chromium-browser", g_chromium, sizeof g_chromium))
        g_chromium[0] = '\0';
    if (run_scenario("racy", "check", "racy") != 0 || run_scenario("fix", "fix", "racy") != 0 ||
        run_scenario("clean", "check", "correct") != 0)
        return -1;
    char path[200];
    path_of(path, sizeof path, "hostile", "jsonl");
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    fputs(g_hostile, f);
    fclose(f);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    return dls_remove_tree(g_dir);
}

/* Runs `dlsync report ARGS...` (NULL-terminated) under a time limit. */
static void report(dls_run_result *r, ...)
{
    const char *argv[24] = {"timeout", "120", g_bin, "report"};
    size_t n = 4;
    va_list ap;
    va_start(ap, r);
    for (const char *a; (a = va_arg(ap, const char *)) != NULL && n < 23;)
        argv[n++] = a;
    va_end(ap);
    argv[n] = NULL;
    assert_int_equal(dls_run(argv, NULL, r), 0);
}

/* The page of run i (written by dlsync report --html), malloc'd. */
static char *page_of(int i)
{
    char log[200], html[200];
    path_of(log, sizeof log, g_names[i], "jsonl");
    path_of(html, sizeof html, g_names[i], "html");
    dls_run_result r;
    report(&r, "--html", html, log, NULL);
    if (r.status != 0)
        fail_msg("dlsync report --html %s exited %d:\n%s", g_names[i], r.status, r.err);
    assert_non_null(strstr(r.out, "HTML report written to "));
    dls_run_free(&r);
    char *page = dls_read_file(html);
    assert_non_null(page);
    return page;
}

/* Checks every tag of html: no element that runs or loads anything, no event handler, links only
 * to the page's own anchors, no style that fetches. Text never holds a '<' (it is escaped), so
 * what is scanned is markup. */
static void markup_is_inert(const char *html, const char *what)
{
    static const char *const banned[] = {"script", "link",  "img",   "iframe", "object", "embed", "base",
                                         "form",   "video", "audio", "source", "image",  "use",   "foreignobject"};
    for (const char *p = strchr(html, '<'); p; p = strchr(p + 1, '<')) {
        const char *q = p + 1 + (p[1] == '/');
        char tag[32];
        size_t n = 0;
        while ((isalnum((unsigned char)*q) || *q == '-' || *q == ':') && n < sizeof tag - 1)
            tag[n++] = (char)tolower((unsigned char)*q++);
        tag[n] = '\0';
        for (size_t i = 0; i < sizeof banned / sizeof *banned; i++)
            if (strcmp(tag, banned[i]) == 0)
                fail_msg("%s: a <%s> element: %.80s", what, tag, p);
        /* the attributes: name[=value] */
        while (*q && *q != '>') {
            while (isspace((unsigned char)*q) || *q == '/')
                q++;
            char name[40];
            size_t k = 0;
            while (*q && !isspace((unsigned char)*q) && *q != '=' && *q != '>' && *q != '/' && k < sizeof name - 1)
                name[k++] = (char)tolower((unsigned char)*q++);
            name[k] = '\0';
            const char *v = "", *end = q;
            if (*q == '=') {
                q++;
                char quote = *q == '"' || *q == '\'' ? *q++ : 0;
                v = q;
                while (*q && (quote ? *q != quote : !isspace((unsigned char)*q) && *q != '>'))
                    q++;
                end = q;
                if (quote && *q)
                    q++;
            }
            if (strncmp(name, "on", 2) == 0)
                fail_msg("%s: an event handler %s in %.80s", what, name, p);
            if (strcmp(name, "src") == 0 || strcmp(name, "srcset") == 0 || strcmp(name, "action") == 0 ||
                strcmp(name, "xlink:href") == 0 || strcmp(name, "background") == 0 || strcmp(name, "poster") == 0)
                fail_msg("%s: an attribute %s that loads: %.80s", what, name, p);
            if (strcmp(name, "href") == 0 && *v != '#')
                fail_msg("%s: a link out of the page: %.*s", what, (int)(end - v), v);
            if (strcmp(name, "style") == 0 && memmem(v, (size_t)(end - v), "url(", 4))
                fail_msg("%s: a style that fetches: %.*s", what, (int)(end - v), v);
            if (!k && *q != '>' && *q)
                q++;
        }
    }
    /* the style sheet fetches nothing either */
    const char *style = strstr(html, "<style>"), *style_end = style ? strstr(style, "</style>") : NULL;
    for (const char *u = style; u && u < style_end; u = strstr(u + 1, "url("))
        if (u != style && strncmp(u, "url(#", 5) != 0)
            fail_msg("%s: the style sheet fetches %.40s", what, u);
    assert_null(strstr(html, "@import"));
}

/* The static properties every page has. */
static void self_contained(const char *html, const char *what)
{
    static const char head[] = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n" CSP;
    if (strncmp(html, head, sizeof head - 1) != 0)
        fail_msg("%s: the page does not begin with its charset and Content-Security-Policy:\n%.300s", what, html);
    assert_non_null(strstr(html, CSP));
    markup_is_inert(html, what);
    assert_null(strchr(html, '\x1b'));
    assert_non_null(strstr(html, "</html>\n"));
}

static void pages_show_each_run(void **state)
{
    (void)state;
    char *racy = page_of(RACY), *fix = page_of(FIX), *clean = page_of(CLEAN);
    self_contained(racy, "racy");
    self_contained(fix, "fix");
    self_contained(clean, "clean");
    /* the race: lanes for the host and both streams, both accesses, the export and import, the
     * missing ordering and the fix, both stacks, the why and fix lines */
    const char *want[] = {"<g class=\"lane host\">",
                          ">stream 2</text>",
                          ">stream 3</text>",
                          "<g class=\"mark producer\"",
                          "<g class=\"mark consumer\"",
                          "<g class=\"mark record\"",
                          "<g class=\"mark wait\"",
                          "<g class=\"mark exchange\"",
                          "class=\"arrow missing\"",
                          "class=\"arrow fix\"",
                          "at scen_read",
                          "at tvm_read",
                          "<b>why:</b> stream 3",
                          "<b>fix:</b> get the tensor",
                          "1 distinct race reported"};
    for (size_t i = 0; i < sizeof want / sizeof *want; i++)
        if (!strstr(racy, want[i]))
            fail_msg("the racy run's page has no %s", want[i]);
    assert_non_null(strstr(racy, "<section class=\"stack producer\">"));
    assert_non_null(strstr(racy, "<section class=\"stack consumer\">"));
    assert_int_equal(dls_count(racy, "<article class=\"race\""), 1);
    /* the fix run: its injected wait drawn the same way, no race */
    assert_non_null(strstr(fix, "<article class=\"inject\""));
    assert_non_null(strstr(fix, "class=\"arrow made\""));
    assert_non_null(strstr(fix, "<g class=\"mark record\""));
    assert_non_null(strstr(fix, "<g class=\"mark wait\""));
    assert_non_null(strstr(fix, "injected (event-wait): stream 3"));
    assert_null(strstr(fix, "<article class=\"race\""));
    /* the clean run: said clean, nothing drawn */
    assert_non_null(strstr(clean, "<div class=\"banner ok\">Checked: 1 check-mode process, no race reported"));
    assert_non_null(strstr(clean, "<p>No race was reported."));
    assert_null(strstr(clean, "<svg"));
    free(racy);
    free(fix);
    free(clean);
}

static void hostile_strings_stay_text(void **state)
{
    (void)state;
    char *page = page_of(HOSTILE);
    self_contained(page, "hostile");
    const char *escaped[] = {"&lt;script&gt;alert(1)&lt;/script&gt;",
                             "x&quot; onmouseover=&quot;alert(2)",
                             "tvm&#39;&gt;&lt;img src=x onerror=alert(3)&gt;",
                             "&lt;svg onload=alert(4)&gt;",
                             "at &lt;/pre&gt;&lt;script&gt;alert(5)&lt;/script&gt;",
                             "use\\u202eevil",
                             "&lt;a href=&quot;https://evil.example&quot;&gt;click&lt;/a&gt;",
                             "/bin/&lt;b&gt;x&lt;/b&gt;\\x1b[31m",
                             "&lt;style&gt;body{display:none}&lt;/style&gt;"};
    for (size_t i = 0; i < sizeof escaped / sizeof *escaped; i++)
        if (!strstr(page, escaped[i]))
            fail_msg("the hostile page does not show %s as text", escaped[i]);
    assert_null(strstr(page, "\xe2\x80\xae")); /* U+202E itself */
    assert_int_equal(dls_count(page, "<style>"), 1);
    assert_int_equal(dls_count(page, "<pre>"), 2);
    /* six streams and the host: seven lanes in the race's drawing */
    const char *race = strstr(page, "<article class=\"race\""), *end = race ? strstr(race, "</article>") : NULL;
    assert_non_null(end);
    int lanes = 0;
    for (const char *p = strstr(race, "<g class=\"lane"); p && p < end; p = strstr(p + 1, "<g class=\"lane"))
        lanes++;
    assert_int_equal(lanes, 7);
    free(page);
}

/* --html follows --chrome-trace's rules: never a log, never an input, - is standard output. */
static void the_page_is_never_a_log(void **state)
{
    (void)state;
    char log[200], other[200], html[200];
    path_of(log, sizeof log, "racy", "jsonl");
    path_of(other, sizeof other, "clean", "jsonl");
    path_of(html, sizeof html, "rules", "html");
    char *before = dls_read_file(log);
    dls_run_result r;
    report(&r, "--html", log, other, NULL); /* the name forgotten: a log would be the page */
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "looks like a dlsync log; it is not overwritten"));
    dls_run_free(&r);
    report(&r, "--html", other, other, NULL);
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "is also one of the logs to read"));
    dls_run_free(&r);
    report(&r, "--html", g_dir, log, NULL);
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "is a directory"));
    dls_run_free(&r);
    char *after = dls_read_file(log);
    assert_string_equal(before, after);
    free(before);
    free(after);
    const char *bad[][4] = {{"--html", NULL},
                            {"--html", "--json", log, NULL},
                            {"--html", "-", "--json", log},
                            {"--html", "-", "--chrome-trace", "-"},
                            {"--html", html, "--chrome-trace", html}};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        report(&r, bad[i][0], bad[i][1], bad[i][2], bad[i][3], log, NULL);
        if (r.status != 2)
            fail_msg("case %zu: status %d, not 2", i, r.status);
        dls_run_free(&r);
    }
    /* an existing page is replaced; - writes the page on stdout and the text on stderr */
    FILE *f = fopen(html, "w");
    fputs("<html>old</html>\n", f);
    fclose(f);
    report(&r, log, "--html=", NULL);
    assert_int_equal(r.status, 2);
    dls_run_free(&r);
    char eq[220];
    snprintf(eq, sizeof eq, "--html=%s", html);
    report(&r, log, eq, NULL);
    assert_int_equal(r.status, 0);
    dls_run_free(&r);
    char *page = dls_read_file(html);
    assert_true(strncmp(page, "<!DOCTYPE html>", 15) == 0);
    free(page);
    report(&r, "--html", "-", log, NULL);
    assert_int_equal(r.status, 0);
    assert_true(strncmp(r.out, "<!DOCTYPE html>", 15) == 0);
    assert_non_null(strstr(r.err, "Races: 1 distinct"));
    dls_run_free(&r);
}

/* ---- rendered in Chromium ---- */

static void need_chromium(void)
{
    if (!g_chromium[0]) {
        fprintf(stderr, "test_tool_html: chromium is not installed (scripts/deps.sh --ci installs it): the pages "
                        "are checked as files, not rendered\n");
        skip();
    }
}

/* Runs Chromium headless on the file page with extra arguments (NULL-terminated) at 1280x800. */
static void chromium(dls_run_result *r, const char *page, ...)
{
    char url[300], profile[200], home[220];
    snprintf(url, sizeof url, "file://%s", page);
    snprintf(profile, sizeof profile, "--user-data-dir=%s/profile", g_dir);
    snprintf(home, sizeof home, "HOME=%s", g_dir);
    const char *argv[32] = {"timeout",
                            "120",
                            g_chromium,
                            "--headless",
                            "--no-sandbox",
                            "--disable-gpu",
                            "--no-first-run",
                            "--no-default-browser-check",
                            "--disable-extensions",
                            "--disable-background-networking",
                            "--disable-component-update",
                            "--disable-sync",
                            "--hide-scrollbars",
                            "--enable-logging=stderr",
                            "--v=0",
                            "--window-size=1280,800",
                            profile};
    size_t n = 17;
    va_list ap;
    va_start(ap, page);
    for (const char *a; (a = va_arg(ap, const char *)) != NULL && n < 30;)
        argv[n++] = a;
    va_end(ap);
    argv[n++] = url;
    argv[n] = NULL;
    const char *env[] = {home, NULL};
    assert_int_equal(dls_run(argv, env, r), 0);
    if (r->status != 0)
        fail_msg("chromium exited %d on %s:\n%s", r->status, page, r->err);
}

/* The integer of attribute name="N" in dom, or -1. */
static long attr_int(const char *dom, const char *name)
{
    char key[64];
    snprintf(key, sizeof key, " %s=\"", name);
    const char *p = strstr(dom, key);
    return p ? strtol(p + strlen(key), NULL, 10) : -1;
}

static const char g_measure[] =
    "<script>(function(){var d=document.documentElement,b=document.body;"
    "function n(s){return document.querySelectorAll(s).length}"
    "b.setAttribute('data-sw',d.scrollWidth);b.setAttribute('data-cw',d.clientWidth);"
    "var w=0;document.querySelectorAll('svg,pre,table').forEach(function(e){w=Math.max(w,"
    "Math.ceil(e.getBoundingClientRect().right))});b.setAttribute('data-right',w);"
    "b.setAttribute('data-race-lanes',n('#race-1 .lane'));b.setAttribute('data-marks',n('svg .mark'));"
    "b.setAttribute('data-tabbable',n('svg .mark[tabindex=\"0\"]')+n('a[href]'));"
    "var p=document.querySelector('pre')||b;b.setAttribute('data-selectable',"
    "getComputedStyle(p).userSelect==='none'||getComputedStyle(b).userSelect==='none'?0:1);"
    "})();</script>";

/* A copy of the page with a script that measures it (its policy let inline script run). */
static void measured_copy(const char *page, const char *copy)
{
    char *html = dls_read_file(page);
    assert_non_null(html);
    char *csp = strstr(html, CSP), *body_end = strstr(html, "</body>");
    assert_non_null(csp);
    assert_non_null(body_end);
    FILE *f = fopen(copy, "w");
    assert_non_null(f);
    fwrite(html, 1, (size_t)(csp - html), f);
    fputs("<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
          "script-src 'unsafe-inline'\">",
          f);
    fwrite(csp + strlen(CSP), 1, (size_t)(body_end - csp - strlen(CSP)), f);
    fputs(g_measure, f);
    fputs(body_end, f);
    fclose(f);
    free(html);
}

static void rendered_in_chromium(void **state)
{
    (void)state;
    need_chromium();
    for (int i = 0; i < NPAGES; i++) {
        char html[200], copy[200], shot[600], shot_arg[620];
        path_of(html, sizeof html, g_names[i], "html");
        free(page_of(i));
        /* the DOM Chromium builds, and what its console said */
        dls_run_result r;
        chromium(&r, html, "--dump-dom", NULL);
        if (strstr(r.err, ":CONSOLE"))
            fail_msg("%s: the console says something (a script error or a blocked load):\n%s", g_names[i], r.err);
        markup_is_inert(r.out, g_names[i]);
        assert_non_null(strstr(r.out, "<h2 id=\"glance-h\">At a glance</h2>"));
        if (i == RACY || i == HOSTILE) {
            assert_non_null(strstr(r.out, "<g class=\"mark producer\""));
            assert_non_null(strstr(r.out, "<g class=\"mark consumer\""));
            assert_non_null(strstr(r.out, "class=\"arrow missing\""));
            assert_non_null(strstr(r.out, "<section class=\"stack producer\"><h4>") ||
                            strstr(r.out, "<section class=\"stack producer\">\n<h4>"));
            assert_non_null(strstr(r.out, "<pre>"));
        }
        if (i == FIX)
            assert_non_null(strstr(r.out, "class=\"arrow made\""));
        if (i == HOSTILE)
            assert_non_null(strstr(r.out, "&lt;script&gt;alert(1)&lt;/script&gt;"));
        dls_run_free(&r);
        /* measured at 1280x800: nothing wider than the window, marks and links reached with Tab,
         * text selectable */
        path_of(copy, sizeof copy, g_names[i], "measured.html");
        measured_copy(html, copy);
        chromium(&r, copy, "--dump-dom", NULL);
        long sw = attr_int(r.out, "data-sw"), cw = attr_int(r.out, "data-cw"), right = attr_int(r.out, "data-right");
        if (sw < 0 || cw < 1000 || sw > cw || right > cw)
            fail_msg("%s: at 1280x800 the page is %ld wide (window %ld, widest drawing, stack or table ends at %ld)",
                     g_names[i], sw, cw, right);
        assert_int_equal(attr_int(r.out, "data-selectable"), 1);
        assert_int_equal(attr_int(r.out, "data-tabbable") >= attr_int(r.out, "data-marks"), 1);
        if (i == HOSTILE)
            assert_int_equal(attr_int(r.out, "data-race-lanes"), 7);
        if (i == RACY)
            assert_int_equal(attr_int(r.out, "data-race-lanes"), 3);
        dls_run_free(&r);
        /* the screenshot, kept */
        snprintf(shot, sizeof shot, "%s/%s.png", g_shots, g_names[i]);
        snprintf(shot_arg, sizeof shot_arg, "--screenshot=%s", shot);
        unlink(shot);
        chromium(&r, html, shot_arg, NULL);
        dls_run_free(&r);
        char *png = dls_read_file(shot);
        if (!png || memcmp(png, "\x89PNG", 4) != 0)
            fail_msg("%s: no screenshot at %s", g_names[i], shot);
        free(png);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(pages_show_each_run),
        cmocka_unit_test(hostile_strings_stay_text),
        cmocka_unit_test(the_page_is_never_a_log),
        cmocka_unit_test(rendered_in_chromium),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
