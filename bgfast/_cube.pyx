# cython: language_level=3
"""Private kernel of :mod:`bgfast.cube`: the Janowski live-cube model, one
row (position, score, cube) at a time, for money and match play.

Money (:func:`money_cubeful`): the cubeful equity per unit cube is
``x * live + (1 - x) * dead``, ``live`` the piecewise-linear line through
``(0, -L)``, the opponent's take point ``(tp, -1)`` (when he may double),
my cash point ``(cp, +1)`` (when I may) and ``(1, W)``, with ``W``/``L``
the average values of games won and lost.

Match (:func:`match_rows`): the same line in match winning chances.  At cube
level ``j`` (the cube at ``cube * 2**j``) the ends are the dead-cube MWCs of
games won (``W``) and lost (``L``) at that level; the take and cash points
come from the MWCs after a pass and the points one level up, recursively
while a side can still redouble.  Rows each have their own score
(``a``/``b`` away, pre-Crawford, post-Crawford or Crawford), cube and
owner.  The MWCs come from the table's pre- and post-Crawford arrays.

Every number is computed with the operations, in the order, that the
formulas in :mod:`bgfast.cube`'s docstrings give, in double precision.
"""
import numpy as np
cimport numpy as cnp
from libc.stdint cimport int32_t, int64_t, uint8_t
from libc.math cimport NAN, fabs, isfinite
from libc.string cimport memset

cnp.import_array()

cdef enum:
    PRE = 0
    POST = 1
    CRAWFORD = 2
    OWN_CENTRE = 0
    OWN_ME = 1
    OWN_OPP = 2
    MAX_POINTS = 4
    LEVELS = 16                  # cube levels whose MWCs a row remembers

# ---------------------------------------------------------------------------
# shared pieces
# ---------------------------------------------------------------------------

cdef inline double _clip01(double v) noexcept nogil:
    """min(max(v, 0), 1) with Python's rule for ties (NaN passes through)."""
    if 0.0 > v:
        v = 0.0
    if 1.0 < v:
        v = 1.0
    return v


cdef inline double _ratio(double num, double den) noexcept nogil:
    """num / den kept in [0, 1]; 1 or 0 (by the sign of num) when den <= 1e-15."""
    if den <= 1e-15:
        return 1.0 if num > 0 else 0.0
    return _clip01(num / den)


cdef double _interp(double p, double* xs, double* ys, int n) noexcept nogil:
    """The piecewise-linear line through the n points (xs, ys) at p, clamped
    at the ends; the points are put in order of x, then y, first (a stable
    sort) when they are not."""
    cdef int i, k
    cdef double tx, ty, out, seg, x0, x1, y0, y1
    cdef bint done, in_order = True
    for i in range(1, n):
        if not (xs[i] > xs[i - 1] or (xs[i] == xs[i - 1] and ys[i] >= ys[i - 1])):
            in_order = False
    if not in_order:
        for i in range(1, n):                   # insertion sort: stable
            tx = xs[i]
            ty = ys[i]
            k = i - 1
            while k >= 0 and (xs[k] > tx or (xs[k] == tx and ys[k] > ty)):
                xs[k + 1] = xs[k]
                ys[k + 1] = ys[k]
                k -= 1
            xs[k + 1] = tx
            ys[k + 1] = ty
    out = ys[n - 1]
    done = p <= xs[0]
    if done:
        out = ys[0]
    for i in range(n - 1):
        if done:
            break
        x0 = xs[i]
        x1 = xs[i + 1]
        y0 = ys[i]
        y1 = ys[i + 1]
        if p <= x1:
            if x1 <= x0:
                seg = y0
            else:
                seg = y0 + (y1 - y0) * (p - x0) / (x1 - x0)
            out = seg
            done = True
    return out


# ---------------------------------------------------------------------------
# money
# ---------------------------------------------------------------------------

