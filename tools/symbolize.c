/* Offline symbolization of logged native frames with llvm-symbolizer or addr2line (see
 * symbolize.h). */
#include "symbolize.h"

#include "elfdebug.h"
#include "tally.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define CHUNK 4096             /* addresses asked of one symbolizer process at most */
#define MAX_OUTPUT (64u << 20) /* bytes read from one symbolizer at most */
#define DEADLINE_S 120         /* a symbolizer still running after this is killed */
#define DEFAULT_DEBUG_DIR "/usr/lib/debug"

typedef struct {
    char *path, *build_id;
    char *debug_file; /* the file with its debug information, NULL when none was found */
} sym_object;

typedef struct {
    size_t obj;
    uint64_t offset;
    dlt_src_frame *f;
    size_t n;
} address;

struct dlt_symbolizer {
    const char *const *dirs;
    size_t ndirs;
    sym_object *objs;
    size_t nobjs, capobjs;
    address *addrs;
    size_t naddrs, capaddrs;
    dlt_tally objkeys;  /* "path\tbuild id" -> aux: index in objs */
    dlt_tally addrkeys; /* "object index\toffset" -> aux: index in addrs */
    int missing;
};

dlt_symbolizer *dlt_sym_new(const char *const *dirs, size_t ndirs)
{
    dlt_symbolizer *s = calloc(1, sizeof *s);
    if (s) {
        s->dirs = dirs;
        s->ndirs = ndirs;
    }
    return s;
}

/* The tally key of an object (malloc'd), or NULL. */
static char *object_key(const char *object, const char *build_id)
{
    size_t n = strlen(object) + strlen(build_id) + 2;
    char *key = malloc(n);
    if (key)
        snprintf(key, n, "%s\t%s", object, build_id);
    return key;
}

static int grow(void **items, size_t *cap, size_t n, size_t size)
{
    if (n < *cap)
        return 0;
    size_t want = *cap ? 2 * *cap : 16;
    void *more = realloc(*items, want * size);
    if (!more)
        return -1;
    *items = more;
    *cap = want;
    return 0;
}

int dlt_sym_want(dlt_symbolizer *s, const char *object, const char *build_id, uint64_t offset)
{
    if (!object || !object[0])
        return 0;
    if (!build_id)
        build_id = "";
    char *key = object_key(object, build_id);
    int fresh = 0;
    dlt_tally_entry *e = key ? dlt_tally_add(&s->objkeys, key, &fresh) : NULL;
    free(key);
    if (!e)
        return -1;
    if (fresh) {
        if (grow((void **)&s->objs, &s->capobjs, s->nobjs, sizeof *s->objs) != 0)
            return -1;
        sym_object *o = &s->objs[s->nobjs];
        *o = (sym_object){.path = strdup(object), .build_id = strdup(build_id)};
        if (!o->path || !o->build_id) {
            free(o->path);
            free(o->build_id);
            return -1;
        }
        e->aux = (long long)s->nobjs++;
    }
    char akey[64];
    snprintf(akey, sizeof akey, "%lld\t%" PRIx64, e->aux, offset);
    size_t obj = (size_t)e->aux;
    e = dlt_tally_add(&s->addrkeys, akey, &fresh);
    if (!e)
        return -1;
    if (fresh) {
        if (grow((void **)&s->addrs, &s->capaddrs, s->naddrs, sizeof *s->addrs) != 0)
            return -1;
        s->addrs[s->naddrs] = (address){.obj = obj, .offset = offset};
        e->aux = (long long)s->naddrs++;
    }
    return 0;
}

/* The file holding the debug information of o (malloc'd), or NULL: the object itself when it
 * has some and is still the object that ran, else DIR/.build-id/xx/yyyy.debug. */
static char *find_debug_file(const dlt_symbolizer *s, const sym_object *o)
{
    dlt_elf_debug d;
    if (dlt_elf_debug_read(o->path, &d) == 0 && d.debug_info &&
        (!o->build_id[0] || !d.build_id[0] || strcmp(o->build_id, d.build_id) == 0))
        return strdup(o->path);
    if (strlen(o->build_id) < 4 || strspn(o->build_id, "0123456789abcdef") != strlen(o->build_id))
        return NULL;
    for (size_t i = 0; i <= s->ndirs; i++) {
        char path[PATH_MAX];
        const char *dir = i < s->ndirs ? s->dirs[i] : DEFAULT_DEBUG_DIR;
        if ((size_t)snprintf(path, sizeof path, "%s/.build-id/%.2s/%s.debug", dir, o->build_id, o->build_id + 2) >=
            sizeof path)
            continue;
        if (dlt_elf_debug_read(path, &d) == 0 && d.debug_info &&
            (!d.build_id[0] || strcmp(d.build_id, o->build_id) == 0))
            return strdup(path);
    }
    return NULL;
}

