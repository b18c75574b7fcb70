"""bgfast._files and bgfast._progress: output paths checked before the work,
input files and lines in bounded memory, what error rows quote, progress
bars."""
import io
import os
import re

import pytest

from bgfast._files import (MAX_LINE, QUOTE, bound_lines, bounded_lines, check_writable,
                           line_problem, read_input, shorten)
from bgfast.errors import BgfastError, InvalidRecordError, OutputPathError


def _listing(path):
    return sorted(os.listdir(path))


def test_check_writable_accepts_new_and_existing_files(tmp_path):
    assert check_writable(tmp_path / "new.csv") == tmp_path / "new.csv"
    old = tmp_path / "old.csv"
    old.write_bytes(b"kept")
    assert check_writable(str(old)) == old
    assert old.read_bytes() == b"kept"                 # opened, not changed
    assert _listing(tmp_path) == ["old.csv"]           # no probe file left behind


@pytest.mark.parametrize("path, message", [
    ("", "name given"),
    ("   ", "name given"),
    ("/nonexistent-bgfast-dir/x.bgb", "directory '/nonexistent-bgfast-dir' does not exist"),
    ("/proc/x.bgb", "no file can be created in '/proc'"),
])
def test_check_writable_refuses_with_one_line(path, message):
    with pytest.raises(OutputPathError, match=message) as info:
        check_writable(path, "table file")
    assert isinstance(info.value, BgfastError) and "\n" not in str(info.value)
    assert "table file" in str(info.value)


def test_check_writable_refuses_directories_and_files_as_directories(tmp_path):
    with pytest.raises(OutputPathError, match="is a directory"):
        check_writable(tmp_path)
    (tmp_path / "f").write_text("x")
    with pytest.raises(OutputPathError, match="is not a directory"):
        check_writable(tmp_path / "f" / "x.csv")


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only directories")
def test_check_writable_refuses_a_read_only_directory(tmp_path):
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o555)
    try:
        with pytest.raises(OutputPathError, match="no file can be created"):
            check_writable(ro / "x.csv")
    finally:
        ro.chmod(0o755)


class _Recording(io.StringIO):
    """A text stream that records the longest piece ``readline`` returned."""

    longest = 0

    def readline(self, size=-1):
        line = super().readline(size)
        self.longest = max(self.longest, len(line))
        return line


def test_bounded_lines_never_hold_a_long_line_whole():
    junk = "x" * 3_000_000
    stream = _Recording(f"4HPwATDgc/ABMA 31\n{junk}\n\n{'y' * (MAX_LINE + 1)}\n"
                        f"{'z' * MAX_LINE}\nlast")
    lines = list(bounded_lines(stream))
    assert stream.longest <= 1 << 16                    # read in pieces
    assert lines[0] == "4HPwATDgc/ABMA 31\n" and lines[2] == "\n" and lines[5] == "last"
    assert lines[4] == "z" * MAX_LINE + "\n"            # at the limit: whole
    assert len(lines) == 6 and all(len(x) < QUOTE + 20 for x in lines[1:4:2])
    assert line_problem(lines[1].strip()) == \
        f"line too long: 3,000,000 characters (at most {MAX_LINE:,})"
    assert line_problem(lines[3]) == f"line too long: {MAX_LINE + 1:,} characters " \
                                     f"(at most {MAX_LINE:,})"
    assert shorten(lines[1]) == "x" * QUOTE + "... (3,000,000 characters)"
    # the same stand-ins for lines given as strings
    assert bound_lines([f"{junk}\n", "ok\n"]) == [lines[1], "ok\n"]
    assert bound_lines(["ok\n", "z" * MAX_LINE + "\n"]) == ["ok\n", "z" * MAX_LINE + "\n"]


def test_bytes_that_are_not_utf8_are_named_and_quoted_as_replacement_characters():
    raw = b"4HPw\xffATD\xc3\n"
    text = raw.decode("utf-8", "surrogateescape")
    assert line_problem(text) == "not UTF-8 text: byte 0xff at character 5"
    assert shorten(text.strip()) == "4HPw\ufffdATD\ufffd"
    assert shorten(text).encode("utf-8")                # writable as UTF-8
    assert line_problem("4HPwATDgc/ABMA 31") is None and line_problem("é") is None
    assert shorten("a" * QUOTE) == "a" * QUOTE
    assert shorten("a" * (QUOTE + 1)) == "a" * QUOTE + f"... ({QUOTE + 1:,} characters)"


# ------------------------------------------------------------------ progress

def test_progress_bar_only_on_a_terminal(monkeypatch, capsys):
    from bgfast import _progress

    monkeypatch.setattr(_progress, "DELAY", 0)
    monkeypatch.delenv("BGFAST_PROGRESS", raising=False)
    with _progress.Progress(10, unit="game") as bar:
        bar(5)
        bar.update(5)
    assert capsys.readouterr().err == ""                # pytest's stderr is no terminal
    monkeypatch.setattr(_progress, "on_terminal", lambda: True)
    with _progress.Progress(10, unit="game") as bar:
        bar(5)
        bar(10)
    err = capsys.readouterr().err
    assert "10/10" in err and "game" in err
    with _progress.Progress(10, quiet=True) as bar:     # --quiet
        bar(10)
    assert capsys.readouterr().err == ""
    # a resumed run's first report is where it starts
    with _progress.Progress(10, resumes=True) as bar:
        bar(6, 10)
        bar(8, 10)
        assert bar._bar.initial == 6 and bar._bar.n == 8
    monkeypatch.setattr(_progress, "on_terminal", lambda: False)
    monkeypatch.setenv("BGFAST_PROGRESS", "1")              # asked for on any stderr
    with _progress.Progress(3) as bar:
        bar(3)
    assert "3/3" in capsys.readouterr().err


def test_devices_and_pipes_are_written_in_place_only(tmp_path):
    """An atomic write would replace /dev/null; a streamed output may go to
    a device or a pipe (analyze -o /dev/stdout), without a run record."""
    import threading

    from bgfast.analyze import run

    with pytest.raises(OutputPathError, match="not a regular file"):
        check_writable("/dev/null", "table file")
    assert str(check_writable("/dev/null", stream=True)) == "/dev/null"
    fifo = tmp_path / "rows"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_text()))
    reader.start()
    counts = run(["4HPwATDgc/ABMA 31\n"], output=str(fifo))
    reader.join(timeout=30)
    assert counts["rows"] == 1 and '"best_play":"8/5 6/5"' in got[0]
    assert sorted(os.listdir(tmp_path)) == ["rows"]           # no run record beside a pipe
    with pytest.raises(BgfastError, match="regular output file"):
        run(["4HPwATDgc/ABMA 31\n"], output=str(fifo), resume=True)


def test_read_input_reads_text_bytes_or_a_bounded_prefix_and_names_what_fails(tmp_path):
    p = tmp_path / "in.txt"
    p.write_bytes(b"abc\xffdef")
    assert read_input(p, InvalidRecordError) == "abc\ufffddef"
    assert read_input(p, InvalidRecordError, binary=True) == b"abc\xffdef"
    assert read_input(p, InvalidRecordError, limit=2) == "abc"          # limit + 1
    assert read_input(p, InvalidRecordError, limit=2, binary=True) == b"abc"
    for bad, why in ((tmp_path / "missing", "No such file"), (tmp_path, "Is a directory")):
        with pytest.raises(InvalidRecordError, match=f"cannot read {re.escape(str(bad))}: {why}"):
            read_input(bad, InvalidRecordError)
