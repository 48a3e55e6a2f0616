/* Trace Event format writer (see chrome.h). */
#include "chrome.h"

#include <stdlib.h>
#include <string.h>

#include "records.h"
#include "tally.h"

typedef struct {
    FILE *out;
    long long t0;     /* earliest "t" in ns */
    int first;        /* no event written yet */
    dlt_tally tracks; /* "pid\ttid" of tracks already named */
    dlt_tally procs;  /* pids already named */
    long long next_flow;
    int oom;
} writer;

static void sep(writer *w)
{
    fputs(w->first ? "\n" : ",\n", w->out);
    w->first = 0;
}

static long long rec_int(const dlt_json_value *obj, const char *key, long long dflt)
{
    long long v;
    return dlt_json_get_int(obj, key, &v) ? v : dflt;
}

static void write_ts(writer *w, const dlt_json_value *rec)
{
    long long t = rec_int(rec, "t", w->t0) - w->t0;
    fprintf(w->out, "\"ts\":%lld.%03lld", t / 1000, (t < 0 ? -t : t) % 1000);
}

static void name_process(writer *w, long long pid, const dlt_json_value *start)
{
    char key[32];
    snprintf(key, sizeof key, "%lld", pid);
    int fresh;
    if (!dlt_tally_add(&w->procs, key, &fresh)) {
        w->oom = 1;
        return;
    }
    if (!fresh && !start)
        return;
    char name[512];
    if (start)
        snprintf(name, sizeof name, "%s (pid %lld, mode %s)",
                 dlt_json_get_str(start, "exe") ? dlt_json_get_str(start, "exe") : "?", pid,
                 dlt_json_get_str(start, "mode") ? dlt_json_get_str(start, "mode") : "?");
    else
        snprintf(name, sizeof name, "pid %lld", pid);
    sep(w);
    fprintf(w->out, "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%lld,\"tid\":0,\"args\":{\"name\":", pid);
    dlt_json_write_str(w->out, name);
    fputs("}}", w->out);
}

/* Names the track (pid, tid) the first time it is used. */
static void name_track(writer *w, long long pid, long long tid, const char *name, int sort)
{
    char key[64];
    snprintf(key, sizeof key, "%lld\t%lld", pid, tid);
    int fresh;
    if (!dlt_tally_add(&w->tracks, key, &fresh)) {
        w->oom = 1;
        return;
    }
    if (!fresh)
        return;
    name_process(w, pid, NULL);
    sep(w);
    fprintf(w->out, "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%lld,\"tid\":%lld,\"args\":{\"name\":", pid, tid);
    dlt_json_write_str(w->out, name);
    fputs("}}", w->out);
    sep(w);
    fprintf(w->out,
            "{\"ph\":\"M\",\"name\":\"thread_sort_index\",\"pid\":%lld,\"tid\":%lld,\"args\":{\"sort_index\":%d}}", pid,
            tid, sort);
}

/* The track of a host thread of a record. */
static long long thread_track(writer *w, const dlt_json_value *rec, long long pid)
{
    long long tid = rec_int(rec, "tid", 0);
    char name[64];
    snprintf(name, sizeof name, "thread %lld", tid);
    name_track(w, pid, tid, name, 0);
    return tid;
}

/* The track of a log stream object, or -1 when stream is not an object with an integer id. */
static long long stream_track(writer *w, const dlt_json_value *stream, long long pid)
{
    long long id;
    if (!stream || stream->type != DLT_JSON_OBJECT || !dlt_json_get_int(stream, "id", &id) || id < 0)
        return -1;
    long long tid = DLT_CHROME_STREAM_TID_BASE + (id & 0x3fffffffLL);
    char name[128];
    dlt_stream_text(stream, name, sizeof name);
    name_track(w, pid, tid, name, 1);
    return tid;
}

/* Writes one instant event; args is the whole record. scope: 't' thread, 'p' process. */
static void instant(writer *w, const dlt_log_record *r, long long pid, long long tid, const char *cat, const char *name,
                    char scope)
{
    sep(w);
    fprintf(w->out, "{\"ph\":\"i\",\"s\":\"%c\",\"pid\":%lld,\"tid\":%lld,", scope, pid, tid);
    write_ts(w, r->obj);
    fprintf(w->out, ",\"cat\":\"%s\",\"name\":", cat);
    dlt_json_write_str(w->out, name);
    fputs(",\"args\":", w->out);
    dlt_json_write(w->out, r->obj);
    fputs("}", w->out);
}

/* Writes one flow endpoint: ph 's' (start) or 'f' (finish, bound to the enclosing event). */
static void flow(writer *w, char ph, long long id, const char *cat, long long pid, long long tid,
                 const dlt_json_value *at)
{
    sep(w);
    fprintf(w->out, "{\"ph\":\"%c\",\"id\":%lld,\"cat\":\"%s\",\"name\":\"%s\",\"pid\":%lld,\"tid\":%lld,%s", ph, id,
            cat, cat, pid, tid, ph == 'f' ? "\"bp\":\"e\"," : "");
    write_ts(w, at);
    fputs("}", w->out);
}

