"""The examples in README.md and docs/*.md run, in order, and print what they say.

Each page is one session in a fresh temporary working directory:

* every ```python block runs, in page order, in one namespace: a block with
  ``>>>`` prompts through :mod:`doctest` (its output is checked), any other
  block through ``exec``;
* every ```console block is a transcript: each ``$ bgfast ...`` line runs
  through click's ``CliRunner`` and its stdout must equal the lines below
  it (``...`` matches anything, as in doctest);
* a ```bash block right after the line ``<!-- test: run -->`` runs each of
  its ``bgfast ...`` lines, which must exit with status 0; other bash blocks
  are shown only.

A failure names the page, the block's line and what went wrong.

The pages are also the MkDocs site (``mkdocs.yml``): every page is in its nav,
and ``mkdocs build --strict`` (run by ``.ci/run``; here as a slow test where
MkDocs is installed) fails on a broken link or API reference.
"""
from __future__ import annotations

import doctest
import io
import re
import importlib.util
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
PAGES = [ROOT / "README.md"] + sorted(DOCS.rglob("*.md"))
RUN_MARK = "<!-- test: run -->"
FLAGS = doctest.ELLIPSIS

_FENCE = re.compile(r"^```(\S*)\s*$")


@dataclass
class Block:
    lang: str      # python, console, bash, ...
    line: int      # 1-based line of the opening fence
    text: str
    marked: bool   # preceded by RUN_MARK


class DocExampleError(AssertionError):
    """An example of a page failed."""


def blocks(text: str) -> list[Block]:
    """The fenced code blocks of a Markdown text, in order."""
    out: list[Block] = []
    lines = text.splitlines()
    i = 0
    previous = ""
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if m is None:
            if lines[i].strip():
                previous = lines[i].strip()
            i += 1
            continue
        start = i
        i += 1
        body = []
        while i < len(lines) and lines[i].rstrip() != "```":
            body.append(lines[i])
            i += 1
        if i == len(lines):
            raise DocExampleError(f"line {start + 1}: a code block is never closed")
        out.append(Block(m.group(1).lower(), start + 1, "\n".join(body) + "\n",
                         previous == RUN_MARK))
        previous = ""
        i += 1
    return out


def _commands(text: str) -> list[str]:
    """The ``bgfast ...`` lines of a shell block (``\\`` continues a line)."""
    joined = re.sub(r"\\\n\s*", " ", text)
    return [ln.strip() for ln in joined.splitlines() if ln.strip().startswith("bgfast ")]


def _argv(command: str, where: str) -> list[str]:
    argv = shlex.split(command, comments=True)
    bad = [a for a in argv if a in ("|", ">", ">>", "<", "&&", ";", "&")]
    if bad:
        raise DocExampleError(f"{where}: {command!r} uses the shell ({bad[0]}), "
                              "which the docs test does not run")
    return argv[1:]


def _invoke(command: str, where: str):
    from bgfast.cli import main

    result = CliRunner().invoke(main, _argv(command, where))
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise DocExampleError(f"{where}: {command!r} raised "
                              f"{type(result.exception).__name__}: {result.exception}")
    return result


def _run_console(block: Block, where: str) -> None:
    """``$ bgfast ...`` lines and the stdout each must print."""
    checker = doctest.OutputChecker()
    steps: list[tuple[str, list[str]]] = []
    for ln in block.text.splitlines():
        if ln.startswith("$ "):
            steps.append((ln[2:].strip(), []))
        elif steps:
            steps[-1][1].append(ln)
        elif ln.strip():
            raise DocExampleError(f"{where}: output before the first '$ ' command")
    if not steps:
        raise DocExampleError(f"{where}: a console block without a '$ ' command")
    for command, expected in steps:
        if not command.startswith("bgfast "):
            raise DocExampleError(f"{where}: only bgfast commands run here, not {command!r}")
        result = _invoke(command, where)
        if result.exit_code != 0:
            raise DocExampleError(f"{where}: {command!r} exited with {result.exit_code}: "
                                  f"{result.output.strip()}")
        want = "\n".join(expected).rstrip() + "\n"
        got = "\n".join(ln.rstrip() for ln in result.stdout.splitlines()).rstrip() + "\n"
        if not checker.check_output(want, got, FLAGS):
            raise DocExampleError(f"{where}: {command!r} printed\n{got}instead of\n{want}")


