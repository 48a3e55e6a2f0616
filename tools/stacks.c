/* Race stacks as the report shows them (see stacks.h). */
#include "stacks.h"

#include "records.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The offset of a `native` entry ("0x…" string), into *v; 1 when it has one. */
static int entry_offset(const dlt_json_value *entry, uint64_t *v)
{
    const char *hex = dlt_json_get_str(entry, "offset");
    char *end;
    if (!hex || hex[0] != '0' || hex[1] != 'x')
        return 0;
    *v = strtoull(hex + 2, &end, 16);
    return end != hex + 2 && !*end;
}

int dlt_stacks_want(const dlt_log_set *set, dlt_symbolizer *sym)
{
    static const char *const sides[] = {"producer", "consumer"};
    for (size_t i = 0; i < set->n; i++) {
        if (strcmp(set->recs[i].ev, "race") != 0)
            continue;
        for (size_t s = 0; s < 2; s++) {
            const dlt_json_value *native = dlt_json_get(dlt_json_get(set->recs[i].obj, sides[s]), "native");
            for (size_t k = 0; native && native->type == DLT_JSON_ARRAY && k < native->len; k++) {
                uint64_t off;
                const dlt_json_value *e = native->items[k];
                if (entry_offset(e, &off) &&
                    dlt_sym_want(sym, dlt_json_get_str(e, "object"), dlt_json_get_str(e, "build_id"), off) != 0)
                    return -1;
            }
        }
    }
    return 0;
}

/* Appends a frame (text copied); -1 when memory runs out. */
static int add(dlt_shown_stack *out, const char *text, int python, int resolved, int inlined)
{
    dlt_shown_frame *more = realloc(out->f, (out->n + 1) * sizeof *more);
    if (!more)
        return -1;
    out->f = more;
    char *copy = strdup(text);
    if (!copy)
        return -1;
    out->f[out->n++] = (dlt_shown_frame){.text = copy, .python = python, .resolved = resolved, .inlined = inlined};
    return 0;
}

/* 1 when text is the "function (file:line)" of one of the side's Python frames. */
static int is_python(const dlt_json_value *python, const char *text)
{
    for (size_t i = 0; python && python->type == DLT_JSON_ARRAY && i < python->len; i++) {
        char buf[1024], line[32];
        const dlt_json_value *p = python->items[i];
        snprintf(buf, sizeof buf, "%s (%s:%s)", dlt_json_get_str(p, "function") ? dlt_json_get_str(p, "function") : "",
                 dlt_json_get_str(p, "file") ? dlt_json_get_str(p, "file") : "",
                 dlt_scalar_text(p, "line", line, sizeof line));
        if (strcmp(buf, text) == 0)
            return 1;
    }
    return 0;
}

/* Appends the source frames of one resolved native frame logged as `logged` in `object`. */
static int add_resolved(dlt_shown_stack *out, const char *logged, const char *object, const dlt_src_frame *f, size_t n)
{
    const char *lib = strrchr(object, '/');
    lib = lib ? lib + 1 : object;
    for (size_t i = 0; i < n; i++) {
        char fn[512], text[2048];
        int last = i + 1 == n;
        if (f[i].function)
            snprintf(fn, sizeof fn, "%s", f[i].function);
        else if (last && strstr(logged, "+0x") && strchr(logged, ' ')) /* "function+0xOFF (library)" */
            snprintf(fn, sizeof fn, "%.*s", (int)(strstr(logged, "+0x") - logged), logged);
        else
            snprintf(fn, sizeof fn, "?");
        char where[1200] = "";
        if (f[i].file && f[i].line > 0)
            snprintf(where, sizeof where, " (%s:%ld)", f[i].file, f[i].line);
        else if (f[i].file)
            snprintf(where, sizeof where, " (%s)", f[i].file);
        snprintf(text, sizeof text, "%s%s %s %s", fn, where, last ? "in" : "inlined in", lib);
        if (add(out, text, 0, 1, !last) != 0)
            return -1;
    }
    return 0;
}

int dlt_stack_shown(const dlt_json_value *side, const dlt_symbolizer *sym, dlt_shown_stack *out)
{
    out->f = NULL;
    out->n = 0;
    const dlt_json_value *stack = dlt_json_get(side, "stack"), *native = dlt_json_get(side, "native"),
                         *python = dlt_json_get(side, "python");
    if (!stack || stack->type != DLT_JSON_ARRAY)
        return 0;
    int have_native = native && native->type == DLT_JSON_ARRAY;
    for (size_t i = 0; i < stack->len; i++) {
        const dlt_json_value *v = stack->items[i];
        if (v->type != DLT_JSON_STRING)
            continue;
        int py = have_native ? i >= native->len : is_python(python, v->str);
        size_t n = 0;
        const dlt_src_frame *f = NULL;
        const char *object = NULL;
        uint64_t off;
        if (!py && have_native && entry_offset(native->items[i], &off)) {
            object = dlt_json_get_str(native->items[i], "object");
            f = dlt_sym_find(sym, object, dlt_json_get_str(native->items[i], "build_id"), off, &n);
        }
        if (f ? add_resolved(out, v->str, object, f, n) != 0 : add(out, v->str, py, 0, 0) != 0) {
            dlt_shown_stack_free(out);
            return -1;
        }
    }
    return 0;
}

void dlt_shown_stack_free(dlt_shown_stack *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->f[i].text);
    free(s->f);
    s->f = NULL;
    s->n = 0;
}
