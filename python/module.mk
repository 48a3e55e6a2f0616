# The release files and the build they are made by:
#   make wheel           the sdist and, built from it unpacked in a clean folder, the manylinux_2_28
#                        wheel (`python -m build`, as a release is made) in build/dist/, then checks
#                        them: `twine check --strict` on both, scripts/check-glibc.sh on the wheel's
#                        libdlsync.so and dlsync (nothing newer than GLIBC_2.28, nothing but the C
#                        library), `auditwheel show`'s tag manylinux_2_28_x86_64 or older, and
#                        installs the wheel into a fresh virtual environment, where `dlsync run`
#                        preloads the installed shim into Python (scripts/test-wheel.sh, in make
#                        test-frameworks, runs the Python tests against the pip-built wheel)
#   make test-manylinux  the whole test suite with libdlsync.so and the dlsync command built as the
#                        wheel builds them (SHIP_CC=scripts/zig-cc; the tests' own programs with
#                        CC), in build/manylinux/, then scripts/check-glibc.sh on the two
# Both take build, twine, auditwheel and the wheel's ziglang from PyPI into a virtual environment,
# build/python/release/ (made once).
RELEASE_ENV := build/python/release
RELEASE_PY  := $(RELEASE_ENV)/bin/python
ZIG_PACKAGE := $(shell sed -n 's/^ZIG_PACKAGE = "\(.*\)"/\1/p' python/backend/dlsync_backend.py)
RELEASE_ZIG  = $(shell $(RELEASE_PY) -c 'import os, ziglang; print(os.path.dirname(ziglang.__file__))')/zig
DIST        := build/dist

$(RELEASE_ENV)/.made: python/backend/dlsync_backend.py
	$(Q)rm -rf $(@D) && /usr/bin/python3 -m venv $(@D)
	$(Q)$(@D)/bin/pip install -q --disable-pip-version-check '$(ZIG_PACKAGE)' build twine auditwheel
	$(Q)touch $@

.PHONY: wheel test-manylinux
wheel: $(RELEASE_ENV)/.made
	$(Q)rm -rf $(DIST)
	$(Q)$(RELEASE_PY) -m build --outdir $(DIST) . > $(RELEASE_ENV)/build.log 2>&1 || \
	    { tail -30 $(RELEASE_ENV)/build.log; echo "wheel: python -m build failed"; exit 1; }
	$(Q)$(RELEASE_ENV)/bin/twine check --strict $(DIST)/*
	$(Q)scripts/check-glibc.sh $(DIST)/*.whl
	$(Q)tag=$$($(RELEASE_ENV)/bin/auditwheel show $(DIST)/*.whl | tr '\n' ' ' | tr -s ' ' | \
	         sed -n 's/.*consistent with the following platform tag: "\([^"]*\)".*/\1/p'); \
	    case "$$tag" in \
	    manylinux_2_[0-9]_x86_64 | manylinux_2_1[0-9]_x86_64 | manylinux_2_2[0-8]_x86_64) \
	        echo "wheel: auditwheel show: $$tag" ;; \
	    *) echo "wheel: auditwheel show: '$$tag', not manylinux_2_28_x86_64 or older"; exit 1 ;; \
	    esac
	$(Q)rm -rf $(RELEASE_ENV)/try && /usr/bin/python3 -m venv $(RELEASE_ENV)/try && \
	    $(RELEASE_ENV)/try/bin/pip install -q --no-deps --disable-pip-version-check $(DIST)/*.whl
	$(Q)out=$$($(RELEASE_ENV)/try/bin/dlsync run -- $(RELEASE_ENV)/try/bin/python -c \
	    'import dlsync; print(dlsync.active(), dlsync.__file__)' 2>&1); \
	    case "$$out" in "True $(abspath $(RELEASE_ENV))/try/"*) echo "wheel: installed, dlsync run preloads its shim" ;; \
	    *) echo "wheel: the installed wheel did not work: $$out"; exit 1 ;; esac
	$(Q)ls -l $(DIST)

test-manylinux: $(RELEASE_ENV)/.made
	@ZIG=$(RELEASE_ZIG) $(MAKE) --no-print-directory BUILD=build/manylinux SHIP_CC=$(abspath scripts/zig-cc) test
	@scripts/check-glibc.sh build/manylinux/lib/libdlsync.so build/manylinux/bin/dlsync
