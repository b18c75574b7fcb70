"""bgfast on Ray as a cluster user runs it: the address forms, refusals of
an address that cannot be reached, stdout carrying the data alone, and a
real two-node cluster on loopback (bgfast._ray)."""
import contextlib
import json
import os
import subprocess
import sys
import time

import pytest
from click.testing import CliRunner

from bgfast.cli import main

import loopback_ns
from procs import ROOT

ray = pytest.importorskip("ray")

START = "4HPwATDgc/ABMA"


def _cli(*args, env=None, timeout=300, isolated=False):
    """``python -m bgfast ARGS`` in a subprocess: (exit status, stdout, stderr, seconds);
    ``isolated``: in a network namespace of its own with only loopback (a private Ray)."""
    t = time.monotonic()
    prefix = loopback_ns.prefix() if isolated else []
    p = subprocess.run([*prefix, sys.executable, "-m", "bgfast", *map(str, args)], cwd=ROOT,
                       capture_output=True, text=True, timeout=timeout,
                       env={**os.environ, **(env or {})})
    return p.returncode, p.stdout, p.stderr, time.monotonic() - t


@pytest.mark.parametrize("cmd", [["rollout", START, "-n", "36", "--json"], ["analyze", "-"]])
@pytest.mark.parametrize("address", ["127.0.0.1:1", "ray://127.0.0.1:1"])
def test_an_address_that_cannot_be_reached_is_one_line(cmd, address, monkeypatch):
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    t = time.monotonic()
    r = CliRunner().invoke(main, [*cmd, "--backend", "ray", "--address", address], input=START)
    assert time.monotonic() - t < 10
    assert r.exit_code == 1, r.output
    lines = r.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), r.output
    assert f"cannot reach Ray at {address}" in lines[0] or "ray[client]" in lines[0]
    assert not ray.is_initialized()


def test_ray_address_is_read_when_no_address_is_given(monkeypatch):
    monkeypatch.setenv("RAY_ADDRESS", "127.0.0.1:1")
    r = CliRunner().invoke(main, ["rollout", START, "-n", "36", "--backend", "ray"])
    assert r.exit_code == 1
    assert r.output.strip() == "Error: cannot reach Ray at 127.0.0.1:1 (Connection refused)"
    # --address wins over RAY_ADDRESS
    r = CliRunner().invoke(main, ["rollout", START, "-n", "36", "--backend", "ray",
                                  "--address", "127.0.0.1:2"])
    assert "cannot reach Ray at 127.0.0.1:2" in r.output


def test_a_bad_address_form_is_a_usage_error():
    r = CliRunner().invoke(main, ["rollout", START, "--backend", "ray", "--address", "head"])
    assert r.exit_code == 2 and "HOST:PORT" in r.output


def test_resolve_address(monkeypatch):
    from bgfast._ray import resolve_address

    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    assert resolve_address(None) is None and resolve_address("local") is None
    assert resolve_address("10.0.0.1:6379") == "10.0.0.1:6379"
    monkeypatch.setenv("RAY_ADDRESS", "ray://h:10001")
    assert resolve_address(None) == "ray://h:10001"
    assert resolve_address("auto") == "auto"


def test_rays_cluster_messages_go_to_stderr(capsys):
    """The lines Ray's driver prints for the cluster's errors (a task
    retried, a node dead) are printed to stderr once bgfast connects."""
    import ray._private.worker as rw

    from bgfast._ray import _errors_to_stderr

    _errors_to_stderr()
    _errors_to_stderr()                       # once only
    capsys.readouterr()
    rw.print_to_stdstream({"lines": ["Task _ray_chunk failed. There are 3 retries remaining"],
                           "pid": "raylet", "ip": "127.0.0.1", "is_err": False},
                          ignore_prefix=False)
    out, err = capsys.readouterr()
    assert out == "" and "Task _ray_chunk failed" in err


