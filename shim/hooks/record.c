/* JSON records of exchanges (see record.h). */
#include "record.h"

#include "../report/log.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* Each thread remembers the last fragments it wrote, so the records of one exchange (export,
 * import, release) and of one binding format their repeated parts once: the description of a
 * tensor with its producer, and the framework/symbol/lib of a profile row and library. A fragment
 * is used again only when what it was made from is unchanged (the tensor's fields and the library
 * name are compared, not trusted; profile rows, whose framework names the producer, live as long
 * as the process). Without the cache a log record costs nearly three times as much (make bench's
 * log-record figure). */
#define CACHED_NDIM 8
#define ROWS 4

typedef struct {
    void *data;
    DLDevice device;
    int32_t ndim;
    DLDataType dtype;
    uint64_t byte_offset, flags;
    int versioned, has_strides;
    uint32_t major, minor;
    int64_t shape[CACHED_NDIM], strides[CACHED_NDIM];
    const char *producer;
} tensor_key; /* everything the description is made from (the extent follows from it) */

typedef struct {
    int valid;
    tensor_key key;
    size_t len;
    char text[768];
} tensor_fragment;

typedef struct {
    const dls_profile *p;
    char lib[256];
    size_t len;
    char text[480];
} row_fragment;

typedef struct {
    tensor_fragment tensor;
    row_fragment rows[ROWS];
    unsigned next_row;
} record_cache;

static __thread record_cache *t_cache;
static pthread_key_t g_cache_key;
static pthread_once_t g_cache_once = PTHREAD_ONCE_INIT;

static void make_cache_key(void)
{
    if (pthread_key_create(&g_cache_key, free) != 0)
        g_cache_key = (pthread_key_t)-1;
}

/* The calling thread's cache, or NULL when memory is short (then nothing is cached). */
static record_cache *cache(void)
{
    if (!t_cache && (t_cache = calloc(1, sizeof *t_cache))) {
        pthread_once(&g_cache_once, make_cache_key);
        if (g_cache_key != (pthread_key_t)-1)
            pthread_setspecific(g_cache_key, t_cache);
    }
    return t_cache;
}

/* Fills the key describing t as viewed by v, made by `producer`; 0 when the tensor has too many
 * dimensions (or cannot be read: the check of the caller then says why). */
static int make_key(tensor_key *k, const dls_managed_view *v, const char *producer)
{
    const DLTensor *t = v->tensor;
    if (t->ndim < 0 || t->ndim > CACHED_NDIM || (t->ndim > 0 && !t->shape))
        return 0;
    memset(k, 0, sizeof *k);
    k->data = t->data;
    k->device = t->device;
    k->ndim = t->ndim;
    k->dtype = t->dtype;
    k->byte_offset = t->byte_offset;
    k->flags = v->flags;
    k->versioned = v->versioned;
    k->major = v->major;
    k->minor = v->minor;
    k->has_strides = t->strides != NULL;
    k->producer = producer;
    if (t->ndim > 0) {
        memcpy(k->shape, t->shape, (size_t)t->ndim * sizeof *t->shape);
        if (t->strides)
            memcpy(k->strides, t->strides, (size_t)t->ndim * sizeof *t->strides);
    }
    return 1;
}

/* 1 when key k describes the tensor viewed by v, made by `producer` (read only what k says is
 * there). */
static int same_key(const tensor_key *k, const dls_managed_view *v, const char *producer)
{
    const DLTensor *t = v->tensor;
    if (!(k->producer == producer && k->data == t->data && k->ndim == t->ndim &&
          k->device.device_type == t->device.device_type && k->device.device_id == t->device.device_id &&
          k->dtype.code == t->dtype.code && k->dtype.bits == t->dtype.bits && k->dtype.lanes == t->dtype.lanes &&
          k->byte_offset == t->byte_offset && k->flags == v->flags && k->versioned == v->versioned &&
          k->major == v->major && k->minor == v->minor && k->has_strides == (t->strides != NULL)))
        return 0;
    if (k->ndim > 0 && !t->shape)
        return 0;
    for (int32_t i = 0; i < k->ndim; i++) /* in place: a call to memcmp costs more for a few dims */
        if (k->shape[i] != t->shape[i] || (t->strides && k->strides[i] != t->strides[i]))
            return 0;
    return 1;
}

/* Remembers j's bytes from `from` to its end in dst (of size cap); 0 when they do not fit. */
static size_t keep(const dls_rec *j, size_t from, char *dst, size_t cap)
{
    size_t n = j->len - from;
    if (j->failed || n > cap)
        return 0;
    memcpy(dst, j->buf + from, n);
    return n;
}

/* The framework, symbol and lib members. */
static void write_row(dls_rec *j, record_cache *c, const dls_profile *p, const char *lib)
{
    for (unsigned i = 0; c && i < ROWS; i++)
        if (c->rows[i].p == p && c->rows[i].len && strcmp(c->rows[i].lib, lib) == 0) {
            dls_rec_bytes(j, c->rows[i].text, c->rows[i].len);
            return;
        }
    size_t from = j->len;
    dls_rec_str(j, "framework", p->framework);
    dls_rec_str(j, "symbol", dls_profile_name(p));
    dls_rec_str(j, "lib", lib);
    size_t nlib = strlen(lib);
    if (c && nlib < sizeof c->rows[0].lib) {
        row_fragment *r = &c->rows[c->next_row++ % ROWS];
        r->len = keep(j, from, r->text, sizeof r->text);
        r->p = r->len ? p : NULL;
        memcpy(r->lib, lib, nlib + 1);
    }
}