/* The full path of the first executable `name` in a directory of the PATH, into buf; 1 found. */
static int on_path(const char *name, char *buf, size_t n)
{
    const char *path = getenv("PATH");
    if (!path)
        return 0;
    for (const char *p = path;;) {
        size_t len = strcspn(p, ":");
        struct stat st;
        if ((size_t)snprintf(buf, n, "%.*s%s%s", (int)len, p, len ? "/" : "", name) < n && stat(buf, &st) == 0 &&
            S_ISREG(st.st_mode) && access(buf, X_OK) == 0)
            return 1;
        if (!p[len])
            return 0;
        p += len + 1;
    }
}

/* Runs argv (argv[0] a full path) with its standard output read into a new buffer (*out, *len);
 * its standard input and error are /dev/null. Returns 0 when it ran (whatever its status). */
static int run_capture(char *const argv[], char **out, size_t *len)
{
    *out = NULL;
    *len = 0;
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0)
        return -1;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    pid_t pid;
    int rc = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(fds[1]);
    if (rc != 0) {
        close(fds[0]);
        return -1;
    }
    size_t cap = 0;
    time_t end = time(NULL) + DEADLINE_S;
    for (;;) {
        struct pollfd pfd = {.fd = fds[0], .events = POLLIN};
        time_t left = end - time(NULL);
        if (left <= 0 || poll(&pfd, 1, (int)left * 1000) == 0) {
            kill(pid, SIGKILL);
            break;
        }
        if (*len + 65536 + 1 > cap) {
            size_t want = cap ? 2 * cap : 131072;
            char *more = want <= MAX_OUTPUT ? realloc(*out, want) : NULL;
            if (!more) {
                kill(pid, SIGKILL);
                break;
            }
            *out = more;
            cap = want;
        }
        ssize_t got = read(fds[0], *out + *len, cap - *len - 1);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            break;
        *len += (size_t)got;
    }
    close(fds[0]);
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {
    }
    if (*out)
        (*out)[*len] = '\0';
    return 0;
}

/* Adds (function, location) to a: location is "file:line" (addr2line, perhaps with
 * " (discriminator N)") or "file:line:column" (llvm-symbolizer). Unknown parts are "??". */
static void add_frame(address *a, const char *function, char *location, int llvm)
{
    char *paren = strstr(location, " (discriminator");
    if (paren)
        *paren = '\0';
    char *colon = strrchr(location, ':');
    if (llvm && colon) { /* the column */
        *colon = '\0';
        colon = strrchr(location, ':');
    }
    long line = colon ? strtol(colon + 1, NULL, 10) : 0;
    if (colon)
        *colon = '\0';
    int known_file = location[0] && strcmp(location, "??") != 0;
    int known_function = function[0] && strcmp(function, "??") != 0;
    if (!known_file && !known_function)
        return;
    dlt_src_frame *more = realloc(a->f, (a->n + 1) * sizeof *more);
    if (!more)
        return;
    a->f = more;
    dlt_src_frame *f = &a->f[a->n];
    f->function = known_function ? strdup(function) : NULL;
    f->file = known_file ? strdup(location) : NULL;
    f->line = known_file && line > 0 ? line : 0;
    a->n++;
}

/* Reads the symbolizer's answer for the addresses idx[0..n): each block begins with the
 * address (--addresses), then pairs of lines, function and location, innermost first. */
static void parse(dlt_symbolizer *s, const size_t *idx, size_t n, char *text, int llvm)
{
    size_t k = 0;
    address *cur = NULL;
    char *function = NULL;
    for (char *line = text, *next; line && *line; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        if (!line[0])
            continue;
        char *end;
        if (line[0] == '0' && line[1] == 'x' && (strtoull(line, &end, 16), !*end)) {
            cur = NULL;
            function = NULL;
            if (k < n && strtoull(line, NULL, 16) == s->addrs[idx[k]].offset)
                cur = &s->addrs[idx[k]];
            k++;
        } else if (cur && !function) {
            function = line;
        } else if (cur) {
            add_frame(cur, function, line, llvm);
            function = NULL;
        }
    }
    /* An answer whose only frames lack a file tells nothing the log's text did not. */
    for (size_t i = 0; i < n; i++) {
        address *a = &s->addrs[idx[i]];
        int any_file = 0;
        for (size_t j = 0; j < a->n; j++)
            any_file |= a->f[j].file != NULL;
        if (!any_file) {
            for (size_t j = 0; j < a->n; j++)
                free(a->f[j].function);
            free(a->f);
            a->f = NULL;
            a->n = 0;
        }
    }
}