def _run_bash(block: Block, where: str) -> None:
    commands = _commands(block.text)
    if not commands:
        raise DocExampleError(f"{where}: a block marked to run has no bgfast command")
    for command in commands:
        result = _invoke(command, where)
        if result.exit_code != 0:
            raise DocExampleError(f"{where}: {command!r} exited with {result.exit_code}: "
                                  f"{result.output.strip()}")


def _run_python(block: Block, ns: dict, where: str) -> None:
    if any(ln.lstrip().startswith(">>>") for ln in block.text.splitlines()):
        test = doctest.DocTestParser().get_doctest(block.text, ns, where, where, block.line)
        report = io.StringIO()
        runner = doctest.DocTestRunner(optionflags=FLAGS)
        runner.run(test, out=report.write, clear_globs=False)
        ns.update(test.globs)
        if runner.failures:
            raise DocExampleError(f"{where}: doctest failed\n{report.getvalue()}")
        return
    try:
        exec(compile(block.text, where, "exec"), ns)
    except Exception as exc:
        raise DocExampleError(f"{where}: {type(exc).__name__}: {exc}") from exc


def run_page(name: str, text: str) -> int:
    """Run every example of one page in order; the number of blocks run."""
    ns: dict = {"__name__": "__docs__"}
    ran = 0
    for block in blocks(text):
        where = f"{name}, block at line {block.line}"
        if block.lang == "python":
            _run_python(block, ns, where)
        elif block.lang == "console":
            _run_console(block, where)
        elif block.lang in ("bash", "sh", "") and block.marked:
            _run_bash(block, where)
        else:
            continue
        ran += 1
    return ran


@pytest.mark.parametrize("page", PAGES, ids=[p.relative_to(ROOT).as_posix() for p in PAGES])
def test_page_examples_run(page, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    try:
        run_page(str(page.relative_to(ROOT)), page.read_text(encoding="utf-8"))
    except DocExampleError as exc:
        message = str(exc)
    else:
        return
    pytest.fail(message, pytrace=False)


def test_every_page_has_examples():
    names = {p.relative_to(ROOT).as_posix() for p in PAGES}
    assert {"README.md"} | {f"docs/{n}.md" for n in (
        "index", "install", "tutorial", "positions", "formats", "rules", "bearoff", "cube",
        "play", "evaluation", "analysis", "performance", "reference/cli")} <= names
    runnable = {p.relative_to(ROOT).as_posix(): sum(b.lang in ("python", "console") or b.marked
                                                     for b in blocks(p.read_text(encoding="utf-8")))
                for p in PAGES}
    # every usage page shows code that runs (the others show shell commands or prose only;
    # the reference pages are generated from the docstrings and the click commands)
    shown_only = {f"docs/{n}.md" for n in ("index", "install", "performance", "rules",
                                             "architecture")}
    shown_only |= {n for n in names if n.startswith("docs/reference/")}
    assert all(runnable[n] for n in names - shown_only), runnable


def test_links_between_pages_resolve():
    missing = []
    for page in PAGES:
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", page.read_text(encoding="utf-8")):
            if "://" in target or target.startswith("mailto:"):
                continue
            if not (page.parent / target).exists():
                missing.append(f"{page.relative_to(ROOT)} -> {target}")
    assert not missing


def _reference_modules() -> list[str]:
    """The modules the API reference pages render (their ``::: module`` lines)."""
    return [m for page in sorted((DOCS / "reference").glob("*.md"))
            for m in re.findall(r"^::: (bgfast(?:\.\w+)*)\s*$", page.read_text(encoding="utf-8"),
                                re.M)]


def test_the_examples_in_the_api_reference_run():
    """The ``>>>`` examples of the docstrings the API reference renders."""
    import importlib

    modules = _reference_modules()
    assert {"bgfast", "bgfast.position", "bgfast.rollout", "bgfast.errors"} <= set(modules)
    finder = doctest.DocTestFinder()
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    report = io.StringIO()
    for name in modules:
        module = importlib.import_module(name)
        for test in finder.find(module, name):
            runner.run(test, out=report.write)
    assert runner.failures == 0, report.getvalue()
    assert runner.tries >= 3          # the package's own example at least


def test_the_reference_renders_rest_docstrings_as_markdown():
    pytest.importorskip("griffe")
    spec = importlib.util.spec_from_file_location("rst_docstrings",
                                                  DOCS / "_ext" / "rst_docstrings.py")
    ext = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ext)
    text = ("See :class:`~bgfast.cube.CubeContext`, :func:`rollout` and\n"
            ":meth:`the context <bgfast.cube.CubeContext.of>`::\n\n    code()\n\n"
            "::\n\n    more()\n\n>>> 1 + 1\n2\n\nEnd.")
    assert ext.markdown(text) == (
        "See `CubeContext`, `rollout` and\n`the context`:\n\n    code()\n\n"
        "\n    more()\n\n```pycon\n>>> 1 + 1\n2\n```\n\nEnd.")
    assert ext.markdown(ext.markdown(text)) == ext.markdown(text)


