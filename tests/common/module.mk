# Test helpers linked into every test program.
TEST_COMMON_OBJ := $(B)/obj/tests/common/dls_test.o
$(B)/obj/tests/%.o: EXTRA_CFLAGS += $(TEST_CFLAGS)