/* Asks the symbolizer at tool about the addresses idx[0..n) of the debug file `file`. */
static void ask(dlt_symbolizer *s, const char *tool, int llvm, const char *file, const size_t *idx, size_t n)
{
    char **argv = calloc(n + 8, sizeof *argv);
    char *texts = malloc(n * 20 + 1);
    char obj[PATH_MAX + 8];
    if (!argv || !texts) {
        free(argv);
        free(texts);
        return;
    }
    size_t a = 0;
    argv[a++] = (char *)tool;
    if (llvm) {
        snprintf(obj, sizeof obj, "--obj=%s", file);
        argv[a++] = obj;
        argv[a++] = "--inlines";
        argv[a++] = "--addresses";
        argv[a++] = "--demangle";
    } else {
        argv[a++] = "-e";
        argv[a++] = (char *)file;
        argv[a++] = "-a";
        argv[a++] = "-f";
        argv[a++] = "-i";
        argv[a++] = "-C";
    }
    for (size_t i = 0; i < n; i++) {
        argv[a] = texts + i * 20;
        snprintf(argv[a++], 20, "0x%" PRIx64, s->addrs[idx[i]].offset);
    }
    argv[a] = NULL;
    char *out;
    size_t len;
    if (run_capture(argv, &out, &len) == 0 && out)
        parse(s, idx, n, out, llvm);
    free(out);
    free(argv);
    free(texts);
}

void dlt_sym_resolve(dlt_symbolizer *s, FILE *errs)
{
    size_t with_debug = 0, frames = 0;
    for (size_t i = 0; i < s->nobjs; i++) {
        free(s->objs[i].debug_file);
        s->objs[i].debug_file = find_debug_file(s, &s->objs[i]);
        with_debug += s->objs[i].debug_file != NULL;
    }
    if (!with_debug)
        return;
    char tool[PATH_MAX];
    int llvm = on_path("llvm-symbolizer", tool, sizeof tool);
    if (!llvm && !on_path("addr2line", tool, sizeof tool)) {
        for (size_t i = 0; i < s->naddrs; i++)
            frames += s->objs[s->addrs[i].obj].debug_file != NULL;
        s->missing = 1;
        if (errs)
            fprintf(errs,
                    "dlsync report: no llvm-symbolizer or addr2line on the PATH: %zu native frame%s with debug "
                    "information keep function+0xOFF (library), without file:line (install llvm or binutils)\n",
                    frames, frames == 1 ? "" : "s");
        return;
    }
    size_t *idx = malloc((s->naddrs ? s->naddrs : 1) * sizeof *idx);
    for (size_t o = 0; idx && o < s->nobjs; o++) {
        if (!s->objs[o].debug_file)
            continue;
        size_t n = 0;
        for (size_t i = 0; i < s->naddrs; i++) {
            if (s->addrs[i].obj != o)
                continue;
            idx[n++] = i;
            if (n == CHUNK) {
                ask(s, tool, llvm, s->objs[o].debug_file, idx, n);
                n = 0;
            }
        }
        if (n)
            ask(s, tool, llvm, s->objs[o].debug_file, idx, n);
    }
    free(idx);
}

const dlt_src_frame *dlt_sym_find(const dlt_symbolizer *s, const char *object, const char *build_id, uint64_t offset,
                                  size_t *n)
{
    *n = 0;
    if (!s || !object || !object[0])
        return NULL;
    char *key = object_key(object, build_id ? build_id : "");
    const dlt_tally_entry *e = key ? dlt_tally_find(&s->objkeys, key) : NULL;
    free(key);
    if (!e)
        return NULL;
    char akey[64];
    snprintf(akey, sizeof akey, "%lld\t%" PRIx64, e->aux, offset);
    e = dlt_tally_find(&s->addrkeys, akey);
    if (!e || !s->addrs[e->aux].n)
        return NULL;
    *n = s->addrs[e->aux].n;
    return s->addrs[e->aux].f;
}

int dlt_sym_missing(const dlt_symbolizer *s)
{
    return s && s->missing;
}

void dlt_sym_free(dlt_symbolizer *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->nobjs; i++) {
        free(s->objs[i].path);
        free(s->objs[i].build_id);
        free(s->objs[i].debug_file);
    }
    for (size_t i = 0; i < s->naddrs; i++) {
        for (size_t j = 0; j < s->addrs[i].n; j++) {
            free(s->addrs[i].f[j].function);
            free(s->addrs[i].f[j].file);
        }
        free(s->addrs[i].f);
    }
    free(s->objs);
    free(s->addrs);
    dlt_tally_free(&s->objkeys);
    dlt_tally_free(&s->addrkeys);
    free(s);
}
