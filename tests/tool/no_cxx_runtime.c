/* A stand-in C++ runtime without __cxa_demangle, built as libstdc++.so.6 and libc++abi.so.1 in a
 * directory of their own: on LD_LIBRARY_PATH, `dlsync scan` finds no demangler. */
__attribute__((visibility("default"))) int dls_test_no_cxx_runtime(void)
{
    return 0;
}
