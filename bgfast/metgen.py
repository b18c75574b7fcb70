"""Match equity tables computed from the cube model.

:func:`generate` builds a table (:class:`bgfast.met.MatchEquityTable`) from
stated assumptions -- gammon rates, post-Crawford free-drop values, cube
efficiency and method -- so tables can be regenerated and extended, for
example to 64-away.  It sits above :mod:`bgfast.met` (the tables) and
:mod:`bgfast.cube` (whose Janowski model values the pre-Crawford scores).
"""
from __future__ import annotations

from typing import Mapping

import numpy as np

from . import cube as _cube
from .errors import BgfastError, InvalidScoreError, as_whole, check_number, check_whole
from .met import MatchEquityTable, MatchScore

__all__ = ["generate", "DEFAULT_FREE_DROPS", "MAX_LENGTH"]

#: The longest table :func:`generate` computes (away scores): the longest
#: match ``bgfast play`` plays (:data:`bgfast.savegame.MAX_LENGTH`), beyond
#: gnubg's 64.  The work grows with the square of the length.
MAX_LENGTH = 99


#: Post-Crawford free-drop values read off Kazaross-XG2: 0.5 - post[2-away]
#: and the 4-away residual of the same recursion.
DEFAULT_FREE_DROPS: Mapping[int, float] = {2: 0.01197, 4: 0.0044}


class _PartialTable(MatchEquityTable):
    """A table being filled in by :func:`generate` (no range checks)."""

    def __init__(self, name, pre, post):
        self.name, self.pre, self.post = name, pre, post
        self.notice = self.description = ""

    def _check(self, a, b):
        pass


def _post_crawford_row(n: int, gammon_rate: float, win_rate: float,
                       free_drops: Mapping[int, float]) -> np.ndarray:
    """Trailer's MWC j-away vs a 1-away leader after the Crawford game.

    The trailer doubles at once and the leader takes (the cube is dead for the
    leader), so the game is played for 2 points, 4 with a gammon:
    ``post(j) = w * ((1-g) post(j-2) + g post(j-4)) - fd(j)`` with
    ``post(k <= 0) = 1`` and ``post(1) = 1/2``; ``fd(j)`` is the leader's
    gain from the free drop at even away scores (2- and 4-away).
    """
    post = np.zeros(n + 1)

    def val(k):
        return 1.0 if k <= 0 else post[k]

    for j in range(1, n + 1):
        if j == 1:
            post[j] = 0.5
            continue
        post[j] = win_rate * ((1 - gammon_rate) * val(j - 2) + gammon_rate * val(j - 4))
        drop = float(free_drops.get(j, 0.0))
        if drop > post[j]:
            raise BgfastError(f"the free drop at {j}-away is worth {drop}, more than the "
                              f"trailer's MWC there ({post[j]:.5f})")
        post[j] -= drop
    return post[1:]


def _free_drops(free_drops) -> dict[int, float]:
    """``free_drops`` checked: even away scores >= 2 to finite values >= 0."""
    if not isinstance(free_drops, Mapping):
        raise BgfastError("free_drops must map away scores to values, such as {2: 0.012}, "
                          f"not {type(free_drops).__name__}")
    out = {}
    for k, v in free_drops.items():
        away = as_whole(k)
        if away is None or away < 2 or away % 2:
            raise BgfastError(f"no free drop at {k!r}-away: free drops are at the trailer's "
                              "even away scores 2, 4, 6, ...")
        out[away] = check_number(f"the free drop value at {away}-away", v, 0)
    return out


