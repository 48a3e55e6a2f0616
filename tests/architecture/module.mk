# The design document's checked tables (tests/architecture): scripts/check-architecture.py's
# self-test plants a missing module row, a row for no module, wrong layers, modules calling both
# ways, wrong calls, a lock row naming no lock, a missing lock row and a wrong order, and expects
# each verdict; then it checks docs/architecture.md against the shim's sources and objects.
#   test_architecture   a wrapper that runs it on this build's objects (cmocka-style counts)
ARCH_TEST := $(B)/tests/test_architecture

$(ARCH_TEST): scripts/check-architecture.py scripts/check-layers.py scripts/selftest.py $(SHIM_OBJS) tests/architecture/module.mk
	@mkdir -p $(@D)
	$(if $(Q),@echo "  GEN     $@")
	$(Q)printf '#!/bin/sh\nexec %s --self-test --self-test-tree --doc %s --src %s --obj %s\n' \
	    '$(abspath scripts/check-architecture.py)' '$(abspath docs/architecture.md)' \
	    '$(abspath shim)' '$(ABSB)/obj/shim' > $@
	$(Q)chmod +x $@

ALL   += $(ARCH_TEST)
TESTS += $(ARCH_TEST)