/* The "device" member. */
static void write_device(dls_rec *j, DLDevice device)
{
    const char *name = dls_device_type_name(device.device_type);
    dls_rec_object(j, "device");
    dls_rec_str(j, "type", name ? name : "unknown");
    dls_rec_i64(j, "id", device.device_id);
    dls_rec_close(j, '}');
}

/* The members that describe the tensor, from "data" to "version", and "producer". A NULL ext
 * is computed here when needed; returns 0 (nothing written) when the tensor cannot be
 * interpreted. */
static int write_tensor(dls_rec *j, record_cache *c, const dls_managed_view *v, const dls_extent *ext,
                        const char *producer)
{
    tensor_key k;
    if (c && c->tensor.valid && same_key(&c->tensor.key, v, producer)) {
        dls_rec_bytes(j, c->tensor.text, c->tensor.len);
        return 1;
    }
    int cacheable = c && make_key(&k, v, producer);
    dls_extent computed;
    if (!ext && dls_tensor_check(v->tensor, v->flags, &computed))
        return 0;
    if (!ext)
        ext = &computed;
    const DLTensor *t = v->tensor;
    char dtype[48];
    size_t from = j->len;
    dls_rec_ptr(j, "data", t->data);
    write_device(j, t->device);
    dls_rec_str(j, "dtype", dls_dtype_name(t->dtype, dtype, sizeof dtype));
    dls_rec_i64(j, "ndim", t->ndim);
    static const int64_t no_dims[1];
    dls_rec_i64s(j, "shape", t->ndim > 0 ? t->shape : no_dims, (size_t)t->ndim);
    dls_rec_i64s(j, "strides", t->strides, (size_t)t->ndim);
    dls_rec_u64(j, "byte_offset", t->byte_offset);
    dls_rec_object(j, "extent");
    dls_rec_i64(j, "lo", ext->lo);
    dls_rec_i64(j, "hi", ext->hi);
    dls_rec_close(j, '}');
    dls_rec_raw(j, "versioned", v->versioned ? "true" : "false");
    dls_rec_u64(j, "flags", v->flags);
    if (v->versioned) {
        dls_rec_array(j, "version");
        dls_rec_u64(j, NULL, v->major);
        dls_rec_u64(j, NULL, v->minor);
        dls_rec_close(j, ']');
    } else {
        dls_rec_raw(j, "version", "null");
    }
    dls_rec_str(j, "producer", producer);
    if (cacheable) {
        c->tensor.len = keep(j, from, c->tensor.text, sizeof c->tensor.text);
        c->tensor.valid = c->tensor.len > 0;
        memcpy(&c->tensor.key, &k, sizeof k);
    }
    return 1;
}

/* dls_record_exchange with the log known to be on and ext possibly NULL (computed when needed;
 * nothing is written when the tensor cannot be interpreted). */
static void record(const char *ev, uint64_t xid, const dls_profile *p, const char *lib, const void *mt,
                   const dls_managed_view *v, const dls_extent *ext, const char *producer)
{
    record_cache *c = cache();
    dls_rec j;
    dls_log_begin(&j, ev);
    dls_rec_u64(&j, "xid", xid);
    write_row(&j, c, p, lib);
    dls_rec_ptr(&j, "tensor", mt);
    if (!write_tensor(&j, c, v, ext, producer))
        j.failed = 1; /* dropped */
    dls_log_write(&j);
}

void dls_record_exchange(const char *ev, uint64_t xid, const dls_profile *p, const char *lib, const void *mt,
                         const dls_managed_view *v, const dls_extent *ext, const char *producer)
{
    if (dls_log_enabled())
        record(ev, xid, p, lib, mt, v, ext, producer);
}

void dls_record_release(const dls_exchange *x)
{
    dls_managed_view v;
    if (dls_log_enabled() && !dls_managed_view_of((void *)x->tensor, x->versioned, &v) && v.tensor)
        record("release", x->xid, x->seen_at, x->producer_lib ? x->producer_lib : "", x->tensor, &v, NULL,
               x->producer ? x->producer->framework : NULL);
}

void dls_record_work_stream(const dls_profile *p, const char *lib, DLDevice device, const void *stream)
{
    if (!dls_log_enabled())
        return;
    dls_rec j;
    dls_log_begin(&j, "work_stream");
    write_row(&j, cache(), p, lib);
    write_device(&j, device);
    dls_rec_ptr(&j, "stream", stream);
    dls_log_write(&j);
}

void dls_record_malformed(const dls_profile *p, const void *mt, const char *reason)
{
    if (!dls_log_enabled())
        return;
    dls_rec j;
    dls_log_begin(&j, "malformed");
    dls_rec_str(&j, "framework", p->framework);
    dls_rec_str(&j, "symbol", dls_profile_name(p));
    dls_rec_str(&j, "reason", reason);
    dls_rec_ptr(&j, "tensor", mt);
    dls_log_write(&j);
}

void dls_record_double_release(const void *mt, uint64_t xid)
{
    if (!dls_log_enabled())
        return;
    dls_rec j;
    dls_log_begin(&j, "double_release");
    if (xid)
        dls_rec_u64(&j, "xid", xid);
    else
        dls_rec_raw(&j, "xid", "null");
    dls_rec_ptr(&j, "tensor", mt);
    dls_log_write(&j);
}