cdef inline void _averages(const double* p, double* W, double* L) noexcept nogil:
    """Average value of games won (W) and lost (L), money points per cube."""
    W[0] = 1.0 + (p[1] + p[2]) / p[0] if p[0] > 1e-12 else 1.0
    L[0] = 1.0 + (p[3] + p[4]) / (1.0 - p[0]) if p[0] < 1.0 - 1e-12 else 1.0


cdef inline double _cubeless(const double* p) noexcept nogil:
    return 2 * p[0] - 1 + p[1] - p[3] + p[2] - p[4]


cdef double _money(const double* p, int owner, double x, bint jacoby) noexcept nogil:
    cdef double W, L, tp, cp, dead
    cdef double xs[MAX_POINTS]
    cdef double ys[MAX_POINTS]
    cdef int n = 0
    _averages(p, &W, &L)
    tp = (L - 0.5) / (W + L + 0.5)
    cp = (L + 1.0) / (W + L + 0.5)
    if jacoby and owner == OWN_CENTRE:
        # gammons count only once the cube is turned: the ends of the live
        # line and the dead equity lose them, the take and cash points keep them
        W = 1.0
        L = 1.0
        dead = 2.0 * p[0] - 1.0
    else:
        dead = _cubeless(p)
    xs[n] = 0.0
    ys[n] = -L
    n += 1
    if owner != OWN_ME:
        xs[n] = tp
        ys[n] = -1.0
        n += 1
    if owner != OWN_OPP:
        xs[n] = cp
        ys[n] = 1.0
        n += 1
    xs[n] = 1.0
    ys[n] = W
    n += 1
    return x * _interp(p[0], xs, ys, n) + (1.0 - x) * dead


def money_cubeful(const double[:, ::1] p, int owner, const double[::1] x, bint jacoby):
    """Janowski cubeful money equities per unit cube, float64[n], of checked
    probabilities p[n, 5] with the cube at ``owner`` (0 centre, 1 me, 2 the
    opponent) and efficiencies x[n]."""
    cdef Py_ssize_t n = p.shape[0], i
    out = np.empty(n, dtype=np.float64)
    cdef double[::1] o = out
    with nogil:
        for i in range(n):
            o[i] = _money(&p[i, 0], owner, x[i], jacoby)
    return out


# ---------------------------------------------------------------------------
# match
# ---------------------------------------------------------------------------

cdef struct Row:
    const double* p
    double win[3]                # single, gammon, backgammon wins
    double lose[3]
    int64_t a, b, cube
    int state
    const double* pre            # [N, N]: pre[a - 1, b - 1]
    const double* post           # [N]
    int64_t N
    # remembered per cube level j: the MWCs after k = 1, 2, 3 cubes won by
    # me (side 0) or the opponent (side 1), and W and L
    int have[LEVELS]
    double mv[LEVELS][2][3]
    double wv[LEVELS]
    double lv[LEVELS]


cdef double _mwc_after(const Row* r, int64_t a, int64_t b) noexcept nogil:
    """My MWC at a-away b-away (after this game's points; <= 0: that side
    has won), the game having been played at the row's state: a side
    reaching 1-away from a pre-Crawford score starts the Crawford game."""
    cdef bint post
    if a <= 0:
        return 1.0
    if b <= 0:
        return 0.0
    if a == 1 and b == 1:
        return 0.5
    post = (a == 1 or b == 1) and r.state != PRE
    if post:
        return 1.0 - r.post[b - 1] if a == 1 else r.post[a - 1]
    return r.pre[(a - 1) * r.N + (b - 1)]


cdef inline double _M_direct(const Row* r, int k, int j, int side) noexcept nogil:
    cdef int64_t pts = k * (r.cube << j)
    if side == 0:
        return _mwc_after(r, r.a - pts, r.b)
    return _mwc_after(r, r.a, r.b - pts)


cdef double _average(const double* q, double v1, double v2, double v3) noexcept nogil:
    cdef double s = q[0] + q[1] + q[2]
    if s <= 1e-12:
        return v1
    return (q[0] * v1 + q[1] * v2 + q[2] * v3) / s


