"""Match equity tables (MET): the chance to win a match from a score.

Two published tables ship with bgfast, as CSV files under
``bgfast/data/met/`` with their copyright notices:

* ``Kazaross-XG2`` (the default), and
* ``Rockwell-Kazaross``.

Each table has a pre-Crawford part, ``pre[i-1, j-1]`` = match winning chance
(MWC) of a player who needs ``i`` points against one who needs ``j``
(row/column 1 is the Crawford game), and a post-Crawford part,
``post[j-1]`` = MWC of the trailer who needs ``j`` points against a leader
who needs 1, in a post-Crawford game.

:func:`compare` reports how far two tables are apart, cell by cell.
:func:`bgfast.metgen.generate` computes a table from stated assumptions
(gammon rate, post-Crawford free-drop values, cube efficiency and method) with
the cube model, so tables can be regenerated and extended, for example to
64-away.

All scores here are *away* scores: the points a player still needs.
"""
from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import numpy as np

from ._files import atomic_write, check_writable
from .errors import DatabaseError, InvalidScoreError, MissingTableError, OutputPathError

__all__ = [
    "InvalidScoreError",
    "MatchEquityTable",
    "MatchScore",
    "TABLE_NAMES",
    "DEFAULT_TABLE",
    "get_table",
    "load_csv",
    "compare",
]

DATA_DIR = Path(__file__).resolve().parent / "data" / "met"

#: The tables shipped with bgfast (file stems under ``bgfast/data/met``).
TABLE_NAMES = ("Kazaross-XG2", "Rockwell-Kazaross")
DEFAULT_TABLE = "Kazaross-XG2"
#: How far from 1 the MWCs of i-away against j-away and of j-away against
#: i-away may add up in a table: tables printed to a tenth of a percent
#: round each by up to 0.0005, the two by up to 0.001.
SUM_TOLERANCE = 1.5e-3


