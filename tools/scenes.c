/* Races and injected orderings as lane scenes (see scenes.h). */
#include "scenes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "records.h"

/* One thing to draw, before it is given its column. */
typedef enum { EV_PRODUCER, EV_CONSUMER, EV_EXPORT, EV_IMPORT, EV_RELEASE, EV_RECORD, EV_WAIT } ev_type;

typedef struct {
    long long t;
    int sub; /* orders things of one time */
    ev_type type;
    size_t lane;
    char label[48];
    char detail[1024];
    size_t id; /* the order it was added in */
} event;

typedef struct {
    event ev[DLT_SCENE_MARKS];
    size_t n;
    size_t mark_of[DLT_SCENE_MARKS]; /* an event's id -> its mark, once placed */
    long long tids[6];               /* the host threads seen */
    size_t ntids, more_tids;
} events;

static long long rec_t(const dlt_json_value *obj, long long dflt)
{
    long long t;
    return dlt_json_get_int(obj, "t", &t) ? t : dflt;
}

/* Adds an event and returns it (NULL when full); its id is its index in e->ev, which place()
 * leaves as it is (it sorts a copy). */
static event *add(events *e, long long t, int sub, ev_type type, size_t lane, const char *label)
{
    if (e->n == DLT_SCENE_MARKS || lane >= DLT_SCENE_LANES)
        return NULL;
    event *v = &e->ev[e->n];
    *v = (event){.t = t, .sub = sub, .type = type, .lane = lane, .id = e->n};
    e->n++;
    snprintf(v->label, sizeof v->label, "%s", label);
    return v;
}

/* The mark place() gave the event v (NULL: none), or DLT_SCENE_MARKS. */
static size_t mark_of(const events *e, const event *v)
{
    return v ? e->mark_of[v->id] : DLT_SCENE_MARKS;
}

static int by_time(const void *a, const void *b)
{
    const event *x = a, *y = b;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    return x->sub - y->sub;
}

static const dlt_mark_kind g_kind_of[] = {DLT_MARK_PRODUCER, DLT_MARK_CONSUMER, DLT_MARK_EXCHANGE, DLT_MARK_EXCHANGE,
                                          DLT_MARK_EXCHANGE, DLT_MARK_RECORD,   DLT_MARK_WAIT};

/* Places the events as marks, in the order of their times, and names the host lane's threads. */
static void place(dlt_scene *s, events *e)
{
    event copy[DLT_SCENE_MARKS];
    memcpy(copy, e->ev, e->n * sizeof *copy);
    qsort(copy, e->n, sizeof *copy, by_time);
    for (size_t i = 0; i < e->n; i++)
        e->mark_of[copy[i].id] =
            dlt_scene_mark(s, copy[i].lane, g_kind_of[copy[i].type], copy[i].label, copy[i].detail);
    /* the host lane says which threads it stands for */
    char *kind = s->lanes[0].kind;
    size_t len = 0;
    kind[0] = '\0';
    for (size_t i = 0; i < e->ntids; i++)
        len += (size_t)snprintf(kind + len, sizeof s->lanes[0].kind - len, "%s%lld",
                                i              ? ", "
                                : e->ntids > 1 ? "threads "
                                               : "thread ",
                                e->tids[i]);
    if (e->more_tids && len < sizeof s->lanes[0].kind)
        snprintf(kind + len, sizeof s->lanes[0].kind - len, " and %zu more", e->more_tids);
}

const char *dlt_scene_stream_text(const dlt_json_value *stream, char *buf, size_t n)
{
    char id[24], kind[32], handle[32], dev[24];
    if (!stream || stream->type != DLT_JSON_OBJECT) {
        snprintf(buf, n, "the host");
        return buf;
    }
    dlt_scalar_text(stream, "device", dev, sizeof dev);
    snprintf(buf, n, "stream %s (%s, %s%s%s)", dlt_scalar_text(stream, "id", id, sizeof id),
             dlt_scalar_text(stream, "kind", kind, sizeof kind),
             dlt_scalar_text(stream, "handle", handle, sizeof handle),
             dlt_json_get(stream, "device") ? ", device " : "", dlt_json_get(stream, "device") ? dev : "");
    return buf;
}