cdef void _level(Row* r, int j) noexcept nogil:
    """Work out and remember level j's MWCs, W and L."""
    cdef int k, side
    for side in range(2):
        for k in range(3):
            r.mv[j][side][k] = _M_direct(r, k + 1, j, side)
    r.wv[j] = _average(r.win, r.mv[j][0][0], r.mv[j][0][1], r.mv[j][0][2])
    r.lv[j] = _average(r.lose, r.mv[j][1][0], r.mv[j][1][1], r.mv[j][1][2])
    r.have[j] = 1


cdef inline double _M(Row* r, int k, int j, int side) noexcept nogil:
    """My MWC after I (side 0) or the opponent (side 1) win k times the cube at level j."""
    if j >= LEVELS:
        return _M_direct(r, k, j, side)
    if not r.have[j]:
        _level(r, j)
    return r.mv[j][side][k - 1]


cdef inline double _value(Row* r, int j, int side) noexcept nogil:
    """The MWC of the games I win (side 0: W) or lose (side 1: L) at level
    j, by their kinds."""
    cdef const double* q = &r.win[0] if side == 0 else &r.lose[0]
    if j >= LEVELS:
        return _average(q, _M(r, 1, j, side), _M(r, 2, j, side), _M(r, 3, j, side))
    if not r.have[j]:
        _level(r, j)
    return r.wv[j] if side == 0 else r.lv[j]


cdef inline double _W(Row* r, int j) noexcept nogil:
    return _value(r, j, 0)


cdef inline double _L(Row* r, int j) noexcept nogil:
    return _value(r, j, 1)


cdef double _dead(Row* r, int j) noexcept nogil:
    return ((r.win[0] * _M(r, 1, j, 0) + r.win[1] * _M(r, 2, j, 0) + r.win[2] * _M(r, 3, j, 0))
            + (r.lose[0] * _M(r, 1, j, 1) + r.lose[1] * _M(r, 2, j, 1)
               + r.lose[2] * _M(r, 3, j, 1)))


cdef inline bint _can_double_me(const Row* r, int j) noexcept nogil:
    return r.state != CRAWFORD and (r.cube << j) < r.a


cdef inline bint _can_double_opp(const Row* r, int j) noexcept nogil:
    return r.state != CRAWFORD and (r.cube << j) < r.b


cdef inline double _break_even(Row* r, int j, double mwc) noexcept nogil:
    """The winning chance at which ``mwc`` equals playing on at level j + 1
    with a dead cube."""
    cdef double lo = _L(r, j + 1)
    return _ratio(mwc - lo, _W(r, j + 1) - lo)


cdef inline double _dead_cp_me(Row* r, int j) noexcept nogil:
    return _break_even(r, j, _M(r, 1, j, 0))


cdef double _cp_me(Row* r, int j) noexcept nogil:
    """My winning chance at which the opponent's take of my double at level j breaks even."""
    cdef double tp2, lose2
    if not _can_double_opp(r, j + 1):
        return _dead_cp_me(r, j)
    # his wins are cashes: he redoubles at my take point one level up and I pass
    tp2 = _tp_me(r, j + 1)
    lose2 = _M(r, 1, j + 1, 1)
    return tp2 + (1.0 - tp2) * _ratio(_M(r, 1, j, 0) - lose2, _W(r, j + 1) - lose2)


cdef double _tp_me(Row* r, int j) noexcept nogil:
    """My take point (my winning chance) when the opponent doubles at level j."""
    cdef double pas = _M(r, 1, j, 1), lo
    if not _can_double_me(r, j + 1):
        return _break_even(r, j, pas)
    lo = _L(r, j + 1)
    return _cp_me(r, j + 1) * _ratio(pas - lo, _M(r, 1, j + 1, 0) - lo)