def _nav_pages() -> list[str]:
    """The pages named in the nav of mkdocs.yml (lines ``- Title: page.md``)."""
    text = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    nav = text[text.index("\nnav:"):]
    return re.findall(r"^\s*- [^\n]*?:\s*(\S+\.md)\s*$", nav, re.M)


def test_every_page_is_in_the_site_nav_once():
    nav = _nav_pages()
    pages = sorted(p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md"))
    assert sorted(nav) == pages


@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("mkdocs") is None, reason="needs the docs extra (MkDocs)")
def test_the_site_builds_in_strict_mode(tmp_path):
    out = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir",
                          str(tmp_path / "site")], cwd=ROOT, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    assert (tmp_path / "site" / "reference" / "cli" / "index.html").exists()


BROKEN = '''\
```python
>>> from bgfast import Position
>>> pos = Position.initial()
```

```python
>>> pos.pip_count()
(167, 168)
```
'''


def test_a_wrong_doctest_output_fails():
    with pytest.raises(DocExampleError, match=r"page\.md, block at line 6: doctest failed"):
        run_page("page.md", BROKEN)
    assert run_page("page.md", BROKEN.replace("168", "167")) == 2


def test_a_failing_statement_and_command_fail(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(DocExampleError, match=r"line 1: NameError"):
        run_page("p.md", "```python\nundefined_name\n```\n")
    # the namespace is kept from block to block
    assert run_page("p.md", "```python\nx = 2\n```\n\n```python\nassert x == 2\n```\n") == 2
    with pytest.raises(DocExampleError, match=r"exited with 2"):
        run_page("p.md", f"{RUN_MARK}\n```bash\nbgfast pips NOT-AN-ID\n```\n")
    with pytest.raises(DocExampleError, match=r"printed"):
        run_page("p.md", "```console\n$ bgfast pips 4HPwATDgc/ABMA\n167 166\n```\n")
    assert run_page("p.md", "```console\n$ bgfast pips 4HPwATDgc/ABMA\n167 ...\n```\n") == 1
    # an unmarked bash block is shown only
    assert run_page("p.md", "```bash\nbgfast pips NOT-AN-ID\n```\n") == 0
    with pytest.raises(DocExampleError, match=r"uses the shell"):
        run_page("p.md", f"{RUN_MARK}\n```bash\nbgfast pips 4HPwATDgc/ABMA > x\n```\n")
