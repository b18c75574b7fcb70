"""Shared test fixtures."""
import os
import shutil

import numpy as np
import pytest


@pytest.fixture(scope="session")
def gnubg_nn():
    """gnubg's engine as a differential oracle (skipped where not installed)."""
    return pytest.importorskip("gnubg_nn")


def _gnubg_binary():
    for path in (shutil.which("gnubg"), "/usr/games/gnubg"):
        if path and os.path.exists(path):
            return path
    return None


@pytest.fixture(scope="session")
def gnubg_binary():
    """Path to Debian's ``gnubg`` program (skipped where not installed)."""
    path = _gnubg_binary()
    if path is None:
        pytest.skip("Debian's gnubg is not installed")
    return path


@pytest.fixture
def rng():
    return np.random.default_rng(12345)


@pytest.fixture(autouse=True)
def _config_dir(tmp_path_factory, monkeypatch):
    """Every test gets its own bgfast configuration directory (the save key
    of bgfast.savegame), never the user's."""
    monkeypatch.setenv("BGFAST_CONFIG_DIR", str(tmp_path_factory.mktemp("config")))


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "loopback: starts a private Ray: run in a loopback-only network namespace")


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem):
    """A test marked ``loopback`` runs again in a fresh network namespace
    whose only interface is loopback (tests/loopback_ns.py), so that the
    Ray it starts listens on no address of the machine; outside one it is
    skipped where no namespace can be made."""
    if pyfuncitem.get_closest_marker("loopback") is None:
        return None
    import loopback_ns

    if os.environ.get(loopback_ns.INSIDE):
        return None                               # inside: run the test itself
    if not loopback_ns.available():
        pytest.skip("cannot make a network namespace here")
    loopback_ns.run_test_inside(pyfuncitem.nodeid)
    return True