cdef double _live(Row* r, int j, int owner) noexcept nogil:
    """The live-cube MWC at level j with the cube at ``owner``."""
    cdef double xs[MAX_POINTS]
    cdef double ys[MAX_POINTS]
    cdef int n = 1
    xs[0] = 0.0
    ys[0] = _L(r, j)
    if owner != OWN_ME and _can_double_opp(r, j):
        xs[n] = _tp_me(r, j)
        ys[n] = _M(r, 1, j, 1)
        n += 1
    if owner != OWN_OPP and _can_double_me(r, j):
        xs[n] = _cp_me(r, j)
        ys[n] = _M(r, 1, j, 0)
        n += 1
    xs[n] = 1.0
    ys[n] = _W(r, j)
    n += 1
    return _interp(r.p[0], xs, ys, n)


cdef inline double _cubeful(Row* r, int j, int owner, double x) noexcept nogil:
    return x * _live(r, j, owner) + (1.0 - x) * _dead(r, j)


cdef void _gammon_prices(Row* r, int j, double* out) noexcept nogil:
    """(mine, the opponent's, my backgammon, the opponent's backgammon) prices at level j."""
    cdef double win1 = _M(r, 1, j, 0), win2 = _M(r, 2, j, 0), win3 = _M(r, 3, j, 0)
    cdef double lose1 = _M(r, 1, j, 1), lose2 = _M(r, 2, j, 1), lose3 = _M(r, 3, j, 1)
    cdef double span = win1 - lose1
    if span <= 0:
        out[0] = out[1] = out[2] = out[3] = 0.0
        return
    out[0] = (win2 - win1) / span
    out[1] = (lose1 - lose2) / span
    out[2] = (win3 - win2) / span
    out[3] = (lose2 - lose3) / span


cdef inline void _start(Row* r, const double* p, int64_t a, int64_t b, int64_t state,
                        int64_t cube) noexcept nogil:
    """Row r for probabilities p at a/b away, ``state`` and ``cube``, no level known yet."""
    r.p = p
    r.win[0] = p[0] - p[1]
    r.win[1] = p[1] - p[2]
    r.win[2] = p[2]
    r.lose[0] = 1 - p[0] - p[3]
    r.lose[1] = p[3] - p[4]
    r.lose[2] = p[4]
    r.a = a
    r.b = b
    r.state = <int>state
    r.cube = cube
    memset(r.have, 0, sizeof(r.have))


def match_rows(const double[:, ::1] p, const int64_t[::1] a, const int64_t[::1] b,
               const int64_t[::1] state, const int64_t[::1] cube, const int64_t[::1] owner,
               const double[::1] x_nd, const double[::1] x_dt,
               const double[:, ::1] pre, const double[::1] post):
    """The match model of each row (checked by ``bgfast.cube._check_match``:
    1 <= a, b <= N).  Returns float64 arrays: ``no_double``, ``double_take``
    (cubeful MWCs: cube at ``owner``, and doubled to the opponent),
    ``double_pass`` (my MWC when he passes), ``lose`` (my MWC when I lose
    the cube's points), ``cash_live``/``cash_dead`` (my live and dead cash
    points at level 0), ``dead`` (the dead-cube MWC), and ``gammon_prices``
    [n, 2, 4] at levels 0 and 1; and ``can_double`` (bool: the cube may be
    turned at this score, whoever owns it)."""
    cdef Py_ssize_t n = p.shape[0], i
    cdef Row r
    nd_ = np.empty(n)
    dt_ = np.empty(n)
    dp_ = np.empty(n)
    lo_ = np.empty(n)
    cpl_ = np.empty(n)
    cpd_ = np.empty(n)
    dead_ = np.empty(n)
    gp_ = np.empty((n, 2, 4))
    cd_ = np.empty(n, dtype=np.uint8)
    cdef uint8_t[::1] cd = cd_
    cdef double[::1] nd = nd_, dt = dt_, dp = dp_, lo = lo_, cpl = cpl_, cpd = cpd_, dead = dead_
    cdef double[:, :, ::1] gp = gp_
    if pre.shape[0] != pre.shape[1] or post.shape[0] != pre.shape[0]:
        raise ValueError("the table's pre- and post-Crawford arrays do not match")
    r.N = pre.shape[0]
    r.pre = &pre[0, 0] if r.N else NULL
    r.post = &post[0] if r.N else NULL
    with nogil:
        for i in range(n):
            _start(&r, &p[i, 0], a[i], b[i], state[i], cube[i])
            cd[i] = _can_double_me(&r, 0)
            nd[i] = _cubeful(&r, 0, <int>owner[i], x_nd[i])
            dt[i] = _cubeful(&r, 1, OWN_OPP, x_dt[i])
            dp[i] = _M(&r, 1, 0, 0)
            lo[i] = _M(&r, 1, 0, 1)
            dead[i] = _dead(&r, 0)
            if r.state == CRAWFORD:
                cpl[i] = NAN
                cpd[i] = NAN
            else:
                cpl[i] = _cp_me(&r, 0)
                cpd[i] = _dead_cp_me(&r, 0)
            _gammon_prices(&r, 0, &gp[i, 0, 0])
            _gammon_prices(&r, 1, &gp[i, 1, 0])
    return {"no_double": nd_, "double_take": dt_, "double_pass": dp_, "lose": lo_,
            "cash_live": cpl_, "cash_dead": cpd_, "dead": dead_, "gammon_prices": gp_,
            "can_double": cd_.view(bool)}


