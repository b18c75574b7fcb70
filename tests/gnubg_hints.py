"""gnubg's checker-play hints at a cube and score, read from Debian's
``gnubg -t`` (one process for many cases): the driver of the tests and of
``bench/gnubg_score_plays.py``."""
import re
import subprocess

from bgfast.formats import CubeOwner, MatchState, match_play
from bgfast.movegen import legal_plays
from bgfast.position import Position


def gnubg_hints(binary, cases, *, timeout: float = 600.0):
    """gnubg's 0-ply checker-play hint for each (board, dice, context): its
    listed plays in its order, each as (resulting Position, the mover's 5
    probabilities, gnubg's equity)."""
    lines = ["set output digits 5", "set output mwc off", "set evaluation chequer eval plies 0"]
    for n, (board, dice, ctx) in enumerate(cases):
        s = ctx.score
        st = MatchState(match_length=0 if s is None else s.length,
                        score=(0, 0) if s is None else (s.score_opp, s.score_me),
                        cube_value=ctx.cube, player_on_roll=1, crawford=ctx.crawford,
                        cube_owner={"centre": CubeOwner.CENTRED, "me": CubeOwner.PLAYER1,
                                    "opp": CubeOwner.PLAYER0}[ctx.owner.value],
                        dice=tuple(int(d) for d in dice))
        lines += [f"set matchid {st.match_id()}", f"set board {Position(board).position_id()}",
                  "hint", f"bgfastcase{n}"]      # an unknown command: gnubg names it
    out = subprocess.run([binary, "-t", "-q"], input="\n".join(lines) + "\n", stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True, timeout=timeout).stdout
    num = r"(-?\d\.\d+)"
    hints = []
    start = 0
    for n, (board, dice, _) in enumerate(cases):
        end = out.find(f"bgfastcase{n}'", start)       # no copies of the rest: output is large
        head, start = out[start:end if end >= 0 else len(out)], (end if end >= 0 else len(out))
        plays = legal_plays(board, *dice)
        rows = []
        for m in re.finditer(r"\n\s+\d+\. Cubeful 0-ply\s+(.+?)\s+Eq\.:\s+([+-]\d\.\d+).*\n\s+"
                             + " ".join([num] * 3) + " - " + " ".join([num] * 3), head):
            p = [max(0.0, float(m.group(k))) for k in (3, 4, 5, 7, 8)]
            rows.append((match_play(board, m.group(1), plays).position, p, float(m.group(2))))
        hints.append(rows)
    return hints
