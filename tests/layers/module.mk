# The layer check (tests/layers): scripts/check-layers.py's self-test plants a downward call, an
# upward call, a cycle within a layer, an unlisted file, a downward and an upward include, an
# include cycle, an unlisted header, an unnamed layer, and includes of another module's face and
# of its private header, the same for the command (tools/), and expects each verdict; then it
# checks the built shim and command against their layer tables (tools/module.mk adds the
# command's objects to its prerequisites).
#   test_layers   a wrapper that runs it on this build's objects (cmocka-style counts)
LAYERS_TEST := $(B)/tests/test_layers

$(LAYERS_TEST): scripts/check-layers.py scripts/selftest.py $(SHIM_OBJS) tests/layers/module.mk
	@mkdir -p $(@D)
	$(if $(Q),@echo "  GEN     $@")
	$(Q)printf '#!/bin/sh\nexec %s --self-test --self-test-tree --obj %s --src %s --tool-obj %s --tool-src %s\n' \
	    '$(abspath scripts/check-layers.py)' '$(ABSB)/obj/shim' '$(abspath shim)' \
	    '$(ABSB)/obj/tools' '$(abspath tools)' > $@
	$(Q)chmod +x $@

ALL   += $(LAYERS_TEST)
TESTS += $(LAYERS_TEST)
