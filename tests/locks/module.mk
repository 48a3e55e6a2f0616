# The lock contracts (tests/locks): check-locks.py compiles planted snippets against the shim's
# headers with clang's thread-safety analysis and expects a driver call under the policy lock and
# a lock-needing call without it to fail, and the same calls in order to pass.
#   test_locks   a wrapper that runs it (cmocka-style counts)
LOCKS_TEST := $(B)/tests/test_locks

$(LOCKS_TEST): tests/locks/check-locks.py scripts/selftest.py tests/locks/module.mk
	@mkdir -p $(@D)
	$(if $(Q),@echo "  GEN     $@")
	$(Q)printf '#!/bin/sh\nexec %s %s %s\n' '$(abspath tests/locks/check-locks.py)' \
	    '$(abspath shim)' '$(CUDA_INC)' > $@
	$(Q)chmod +x $@

ALL   += $(LOCKS_TEST)
TESTS += $(LOCKS_TEST)