def test_private_local_ray_stdout_is_the_data(tmp_path):
    """No address: a private Ray, said on stderr; stdout is one JSON document
    (rollout) or the rows alone (analyze), the same as locally.  The Ray runs
    in a loopback-only network namespace (it would listen on every address)."""
    if not loopback_ns.available():
        pytest.skip("cannot make a network namespace here")
    env = {"RAY_ADDRESS": "", "RAY_USAGE_STATS_ENABLED": "0"}
    code, out, err, _ = _cli("rollout", START, "-n", "72", "-t", "4", "--backend", "ray",
                             "--json", env=env, isolated=True)
    assert code == 0, err
    assert "starting a private Ray" in err
    doc = json.loads(out)
    code, local, _, _ = _cli("rollout", START, "-n", "72", "-t", "4", "-j", "1", "--json")
    assert _same(doc, json.loads(local))
    src = tmp_path / "in.txt"
    src.write_text("".join(f"{p}\n" for p in POSITIONS))
    code, out, err, _ = _cli("analyze", src, "--backend", "ray", env=env, isolated=True)
    assert code == 1 and "5 rows, 1 failed" in err, err       # the bad line
    _, local, _, _ = _cli("analyze", src, "-j", "1")
    assert out == local and len(out.splitlines()) == len(POSITIONS)


POSITIONS = [START, "AwAA4AYAAAAAAA 31", "4HPwATDgc/ABMA 61", "sGfwATDgc/ABMA", "bad line"]


def _same(a: dict, b: dict) -> bool:
    """Two rollout documents with the same results (their settings name other backends)."""
    return all(a[k] == b[k] for k in ("mean", "stderr", "games", "average_plies", "position"))


# ---------------------------------------------------------------------------
# a real two-node cluster, held to loopback in a network namespace of its own
# ---------------------------------------------------------------------------

HEAD_PORT = 6390
#: every Ray process of the cluster and its drivers: no usage statistics; no
#: token (the nodes and drivers share no auth token file here); this
#: checkout's bgfast on every node, as an installed bgfast would be
RAY_ENV = {"RAY_AUTH_MODE": "disabled", "RAY_USAGE_STATS_ENABLED": "0", "RAY_ADDRESS": "",
           "PYTHONPATH": ROOT}


def _netns(pid: int) -> str:
    return os.readlink(f"/proc/{pid}/ns/net")


def _processes_in(ns: str) -> list[int]:
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if os.readlink(f"/proc/{pid}/ns/net") == ns:
                found.append(int(pid))
        except OSError:
            pass
    return found


