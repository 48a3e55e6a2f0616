# shim/cuda: its sources are compiled into libdlsync.so by shim/module.mk. Its unit tests
# (tests/unit/test_cuda*.c) read real CUDA parameter structs, so they need the CUDA headers.
$(B)/obj/tests/unit/test_cuda%.o: EXTRA_CFLAGS += -I $(CUDA_INC)
