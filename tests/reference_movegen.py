"""A slow, obviously-correct move generator, written straight from
docs/rules.md, to check the Cython kernel against.

Boards are lists ``[opp, me]`` of 25 counts in gnubg's layout (me on roll).
Returns the set of resulting boards as tuples, NOT swapped (me still row 1).
"""


def _all_home(me):
    return sum(me[6:25]) == 0


def _single_moves(opp, me, die):
    """Yield (new_opp, new_me) for every legal single move of one die."""
    sources = [24] if me[24] > 0 else [i for i in range(24) if me[i] > 0]
    for src in sources:
        dest = src - die
        if dest >= 0:
            if opp[23 - dest] >= 2:          # blocked point
                continue
            nm, no = list(me), list(opp)
            nm[src] -= 1
            nm[dest] += 1
            if no[23 - dest] == 1:           # hit a blot
                no[23 - dest] = 0
                no[24] += 1
            yield no, nm
        else:                                # bearing off
            if not _all_home(me):
                continue
            if dest < -1 and any(me[i] for i in range(src + 1, 6)):
                continue                     # a checker on a higher point must move
            nm = list(me)
            nm[src] -= 1
            yield list(opp), nm


def reference_plays(board, d1, d2):
    opp, me = list(board[0]), list(board[1])
    orders = [[d1] * 4] if d1 == d2 else [[d1, d2], [d2, d1]]
    found = {}                               # result -> (dice used, die of a 1-die play)

    def walk(o, m, dice, used, first_die):
        moved = False
        if dice:
            for no, nm in _single_moves(o, m, dice[0]):
                moved = True
                walk(no, nm, dice[1:], used + 1, first_die if used else dice[0])
        if not moved:
            key = (tuple(o), tuple(m))
            prev = found.get(key)
            if prev is None or prev[0] < used:
                found[key] = (used, first_die)

    for order in orders:
        walk(opp, me, order, 0, None)
    if not found:
        return set()
    best = max(u for u, _ in found.values())
    if best == 0:
        return set()
    keep = {k: v for k, v in found.items() if v[0] == best}
    if best == 1 and d1 != d2:
        high = max(d1, d2)
        if any(v[1] == high for v in keep.values()):
            keep = {k: v for k, v in keep.items() if v[1] == high}
    return set(keep)
