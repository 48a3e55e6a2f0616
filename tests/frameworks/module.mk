# make test-frameworks: numpy, jax, tensorflow-cpu, paddlepaddle and apache-tvm-ffi from PyPI in a
# virtual environment under $(B)/frameworks, exchanging with numpy and Debian's torch, plainly and
# under dlsync, with both interpreter kinds (scripts/test-frameworks.sh). Not part of `make test`:
# it needs the network once and about 3 GB.
# make test-wheel: only the Python way (scripts/test-wheel.sh: the wheel, a fresh venv, the pytest
# plugin on the simulator; no download but auditwheel's).
.PHONY: test-frameworks test-wheel
test-wheel: deps
	@$(MAKE) --no-print-directory all
	@scripts/test-wheel.sh $(B)

test-frameworks: deps
	@$(MAKE) --no-print-directory all
	@scripts/test-frameworks.sh $(B)
