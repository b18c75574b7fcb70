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