# ---------------------------------------------------------------------------
# the action
# ---------------------------------------------------------------------------

cdef inline int _action(double nd, double dt, double dp, bint can_double, bint beaver,
                        double eps) noexcept nogil:
    """The proper action of one row: 0 too good/pass, 1 double/pass, 2 too
    good/take, 3 optional double/take, 4 optional double/beaver, 5 no
    double/take, 6 no double/beaver, 7 double/take, 8 double/beaver, 9 no
    double with a dead cube.  Equities closer than ``eps`` are equal (ties
    go to doubling)."""
    cdef bint passes = dt >= dp - eps            # the opponent passes
    cdef bint too_good = nd > dp + eps
    if not can_double:
        return 9
    if passes and too_good:
        return 0
    if passes:
        return 1
    if too_good:
        return 2
    if fabs(nd - dt) <= eps:
        return 4 if beaver else 3
    if nd > dt:
        return 6 if beaver else 5
    return 8 if beaver else 7


# ---------------------------------------------------------------------------
# decisions: money and match rows together
# ---------------------------------------------------------------------------

cdef inline bint _finite3(const double* e) noexcept nogil:
    return e[0] == e[0] and e[1] == e[1] and e[2] == e[2]


cdef inline double _effective(const double* p, const double* e, int own, double ceq,
                              double x) noexcept nogil:
    """The efficiency at which Janowski's money equity with the cube at
    ``own`` meets the exact one ``e[own]``: ``(E_exact - E_dead) / (E_live -
    E_dead)`` within [0, x]; x where the live and dead equities meet."""
    cdef double live = _money(p, own, 1.0, False), v
    if not fabs(live - ceq) > 1e-9:
        return x
    v = (e[own] - ceq) / (live - ceq)
    if 0.0 > v:
        v = 0.0
    if x < v:
        v = x
    return v


#: The columns of decide_rows' ``values``.
DECISION_COLUMNS = ("no_double", "double_take", "double_pass", "take_point_live", "x_no_double",
                    "x_double_take", "mwc_no_double", "mwc_double_take", "mwc_double_pass",
                    "mwc_lose")