/* The lane of a log stream object (the host lane for null), added when new. */
static size_t stream_lane(dlt_scene *s, const dlt_json_value *stream, size_t host)
{
    if (!stream || stream->type != DLT_JSON_OBJECT)
        return host;
    char id[24], name[48], kind[32], handle[32], dev[24], where[96];
    snprintf(name, sizeof name, "stream %s", dlt_scalar_text(stream, "id", id, sizeof id));
    dlt_scalar_text(stream, "device", dev, sizeof dev);
    snprintf(where, sizeof where, "%s%s%s", dlt_scalar_text(stream, "handle", handle, sizeof handle),
             dlt_json_get(stream, "device") ? ", device " : "", dlt_json_get(stream, "device") ? dev : "");
    return dlt_scene_lane(s, name, dlt_scalar_text(stream, "kind", kind, sizeof kind), where, 0);
}

/* Remembers the thread of a record made on the host. */
static void host_thread(events *e, const dlt_json_value *rec)
{
    long long tid;
    if (!dlt_json_get_int(rec, "tid", &tid))
        return;
    for (size_t i = 0; i < e->ntids; i++)
        if (e->tids[i] == tid)
            return;
    if (e->ntids < sizeof e->tids / sizeof *e->tids)
        e->tids[e->ntids++] = tid;
    else
        e->more_tids++;
}

void dlt_exchange_find(const dlt_log_set *set, const dlt_json_value *r, dlt_exchange_recs *x)
{
    x->export_rec = x->import_rec = x->release_rec = DLT_NO_RECORD;
    x->ninjects = 0;
    char pid[32], xid[32], p[32], q[32];
    dlt_scalar_text(r, "pid", pid, sizeof pid);
    dlt_scalar_text(r, "xid", xid, sizeof xid);
    for (size_t i = 0; i < set->n; i++) {
        const dlt_log_record *rec = &set->recs[i];
        if (strcmp(dlt_scalar_text(rec->obj, "xid", q, sizeof q), xid) != 0 ||
            strcmp(dlt_scalar_text(rec->obj, "pid", p, sizeof p), pid) != 0)
            continue;
        if (strcmp(rec->ev, "export") == 0 && x->export_rec == DLT_NO_RECORD)
            x->export_rec = i;
        else if (strcmp(rec->ev, "import") == 0 && x->import_rec == DLT_NO_RECORD)
            x->import_rec = i;
        else if (strcmp(rec->ev, "release") == 0 && x->release_rec == DLT_NO_RECORD)
            x->release_rec = i;
        else if (strcmp(rec->ev, "inject") == 0 && x->ninjects < sizeof x->injects / sizeof *x->injects)
            x->injects[x->ninjects++] = i;
    }
}

/* The exchange's export, import and release on the host lane. */
static void exchange_points(const dlt_log_set *set, const dlt_exchange_recs *x, size_t host, events *e)
{
    const size_t recs[] = {x->export_rec, x->import_rec, x->release_rec};
    const ev_type types[] = {EV_EXPORT, EV_IMPORT, EV_RELEASE};
    const char *const words[] = {"export", "import", "release"};
    for (size_t k = 0; k < 3; k++) {
        if (recs[k] == DLT_NO_RECORD)
            continue;
        const dlt_json_value *r = set->recs[recs[k]].obj;
        char tid[24], xid[24];
        event *v = add(e, rec_t(r, 0), 0, types[k], host, words[k]);
        if (!v)
            continue;
        host_thread(e, r);
        if (k == 2)
            snprintf(v->detail, sizeof v->detail, "release: the tensor's deleter called on thread %s (xid %s)",
                     dlt_scalar_text(r, "tid", tid, sizeof tid), dlt_scalar_text(r, "xid", xid, sizeof xid));
        else
            snprintf(v->detail, sizeof v->detail, "%s: %s %s on thread %s (xid %s)", words[k],
                     dlt_json_get_str(r, "framework") ? dlt_json_get_str(r, "framework") : "?",
                     dlt_json_get_str(r, "symbol") ? dlt_json_get_str(r, "symbol") : "?",
                     dlt_scalar_text(r, "tid", tid, sizeof tid), dlt_scalar_text(r, "xid", xid, sizeof xid));
    }
}

/* Race kinds whose producer access comes first: the producer wrote (or read) before the export
 * and the consumer's access follows it. */
static int one_way(const char *kind)
{
    static const char *const kinds[] = {"write-read", "read-write", "write-write", "host-read"};
    for (size_t i = 0; kind && i < sizeof kinds / sizeof *kinds; i++)
        if (strcmp(kind, kinds[i]) == 0)
            return 1;
    return 0;
}

static const char *str_or(const char *s, const char *dflt)
{
    return s ? s : dflt;
}

