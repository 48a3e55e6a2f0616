"""python -m dlsync ARGS and the `dlsync` command of a Python installation: the dlsync binary
of this installation (the same options and exit statuses), which finds the libdlsync.so beside
it in the package."""
import os
import sys

from . import binary_path


def main():
    exe = binary_path()
    if not exe:
        sys.stderr.write("dlsync: this installation of the dlsync package has no dlsync binary "
                         "(install the wheel: pip install .)\n")
        return 125
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(exe, ["dlsync"] + sys.argv[1:])


if __name__ == "__main__":
    sys.exit(main())
