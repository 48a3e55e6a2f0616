/* The bindings' storage (see bindings_table.h). */
#include "bindings_table.h"

dls_binding dls_binding_table[DLS_STUB_COUNT];