def generate(length: int = 25, *, gammon_rate: float | tuple[float, float] = 0.30,
             win_rate: float = 0.5, free_drops: Mapping[int, float] | None = None,
             method: str = "janowski", efficiency: float = 0.68,
             name: str | None = None) -> MatchEquityTable:
    """Compute a match equity table up to ``length``-away from stated assumptions.

    Assumptions: every game starts even (``win_rate`` only enters the
    post-Crawford recursion, where the trailer's chance in a game is
    ``win_rate``); a win is a gammon with probability ``gammon_rate``, one
    number for both sides or a pair ``(leader, trailer)``; there are no
    backgammons; after the Crawford game the trailer doubles at once, and
    the leader's free drop at 2-away and 4-away is worth ``free_drops``
    (see :func:`_post_crawford_row`): a mapping of the trailer's even away
    scores (2, 4, ...) to values >= 0, each at most the trailer's MWC there.
    ``length`` is 1..:data:`MAX_LENGTH` (else :class:`InvalidScoreError`);
    other bad arguments raise :class:`BgfastError`.

    The Crawford game has no cube, so the leader 1-away against ``j``-away
    wins ``1 - w((1-g) post(j-1) + g post(j-2))`` (g: the trailer's rate).

    Pre-Crawford scores use the cube model of :mod:`bgfast.cube` at the start
    of a game (win chance 1/2, centred 1-cube):

    * ``method="zadeh"``: a fully live cube (Zadeh 1977's continuous model,
      without his delta corrections for market losers): doubles and takes
      happen exactly at the take points, which come from the table itself
      recursively (the "cube-life" method).
    * ``method="janowski"``: Janowski's interpolation with cube efficiency
      ``efficiency``: ``MWC = x * live + (1-x) * dead``, where dead is the
      cubeless MWC.

    Scores are filled in order of increasing total away so each cell only
    uses cells already known.
    """
    length = check_whole("table length", length, 1, MAX_LENGTH, error=InvalidScoreError)
    if isinstance(gammon_rate, (tuple, list)):
        if len(gammon_rate) != 2:
            raise BgfastError("gammon_rate must be one number or a pair (leader, trailer)")
        g_lead, g_trail = (check_number("gammon rate", v, 0, 1, hi_open=True)
                           for v in gammon_rate)
    else:
        g_lead = g_trail = check_number("gammon rate", gammon_rate, 0, 1, hi_open=True)
    win_rate = check_number("win rate", win_rate, 0, 1, lo_open=True, hi_open=True)
    if not isinstance(method, str) or method.lower() not in ("zadeh", "janowski"):
        raise BgfastError(f"unknown method {method!r}; use 'zadeh' or 'janowski'")
    method = method.lower()
    x = 1.0 if method == "zadeh" else check_number("cube efficiency", efficiency, 0, 1)
    if name is not None and not isinstance(name, str):
        raise BgfastError(f"name must be a string or None, not {type(name).__name__}")
    fd = DEFAULT_FREE_DROPS if free_drops is None else _free_drops(free_drops)

    n = int(length)
    post = _post_crawford_row(n, g_trail, win_rate, fd)
    pre = np.full((n, n), np.nan)
    pre[0, 0] = 0.5

    def post_val(k):
        return 1.0 if k <= 0 else post[k - 1]

    for j in range(2, n + 1):  # Crawford game, leader 1-away vs j-away
        trailer = 0.5 * ((1 - g_trail) * post_val(j - 1) + g_trail * post_val(j - 2))
        pre[0, j - 1] = 1.0 - trailer
        pre[j - 1, 0] = trailer
    table = _PartialTable(name or f"generated-{method}", pre, post)
    for total in range(4, 2 * n + 1):
        for a in range(max(2, total - n), min(n, total - 2) + 1):
            b = total - a
            if b < a:
                continue
            # "me" is the leader (a < b) or level: my gammons at the leader's rate
            g_me, g_opp = (g_lead, g_trail) if a < b else ((g_lead + g_trail) / 2,) * 2
            probs = np.array([0.5, 0.5 * g_me, 0.0, 0.5 * g_opp, 0.0])
            score = MatchScore.from_away(a, b, length=n)
            m = _cube.match_cubeful_mwc(probs, score, table, cube=1, owner="centre", efficiency=x)
            pre[a - 1, b - 1] = m
            pre[b - 1, a - 1] = 1.0 - m
    rate = gammon_rate if g_lead != g_trail else g_lead
    desc = (f"generated by bgfast.metgen.generate(method={method!r}, gammon_rate={rate}, "
            f"win_rate={win_rate}, free_drops={dict(fd)}"
            + (f", efficiency={x}" if method == "janowski" else "") + ")")
    return MatchEquityTable(name or f"generated-{method}", pre, post, notice=desc, description=desc)