# ---------------------------------------------------------------------------
# match scores
# ---------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class MatchScore:
    """A match score seen from the player on roll ("me").

    ``length`` is the match length, ``score_me`` / ``score_opp`` the points
    each side already has, ``crawford`` says that this game is the Crawford
    game.  A score where one side needs 1 point and ``crawford`` is false is
    post-Crawford.
    """

    length: int
    score_me: int
    score_opp: int
    crawford: bool = False

    def __post_init__(self):
        for name in ("length", "score_me", "score_opp"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
                raise InvalidScoreError(f"{name} must be an integer, not {value!r}")
        if self.length < 1:
            raise InvalidScoreError(f"match length must be at least 1, not {self.length}")
        for who, s in (("my", self.score_me), ("the opponent's", self.score_opp)):
            if s < 0:
                raise InvalidScoreError(f"{who} score {s} is negative")
            if s >= self.length:
                raise InvalidScoreError(
                    f"{who} score {s} is not below the match length {self.length}: "
                    f"the match would be over (away score {self.length - s})"
                )
        if self.crawford:
            if self.away_me == 1 and self.away_opp == 1:
                raise InvalidScoreError(
                    "both sides need 1 point: this cannot be the Crawford game"
                )
            if self.away_me != 1 and self.away_opp != 1:
                raise InvalidScoreError(
                    f"score {self.score_me}-{self.score_opp} to {self.length} cannot be "
                    "the Crawford game: neither side needs exactly 1 point"
                )

    @classmethod
    def from_away(cls, away_me: int, away_opp: int, *, crawford: bool = False,
                  length: int | None = None) -> "MatchScore":
        """Build from away scores (``length`` defaults to the larger one)."""
        if away_me < 1 or away_opp < 1:
            raise InvalidScoreError(f"away scores must be at least 1, not {away_me}, {away_opp}")
        n = max(away_me, away_opp) if length is None else length
        if away_me > n or away_opp > n:
            raise InvalidScoreError(
                f"away score {max(away_me, away_opp)} is above the match length {n}"
            )
        return cls(n, n - away_me, n - away_opp, crawford)

    @classmethod
    def parse(cls, score: str, length: int, *, crawford: bool = False) -> "MatchScore":
        """Parse ``"A-B"`` (points already won, mine first)."""
        parts = score.replace(":", "-").split("-")
        if len(parts) != 2 or not all(p.strip().isdigit() for p in parts):
            raise InvalidScoreError(f"cannot parse score {score!r}; expected A-B such as 2-3")
        return cls(length, int(parts[0]), int(parts[1]), crawford)

    @property
    def away_me(self) -> int:
        return self.length - self.score_me

    @property
    def away_opp(self) -> int:
        return self.length - self.score_opp

    @property
    def post_crawford(self) -> bool:
        """True when one side needs 1 point and this is not the Crawford game."""
        return (self.away_me == 1 or self.away_opp == 1) and not self.crawford

    def swap(self) -> "MatchScore":
        return MatchScore(self.length, self.score_opp, self.score_me, self.crawford)


# ---------------------------------------------------------------------------
# tables
# ---------------------------------------------------------------------------

class MatchEquityTable:
    """A match equity table: pre-Crawford square table and post-Crawford row.

    ``pre`` is ``float64[n, n]`` with ``pre[i-1, j-1]`` = MWC of the side
    ``i``-away against ``j``-away (row 1 / column 1: the Crawford game);
    ``post`` is ``float64[n]`` with ``post[j-1]`` = MWC of the trailer
    ``j``-away against the leader 1-away after the Crawford game.
    """

    def __init__(self, name: str, pre, post, *, notice: str = "", description: str = ""):
        pre = np.array(pre, dtype=np.float64)
        post = np.array(post, dtype=np.float64)
        if pre.ndim != 2 or pre.shape[0] != pre.shape[1] or pre.shape[0] < 1:
            raise DatabaseError(f"table {name!r}: the pre-Crawford table must be square, not {pre.shape}")
        if post.ndim != 1 or post.shape[0] < pre.shape[0]:
            raise DatabaseError(
                f"table {name!r}: the post-Crawford row has {post.shape} entries; "
                f"need at least {pre.shape[0]}"
            )
        if not (np.all(np.isfinite(pre)) and np.all((pre >= 0) & (pre <= 1))):
            raise DatabaseError(f"table {name!r}: pre-Crawford values must lie in [0, 1]")
        if not (np.all(np.isfinite(post)) and np.all((post >= 0) & (post <= 1))):
            raise DatabaseError(f"table {name!r}: post-Crawford values must lie in [0, 1]")
        gap = np.abs(pre + pre.T - 1.0)
        if gap.max() > SUM_TOLERANCE:
            i, j = np.unravel_index(int(np.argmax(gap)), gap.shape)
            raise DatabaseError(
                f"table {name!r}: the MWC of {i + 1}-away against {j + 1}-away and of "
                f"{j + 1}-away against {i + 1}-away add up to {pre[i, j] + pre[j, i]:.6f}, not 1")
        pre.flags.writeable = False
        post.flags.writeable = False
        self.name = name
        self.pre = pre
        self.post = post
        self.notice = notice
        self.description = description

    @property
    def max_away(self) -> int:
        """The largest away score the table covers."""
        return self.pre.shape[0]

    def __repr__(self):
        return f"<MatchEquityTable {self.name!r} up to {self.max_away}-away>"

    def _check(self, a: int, b: int) -> None:
        if a > self.max_away or b > self.max_away:
            raise MissingTableError(
                f"table {self.name!r} covers scores up to {self.max_away}-away, not "
                f"{a}-away {b}-away; generate a longer table with bgfast.metgen.generate"
            )

    def mwc(self, away_me: int, away_opp: int, *, crawford: bool = False,
            post_crawford: bool = False) -> float:
        """Match winning chance of the side ``away_me``-away against ``away_opp``-away.

        An away score of 0 or less means that side has won.  When exactly one
        side is 1-away the game is the Crawford game unless ``post_crawford``
        is set.  ``crawford`` is accepted for clarity (it is the default
        reading of such a score); it is an error at a score that cannot be the
        Crawford game.
        """
        a, b = int(away_me), int(away_opp)
        if crawford and post_crawford:
            raise InvalidScoreError("a game cannot be both the Crawford game and post-Crawford")
        if a <= 0 and b <= 0:
            raise InvalidScoreError("both sides cannot have won the match")
        if a <= 0:
            return 1.0
        if b <= 0:
            return 0.0
        if (crawford or post_crawford) and (a == 1) == (b == 1):
            what = "the Crawford game" if crawford else "post-Crawford"
            raise InvalidScoreError(f"{a}-away {b}-away cannot be {what}: exactly one side must be 1-away")
        self._check(a, b)
        if post_crawford:
            return 1.0 - float(self.post[b - 1]) if a == 1 else float(self.post[a - 1])
        return float(self.pre[a - 1, b - 1])

    def mwc_score(self, score: MatchScore) -> float:
        """MWC of the player on roll at a :class:`MatchScore`."""
        return self.mwc(score.away_me, score.away_opp, post_crawford=score.post_crawford)

    def truncated(self, length: int) -> "MatchEquityTable":
        """The part of the table up to ``length``-away."""
        if not 1 <= length <= self.max_away:
            raise MissingTableError(f"table {self.name!r} covers 1..{self.max_away}-away, not {length}")
        return MatchEquityTable(self.name, self.pre[:length, :length], self.post[:length],
                                notice=self.notice, description=self.description)

    def to_dict(self, length: int | None = None) -> dict:
        t = self if length is None else self.truncated(length)
        return {
            "name": t.name,
            "description": t.description,
            "max_away": t.max_away,
            "pre_crawford": [[round(float(v), 6) for v in row] for row in t.pre],
            "post_crawford": [round(float(v), 6) for v in t.post[: t.max_away]],
            "notice": t.notice,
        }

    def format(self, length: int | None = None, *, percent: bool = True) -> str:
        """A readable text table (rows: my away score, columns: the opponent's)."""
        t = self if length is None else self.truncated(length)
        n = t.max_away
        scale, fmt, width = (100.0, "{:.1f}", 6) if percent else (1.0, "{:.4f}", 7)
        lines = [f"{t.name}: match winning chance{' (%)' if percent else ''} of the row player"]
        lines.append("rows: my away score; columns: the opponent's; 1-away row/column = Crawford game")
        lines.append(" " * 4 + "".join(f"{j:>{width}}" for j in range(1, n + 1)))
        for i in range(1, n + 1):
            cells = "".join(f"{fmt.format(scale * t.pre[i - 1, j - 1]):>{width}}" for j in range(1, n + 1))
            lines.append(f"{i:>3} {cells}")
        lines.append("")
        lines.append("post-Crawford: trailer's MWC against a leader 1-away")
        lines.append(" " * 4 + "".join(f"{j:>{width}}" for j in range(1, n + 1)))
        lines.append(" " * 4 + "".join(f"{fmt.format(scale * t.post[j - 1]):>{width}}" for j in range(1, n + 1)))
        return "\n".join(lines)

    def csv_paths(self, directory) -> tuple[Path, Path]:
        """The two files :meth:`write_csv` writes into ``directory``, which
        is made if missing and checked writable (an
        :class:`~bgfast.errors.OutputPathError` if it is not)."""
        if not str(directory).strip():
            raise OutputPathError("no directory given for the match equity table")
        directory = Path(directory)
        try:
            directory.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise OutputPathError(f"cannot write the match equity table to {str(directory)!r}: "
                                  f"{exc.strerror or exc}") from None
        paths = (directory / f"{self.name}.pre-crawford.csv",
                 directory / f"{self.name}.post-crawford.csv")
        for p in paths:
            check_writable(p, "match equity table")
        return paths

    def write_csv(self, directory, *, notice: str | None = None) -> tuple[Path, Path]:
        """Write ``NAME.pre-crawford.csv`` and ``NAME.post-crawford.csv`` into
        ``directory`` (made if missing), each atomically; a directory that
        cannot be written is an :class:`~bgfast.errors.OutputPathError`
        before either file is."""
        pre_path, post_path = self.csv_paths(directory)
        text = self.notice if notice is None else notice
        header = "".join(f"# {line}".rstrip() + "\n" for line in text.splitlines()) if text else ""
        atomic_write(
            pre_path,
            header
            + "# Pre-Crawford match winning chances: row i, column j (1-based) = MWC of the\n"
            + "# player who is i-away against a player who is j-away. Row 1 is the Crawford game.\n"
            + "".join(",".join(repr(round(float(v), 6)) for v in row) + "\n" for row in self.pre)
        )
        atomic_write(
            post_path,
            header
            + "# Post-Crawford: entry j (1-based) = MWC of the trailer who is j-away\n"
            + "# against the leader at 1-away (post-Crawford game).\n"
            + ",".join(repr(round(float(v), 6)) for v in self.post) + "\n"
        )
        return pre_path, post_path


def _read_csv(path: Path) -> tuple[str, list[list[float]]]:
    notice_lines, rows = [], []
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise DatabaseError(f"cannot read match equity table {path}: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise DatabaseError(f"{path} is not a match equity table: it is not UTF-8 text") from None
    in_header = True
    for lineno, line in enumerate(text.splitlines(), 1):
        s = line.strip()
        if not s:
            continue
        if s.startswith("#"):
            body = s[1:].strip()
            if in_header and not rows and not body.startswith(("Pre-Crawford", "Post-Crawford",
                                                               "player who is", "against the leader")):
                notice_lines.append(s[1:].removeprefix(" "))
            continue
        in_header = False
        try:
            rows.append([float(v) for v in s.split(",")])
        except ValueError:
            raise DatabaseError(f"{path}:{lineno}: not a row of numbers: {s[:40]!r}") from None
    while notice_lines and not notice_lines[-1].strip():
        notice_lines.pop()
    return "\n".join(notice_lines), rows


def load_csv(pre_path, post_path, name: str | None = None) -> MatchEquityTable:
    """Load a table from a pre-Crawford and a post-Crawford CSV file.

    Lines starting with ``#`` are comments; the leading comment block is kept
    as the table's copyright ``notice``.
    """
    pre_path, post_path = Path(pre_path), Path(post_path)
    notice, pre = _read_csv(pre_path)
    _, post_rows = _read_csv(post_path)
    if not pre or any(len(r) != len(pre) for r in pre):
        raise DatabaseError(f"{pre_path}: the pre-Crawford table must be square")
    post = [v for r in post_rows for v in r]
    if name is None:
        name = pre_path.name.split(".")[0]
    return MatchEquityTable(name, pre, post, notice=notice,
                            description=notice.splitlines()[0] if notice else "")


_CACHE: dict[str, MatchEquityTable] = {}


def get_table(name: str | MatchEquityTable | None = None) -> MatchEquityTable:
    """One of the shipped tables by name (case-insensitive; default Kazaross-XG2),
    or a table written by :meth:`MatchEquityTable.write_csv`, given as the path
    prefix ``DIR/NAME`` (or either CSV file)."""
    if isinstance(name, MatchEquityTable):
        return name
    if name is None:
        name = DEFAULT_TABLE
    key = {n.lower(): n for n in TABLE_NAMES}.get(str(name).strip().lower())
    if key is None:
        prefix = str(name).removesuffix(".csv").removesuffix(".pre-crawford").removesuffix(".post-crawford")
        pre, post = Path(prefix + ".pre-crawford.csv"), Path(prefix + ".post-crawford.csv")
        if pre.is_file() and post.is_file():
            return load_csv(pre, post)
        raise MissingTableError(
            f"unknown match equity table {name!r}; available: {', '.join(TABLE_NAMES)}, "
            "or a path PREFIX with PREFIX.pre-crawford.csv and PREFIX.post-crawford.csv"
        )
    if key not in _CACHE:
        _CACHE[key] = load_csv(DATA_DIR / f"{key}.pre-crawford.csv", DATA_DIR / f"{key}.post-crawford.csv", key)
    return _CACHE[key]


def compare(table: MatchEquityTable, reference: MatchEquityTable | str | None = None,
            length: int | None = None) -> dict:
    """Cell-by-cell differences ``table - reference`` (MWC, as fractions).

    Returns a dict with ``pre_diff`` / ``post_diff`` arrays and summary
    numbers: ``max_abs``, ``mean_abs``, ``rms`` over the pre-Crawford cells
    (the diagonal, always 1/2, included) and ``post_max_abs``.
    """
    ref = get_table(reference)
    n = min(table.max_away, ref.max_away) if length is None else length
    if n > table.max_away or n > ref.max_away:
        raise MissingTableError(f"both tables must cover {n}-away")
    d = table.pre[:n, :n] - ref.pre[:n, :n]
    p = table.post[:n] - ref.post[:n]
    i, j = np.unravel_index(int(np.argmax(np.abs(d))), d.shape)
    return {
        "reference": ref.name,
        "length": n,
        "pre_diff": d,
        "post_diff": p,
        "max_abs": float(np.abs(d).max()),
        "argmax": (int(i) + 1, int(j) + 1),
        "mean_abs": float(np.abs(d).mean()),
        "rms": float(math.sqrt(float((d * d).mean()))),
        "post_max_abs": float(np.abs(p).max()),
    }
