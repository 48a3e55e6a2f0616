/* A shared object with DLPack-named functions of every visibility, for the `dlsync scan` tests:
 * exported, protected, hidden and static definitions, C++-mangled functions (named with asm
 * labels): an import whose return type the symbol does not show, a template instance that shows
 * it returns a class by value, a function filling a caller-owned DLTensor; a Python module init
 * function, and an import of a function a built-in profile wraps. */
#include <stddef.h>

struct DLManagedTensor;
struct DLTensor;

/* Defined elsewhere (TVM); left undefined here so it is imported. */
int TVMArrayToDLPack(void *array, struct DLManagedTensor **out);

__attribute__((visibility("default"))) void *Fix_ToDLPack(void *tensor)
{
    return tensor;
}

__attribute__((visibility("protected"))) void *Fix_ProtectedFromDLPack(void *tensor)
{
    return tensor;
}

__attribute__((visibility("hidden"), noinline)) void *fix_hidden_todlpack(void *tensor)
{
    return tensor;
}

__attribute__((noinline, used)) static void *fix_local_dlpack_helper(void *tensor)
{
    return tensor;
}

/* fix::fromDLPack(DLManagedTensor*) */
__attribute__((visibility("default"))) void *
fix_from(struct DLManagedTensor *t) __asm__("_ZN3fix10fromDLPackEP15DLManagedTensor");
void *fix_from(struct DLManagedTensor *t)
{
    return t;
}

/* fix::Holder fix::fromDLPackImpl<DLManagedTensor>(DLManagedTensor*): a hidden return slot. */
__attribute__((visibility("default"))) void *
fix_from_impl(void *slot,
              struct DLManagedTensor *t) __asm__("_ZN3fix14fromDLPackImplI15DLManagedTensorEENS_6HolderEPT_");
void *fix_from_impl(void *slot, struct DLManagedTensor *t)
{
    return t ? slot : NULL;
}

/* fix::toDLPackNonOwning(void*, DLTensor*) */
__attribute__((visibility("default"))) void
fix_fill(void *a, struct DLTensor *out) __asm__("_ZN3fix17toDLPackNonOwningEPvP8DLTensor");
void fix_fill(void *a, struct DLTensor *out)
{
    (void)a;
    (void)out;
}

/* A Python extension's module init function: no exchange. */
__attribute__((visibility("default"))) void *PyInit_dlpackfix(void)
{
    return NULL;
}

__attribute__((visibility("default"))) int fix_uses_everything(void *a)
{
    struct DLManagedTensor *out = NULL;
    return fix_hidden_todlpack(a) != fix_local_dlpack_helper(a) || TVMArrayToDLPack(a, &out) != 0;
}
