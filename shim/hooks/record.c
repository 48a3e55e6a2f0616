/* JSON records of exchanges (see record.h). */
#include "record.h"

#include "../report/log.h"

void dls_record_exchange(const char *ev, uint64_t xid, const dls_profile *p, const char *lib, const void *mt,
                         const dls_managed_view *v, const dls_extent *ext, const char *producer)
{
    if (!dls_log_enabled())
        return;
    const DLTensor *t = v->tensor;
    char dtype[48];
    const char *dname = dls_device_type_name(t->device.device_type);
    dls_json j;
    dls_log_begin(&j, ev);
    dls_json_u64(&j, "xid", xid);
    dls_json_str(&j, "framework", p->framework);
    dls_json_str(&j, "symbol", dls_profile_name(p));
    dls_json_str(&j, "lib", lib);
    dls_json_ptr(&j, "tensor", mt);
    dls_json_ptr(&j, "data", t->data);
    dls_json_object(&j, "device");
    dls_json_str(&j, "type", dname ? dname : "unknown");
    dls_json_i64(&j, "id", t->device.device_id);
    dls_json_close(&j, '}');
    dls_json_str(&j, "dtype", dls_dtype_name(t->dtype, dtype, sizeof dtype));
    dls_json_i64(&j, "ndim", t->ndim);
    static const int64_t no_dims[1];
    dls_json_i64s(&j, "shape", t->ndim > 0 ? t->shape : no_dims, (size_t)t->ndim);
    dls_json_i64s(&j, "strides", t->strides, (size_t)t->ndim);
    dls_json_u64(&j, "byte_offset", t->byte_offset);
    dls_json_object(&j, "extent");
    dls_json_i64(&j, "lo", ext->lo);
    dls_json_i64(&j, "hi", ext->hi);
    dls_json_close(&j, '}');
    dls_json_raw(&j, "versioned", v->versioned ? "true" : "false");
    dls_json_u64(&j, "flags", v->flags);
    if (v->versioned) {
        dls_json_array(&j, "version");
        dls_json_u64(&j, NULL, v->major);
        dls_json_u64(&j, NULL, v->minor);
        dls_json_close(&j, ']');
    } else {
        dls_json_raw(&j, "version", "null");
    }
    dls_json_str(&j, "producer", producer);
    dls_log_write(&j);
}

void dls_record_release(const dls_exchange *x)
{
    dls_managed_view v;
    dls_extent ext;
    if (dls_log_enabled() && !dls_managed_view_of((void *)x->tensor, x->versioned, &v) &&
        !dls_tensor_check(v.tensor, v.flags, &ext))
        dls_record_exchange("release", x->xid, x->seen_at, x->producer_lib ? x->producer_lib : "", x->tensor, &v,
                            &ext, x->producer ? x->producer->framework : NULL);
}

void dls_record_malformed(const dls_profile *p, const void *mt, const char *reason)
{
    if (!dls_log_enabled())
        return;
    dls_json j;
    dls_log_begin(&j, "malformed");
    dls_json_str(&j, "framework", p->framework);
    dls_json_str(&j, "symbol", dls_profile_name(p));
    dls_json_str(&j, "reason", reason);
    dls_json_ptr(&j, "tensor", mt);
    dls_log_write(&j);
}

void dls_record_double_release(const void *mt, uint64_t xid)
{
    if (!dls_log_enabled())
        return;
    dls_json j;
    dls_log_begin(&j, "double_release");
    if (xid)
        dls_json_u64(&j, "xid", xid);
    else
        dls_json_raw(&j, "xid", "null");
    dls_json_ptr(&j, "tensor", mt);
    dls_log_write(&j);
}