/* The orderings injected into exchange x as events (an event recorded on the stream waited
 * for, a wait on the stream or the host made to wait); their pairs, for the arrows, in made. */
typedef struct {
    event *rec, *wait;
    char why[1024];
} made_ordering;

static size_t inject_events(const dlt_log_set *set, const dlt_exchange_recs *x, dlt_scene *s, size_t host, events *e,
                            made_ordering *made, size_t max)
{
    size_t nmade = 0;
    for (size_t i = 0; i < x->ninjects; i++) {
        const dlt_json_value *r = set->recs[x->injects[i]].obj, *from = dlt_json_get(r, "from"),
                             *to = dlt_json_get(r, "to");
        const char *what = str_or(dlt_json_get_str(r, "what"), "?"),
                   *reason = str_or(dlt_json_get_str(r, "reason"), "?");
        long long t = rec_t(r, 0);
        int sub = 2 * (int)i;
        char fst[160], tst[160];
        dlt_scene_stream_text(from, fst, sizeof fst);
        dlt_scene_stream_text(to, tst, sizeof tst);
        host_thread(e, r);
        event *rec = from && from->type == DLT_JSON_OBJECT
                         ? add(e, t, sub, EV_RECORD, stream_lane(s, from, host), "record")
                         : NULL;
        event *wait =
            add(e, t, sub + 1, EV_WAIT, stream_lane(s, to, host), strcmp(what, "event-wait") == 0 ? "wait" : what);
        if (rec)
            snprintf(rec->detail, sizeof rec->detail, "injected (%s): an event recorded on %s after its pending work",
                     what, fst);
        if (wait)
            snprintf(wait->detail, sizeof wait->detail, "injected (%s): %s waits%s%s (%s)", what,
                     to && to->type == DLT_JSON_OBJECT ? tst : "the host", rec ? " for it" : "",
                     !rec && from && from->type == DLT_JSON_OBJECT ? fst : "", reason);
        if (nmade < max) {
            made[nmade].rec = rec;
            made[nmade].wait = wait;
            snprintf(made[nmade++].why, sizeof made[0].why, "%s: %s", what, reason);
        }
    }
    return nmade;
}

/* The arrows of the orderings inject_events added (after place()). */
static void inject_arrows(dlt_scene *s, const events *e, const made_ordering *made, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (made[i].rec && made[i].wait)
            dlt_scene_arrow(s, mark_of(e, made[i].rec), mark_of(e, made[i].wait), DLT_ARROW_MADE, made[i].why);
}

