"""The PEP 517 build backend of the dlsync wheel: it runs the Makefile (one build system) for
libdlsync.so and the dlsync command, and packs them with the `dlsync` Python package
(python/dlsync) into a platform wheel:

    dlsync/__init__.py ...       the module, `python -m dlsync`, the pytest plugin
    dlsync/bin/dlsync            the command (it finds ../lib/libdlsync.so, as in a build tree)
    dlsync/lib/libdlsync.so      the shim

Headers the build needs, and where they come from:
    CUDA 13 (cuda.h, cupti_callbacks.h, nvtx3/)  $CUDA_HOME, $CUDA_PATH or /usr/local/cuda; without
        a toolkit, NVIDIA's header-carrying packages nvidia-cuda-runtime, nvidia-cuda-cupti and
        nvidia-nvtx, with nvidia-cuda-crt for crt/ (13.x; pip installs them into the build environment: their headers share
        nvidia/cu13/include)
    dlpack/dlpack.h   the system's (libdlpack-dev); else apache-tvm-ffi's copy (DLPack 1.x)
The compiler, and so the wheel's tag:
    on x86_64 Linux, `zig cc` from PyPI's ziglang package (pip installs it into the build
        environment), through scripts/zig-cc: it links against glibc 2.28 whatever this machine's
        C library is, so the wheel is manylinux_2_28_x86_64 (RHEL 8, Ubuntu 20.04, Debian 10 and
        newer); built in build/wheel/
    with CC set, that compiler and this machine's C library headers: the wheel is tagged for this
        platform alone (linux_x86_64), for a build of one's own; built in build/wheel-cc/
Beyond these, make: no other library is linked (the command reads ELF itself and finds the C++
demangler at run time). A build that cannot find one says so in one line. No CUDA library goes
into the wheel.
"""
import base64
import hashlib
import os
import platform
import re
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import tempfile
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ZIG_PACKAGE = "ziglang>=0.17,<0.18"
MANYLINUX_TAG = "manylinux_2_28_x86_64"  # the glibc scripts/zig-cc targets
CUDA_PACKAGES = ["nvidia-cuda-runtime>=13,<14", "nvidia-cuda-crt>=13,<14", "nvidia-cuda-cupti>=13,<14",
                 "nvidia-nvtx>=13,<14"]
DLPACK_PACKAGE = "apache-tvm-ffi>=0.1"
CUDA_HEADERS = ("cuda.h", "cupti_callbacks.h", os.path.join("nvtx3", "nvToolsExt.h"))


class BuildError(Exception):
    pass


def _fail(message):
    """Ends the build with one line saying what is missing."""
    sys.stderr.write("dlsync build: %s\n" % message)
    raise SystemExit(1)


def _project():
    try:
        import tomllib
    except ImportError:
        import tomli as tomllib
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        return tomllib.load(f)["project"]


def _version():
    with open(os.path.join(ROOT, "shim", "common", "names.h")) as f:
        return re.search(r'#define DLS_VERSION "([^"]+)"', f.read()).group(1)


def _has_cuda(home):
    return home and all(os.path.isfile(os.path.join(home, "include", h)) for h in CUDA_HEADERS)


def _toolkit():
    """A CUDA toolkit with the headers, or None."""
    for home in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"):
        if _has_cuda(home):
            return home
    return None


def _site_dirs():
    return [p for p in sys.path if p and os.path.isdir(p)]


def _pip_cuda():
    """nvidia/cu13 of the NVIDIA header packages on sys.path, or None."""
    for p in _site_dirs():
        home = os.path.join(p, "nvidia", "cu13")
        if _has_cuda(home):
            return home
    return None


def _with_zig():
    """True when the shipped files are built with zig for glibc 2.28 (the manylinux wheel): on
    x86_64 Linux, unless CC names a compiler of one's own."""
    return "CC" not in os.environ and sys.platform.startswith("linux") and platform.machine() == "x86_64"


def _zig():
    """The zig executable of the ziglang package on sys.path, or None."""
    try:
        import ziglang
    except ImportError:
        return None
    path = os.path.join(os.path.dirname(ziglang.__file__), "zig")
    return path if os.access(path, os.X_OK) else None


def _cc():
    return os.path.join(ROOT, "scripts", "zig-cc") if _with_zig() else os.environ.get("CC", "cc")


def _compiles(include, cc=None, env=None):
    """1 when the C compiler `cc` (default: $CC, else cc) finds `include`."""
    cc = cc or os.environ.get("CC", "cc")
    try:
        r = subprocess.run([cc, "-E", "-x", "c", "-", "-o", os.devnull], env=env,
                           input="#include <%s>\n" % include, text=True, capture_output=True)
    except OSError:
        return False
    return r.returncode == 0


def _pip_dlpack():
    for p in _site_dirs():
        inc = os.path.join(p, "tvm_ffi", "include")
        if os.path.isfile(os.path.join(inc, "dlpack", "dlpack.h")):
            return inc
    return None


def get_requires_for_build_wheel(config_settings=None):
    needs = [ZIG_PACKAGE] if _with_zig() and not _zig() else []
    if not _toolkit() and not _pip_cuda():
        needs += CUDA_PACKAGES
    if not _compiles("dlpack/dlpack.h") and not _pip_dlpack():
        needs.append(DLPACK_PACKAGE)
    return needs


def get_requires_for_build_sdist(config_settings=None):
    return []


