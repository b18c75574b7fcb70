"""bgfast on Ray as a cluster user runs it: the address forms, refusals of
an address that cannot be reached, stdout carrying the data alone, and a
real two-node cluster on loopback (bgfast._ray)."""
import json
import os
import subprocess
import sys
import time

import pytest
from click.testing import CliRunner

from bgfast.cli import main

from procs import ROOT

ray = pytest.importorskip("ray")

START = "4HPwATDgc/ABMA"


def _cli(*args, env=None, timeout=300):
    """``python -m bgfast ARGS`` in a subprocess: (exit status, stdout, stderr, seconds)."""
    t = time.monotonic()
    p = subprocess.run([sys.executable, "-m", "bgfast", *map(str, args)], cwd=ROOT,
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
    (rollout) or the rows alone (analyze), the same as locally."""
    env = {"RAY_ADDRESS": ""}
    code, out, err, _ = _cli("rollout", START, "-n", "72", "-t", "4", "--backend", "ray",
                             "--json", env=env)
    assert code == 0, err
    assert "starting a private Ray" in err
    doc = json.loads(out)
    code, local, _, _ = _cli("rollout", START, "-n", "72", "-t", "4", "-j", "1", "--json")
    assert _same(doc, json.loads(local))
    src = tmp_path / "in.txt"
    src.write_text("".join(f"{p}\n" for p in POSITIONS))
    code, out, err, _ = _cli("analyze", src, "--backend", "ray", env=env)
    assert code == 1 and "5 rows, 1 failed" in err, err       # the bad line
    _, local, _, _ = _cli("analyze", src, "-j", "1")
    assert out == local and len(out.splitlines()) == len(POSITIONS)


POSITIONS = [START, "AwAA4AYAAAAAAA 31", "4HPwATDgc/ABMA 61", "sGfwATDgc/ABMA", "bad line"]


def _same(a: dict, b: dict) -> bool:
    """Two rollout documents with the same results (their settings name other backends)."""
    return all(a[k] == b[k] for k in ("mean", "stderr", "games", "average_plies", "position"))
