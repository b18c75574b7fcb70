"""Build the Cython kernels.

Every ``bgfast/_*.pyx`` file is compiled as an extension ``bgfast._name``.
Compiler directives are set once here: bounds checks and negative indexing
are off for speed.  ``BGFAST_ONLY=_movegen`` builds only the named kernels.
Set ``BGFAST_DEBUG=1`` in the environment to turn every
check back on (and build with ``-O0 -g``) for a debugging build.
"""
import glob
import os

import numpy as np
from Cython.Build import cythonize
from setuptools import Extension, setup

DEBUG = os.environ.get("BGFAST_DEBUG", "") not in ("", "0")

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
compile_args = (["-O0", "-g"] if DEBUG else ["-O3", "-fno-trapping-math"]) + ["-ffp-contract=off"]
if os.environ.get("BGFAST_NATIVE", "") not in ("", "0"):
    compile_args.append("-march=native")   # faster, but only for this machine's CPU
compile_args += ["-fopenmp"]
link_args = ["-fopenmp"]

extensions = [
    Extension(
        "bgfast." + os.path.splitext(os.path.basename(path))[0],
        [path],
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

setup(ext_modules=cythonize(extensions, compiler_directives=directives))
