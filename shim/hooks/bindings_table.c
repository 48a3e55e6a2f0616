/* The bindings' storage (see bindings.h): a leaf that the wrapper logic (wrap.c, reached from the
 * stubs) reads and bindings.c fills, so that the stubs, the wrapper and the binder form no cycle. */
#include "bindings.h"

dls_binding dls_binding_table[DLS_STUB_COUNT];
