/* A shared object with DLPack-named functions of every visibility, for the `dlsync scan` tests:
 * exported, protected, hidden and static definitions, a C++-mangled import function (named with
 * an asm label), and an import of a function a built-in profile wraps. */
#include <stddef.h>

struct DLManagedTensor;

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
__attribute__((visibility("default"))) void *fix_from(struct DLManagedTensor *t) __asm__("_ZN3fix10fromDLPackEP15DLManagedTensor");
void *fix_from(struct DLManagedTensor *t)
{
    return t;
}

__attribute__((visibility("default"))) int fix_uses_everything(void *a)
{
    struct DLManagedTensor *out = NULL;
    return fix_hidden_todlpack(a) != fix_local_dlpack_helper(a) || TVMArrayToDLPack(a, &out) != 0;
}
