"""The sdist holds everything a build needs, and a wheel installs and runs
in a fresh virtual environment without the source tree or a compiler."""
import os
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

import bgfast

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.skipif(not (ROOT / "pyproject.toml").exists() or not (ROOT / ".git").exists(),
                                reason="needs the source checkout")


def _tracked(*patterns):
    out = subprocess.run(["git", "ls-files", *patterns], cwd=ROOT, capture_output=True, text=True,
                         check=True).stdout
    return {line for line in out.splitlines() if line}


@pytest.fixture(scope="module")
def sdist(tmp_path_factory):
    out = tmp_path_factory.mktemp("sdist")
    subprocess.run([sys.executable, "-m", "build", "--sdist", "--no-isolation",
                    "--skip-dependency-check", "-o", str(out), str(ROOT)],
                   check=True, capture_output=True, timeout=300)
    (path,) = out.glob("bgfast-*.tar.gz")
    return path


def test_sdist_holds_every_build_input_and_no_build_product(sdist):
    with tarfile.open(sdist) as tf:
        names = {n.split("/", 1)[1] for n in tf.getnames() if "/" in n}
    needed = _tracked("bgfast/*.pyx", "bgfast/*.pxd", "bgfast/*.h", "bgfast/*.py", "bgfast/*.pyi",
                      "bgfast/data/*", "bgfast/cli/*.py", "setup.py", "pyproject.toml",
                      "README.md", "LICENSE")
    assert needed and needed <= names, sorted(needed - names)
    assert any(n.endswith(".pyx") for n in needed) and any(n.startswith("bgfast/data/") for n in needed)
    products = [n for n in names if n.endswith((".c", ".so", ".html"))
                and not n.startswith("bgfast/data/")]
    assert not products, products


def _venv_python(venv: Path) -> Path:
    return venv / ("Scripts" if os.name == "nt" else "bin") / "python"


def test_wheel_installs_and_runs_without_the_source_tree(tmp_path):
    wheels = tmp_path / "wheels"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(wheels), str(ROOT)],
                   check=True, capture_output=True, timeout=900)
    (wheel,) = wheels.glob("bgfast-*.whl")
    with zipfile.ZipFile(wheel) as zf:
        names = zf.namelist()
    assert "bgfast/cli/__init__.py" in names and "bgfast/data/net/bgfast-net.npz" in names
    assert "bgfast/data/server/index.html" in names             # the page of bgfast serve
    assert any(n.startswith("bgfast/_movegen.") and n.endswith((".so", ".pyd")) for n in names)
    assert not [n for n in names if n.endswith((".c", ".pyx"))]

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    py = _venv_python(venv)
    subprocess.run([str(py), "-m", "pip", "install", "-q", str(wheel)], check=True,
                   capture_output=True, timeout=900)
    work = tmp_path / "elsewhere"
    work.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
    env["CC"] = env["CXX"] = "/bin/false"          # nothing may need a compiler
    bgfast_cmd = py.parent / "bgfast"

    def run(*args):
        return subprocess.run([str(bgfast_cmd), *args], cwd=work, env=env, capture_output=True,
                              text=True, timeout=300)

    r = run("--version")
    assert r.returncode == 0 and bgfast.__version__ in r.stdout, r.stderr
    r = run("hint", "4HPwATDgc/ABMA", "31")
    assert r.returncode == 0, r.stderr
    assert "8/5 6/5" in r.stdout.splitlines()[3]
    where = subprocess.run([str(py), "-c", "import bgfast; print(bgfast.__file__)"], cwd=work, env=env,
                           capture_output=True, text=True, check=True).stdout
    assert str(venv) in where and str(ROOT) not in where
