"""Run a command in the network namespace this process is in, with its
loopback interface up: ``unshare -n python tests/loopback_ns.py CMD ...``.

A fresh network namespace has only ``lo``, and it is down.  Ray's servers
listen on every address and Ray rewrites 127.0.0.1 to the machine's
interface address; in a namespace whose only interface is loopback,
nothing they open can be reached from outside it.

:func:`run_test_inside` runs one pytest test in such a namespace: the
tests marked ``loopback`` (``tests/conftest.py``), which start a private
in-process Ray, are run that way.
"""
import fcntl
import os
import shutil
import socket
import struct
import subprocess
import sys

SIOCGIFFLAGS, SIOCSIFFLAGS, IFF_UP = 0x8913, 0x8914, 0x1
HERE = os.path.abspath(__file__)
ROOT = os.path.dirname(os.path.dirname(HERE))
#: set in the environment of a test run inside the namespace
INSIDE = "BGFAST_TEST_IN_LOOPBACK_NS"


def loopback_up() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        flags = struct.unpack("16sH", fcntl.ioctl(s, SIOCGIFFLAGS, struct.pack("16sH", b"lo", 0)))[1]
        fcntl.ioctl(s, SIOCSIFFLAGS, struct.pack("16sH", b"lo", flags | IFF_UP))


def available() -> bool:
    """Whether this machine lets this process make a network namespace."""
    return bool(shutil.which("unshare")) and subprocess.run(
        ["unshare", "-n", "true"], capture_output=True).returncode == 0


def prefix() -> list[str]:
    """The words that run a command in a fresh loopback-only namespace."""
    return ["unshare", "-n", sys.executable, HERE]


def run_test_inside(nodeid: str, timeout: float = 600) -> None:
    """Run the pytest test ``nodeid`` in a fresh loopback-only namespace; an
    AssertionError with the tail of its output unless it passed.  Every
    process of the namespace is gone when it ends: Ray's daemons are
    started, and shut down, by the test's own ``ray.init``/``ray.shutdown``."""
    env = {**os.environ, INSIDE: "1", "RAY_ADDRESS": "", "RAY_USAGE_STATS_ENABLED": "0"}
    p = subprocess.run([*prefix(), sys.executable, "-m", "pytest", "-q", "-x", "-m", "",
                        "-p", "no:cacheprovider", "--benchmark-disable", nodeid],
                       cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout)
    assert p.returncode == 0, (f"{nodeid} in a loopback-only namespace: exit {p.returncode}\n"
                               f"{p.stdout[-4000:]}\n{p.stderr[-2000:]}")


if __name__ == "__main__":
    loopback_up()
    os.execvp(sys.argv[1], sys.argv[1:])