void dlt_scene_race(const dlt_log_set *set, size_t race, dlt_scene *s)
{
    memset(s, 0, sizeof *s);
    const dlt_json_value *r = set->recs[race].obj;
    const dlt_json_value *ps = dlt_json_get(r, "producer"), *cs = dlt_json_get(r, "consumer");
    const char *kind = dlt_json_get_str(r, "kind");
    dlt_exchange_recs x;
    dlt_exchange_find(set, r, &x);
    size_t host = dlt_scene_lane(s, "host threads", "", "", 1);
    size_t plane = stream_lane(s, dlt_json_get(ps, "stream"), host);
    size_t clane = stream_lane(s, dlt_json_get(cs, "stream"), host);
    if (x.import_rec != DLT_NO_RECORD)
        stream_lane(s, dlt_json_get(set->recs[x.import_rec].obj, "stream"), host);
    for (size_t i = 0; i < x.ninjects; i++) {
        stream_lane(s, dlt_json_get(set->recs[x.injects[i]].obj, "from"), host);
        stream_lane(s, dlt_json_get(set->recs[x.injects[i]].obj, "to"), host);
    }
    events e = {.n = 0};
    exchange_points(set, &x, host, &e);
    host_thread(&e, r);
    long long t = rec_t(r, 0);
    long long t_export = x.export_rec != DLT_NO_RECORD ? rec_t(set->recs[x.export_rec].obj, t) : t - 1;
    long long t_import = x.import_rec != DLT_NO_RECORD ? rec_t(set->recs[x.import_rec].obj, t) : t;
    long long t_release = x.release_rec != DLT_NO_RECORD ? rec_t(set->recs[x.release_rec].obj, t) : t;
    int first_producer = one_way(kind), reuse = kind && strcmp(kind, "release-reuse") == 0;
    /* the earlier access, then the later one, with the fix's record and wait between them */
    long long t_early = first_producer ? t_export : reuse ? t_release : t;
    long long t_late = kind && strcmp(kind, "host-read") == 0 && t_import > t ? t_import : t;
    const char *pop = str_or(dlt_json_get_str(ps, "op"), "an unknown operation"),
               *cop = str_or(dlt_json_get_str(cs, "op"), "an unknown operation");
    char pst[160], cst[160];
    dlt_scene_stream_text(dlt_json_get(ps, "stream"), pst, sizeof pst);
    dlt_scene_stream_text(dlt_json_get(cs, "stream"), cst, sizeof cst);
    event *pv = add(&e, first_producer ? t_early : t_late, first_producer ? -3 : 3, EV_PRODUCER, plane, pop);
    event *cv = add(&e, first_producer ? t_late : t_early, first_producer ? 3 : -3, EV_CONSUMER, clane, cop);
    if (pv)
        snprintf(pv->detail, sizeof pv->detail, "producer side: %s on %s%s", pop, pst,
                 first_producer ? ", before the export" : ", the later access");
    if (cv)
        snprintf(cv->detail, sizeof cv->detail, "consumer side: %s on %s%s", cop, cst,
                 first_producer ? "" : ", still pending");
    event *early = first_producer ? pv : cv, *late = first_producer ? cv : pv;
    const char *early_st = first_producer ? pst : cst, *late_st = first_producer ? cst : pst;
    const char *early_op = first_producer ? pop : cop, *late_op = first_producer ? cop : pop;
    event *rec = NULL, *wait = NULL;
    int early_host = early && s->lanes[early->lane].host, late_host = late && s->lanes[late->lane].host;
    if (early && late && !early_host && !late_host) {
        rec = add(&e, t_early, -2, EV_RECORD, early->lane, "record");
        wait = add(&e, t_late, 2, EV_WAIT, late->lane, "wait");
        if (rec)
            snprintf(rec->detail, sizeof rec->detail, "fix: cudaEventRecord(ev) on %s right after %s", early_st,
                     early_op);
        if (wait)
            snprintf(wait->detail, sizeof wait->detail, "fix: cudaStreamWaitEvent on %s for ev, before %s", late_st,
                     late_op);
    } else if (early && late && !early_host) {
        wait = add(&e, t_late, 2, EV_WAIT, late->lane, "sync");
        if (wait)
            snprintf(wait->detail, sizeof wait->detail,
                     "fix: the host waits for %s (cudaStreamSynchronize, or an event recorded after %s) before %s",
                     early_st, early_op, late_op);
    }
    made_ordering made[16];
    size_t nmade = inject_events(set, &x, s, host, &e, made, 16);
    place(s, &e);
    inject_arrows(s, &e, made, nmade);
    size_t m_early = mark_of(&e, early), m_late = mark_of(&e, late), m_rec = mark_of(&e, rec),
           m_wait = mark_of(&e, wait);
    int have_rec = rec != NULL, have_wait = wait != NULL;
    const char *why = dlt_json_get_str(r, "why");
    dlt_scene_arrow(s, m_early, m_late, DLT_ARROW_MISSING,
                    why ? why : "nothing orders the later access after the earlier one");
    if (have_wait) {
        char what[1024];
        snprintf(what, sizeof what, "%s (the event route of fix %s)",
                 have_rec ? "the wait orders the later access after the event" : "the host's wait orders it",
                 str_or(dlt_json_get_str(dlt_json_get(r, "fix"), "id"), "?"));
        dlt_scene_arrow(s, have_rec ? m_rec : m_early, m_wait, DLT_ARROW_FIX, what);
    }
}

void dlt_scene_injects(const dlt_log_set *set, const dlt_exchange_recs *x, dlt_scene *s)
{
    memset(s, 0, sizeof *s);
    size_t host = dlt_scene_lane(s, "host threads", "", "", 1);
    for (size_t i = 0; i < x->ninjects; i++) {
        stream_lane(s, dlt_json_get(set->recs[x->injects[i]].obj, "from"), host);
        stream_lane(s, dlt_json_get(set->recs[x->injects[i]].obj, "to"), host);
    }
    if (x->import_rec != DLT_NO_RECORD)
        stream_lane(s, dlt_json_get(set->recs[x->import_rec].obj, "stream"), host);
    events e = {.n = 0};
    exchange_points(set, x, host, &e);
    made_ordering made[16];
    size_t nmade = inject_events(set, x, s, host, &e, made, 16);
    place(s, &e);
    inject_arrows(s, &e, made, nmade);
}
