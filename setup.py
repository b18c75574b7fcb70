"""Build the Cython kernels.

Every ``bgfast/_*.pyx`` file is compiled as an extension ``bgfast._name``.
Compiler directives are set once here: bounds checks and negative indexing
are off for speed.  ``BGFAST_ONLY=_movegen`` builds only the named kernels.
Set ``BGFAST_DEBUG=1`` in the environment to turn every
check back on (and build with ``-O0 -g``) for a debugging build.

The kernels are compiled in parallel (one job per core), and each built
module is kept in ``build/bgfast-cache/`` under a hash of everything that
goes into it: the kernel sources and headers, the Cython version and
directives, the compiler flags, Python's ABI and numpy's version.  A second
build of the same sources (for example ``pip install -e '.[test]'`` after
``pip install -e .``) copies the cached modules instead of compiling them
again.  ``BGFAST_BUILD_CACHE=0`` (or ``build_ext --force``) bypasses the
cache.
"""
import glob
import hashlib
import os
import shutil
import sys
import sysconfig
import threading

import numpy as np
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext as _build_ext

HERE = os.path.dirname(os.path.abspath(__file__))
DEBUG = os.environ.get("BGFAST_DEBUG", "") not in ("", "0")
CACHE_DIR = os.path.join(HERE, "build", "bgfast-cache")
USE_CACHE = os.environ.get("BGFAST_BUILD_CACHE", "1") not in ("", "0")
_CYTHON_LOCK = threading.Lock()   # the Cython compiler is not thread-safe

directives = {
    "language_level": 3,
    "boundscheck": DEBUG,
    "wraparound": DEBUG,
    "initializedcheck": DEBUG,
    "cdivision": not DEBUG,
    "nonecheck": DEBUG,
    "embedsignature": True,
}
# -fno-trapping-math: floating-point operations are never relied on to trap,
# so compares may be if-converted and loops such as the net's sigmoid
# vectorise; no result changes (no reassociation, unlike -ffast-math).
# -ffp-contract=off: no fused multiply-adds, so a native build computes the
# same numbers as the portable one.
# -g0 (release): Python's default flags ask for debug information, which
# costs about 40% of the compile time; symbols for perf and callgrind remain.
compile_args = (["-O0", "-g"] if DEBUG else ["-O3", "-g0", "-fno-trapping-math"]) + ["-ffp-contract=off"]
if os.environ.get("BGFAST_NATIVE", "") not in ("", "0"):
    compile_args.append("-march=native")   # faster, but only for this machine's CPU
compile_args += ["-fopenmp"]
link_args = ["-fopenmp"]

# Every kernel is rebuilt when any header or declaration file changes.
DEPENDS = sorted(glob.glob(os.path.join("bgfast", "*.pxd")) + glob.glob(os.path.join("bgfast", "*.h")))

extensions = [
    Extension(
        "bgfast." + os.path.splitext(os.path.basename(path))[0],
        [path],
        depends=DEPENDS,
        include_dirs=[np.get_include()],
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
        extra_compile_args=compile_args,
        extra_link_args=link_args,
    )
    for path in sorted(glob.glob(os.path.join("bgfast", "_*.pyx")))
]
# BGFAST_ONLY=_movegen,_bearoff builds just those kernels (handy while editing one).
_only = [m.strip() for m in os.environ.get("BGFAST_ONLY", "").split(",") if m.strip()]
if _only:
    extensions = [e for e in extensions if e.name.split(".")[-1] in _only]


def _build_key(ext) -> str:
    """A hash of everything that determines the built module of ``ext``."""
    import Cython

    h = hashlib.sha256()
    for path in list(ext.sources) + list(ext.depends):
        h.update(path.encode())
        with open(os.path.join(HERE, path), "rb") as f:
            h.update(f.read())
    parts = [Cython.__version__, repr(sorted(directives.items())), repr(ext.extra_compile_args),
             repr(ext.extra_link_args), repr(ext.define_macros), np.__version__, sys.version,
             sysconfig.get_config_var("EXT_SUFFIX") or "", sysconfig.get_config_var("CC") or "",
             sysconfig.get_config_var("CFLAGS") or "", os.environ.get("CC", ""),
             os.environ.get("CFLAGS", "")]
    h.update("\0".join(parts).encode())
    return h.hexdigest()[:24]


class build_ext(_build_ext):
    """Cythonizes and compiles each kernel on demand, in parallel, with a build cache."""

    def finalize_options(self):
        super().finalize_options()
        if self.parallel is None:
            self.parallel = os.cpu_count() or 1

    def build_extension(self, ext):
        from Cython.Build import cythonize

        target = self.get_ext_fullpath(ext.name)
        cached = None
        if USE_CACHE and not self.force and ext.sources[0].endswith(".pyx"):
            cached = os.path.join(CACHE_DIR, f"{ext.name}-{_build_key(ext)}{os.path.splitext(target)[1]}")
            if os.path.exists(cached):
                os.makedirs(os.path.dirname(target), exist_ok=True)
                shutil.copyfile(cached, target)
                print(f"bgfast: {ext.name} from the build cache", file=sys.stderr)
                return
        if ext.sources[0].endswith(".pyx"):
            with _CYTHON_LOCK:
                ext.sources = cythonize([ext], compiler_directives=directives, quiet=True,
                                        force=self.force)[0].sources
        print(f"bgfast: compiling {ext.name}", file=sys.stderr)
        super().build_extension(ext)
        if cached is not None:
            try:
                os.makedirs(CACHE_DIR, exist_ok=True)
                tmp = f"{cached}.{os.getpid()}.tmp"
                shutil.copyfile(target, tmp)
                os.replace(tmp, cached)
            except OSError:       # a read-only source tree: build without the cache
                pass


setup(ext_modules=extensions, cmdclass={"build_ext": build_ext})
