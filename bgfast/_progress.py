"""Progress bars, one rule for every command: a tqdm bar on stderr when
stderr is a terminal, shown once the job has run :data:`DELAY` seconds, and
nothing at all when stderr is not a terminal (a pipe, a file, a test
runner), so that redirected stderr holds only messages.  ``BGFAST_PROGRESS=1``
in the environment asks for the bar on any stderr (a log file of a long
run; tqdm's own ``TQDM_MININTERVAL`` and the like apply).
"""
from __future__ import annotations

import os
import sys

__all__ = ["Progress", "DELAY", "on_terminal"]

#: Seconds a job runs before its bar appears (shorter jobs show none).
DELAY = 0.5


def on_terminal() -> bool:
    """Whether stderr is a terminal (the one place that decides)."""
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


class Progress:
    """One progress bar: ``update(n)`` adds ``n`` units; calling it as
    ``progress(done, total)`` (the callback form of the builds, duels and
    rollouts) sets the count.  ``quiet``: no bar, even on a terminal;
    ``resumes``: the first ``progress(done, total)`` says where a resumed
    run starts (the rate and the time left count the work after it).  A
    context manager; :meth:`close` ends the bar's line."""

    def __init__(self, total: int | None = None, *, unit: str = "it", desc: str | None = None,
                 initial: int = 0, quiet: bool = False, unit_scale: bool = False,
                 resumes: bool = False):
        self.enabled = not quiet and (on_terminal() or os.environ.get("BGFAST_PROGRESS") == "1")
        self._bar = None
        self._start = resumes       # the first report is where a resumed run stands
        if self.enabled:
            from tqdm import tqdm

            try:                        # a terminal that gives no size: 80 x 24
                size = os.get_terminal_size(sys.stderr.fileno())
                sized = size.columns > 0 and size.lines > 0
            except (AttributeError, OSError, ValueError):
                sized = False
            self._bar = tqdm(total=total, unit=unit, desc=desc, initial=initial,
                             file=sys.stderr, dynamic_ncols=sized, ncols=None if sized else 80,
                             nrows=None if sized else 24, delay=DELAY, unit_scale=unit_scale,
                             leave=True)

    def update(self, n: int = 1) -> None:
        if self._bar is not None and n:
            self._bar.update(n)

    def __call__(self, done: int, total: int | None = None) -> None:
        bar = self._bar
        if bar is None:
            return
        if total is not None and total != bar.total:
            bar.total = total
        if self._start:             # work done before: not in the rate
            self._start = False
            bar.n = bar.last_print_n = bar.initial = done
        elif done != bar.n:
            bar.update(done - bar.n)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None

    def __enter__(self) -> "Progress":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
