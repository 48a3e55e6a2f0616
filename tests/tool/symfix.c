/* The object the symbolization tests ask about (test_tool_symbolize): built with -g -O0 as
 * libsymfix.so, with a copy whose debug information is stripped (libsymfix_stripped.so) and that
 * information alone (symfix.debug), all three with the same build id. symfix_outer returns the
 * return address of a call made from a function inlined into it, so the frame one byte before
 * that address lies in symfix_inner's line, inlined in symfix_outer at its own line. The test
 * finds both lines by the markers below. */
#define EXPORT __attribute__((visibility("default")))

EXPORT __attribute__((noinline)) void *symfix_pc(void);
EXPORT void *symfix_outer(void);

void *symfix_pc(void)
{
    return __builtin_return_address(0);
}

static inline __attribute__((always_inline)) void *symfix_inner(void)
{
    return symfix_pc(); /* SYMFIX_INNER */
}

void *symfix_outer(void)
{
    void *pc = symfix_inner(); /* SYMFIX_OUTER */
    return pc;
}