class Cluster:
    """A network namespace with only loopback (``unshare -n``) holding a
    Ray head and a second node, each with one CPU; :meth:`run` runs a
    command in it."""

    def __init__(self, tmp):
        self.tmp = tmp
        self.holder = subprocess.Popen(
            [*loopback_ns.prefix(), sys.executable, "-c",
             "import sys; print('up', flush=True); sys.stdin.read()"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert self.holder.stdout.readline().strip() == "up"
        self.ns = _netns(self.holder.pid)
        assert self.ns != _netns(os.getpid())
        self.address = f"127.0.0.1:{HEAD_PORT}"

    def run(self, *args, timeout=300, check=True, env=None):
        t = time.monotonic()
        p = subprocess.run(["nsenter", "-t", str(self.holder.pid), "-n", *map(str, args)],
                           cwd=ROOT, capture_output=True, text=True, timeout=timeout,
                           env={**os.environ, **RAY_ENV, **(env or {})})
        if check:
            assert p.returncode == 0, p.stderr[-3000:]
        return p.returncode, p.stdout, p.stderr, time.monotonic() - t

    def _common(self):
        return ["--node-ip-address", "127.0.0.1", "--num-cpus", "1", "--disable-usage-stats",
                "--temp-dir", self.tmp]

    def start_head(self):
        self.run("ray", "start", "--head", "--port", HEAD_PORT, "--include-dashboard=false",
                 "--ray-client-server-port", 10001, *self._common())

    def add_node(self, env=None):
        """The second node (``env``: more of its environment)."""
        before = set(_processes_in(self.ns))
        self.run("ray", "start", "--address", self.address, *self._common(), env=env)
        #: the second node's own processes (its raylet and agents)
        self.second = sorted(set(_processes_in(self.ns)) - before)

    def start(self, second_env=None):
        """The head, then the second node (``second_env``: more of its environment)."""
        self.start_head()
        self.add_node(second_env)

    def bgfast(self, *args, timeout=300):
        return self.run(sys.executable, "-m", "bgfast", *args, timeout=timeout, check=False)

    def listening(self) -> list[str]:
        """The local addresses of the TCP sockets listening in the namespace (``ss -ltn``)."""
        _, out, _, _ = self.run("ss", "-ltnH")
        return sorted({line.split()[3] for line in out.splitlines() if line.strip()})

    def stop(self):
        """Every process of the namespace killed (Ray's daemons included), by PID."""
        import signal

        for pid in _processes_in(self.ns):
            if pid != self.holder.pid:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        self.holder.stdin.close()
        self.holder.wait(timeout=30)


@pytest.fixture(scope="module")
def cluster():
    with _running_cluster() as c:
        yield c


@contextlib.contextmanager
def _running_cluster(second_env=None):
    """A started :class:`Cluster` (skipped where it cannot be made), stopped at the end."""
    import shutil
    import tempfile

    if not (shutil.which("nsenter") and shutil.which("ray")):
        pytest.skip("needs unshare, nsenter and the ray command")
    if not loopback_ns.available():
        pytest.skip("cannot make a network namespace here")
    tmp = tempfile.mkdtemp(prefix="bgr", dir="/tmp")       # Ray's socket paths must be short
    c = Cluster(tmp)
    try:
        c.start(second_env)
        yield c
    finally:
        c.stop()
        shutil.rmtree(tmp, ignore_errors=True)


def _tally(err: str) -> tuple[int, int]:
    """(tasks, nodes) of bgfast's stderr line ``N Ray tasks on K node(s)``."""
    line = next(x for x in err.splitlines() if "Ray tasks on" in x)
    words = line.split()
    return int(words[1]), int(words[5])


def test_a_two_node_cluster_gives_the_serial_results(cluster, tmp_path):
    # rollout: one JSON document on stdout, tasks on both nodes, the serial numbers
    args = ["rollout", START, "-n", "864", "-t", "6", "--seed", "5", "--json"]
    code, out, err, _ = cluster.bgfast(*args, "--backend", "ray", "--address", cluster.address)
    assert code == 0, err
    doc = json.loads(out)
    _, serial, _, _ = _cli(*args, "--backend", "serial")
    assert _same(doc, json.loads(serial))
    tasks, nodes = _tally(err)
    assert nodes == 2 and tasks >= 8
    # analyze: the rows alone on stdout, byte for byte the serial ones
    src = tmp_path / "in.txt"
    src.write_text("".join(f"{p}\n" for p in POSITIONS * 200))
    code, out, err, _ = cluster.bgfast("analyze", src, "--backend", "ray", "--address",
                                       cluster.address, "--format", "csv")
    _, local, _, _ = _cli("analyze", src, "-j", "1", "--format", "csv")
    assert code == 1 and out == local, err[-2000:]
    assert _tally(err)[1] == 2
    # nothing listens beyond loopback: the namespace has no other address
    listening = cluster.listening()
    print("listening in the cluster's namespace:", " ".join(listening))
    assert listening and all(a.startswith(("127.0.0.1:", "[::ffff:127.0.0.1]:", "*:", "0.0.0.0:",
                                           "[::]:", "[::1]:")) for a in listening), listening


@pytest.mark.slow
def test_the_ray_client_address_from_ray_address(cluster):
    """``RAY_ADDRESS=ray://...`` (the Ray Client) gives the serial numbers.
    Slow: the client server starts its per-client process on first use,
    which takes tens of seconds on a busy machine."""
    args = ["rollout", START, "-n", "864", "-t", "6", "--seed", "5", "--json"]
    _, serial, _, _ = _cli(*args, "--backend", "serial")
    code, out, err, _ = cluster.run("env", "RAY_ADDRESS=ray://127.0.0.1:10001", sys.executable,
                                    "-m", "bgfast", *args, "--backend", "ray", check=False)
    assert code == 0, err[-2000:]
    assert _same(json.loads(out), json.loads(serial))


@pytest.mark.slow
def test_a_node_killed_mid_run_changes_nothing(cluster):
    """The second node's processes (and so its workers) are killed with
    SIGKILL while a rollout runs: the rollout completes with the serial
    numbers and stdout stays one JSON document."""
    import signal

    args = ["rollout", START, "-n", "2592", "--seed", "11", "--json"]
    p = subprocess.Popen(["nsenter", "-t", str(cluster.holder.pid), "-n", sys.executable, "-m",
                          "bgfast", *args, "--backend", "ray", "--address", cluster.address],
                         cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env={**os.environ, **RAY_ENV})
    time.sleep(10)                                 # connected, tasks running on both nodes
    assert p.poll() is None
    for pid in cluster.second:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    out, err = p.communicate(timeout=300)
    assert p.returncode == 0, err[-3000:]
    _, serial, _, _ = _cli(*args, "--backend", "serial")
    assert _same(json.loads(out), json.loads(serial))
    assert "Ray tasks on" in err
    print("stderr after the node was killed:", err[-1500:])


def _bgfast_lines(err: str) -> list[str]:
    """stderr without the one warning of Ray's core library that a driver in
    the tests' namespace prints at ``ray.init``: it has no route out, so Ray
    cannot find its local address by connecting out (``network_util.cc``)."""
    return [x for x in err.splitlines()
            if not ("network_util.cc" in x and "external connectivity" in x)]


#: a ``sitecustomize`` for the second node: its Python processes import the
#: ``bgfast`` beside it, ahead of every entry of ``sys.path`` (Ray puts the
#: driver's package directory first on its workers' path)
_OTHER_BGFAST = '''import importlib.abc, importlib.util, os, sys

class _Other(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name == "bgfast":
            here = os.path.dirname(os.path.abspath(__file__))
            return importlib.util.spec_from_file_location(
                "bgfast", os.path.join(here, "other_bgfast", "__init__.py"))
        return None

sys.meta_path.insert(0, _Other())
'''


@pytest.mark.slow
@pytest.mark.parametrize("package, reason", [
    ('__version__ = "0.0.1"\n', "has bgfast 0.0.1, this machine {version}"),
    ('raise ImportError("a broken install")\n',
     "cannot import bgfast (ImportError: a broken install)"),
])
def test_a_node_with_another_bgfast_is_refused(tmp_path, package, reason):
    """The second node's Python imports another bgfast (another version, or
    one that fails to import): the command is refused before any work with
    one line naming that node and the reason, exit status 1, and no bgfast
    process is left.  Slow: a cluster of its own (two ``ray start``)."""
    from bgfast import __version__

    (tmp_path / "sitecustomize.py").write_text(_OTHER_BGFAST)
    (tmp_path / "other_bgfast").mkdir()
    (tmp_path / "other_bgfast" / "__init__.py").write_text(package)
    with _running_cluster({"PYTHONPATH": f"{tmp_path}{os.pathsep}{ROOT}"}) as cluster:
        _, out, _, _ = cluster.run(sys.executable, "-c", (
            "import ray; ray.init(address='auto', log_to_driver=False, logging_level='ERROR'); "
            "print(*[n['NodeID'] for n in ray.nodes() if n['Alive'] and "
            "'node:__internal_head__' not in n['Resources']])"))
        (second,) = out.split()
        for cmd in (["rollout", START, "-n", "216", "--json"], ["analyze", "-"]):
            code, out, err, seconds = cluster.bgfast(*cmd, "--backend", "ray", "--address",
                                                     cluster.address)
            assert code == 1 and out == "", err
            assert _bgfast_lines(err) == [
                f"Error: the Ray node at 127.0.0.1 (node {second[:8]}) "
                + reason.format(version=__version__)
                + ("; install the same version on every node" if "has bgfast" in reason else
                   f"; install bgfast {__version__} with its dependencies on every node "
                   f"(pip install 'bgfast[ray]=={__version__}')")], err
            assert "Traceback" not in err
            assert not [pid for pid in _processes_in(cluster.ns)
                        if b"bgfast" in open(f"/proc/{pid}/cmdline", "rb").read()
                        and b"-m\0bgfast" in open(f"/proc/{pid}/cmdline", "rb").read()]
            print(f"{cmd[0]}: refused in {seconds:.1f} s: {err.strip()}")
