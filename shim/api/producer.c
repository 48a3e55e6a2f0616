/* Finding a producer's export among the profiles and calling it. */
#include "producer.h"

#include "../hooks/bindings.h"
#include "../hooks/profile_file.h"
#include "../hooks/lookup.h"
#include "../hooks/resolve.h"
#include "../policy/policy.h"

#include <string.h>

/* 1 when dlsync can call row p: the tensor is the return value of f(object), or the
 * out-parameter of status = f(object, &tensor). A display signature with more than one
 * parameter (TensorFlow's TF_Status*) means other arguments are needed. */
static int callable(const dls_profile *p)
{
    if (p->where == DLS_WHERE_RET)
        return p->index == 0 && !strchr(p->display, ',');
    return p->where == DLS_WHERE_OUT && p->index == 1;
}

/* What is known about one candidate row. */
typedef struct {
    int found, resolved_uncallable;
    dls_api_producer best;
} search;

/* Considers row p. */
static void consider(search *s, const dls_profile *p)
{
    if (p->role != DLS_ROLE_EXPORT)
        return;
    if (s->found && (s->best.row->versioned || !p->versioned))
        return;
    const char *lib;
    unsigned long long adds = 0;
    void *real = dls_resolve(p->symbol, &lib, &adds);
    if (!real)
        return;
    if (!callable(p)) {
        s->resolved_uncallable = 1;
        return;
    }
    void *stub = dls_binding_stub(p, real);
    if (!stub)
        return;
    s->found = 1;
    s->best = (dls_api_producer){.row = p, .real = real, .stub = stub};
}

int dls_api_find_producer(const char *name, dls_api_producer *out)
{
    search s = {0};
    size_t n;
    const dls_profile *rows = dls_profiles_builtin(&n);
    int by_symbol = 0;
    for (size_t i = 0; i < n && !by_symbol; i++)
        by_symbol = strcmp(rows[i].symbol, name) == 0;
    for (size_t i = 0; i < n; i++)
        if (strcmp(by_symbol ? rows[i].symbol : rows[i].framework, name) == 0)
            consider(&s, &rows[i]);
    rows = dls_file_rows(&n);
    for (size_t i = 0; i < n; i++)
        if (strcmp(rows[i].symbol, name) == 0 || (!by_symbol && strcmp(rows[i].framework, name) == 0))
            consider(&s, &rows[i]);
    if (s.found) {
        *out = s.best;
        return DLSYNC_OK;
    }
    return s.resolved_uncallable ? DLSYNC_ERR_UNSUPPORTED : DLSYNC_ERR_NO_PRODUCER;
}

int dls_api_export(const dls_api_producer *p, void *object, int wrapped, void **mt)
{
    void *f = wrapped ? p->stub : p->real;
    uintptr_t consumer = 0;
    int had_consumer = wrapped && dls_policy_consumer_stream(&consumer);
    if (had_consumer)
        dls_policy_clear_consumer_stream();
    void *t = NULL;
    int failed;
    if (p->row->where == DLS_WHERE_RET) {
        t = ((void *(*)(void *))f)(object);
        failed = !t;
    } else {
        failed = ((int (*)(void *, void **))f)(object, &t) != 0 || !t;
    }
    if (had_consumer)
        dls_policy_set_consumer_stream(consumer);
    if (failed)
        return DLSYNC_ERR_PRODUCER;
    *mt = t;
    return DLSYNC_OK;
}