static void exchange_event(writer *w, const dlt_log_set *set, size_t i, const size_t *match, const size_t *flow_of)
{
    const dlt_log_record *r = &set->recs[i];
    long long pid = rec_int(r->obj, "pid", 0);
    long long tid = thread_track(w, r->obj, pid);
    char name[256], xid[32];
    const char *fw = dlt_json_get_str(r->obj, "framework");
    const char *sym = dlt_json_get_str(r->obj, "symbol");
    snprintf(name, sizeof name, "%s xid %s: %s %s", r->ev, dlt_scalar_text(r->obj, "xid", xid, sizeof xid),
             fw ? fw : "?", sym ? sym : "?");
    instant(w, r, pid, tid, "exchange", name, 't');
    if (strcmp(r->ev, "export") == 0) {
        flow(w, 's', (long long)flow_of[i], "exchange", pid, tid, r->obj);
    } else if (strcmp(r->ev, "import") == 0 && match[i] != DLT_NO_RECORD) {
        flow(w, 'f', (long long)flow_of[match[i]], "exchange", pid, tid, r->obj);
    }
}

/* Injected waits and races sit on the stream made to wait (or the consumer's), with an arrow
 * from the stream waited for (or the producer's); without a stream, on the host thread. */
static void ordering_event(writer *w, const dlt_log_record *r, int is_race)
{
    long long pid = rec_int(r->obj, "pid", 0);
    const dlt_json_value *from, *to;
    char name[256], xid[32];
    dlt_scalar_text(r->obj, "xid", xid, sizeof xid);
    if (is_race) {
        from = dlt_json_get(dlt_json_get(r->obj, "producer"), "stream");
        to = dlt_json_get(dlt_json_get(r->obj, "consumer"), "stream");
        const char *kind = dlt_json_get_str(r->obj, "kind");
        snprintf(name, sizeof name, "RACE %s xid %s", kind ? kind : "?", xid);
    } else {
        from = dlt_json_get(r->obj, "from");
        to = dlt_json_get(r->obj, "to");
        const char *what = dlt_json_get_str(r->obj, "what");
        snprintf(name, sizeof name, "inject %s xid %s", what ? what : "?", xid);
    }
    long long to_tid = stream_track(w, to, pid);
    if (to_tid < 0)
        to_tid = thread_track(w, r->obj, pid);
    long long from_tid = stream_track(w, from, pid);
    const char *cat = is_race ? "race" : "inject";
    instant(w, r, pid, to_tid, cat, name, 't');
    if (from_tid >= 0 && from_tid != to_tid) {
        long long id = ++w->next_flow;
        flow(w, 's', id, cat, pid, from_tid, r->obj);
        flow(w, 'f', id, cat, pid, to_tid, r->obj);
        /* the arrow needs an event to leave from on the source track */
        instant(w, r, pid, from_tid, cat, name, 't');
    }
}

static void other_event(writer *w, const dlt_log_record *r)
{
    long long pid = rec_int(r->obj, "pid", 0);
    const char *reason = dlt_json_get_str(r->obj, "reason");
    char name[256];
    if (strcmp(r->ev, "start") == 0) {
        name_process(w, pid, r->obj);
        instant(w, r, pid, thread_track(w, r->obj, pid), "process", "dlsync start", 't');
    } else if (strcmp(r->ev, "fallback") == 0 || strcmp(r->ev, "warning") == 0) {
        snprintf(name, sizeof name, "%s: %s", r->ev, reason ? reason : "?");
        instant(w, r, pid, thread_track(w, r->obj, pid), r->ev, name, 'p');
    } else if (strcmp(r->ev, "release") == 0 || strcmp(r->ev, "double_release") == 0 ||
               strcmp(r->ev, "malformed") == 0) {
        char xid[32];
        snprintf(name, sizeof name, "%s xid %s", r->ev, dlt_scalar_text(r->obj, "xid", xid, sizeof xid));
        instant(w, r, pid, thread_track(w, r->obj, pid), "exchange", name, 't');
    }
}

int dlt_chrome_write(const dlt_log_set *set, FILE *out)
{
    writer w = {.out = out, .first = 1};
    size_t *match = dlt_match_exchanges(set);
    size_t *flow_of = calloc(set->n ? set->n : 1, sizeof *flow_of);
    if ((set->n && !match) || !flow_of) {
        free(match);
        free(flow_of);
        return -1;
    }
    int have_t0 = 0;
    for (size_t i = 0; i < set->n; i++) {
        if (strcmp(set->recs[i].ev, "export") == 0)
            flow_of[i] = (size_t)++w.next_flow; /* known before any import refers to it */
        long long t;
        if (dlt_json_get_int(set->recs[i].obj, "t", &t) && (!have_t0 || t < w.t0)) {
            w.t0 = t;
            have_t0 = 1;
        }
    }
    fputs("{\"displayTimeUnit\":\"ns\",\"otherData\":{\"producer\":\"dlsync report\"},\"traceEvents\":[", out);
    for (size_t i = 0; i < set->n && !w.oom; i++) {
        const dlt_log_record *r = &set->recs[i];
        if (strcmp(r->ev, "export") == 0 || strcmp(r->ev, "import") == 0)
            exchange_event(&w, set, i, match, flow_of);
        else if (strcmp(r->ev, "inject") == 0 || strcmp(r->ev, "race") == 0)
            ordering_event(&w, r, strcmp(r->ev, "race") == 0);
        else
            other_event(&w, r);
    }
    fputs("\n]}\n", out);
    dlt_tally_free(&w.tracks);
    dlt_tally_free(&w.procs);
    free(match);
    free(flow_of);
    return w.oom || ferror(out) ? -1 : 0;
}
