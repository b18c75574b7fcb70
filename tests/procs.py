"""Processes and terminals for the tests that run the real CLI."""
import os
import pty
import select
import struct
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def running(marker: str) -> list[int]:
    """Live processes whose command line holds ``marker`` (forked workers
    keep their parent's command line)."""
    found = []
    for pid in os.listdir("/proc"):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmdline = f.read()
            with open(f"/proc/{pid}/stat") as f:
                zombie = f.read().rsplit(")", 1)[1].split()[0] == "Z"
        except (OSError, IndexError):
            continue
        if marker.encode() in cmdline and not zombie:
            found.append(int(pid))
    return found


def children(pid: int | None = None) -> set[int]:
    """The live (not zombie) child processes of ``pid`` (default: this process)."""
    me = str(os.getpid() if pid is None else pid)
    out = set()
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[1] == me and fields[0] != "Z":
            out.add(int(pid))
    return out


def bgfast(*args) -> list[str]:
    """The command line of this checkout's CLI."""
    return [sys.executable, "-m", "bgfast", *map(str, args)]


def env() -> dict:
    """The environment of a CLI subprocess: this checkout first on the path."""
    e = dict(os.environ)
    e["PYTHONPATH"] = ROOT + os.pathsep + e.get("PYTHONPATH", "")
    e.pop("BGFAST_PROGRESS", None)              # bars by the terminal rule alone
    return e


def run_piped(args, timeout: float = 120) -> subprocess.CompletedProcess:
    """Run the CLI with stdout and stderr on pipes; it must return (every
    process holding the pipes must end) within ``timeout`` seconds."""
    return subprocess.run(bgfast(*args), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          timeout=timeout, cwd=ROOT, env=env())


def run_on_terminal(args, timeout: float = 120) -> tuple[int, bytes, bytes]:
    """Run the CLI with stderr on a pseudo-terminal (80 x 24) and stdout on
    a pipe: ``(exit status, stdout, what the terminal got)``."""
    import fcntl
    import termios

    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    proc = subprocess.Popen(bgfast(*args), stdout=subprocess.PIPE, stderr=slave, cwd=ROOT,
                            env=env())
    # the slave end stays open here until the child has exited and the
    # terminal is drained: once every writer has closed it, Linux may drop
    # what the master has not read yet
    seen = b""
    deadline = time.time() + timeout
    done = False
    while time.time() < deadline:
        ready, _, _ = select.select([master], [], [], 0.05)
        if ready:
            seen += os.read(master, 1 << 16)
        elif done:
            break
        elif proc.poll() is not None:
            done = True                  # one more pass drains what is left
    os.close(slave)
    os.close(master)
    out = proc.stdout.read()
    proc.stdout.close()
    return proc.wait(timeout=timeout), out, seen