def decide_rows(const double[:, ::1] p, const int32_t[::1] ctx, const int64_t[:, ::1] params,
                const double[::1] x, const double[:, ::1] exact, const double[:, ::1] pre,
                const double[::1] post, double eps, const cnp.int8_t[::1] codes,
                values=None):
    """The cube decision of each row of checked, clipped probabilities p[n, 5].

    Row i is decided at the cube context ``params[ctx[i]]``: (match, a, b,
    state, cube, owner, jacoby, beavers).  Money contexts (``match`` 0): the
    cube at ``owner`` (0 centre, 1 me, 2 the opponent), the Jacoby rule and
    beavers as flagged; an ``exact`` row without NaN holds the exact cubeful
    money equities (centred, mine, the opponent's) that replace Janowski's.
    Match contexts (``match`` 1): ``a``/``b`` away, ``state``, ``cube`` as
    for :func:`match_rows`; an exact row gives the effective efficiencies,
    for no double and for double/take.

    The values go into ``values`` float64[n, 10] (a new array if None), one
    column for each of :data:`DECISION_COLUMNS`: ``no_double``,
    ``double_take``, ``double_pass`` (equities per unit cube: a match row's
    MWCs normalised between losing and winning the cube's points),
    ``take_point_live`` (the opponent's, NaN in the Crawford game),
    ``x_no_double``/``x_double_take`` (the efficiencies used) and a match
    row's MWCs ``mwc_no_double``, ``mwc_double_take``, ``mwc_double_pass``
    and ``mwc_lose`` (NaN for money rows).  Returns those columns by name,
    with ``action`` (``codes[k]`` for the action number k of
    :func:`_action`) and ``beaver`` (bool)."""
    cdef Py_ssize_t n = p.shape[0], i, nctx = params.shape[0]
    cdef Row r
    cdef const double* q
    cdef const int64_t* c
    cdef double* v
    cdef double W, L, dtc, lo, hi, ceq, xn, xd, mn, md, mp
    cdef int ow
    cdef bint can, bv
    if values is None:
        values = np.empty((n, 10))
    cdef double[:, ::1] out = values
    act_ = np.empty(n, dtype=np.int8)
    bv_ = np.zeros(n, dtype=np.uint8)
    cdef cnp.int8_t[::1] act = act_
    cdef uint8_t[::1] bvr = bv_
    if codes.shape[0] < 10:
        raise ValueError("codes must name the 10 actions")
    if params.shape[1] != 8:
        raise ValueError("params must have 8 columns")
    if ctx.shape[0] != n or x.shape[0] != n:
        raise ValueError("ctx and x must have one entry per row")
    if exact.shape[0] != n or exact.shape[1] != 3:
        raise ValueError("exact must have shape (n, 3)")
    if out.shape[0] != n or out.shape[1] != 10:
        raise ValueError("values must have shape (n, 10)")
    if pre.shape[0] != pre.shape[1] or post.shape[0] != pre.shape[0]:
        raise ValueError("the table's pre- and post-Crawford arrays do not match")
    r.N = pre.shape[0]
    r.pre = &pre[0, 0] if r.N else NULL
    r.post = &post[0] if r.N else NULL
    for i in range(nctx):
        if params[i, 0] and not (1 <= params[i, 1] <= r.N and 1 <= params[i, 2] <= r.N):
            raise ValueError(f"context {i}: away scores outside the table")
    for i in range(n):
        if not 0 <= ctx[i] < nctx:
            raise ValueError(f"row {i}: no context {ctx[i]}")
    with nogil:
        for i in range(n):
            q = &p[i, 0]
            c = &params[ctx[i], 0]
            v = &out[i, 0]
            ow = <int>c[5]
            if not c[0]:
                v[0] = _money(q, ow, x[i], c[6] != 0)
                v[1] = 2.0 * _money(q, OWN_OPP, x[i], False)
                if _finite3(&exact[i, 0]):
                    v[0] = exact[i, ow]
                    v[1] = 2.0 * exact[i, 2]
                v[2] = 1.0
                can = ow != OWN_OPP
                bv = c[7] != 0 and can and v[1] < 0.0
                dtc = 2.0 * v[1] if bv else v[1]
                act[i] = codes[_action(v[0], dtc, 1.0, can, bv, eps)]
                bvr[i] = bv
                _averages(q, &W, &L)
                v[3] = 1.0 - (L + 1.0) / (W + L + 0.5)
                v[4] = v[5] = x[i]
                v[6] = v[7] = v[8] = v[9] = NAN
                continue
            xn = xd = x[i]
            if _finite3(&exact[i, 0]):
                ceq = _cubeless(q)
                xn = _effective(q, &exact[i, 0], ow, ceq, x[i])
                xd = _effective(q, &exact[i, 0], OWN_OPP, ceq, x[i])
            _start(&r, q, c[1], c[2], c[3], c[4])
            can = ow != OWN_OPP and _can_double_me(&r, 0)
            mn = _cubeful(&r, 0, ow, xn)
            md = _cubeful(&r, 1, OWN_OPP, xd)
            mp = _M(&r, 1, 0, 0)
            lo = _M(&r, 1, 0, 1)
            hi = mp
            if hi > lo:
                v[0] = 2.0 * (mn - lo) / (hi - lo) - 1.0
                v[1] = 2.0 * (md - lo) / (hi - lo) - 1.0
                v[2] = 2.0 * (mp - lo) / (hi - lo) - 1.0
            else:
                v[0] = v[1] = v[2] = 0.0
            act[i] = codes[_action(mn, md, mp, can, False, eps)]
            v[3] = NAN if r.state == CRAWFORD else 1.0 - _cp_me(&r, 0)
            v[4] = xn
            v[5] = xd
            v[6] = mn
            v[7] = md
            v[8] = mp
            v[9] = lo
    res = {name: values[:, j] for j, name in enumerate(DECISION_COLUMNS)}
    res["action"] = act_
    res["beaver"] = bv_.view(bool)
    return res


