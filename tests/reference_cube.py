"""A plain-Python reading of the Janowski match model of ``bgfast.cube``
(one row, Python floats, recursion as the formulas read), for checking the
kernel ``bgfast._cube`` row by row."""
PRE, POST, CRAWFORD = 0, 1, 2
CENTRE, ME, OPP = 0, 1, 2


def ratio(num, den):
    if den <= 1e-15:
        return 1.0 if num > 0 else 0.0
    v = num / den
    return 1.0 if v > 1.0 else (0.0 if v < 0.0 else v)


def interp(p, points):
    points = sorted(points)             # by x, then y (the kernel's stable sort)
    if p <= points[0][0]:
        return points[0][1]
    for (x0, y0), (x1, y1) in zip(points, points[1:]):
        if p <= x1:
            return y0 if x1 <= x0 else y0 + (y1 - y0) * (p - x0) / (x1 - x0)
    return points[-1][1]


class Row:
    def __init__(self, p, a, b, state, cube, table):
        self.p, self.a, self.b, self.state, self.cube, self.t = p, a, b, state, cube, table
        w, wg, wb, lg, lb = p
        self.win = (w - wg, wg - wb, wb)
        self.lose = (1 - w - lg, lg - lb, lb)

    def mwc(self, a, b):
        if a <= 0:
            return 1.0
        if b <= 0:
            return 0.0
        if a == 1 and b == 1:
            return 0.5
        post = (a == 1 or b == 1) and self.state != PRE
        return self.t.mwc(a, b, post_crawford=post)

    def M(self, k, j, side):
        pts = k * (self.cube << j)
        return self.mwc(self.a - pts, self.b) if side == 0 else self.mwc(self.a, self.b - pts)

    def average(self, q, side, j):
        s = q[0] + q[1] + q[2]
        v = [self.M(k, j, side) for k in (1, 2, 3)]
        return v[0] if s <= 1e-12 else (q[0] * v[0] + q[1] * v[1] + q[2] * v[2]) / s

    def W(self, j):
        return self.average(self.win, 0, j)

    def L(self, j):
        return self.average(self.lose, 1, j)

    def dead(self, j):
        return (sum(q * self.M(k, j, 0) for q, k in zip(self.win, (1, 2, 3)))
                + sum(q * self.M(k, j, 1) for q, k in zip(self.lose, (1, 2, 3))))

    def can_me(self, j):
        return self.state != CRAWFORD and (self.cube << j) < self.a

    def can_opp(self, j):
        return self.state != CRAWFORD and (self.cube << j) < self.b

    def break_even(self, j, m):
        lo = self.L(j + 1)
        return ratio(m - lo, self.W(j + 1) - lo)

    def dead_cp(self, j):
        return self.break_even(j, self.M(1, j, 0))

    def cp(self, j):
        if not self.can_opp(j + 1):
            return self.dead_cp(j)
        tp2, lose2 = self.tp(j + 1), self.M(1, j + 1, 1)
        return tp2 + (1.0 - tp2) * ratio(self.M(1, j, 0) - lose2, self.W(j + 1) - lose2)

    def tp(self, j):
        pas = self.M(1, j, 1)
        if not self.can_me(j + 1):
            return self.break_even(j, pas)
        lo = self.L(j + 1)
        return self.cp(j + 1) * ratio(pas - lo, self.M(1, j + 1, 0) - lo)

    def live(self, j, owner):
        pts = [(0.0, self.L(j))]
        if owner != ME and self.can_opp(j):
            pts.append((self.tp(j), self.M(1, j, 1)))
        if owner != OPP and self.can_me(j):
            pts.append((self.cp(j), self.M(1, j, 0)))
        pts.append((1.0, self.W(j)))
        return interp(self.p[0], pts)

    def cubeful(self, j, owner, x):
        return x * self.live(j, owner) + (1.0 - x) * self.dead(j)
