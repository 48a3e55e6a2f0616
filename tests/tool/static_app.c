/* A statically linked program (test_tool_gate.c): LD_PRELOAD cannot load libdlsync.so into it. */
#include <stdio.h>

int main(void)
{
    puts("static app");
    return 0;
}