# ---------------------------------------------------------------------------
# checked probabilities
# ---------------------------------------------------------------------------

cdef inline double _upper(double v, double lo) noexcept nogil:
    return lo if lo > v else v


cdef inline double _lower(double v, double hi) noexcept nogil:
    return hi if hi < v else v


def checked_rows(const double[:, ::1] p, double tol):
    """Each row of cumulative probabilities p[n, 5] checked and clipped:
    ``(clipped float64[n, 5], status int8[n])``, status 0 (consistent
    within ``tol``), 1 (not finite), 2 (the winning side inconsistent: not
    -tol <= WB <= WG + tol <= W + 2 tol, W <= 1 + tol) or 3 (the losing
    side: not -tol <= LB <= LG + tol, LG <= 1 - W + tol).  Clipping keeps
    0 <= WB <= WG <= W <= 1 and 0 <= LB <= LG <= 1 - W."""
    cdef Py_ssize_t n = p.shape[0], i
    out = np.empty((n, 5), dtype=np.float64)
    st_ = np.empty(n, dtype=np.int8)
    cdef double[:, ::1] o = out
    cdef cnp.int8_t[::1] st = st_
    cdef double w, wg, wb, lg, lb
    with nogil:
        for i in range(n):
            w, wg, wb, lg, lb = p[i, 0], p[i, 1], p[i, 2], p[i, 3], p[i, 4]
            if not (isfinite(w) and isfinite(wg) and isfinite(wb) and isfinite(lg)
                    and isfinite(lb)):
                st[i] = 1
            elif not (-tol <= wb and wb <= wg + tol and wg <= w + tol and w <= 1 + tol):
                st[i] = 2
            elif not (-tol <= lb and lb <= lg + tol and lg <= 1 - w + tol):
                st[i] = 3
            else:
                st[i] = 0
            w = _lower(_upper(w, 0.0), 1.0)
            wg = _lower(_upper(wg, 0.0), w)
            wb = _lower(_upper(wb, 0.0), wg)
            lg = _lower(_upper(lg, 0.0), 1.0 - w)
            lb = _lower(_upper(lb, 0.0), lg)
            o[i, 0], o[i, 1], o[i, 2], o[i, 3], o[i, 4] = w, wg, wb, lg, lb
    return out, st_