def _make():
    """Builds the shim and the command; returns their paths."""
    if not shutil.which("make"):
        _fail("`make` not found: install make (Debian/Ubuntu: apt-get install build-essential)")
    env = dict(os.environ)
    if _with_zig():
        env["ZIG"] = _zig() or _fail("zig not found: let pip install %s, or set CC to build with a compiler "
                                     "of your own (the wheel is then for this platform alone)" % ZIG_PACKAGE)
        build = "build/wheel"
    else:
        if not shutil.which(_cc()):
            _fail("no C compiler (%s) found: install gcc or clang, or set CC" % _cc())
        if not _compiles("elf.h", _cc()):
            _fail("the C library's headers (elf.h) not found: install libc6-dev (Fedora: glibc-devel)")
        build = "build/wheel-cc"
    cuda = _toolkit() or _pip_cuda()
    if not cuda:
        _fail("CUDA 13 headers not found: set CUDA_HOME to a CUDA 13 toolkit, or let pip install %s"
              % ", ".join(p.split(">")[0] for p in CUDA_PACKAGES))
    if not _compiles("dlpack/dlpack.h", _cc(), env):
        inc = _pip_dlpack()
        if not inc:
            _fail("dlpack/dlpack.h not found: install libdlpack-dev, or let pip install apache-tvm-ffi")
        env["C_INCLUDE_PATH"] = inc + (os.pathsep + env["C_INCLUDE_PATH"] if env.get("C_INCLUDE_PATH") else "")
    lib, exe = build + "/lib/libdlsync.so", build + "/bin/dlsync"
    cmd = ["make", "-j%d" % (os.cpu_count() or 1), "BUILD=" + build, "CUDA_HOME=" + cuda, "CC=" + _cc(), lib, exe]
    sys.stderr.write("dlsync build: %s\n" % " ".join(cmd))
    if subprocess.run(cmd, cwd=ROOT, env=env).returncode != 0:
        _fail("make failed (its output is above)")
    return os.path.join(ROOT, lib), os.path.join(ROOT, exe)


def _tag():
    return "py3-none-" + (MANYLINUX_TAG if _with_zig() else re.sub(r"[-.]", "_", sysconfig.get_platform()))


def _record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return "%s,sha256=%s,%d" % (name, digest, len(data))


def _metadata(project, version):
    lines = ["Metadata-Version: 2.1", "Name: " + project["name"], "Version: " + version,
             "Summary: " + project["description"], "Requires-Python: " + project["requires-python"],
             "License: " + project["license"]["text"], "Description-Content-Type: text/markdown", ""]
    with open(os.path.join(ROOT, project["readme"])) as f:
        return "\n".join(lines) + "\n" + f.read()


def _entry_points(project):
    out = ["[console_scripts]"] + ["%s = %s" % kv for kv in project["scripts"].items()] + [""]
    for group, points in project.get("entry-points", {}).items():
        out += ["[%s]" % group] + ["%s = %s" % kv for kv in points.items()] + [""]
    return "\n".join(out)


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    project = _project()
    version = _version()
    lib, exe = _make()
    name = "%s-%s-%s.whl" % (project["name"], version, _tag())
    dist = "%s-%s.dist-info" % (project["name"], version)
    files = []
    pkg = os.path.join(ROOT, "python", "dlsync")
    for f in sorted(os.listdir(pkg)):
        if f.endswith(".py"):
            files.append(("dlsync/" + f, os.path.join(pkg, f), 0o644))
    files += [("dlsync/bin/dlsync", exe, 0o755), ("dlsync/lib/libdlsync.so", lib, 0o755)]
    generated = [
        (dist + "/METADATA", _metadata(project, version)),
        (dist + "/WHEEL", "Wheel-Version: 1.0\nGenerator: dlsync_backend\nRoot-Is-Purelib: false\nTag: %s\n" % _tag()),
        (dist + "/entry_points.txt", _entry_points(project)),
    ]
    record = []
    path = os.path.join(wheel_directory, name)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for arc, src, mode in files:
            with open(src, "rb") as f:
                data = f.read()
            info = zipfile.ZipInfo(arc, date_time=(2020, 1, 1, 0, 0, 0))
            info.external_attr = (0o100000 | mode) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, data)
            record.append(_record_line(arc, data))
        for arc, text in generated:
            data = text.encode()
            z.writestr(zipfile.ZipInfo(arc, date_time=(2020, 1, 1, 0, 0, 0)), data, zipfile.ZIP_DEFLATED)
            record.append(_record_line(arc, data))
        record.append(dist + "/RECORD,,")
        z.writestr(zipfile.ZipInfo(dist + "/RECORD", date_time=(2020, 1, 1, 0, 0, 0)), "\n".join(record) + "\n",
                   zipfile.ZIP_DEFLATED)
    return name


def _sources():
    """The files of the source tree: git's list in a checkout, else every file outside build/."""
    try:
        out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
        return [f for f in out.decode().split("\0") if f]
    except (OSError, subprocess.CalledProcessError):
        found = []
        for d, dirs, names in os.walk(ROOT):
            dirs[:] = [x for x in dirs if x not in ("build", ".git")]
            found += [os.path.relpath(os.path.join(d, n), ROOT) for n in names]
        return found


def build_sdist(sdist_directory, config_settings=None):
    project = _project()
    version = _version()
    base = "%s-%s" % (project["name"], version)
    path = os.path.join(sdist_directory, base + ".tar.gz")
    with tarfile.open(path, "w:gz") as t:
        for f in sorted(_sources()):
            t.add(os.path.join(ROOT, f), arcname=base + "/" + f)
        with tempfile.NamedTemporaryFile("w", delete=False) as pkg:
            pkg.write(_metadata(project, version))
        t.add(pkg.name, arcname=base + "/PKG-INFO")
        os.unlink(pkg.name)
    return base + ".tar.gz"
