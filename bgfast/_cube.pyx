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

The cubeful search (:mod:`bgfast.cube`'s n-ply cubeful evaluation) uses
the same model through :func:`cubeful_rows` (a row's 0-ply values in its
own currency: money per unit of cube, match MWC), :func:`node_values` (the
value of a node from its searched no-double and double/take values) and
:func:`context_values` (what a context alone decides: whether the side on
roll may double, and the MWCs of winning and losing the cube).

A cube context is a row of :data:`CONTEXT_COLUMNS` integers (the enums of
``_cube.pxd``, by name in :data:`CONTEXT_LAYOUT`): money (``match`` 0) or
match (1), the away scores, the match state (pre-Crawford, post-Crawford, Crawford), the cube value, its
owner (centre, the side on roll, the opponent), the Jacoby rule and beavers.

Every number is computed with the operations, in the order, that the
formulas in :mod:`bgfast.cube`'s docstrings give, in double precision.
"""
import numpy as np
cimport numpy as cnp
from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t
from libc.math cimport NAN, fabs, isfinite
from libc.string cimport memset
from bgfast._evaluate cimport board_class

cnp.import_array()

#: The layout of a cube context row (the enums of ``_cube.pxd``): the column
#: of each name, and the codes of the ``state`` and ``owner`` columns.
CONTEXT_LAYOUT = {"match": CTX_MATCH, "away_me": CTX_AWAY_ME, "away_opp": CTX_AWAY_OPP,
                  "state": CTX_STATE, "cube": CTX_CUBE, "owner": CTX_OWNER,
                  "jacoby": CTX_JACOBY, "beavers": CTX_BEAVERS}
STATE_CODES = {"pre_crawford": PRE, "post_crawford": POST, "crawford": CRAWFORD}
OWNER_CODES = {"centre": OWN_CENTRE, "me": OWN_ME, "opp": OWN_OPP}
#: The columns of a cube context row, by name, in order.
CONTEXT_COLUMNS = tuple(sorted(CONTEXT_LAYOUT, key=CONTEXT_LAYOUT.get))

# The actions (ACT_*), the levels a row remembers (LEVELS) and the Score,
# Row and CubeNode structs are declared in _cube.pxd too.

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


cdef struct Money:
    # what the money model needs of a row's probabilities, for any owner
    double W, L                  # average values of games won and lost
    double tp, cp                # the opponent's take point, my cash point
    double dead                  # the cubeless equity


cdef inline void _money_start(const double* p, Money* m) noexcept nogil:
    _averages(p, &m.W, &m.L)
    m.tp = (m.L - 0.5) / (m.W + m.L + 0.5)
    m.cp = (m.L + 1.0) / (m.W + m.L + 0.5)
    m.dead = _cubeless(p)


cdef double _money_at(const double* p, const Money* m, int owner, double x,
                      bint jacoby) noexcept nogil:
    """Janowski's money equity of p (its :func:`_money_start` m) with the
    cube at ``owner``."""
    cdef double W = m.W, L = m.L, dead = m.dead
    cdef double xs[MAX_POINTS]
    cdef double ys[MAX_POINTS]
    cdef int n = 0
    if jacoby and owner == OWN_CENTRE:
        # gammons count only once the cube is turned: the ends of the live
        # line and the dead equity lose them, the take and cash points keep them
        W = 1.0
        L = 1.0
        dead = 2.0 * p[0] - 1.0
    xs[n] = 0.0
    ys[n] = -L
    n += 1
    if owner != OWN_ME:
        xs[n] = m.tp
        ys[n] = -1.0
        n += 1
    if owner != OWN_OPP:
        xs[n] = m.cp
        ys[n] = 1.0
        n += 1
    xs[n] = 1.0
    ys[n] = W
    n += 1
    return x * _interp(p[0], xs, ys, n) + (1.0 - x) * dead


cdef double _money(const double* p, int owner, double x, bint jacoby) noexcept nogil:
    cdef Money m
    _money_start(p, &m)
    return _money_at(p, &m, owner, x, jacoby)


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


cdef void _score_level(Row* r, int j) noexcept nogil:
    """Work out and remember level j's MWCs (of the row's score and cube)."""
    cdef int k, side
    cdef Score* s = r.s
    for side in range(2):
        for k in range(3):
            s.mv[j][side][k] = _M_direct(r, k + 1, j, side)
    s.known |= (<uint32_t>1) << j


cdef void _level(Row* r, int j) noexcept nogil:
    """Work out and remember level j's W and L."""
    cdef Score* s = r.s
    if not (s.known >> j) & 1:
        _score_level(r, j)
    r.wv[j] = _average(r.win, s.mv[j][0][0], s.mv[j][0][1], s.mv[j][0][2])
    r.lv[j] = _average(r.lose, s.mv[j][1][0], s.mv[j][1][1], s.mv[j][1][2])
    r.known |= (<uint32_t>1) << j


cdef inline double _M(Row* r, int k, int j, int side) noexcept nogil:
    """My MWC after I (side 0) or the opponent (side 1) win k times the cube at level j."""
    if j >= LEVELS:
        return _M_direct(r, k, j, side)
    if not (r.s.known >> j) & 1:
        _score_level(r, j)
    return r.s.mv[j][side][k - 1]


cdef inline double _value(Row* r, int j, int side) noexcept nogil:
    """The MWC of the games I win (side 0: W) or lose (side 1: L) at level
    j, by their kinds."""
    cdef const double* q = &r.win[0] if side == 0 else &r.lose[0]
    if j >= LEVELS:
        return _average(q, _M(r, 1, j, side), _M(r, 2, j, side), _M(r, 3, j, side))
    if not (r.known >> j) & 1:
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


cdef double _cp_me_at(Row* r, int j) noexcept nogil:
    """My winning chance at which the opponent's take of my double at level j breaks even."""
    cdef double tp2, lose2
    if not _can_double_opp(r, j + 1):
        return _dead_cp_me(r, j)
    # his wins are cashes: he redoubles at my take point one level up and I pass
    tp2 = _tp_me(r, j + 1)
    lose2 = _M(r, 1, j + 1, 1)
    return tp2 + (1.0 - tp2) * _ratio(_M(r, 1, j, 0) - lose2, _W(r, j + 1) - lose2)


cdef double _tp_me_at(Row* r, int j) noexcept nogil:
    """My take point (my winning chance) when the opponent doubles at level j."""
    cdef double pas = _M(r, 1, j, 1), lo
    if not _can_double_me(r, j + 1):
        return _break_even(r, j, pas)
    lo = _L(r, j + 1)
    return _cp_me(r, j + 1) * _ratio(pas - lo, _M(r, 1, j + 1, 0) - lo)


cdef double _point(Row* r, int j, int kind) noexcept nogil:
    """My cash point (kind 0, :func:`_cp_me_at`) or take point (kind 1,
    :func:`_tp_me_at`) at level j, remembered per level."""
    if j >= LEVELS:
        return _cp_me_at(r, j) if kind == 0 else _tp_me_at(r, j)
    if not (r.points_known[kind] >> j) & 1:
        r.points[kind][j] = _cp_me_at(r, j) if kind == 0 else _tp_me_at(r, j)
        r.points_known[kind] |= (<uint32_t>1) << j
    return r.points[kind][j]


cdef inline double _cp_me(Row* r, int j) noexcept nogil:
    return _point(r, j, 0)


cdef inline double _tp_me(Row* r, int j) noexcept nogil:
    return _point(r, j, 1)


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
                        int64_t cube, Score* s) noexcept nogil:
    """Row r for probabilities p at a/b away, ``state`` and ``cube`` (whose
    MWCs ``s`` remembers, for every row at that score and cube), no level
    of W and L known yet."""
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
    r.s = s
    r.known = r.points_known[0] = r.points_known[1] = 0


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
    cdef Score s
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
            s.known = 0
            _start(&r, &p[i, 0], a[i], b[i], state[i], cube[i], &s)
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


cdef inline double _norm(double m, double lo, double hi) noexcept nogil:
    """The MWC m normalised between losing (lo: -1) and winning (hi: +1)
    the cube's points; 0 when hi <= lo."""
    if hi > lo:
        return 2.0 * (m - lo) / (hi - lo) - 1.0
    return 0.0


cdef inline void _set_tables(Row* r, const double[:, ::1] pre, const double[::1] post) except *:
    if pre.shape[0] != pre.shape[1] or post.shape[0] != pre.shape[0]:
        raise ValueError("the table's pre- and post-Crawford arrays do not match")
    r.N = pre.shape[0]
    r.pre = &pre[0, 0] if r.N else NULL
    r.post = &post[0] if r.N else NULL


cdef inline void _check_contexts(const Row* r, const int64_t[:, ::1] params,
                                 const int32_t[::1] ctx) except *:
    """Raise unless every context row fits the table (and every ``ctx``
    entry, when given, names one)."""
    cdef Py_ssize_t i
    if params.shape[1] != CTX_COLUMNS:
        raise ValueError(f"params must have {CTX_COLUMNS} columns")
    for i in range(params.shape[0]):
        if params[i, CTX_MATCH] and not (1 <= params[i, CTX_AWAY_ME] <= r.N
                                         and 1 <= params[i, CTX_AWAY_OPP] <= r.N):
            raise ValueError(f"context {i}: away scores outside the table")
    if ctx is not None:
        for i in range(ctx.shape[0]):
            if not 0 <= ctx[i] < params.shape[0]:
                raise ValueError(f"row {i}: no context {ctx[i]}")


cdef inline object _new_scores(Py_ssize_t nctx):
    """Zeroed room for the :c:type:`Score` of ``nctx`` contexts (at least one)."""
    return np.zeros(max(nctx, 1) * sizeof(Score), dtype=np.uint8)


cdef int _decide_one(Row* r, const double* q, const int64_t* c, Score* s, double x,
                     const double* e, double eps, bint details, bint every_double, double* v,
                     bint* beaver, bint* can_double, bint value_only) noexcept nogil:
    """The cube decision of one row of checked probabilities q at the
    context c (money or match; a match context's MWCs remembered in s), x
    its cube efficiency and e its exact money equities (NaN: none): the
    values of :data:`DECISION_COLUMNS` go to v, ``beaver`` and
    ``can_double`` are set, and the action number of :func:`_action` is
    returned.  Without ``details`` the live take point and a match row's
    normalised values (columns 0-3) are NaN, and without ``every_double``
    too the double/take values of a row whose side on roll may not double
    (they do not change its action or its value).  With ``value_only``
    the double/take values are NaN also where no double is worth at least
    the double/pass: the node's value is then no
    double whatever the take is worth (the action returned need not be the
    proper one)."""
    cdef int ow = <int>c[CTX_OWNER]
    cdef Money mo
    cdef double dtc, lo, hi, ceq, xn, xd, mn, md, mp
    cdef bint can, bv, exact = _finite3(e)
    if not c[CTX_MATCH]:
        can = ow != OWN_OPP
        _money_start(q, &mo)
        v[0] = e[ow] if exact else _money_at(q, &mo, ow, x, c[CTX_JACOBY] != 0)
        if (can or every_double or details) and not (value_only and v[0] >= 1.0):
            v[1] = 2.0 * e[2] if exact else 2.0 * _money_at(q, &mo, OWN_OPP, x, False)
        else:
            v[1] = NAN
        v[2] = 1.0
        bv = c[CTX_BEAVERS] != 0 and can and v[1] < 0.0
        dtc = 2.0 * v[1] if bv else v[1]
        v[3] = 1.0 - mo.cp if details else NAN
        v[4] = v[5] = x
        v[6] = v[7] = v[8] = v[9] = NAN
        beaver[0] = bv
        can_double[0] = can
        return _action(v[0], dtc, 1.0, can, bv, eps)
    _start(r, q, c[CTX_AWAY_ME], c[CTX_AWAY_OPP], c[CTX_STATE], c[CTX_CUBE], s)
    can = ow != OWN_OPP and _can_double_me(r, 0)
    xn = xd = x
    if exact:
        ceq = _cubeless(q)
        xn = _effective(q, e, ow, ceq, x)
    mn = _cubeful(r, 0, ow, xn)
    mp = _M(r, 1, 0, 0)
    if (can or every_double or details) and not (value_only and mn >= mp):
        if exact:
            xd = _effective(q, e, OWN_OPP, ceq, x)
        md = _cubeful(r, 1, OWN_OPP, xd)
    else:
        md = NAN
    lo = _M(r, 1, 0, 1)
    hi = mp
    if details:
        v[0] = _norm(mn, lo, hi)
        v[1] = _norm(md, lo, hi)
        v[2] = _norm(mp, lo, hi)
        v[3] = NAN if r.state == CRAWFORD else 1.0 - _cp_me(r, 0)
    else:
        v[0] = v[1] = v[2] = v[3] = NAN
    v[4] = xn
    v[5] = xd
    v[6] = mn
    v[7] = md
    v[8] = mp
    v[9] = lo
    beaver[0] = False
    can_double[0] = can
    return _action(mn, md, mp, can, False, eps)


def decide_rows(const double[:, ::1] p, const int32_t[::1] ctx, const int64_t[:, ::1] params,
                const double[::1] x, const double[:, ::1] exact, const double[:, ::1] pre,
                const double[::1] post, double eps, const cnp.int8_t[::1] codes,
                values=None):
    """The cube decision of each row of checked, clipped probabilities p[n, 5].

    Row i is decided at the cube context ``params[ctx[i]]`` (a row of
    :data:`CONTEXT_COLUMNS`).  Money contexts (``match`` 0): the
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
    cdef bint bv, can
    if values is None:
        values = np.empty((n, 10))
    cdef double[:, ::1] out = values
    act_ = np.empty(n, dtype=np.int8)
    bv_ = np.zeros(n, dtype=np.uint8)
    cdef cnp.int8_t[::1] act = act_
    cdef uint8_t[::1] bvr = bv_
    if codes.shape[0] < 10:
        raise ValueError("codes must name the 10 actions")
    if ctx.shape[0] != n or x.shape[0] != n:
        raise ValueError("ctx and x must have one entry per row")
    if exact.shape[0] != n or exact.shape[1] != 3:
        raise ValueError("exact must have shape (n, 3)")
    if out.shape[0] != n or out.shape[1] != 10:
        raise ValueError("values must have shape (n, 10)")
    _set_tables(&r, pre, post)
    _check_contexts(&r, params, ctx)
    cdef uint8_t[::1] scores_buf = _new_scores(nctx)     # each context's MWCs, for all its rows
    cdef Score* scores = <Score*>&scores_buf[0]
    with nogil:
        for i in range(n):
            act[i] = codes[_decide_one(&r, &p[i, 0], &params[ctx[i], 0], &scores[ctx[i]], x[i],
                                       &exact[i, 0], eps, True, True, &out[i, 0], &bv, &can,
                                       False)]
            bvr[i] = bv
    res = {name: values[:, j] for j, name in enumerate(DECISION_COLUMNS)}
    res["action"] = act_
    res["beaver"] = bv_.view(bool)
    return res


# ---------------------------------------------------------------------------
# the cubeful search's pieces
# ---------------------------------------------------------------------------

cdef inline double _node_value(double nd, double dtc, double dp, bint can) noexcept nogil:
    """The value of a node to the side on roll: no double, or the better
    for it of the opponent's answers to a double (``dtc`` the take, or the
    beaver, already doubled; ``dp`` the pass) when it may double."""
    cdef double answer
    if not can:
        return nd
    answer = dtc if dtc < dp else dp
    return answer if answer > nd else nd


#: The columns of :func:`cubeful_rows`' values.
CUBEFUL_COLUMNS = ("no_double", "double_take", "double_pass", "value", "lose", "mover_value",
                   "mover_equity")


cdef double _efficiency(int cls, double pips, const double* eff) noexcept nogil:
    """The cube efficiency of position class ``cls`` (PositionClass codes)
    with the roller's ``pips``; ``eff`` = (contact, bear-off, race min,
    race max, pips at race min, pips at race max)."""
    cdef double t
    if cls == 3:
        return eff[0]
    if cls == 2:
        t = _clip01((pips - eff[4]) / (eff[5] - eff[4]))
        return eff[2] + t * (eff[3] - eff[2])
    return eff[1]                                # bear-off and finished games


def efficiencies(const cnp.int8_t[::1] classes, const double[::1] pips, const double[::1] eff):
    """Cube efficiencies float64[n] of position classes with the roller's
    pip counts (``eff`` as for :func:`_efficiency`)."""
    cdef Py_ssize_t n = classes.shape[0], i
    out = np.empty(n)
    cdef double[::1] o = out
    if pips.shape[0] != n or eff.shape[0] != 6:
        raise ValueError("one pip count per class and 6 efficiency constants")
    with nogil:
        for i in range(n):
            o[i] = _efficiency(classes[i], pips[i], &eff[0])
    return out


def board_efficiencies(const uint8_t[:, :, ::1] boards, const double[::1] eff):
    """Cube efficiencies float64[n] of boards uint8[n, 2, 25] (player on
    roll in row 1), by their class and the roller's pip count."""
    cdef Py_ssize_t n = boards.shape[0], i
    out = np.empty(n)
    cdef double[::1] o = out
    if eff.shape[0] != 6:
        raise ValueError("6 efficiency constants")
    with nogil:
        for i in range(n):
            o[i] = board_efficiency(&boards[i, 0, 0], &eff[0])
    return out


cdef double board_efficiency(const uint8_t* b, const double* eff) noexcept nogil:
    cdef int k, pips = 0, cls = board_class(b)
    if cls == 2:                        # only a race's efficiency depends on the pips
        for k in range(25):
            pips += b[25 + k] * (k + 1)
    return _efficiency(cls, pips, eff)


cdef inline double _leaf_row(Row* r, const double* p, const uint8_t* b, const int64_t* c,
                             Score* s, const double* eff, const double* e, double eps, double tol,
                             bint every_double, bint value_only, double* v, int* action,
                             bint* bv, bint* can, cnp.int8_t* status,
                             cnp.int8_t* cls) noexcept nogil:
    """One row of :func:`cubeful_rows`: probabilities p (clipped first;
    ``status`` as :func:`checked_rows` gives it) of board b at context c (a
    match context's MWCs remembered in s), exact money equities e (NaN:
    none).  Sets ``cls`` (the board's class), the action number, ``bv``,
    ``can`` and v[0:4]: no double, double/take, double/pass and losing the
    cube's points in the context's currency; returns the node's value to
    the side on roll (:func:`_node_value`, the beaver counted).
    ``value_only`` as for :func:`_decide_one`."""
    cdef double q[5]
    cdef int k, pips = 0, cl
    status[0] = _clip_row(p, tol, q)
    cl = board_class(b)
    if cl == 2:                         # only a race's efficiency depends on the pips
        for k in range(25):
            pips += b[25 + k] * (k + 1)
    cls[0] = cl
    action[0] = _decide_one(r, q, c, s, _efficiency(cl, pips, eff), e, eps, False, every_double,
                            v, bv, can, value_only)
    if c[CTX_MATCH]:
        v[0], v[1], v[2], v[3] = v[6], v[7], v[8], v[9]
    else:
        v[3] = -1.0
    return _node_value(v[0], 2.0 * v[1] if bv[0] else v[1], v[2], can[0])


cdef inline double _mover_equity(double val, bint match, double lose, double win,
                                 double* mover) noexcept nogil:
    """The value ``val`` to the side on roll seen by the side that moved:
    ``mover`` set to minus it (money) or 1 minus it (match), and that
    returned (money) or normalised by the mover's cube (match, ``lose``
    and ``win`` its MWCs, as :func:`normalised`)."""
    if match:
        mover[0] = 1.0 - val
        return _norm(mover[0], lose, win)
    mover[0] = 0.0 - val
    return mover[0]


cdef tuple _leaf_setup(Row* r, const int32_t[::1] ctx, const int64_t[:, ::1] params,
                       const uint8_t[:, :, ::1] boards, const double[::1] eff,
                       const double[:, ::1] exact, const double[:, ::1] pre,
                       const double[::1] post, const int64_t[:, ::1] movers, Py_ssize_t n,
                       Py_ssize_t nb, const int64_t[::1] index):
    """Check the arguments of :func:`cubeful_rows` and :func:`play_rows`
    and set r's tables; returns ``(scores, lose, win)``: room for each
    context's MWCs (:func:`_new_scores`) and, with ``movers``, the movers'
    MWCs of losing and winning their cube's points (else None)."""
    cdef Py_ssize_t i
    if ctx.shape[0] != n or boards.shape[0] != nb:
        raise ValueError("ctx (and index) must have one entry per row, boards one per board")
    if boards.shape[1] != 2 or boards.shape[2] != 25 or eff.shape[0] != 6:
        raise ValueError("boards must be (n, 2, 25), with 6 efficiency constants")
    if exact is not None and (exact.shape[0] != nb or exact.shape[1] != 3):
        raise ValueError("exact must have shape (n, 3)")
    if index is not None:
        for i in range(n):
            if not 0 <= index[i] < nb:
                raise ValueError(f"row {i}: no board {index[i]}")
    _set_tables(r, pre, post)
    _check_contexts(r, params, ctx)
    if movers is None:
        return _new_scores(params.shape[0]), None, None
    if movers.shape[0] != params.shape[0]:
        raise ValueError("movers must have one row per context")
    _, win, lose = context_values(movers, pre, post)
    return _new_scores(params.shape[0]), lose, win


def cubeful_rows(const double[:, ::1] p, const int32_t[::1] ctx, const int64_t[:, ::1] params,
                 const uint8_t[:, :, ::1] boards, const double[::1] eff,
                 const double[:, ::1] exact, const double[:, ::1] pre, const double[::1] post,
                 double eps, double tol, const cnp.int8_t[::1] codes,
                 const int64_t[:, ::1] movers=None, bint every_double=False,
                 const int64_t[::1] index=None):
    """0-ply cubeful values of boards[n, 2, 25] (player on roll in row 1)
    from their probabilities p[n, 5] (clipped here as :func:`checked_rows`
    clips them), row i at the context ``params[ctx[i]]``, as
    :func:`decide_rows` decides them, with the cube efficiency of the
    board's class and pips (``eff`` as for :func:`_efficiency`) and the
    exact money equities ``exact[i]`` (None, or NaN rows: none).  With
    ``index`` row i is that of board ``index[i]`` (its p, boards and exact
    rows), so many rows can share one board without copies; the rows are
    then the entries of ``ctx`` and ``index``.

    Returns ``(values float64[n, 7], action int8[n], beaver bool[n], status
    int8[n], classes int8[n])``: the columns of :data:`CUBEFUL_COLUMNS` in
    the context's currency (money: per unit of the cube; match: MWC): no
    double, double/take (a money row's already doubled), double/pass, the
    node's ``value`` to the side on roll (:func:`_node_value`: the beaver
    counted) and ``lose`` (losing the cube's points: -1, or its MWC); with
    ``movers`` (the contexts, row for row with ``params``, of the sides
    that made the plays leading to the boards), the value to that side,
    ``mover_value`` (money: minus the value; match: 1 minus the MWC), and
    its ``mover_equity`` (money: the same; match: normalised by the
    mover's cube as :func:`normalised` does), else NaN; double/take is
    NaN where the side on roll may not double, unless ``every_double``;
    ``action`` as ``codes`` name them; ``beaver`` whether the taker
    beavers; ``status`` as :func:`checked_rows` gives it; the boards'
    position classes.  :func:`play_rows` gives the ``mover_*`` columns
    alone."""
    cdef Py_ssize_t n = p.shape[0] if index is None else index.shape[0], nb = p.shape[0]
    cdef Py_ssize_t i, j
    cdef Row r
    cdef bint bv, can, has_exact = exact is not None, has_index = index is not None
    cdef int a
    cdef double v[10]
    cdef double none[3]
    cdef double val, mv
    cdef const double* e
    cdef bint has_movers = movers is not None
    none[0] = none[1] = none[2] = NAN
    out_ = np.empty((n, 7))
    act_ = np.empty(n, dtype=np.int8)
    bv_ = np.zeros(n, dtype=np.uint8)
    st_ = np.empty(n, dtype=np.int8)
    cls_ = np.empty(n, dtype=np.int8)
    cdef double[:, ::1] out = out_
    cdef cnp.int8_t[::1] act = act_
    cdef uint8_t[::1] bvr = bv_
    cdef cnp.int8_t[::1] st = st_
    cdef cnp.int8_t[::1] cl = cls_
    if codes.shape[0] < 10:
        raise ValueError("codes must name the 10 actions")
    cdef uint8_t[::1] scores_buf             # each context's MWCs, for all its rows
    cdef double[::1] m_win, m_lose
    scores_buf, m_lose, m_win = _leaf_setup(&r, ctx, params, boards, eff, exact, pre, post,
                                            movers, n, nb, index)
    cdef Score* scores = <Score*>&scores_buf[0]
    with nogil:
        for i in range(n):
            j = index[i] if has_index else i
            e = &exact[j, 0] if has_exact else none
            val = _leaf_row(&r, &p[j, 0], &boards[j, 0, 0], &params[ctx[i], 0], &scores[ctx[i]],
                            &eff[0], e, eps, tol, every_double, False, v, &a, &bv, &can, &st[i],
                            &cl[i])
            act[i] = codes[a]
            bvr[i] = bv
            out[i, 0] = v[0]
            out[i, 1] = v[1]
            out[i, 2] = v[2]
            out[i, 3] = val
            out[i, 4] = v[3]
            if has_movers:
                out[i, 6] = _mover_equity(val, params[ctx[i], CTX_MATCH] != 0, m_lose[ctx[i]],
                                          m_win[ctx[i]], &mv)
                out[i, 5] = mv
            else:
                out[i, 5] = out[i, 6] = NAN
    return out_, act_, bv_.view(bool), st_, cls_


def play_rows(const double[:, ::1] p, const int32_t[::1] ctx, const int64_t[:, ::1] params,
              const uint8_t[:, :, ::1] boards, const double[::1] eff,
              const double[:, ::1] exact, const double[:, ::1] pre, const double[::1] post,
              double eps, double tol, const int64_t[:, ::1] movers,
              const int64_t[::1] index=None):
    """The values of plays to the sides that made them: the ``mover_value``
    and ``mover_equity`` columns of :func:`cubeful_rows` (same arguments;
    ``movers`` required) alone, as ``(mover_value float64[n], mover_equity
    float64[n], status int8[n], classes int8[n])``, without the other
    columns' memory (what ranking plays reads), and without the
    double/take values where they cannot change a value (no double worth
    at least the double/pass)."""
    cdef Py_ssize_t n = p.shape[0] if index is None else index.shape[0], nb = p.shape[0]
    cdef Py_ssize_t i, j
    cdef Row r
    cdef bint bv, can, has_exact = exact is not None, has_index = index is not None
    cdef int a
    cdef double v[10]
    cdef double none[3]
    cdef double val
    cdef const double* e
    none[0] = none[1] = none[2] = NAN
    mv_ = np.empty(n)
    me_ = np.empty(n)
    st_ = np.empty(n, dtype=np.int8)
    cls_ = np.empty(n, dtype=np.int8)
    cdef double[::1] mv = mv_, me = me_
    cdef cnp.int8_t[::1] st = st_
    cdef cnp.int8_t[::1] cl = cls_
    if movers is None:
        raise ValueError("play_rows needs the movers' contexts")
    cdef uint8_t[::1] scores_buf             # each context's MWCs, for all its rows
    cdef double[::1] m_win, m_lose
    scores_buf, m_lose, m_win = _leaf_setup(&r, ctx, params, boards, eff, exact, pre, post,
                                            movers, n, nb, index)
    cdef Score* scores = <Score*>&scores_buf[0]
    with nogil:
        for i in range(n):
            j = index[i] if has_index else i
            e = &exact[j, 0] if has_exact else none
            val = _leaf_row(&r, &p[j, 0], &boards[j, 0, 0], &params[ctx[i], 0], &scores[ctx[i]],
                            &eff[0], e, eps, tol, False, True, v, &a, &bv, &can, &st[i], &cl[i])
            me[i] = _mover_equity(val, params[ctx[i], CTX_MATCH] != 0, m_lose[ctx[i]],
                                  m_win[ctx[i]], &mv[i])
    return mv_, me_, st_, cls_


# -- the pieces the rollout loop uses (declared in _cube.pxd) ----------------

cdef void cube_tables(Row* r, const double* pre, const double* post, int64_t N) noexcept nogil:
    r.N = N
    r.pre = pre if N else NULL
    r.post = post if N else NULL


cdef bint cube_may_double(Row* r, const int64_t* c) noexcept nogil:
    if c[CTX_OWNER] == OWN_OPP:
        return False
    if not c[CTX_MATCH]:
        return True
    r.a = c[CTX_AWAY_ME]
    r.b = c[CTX_AWAY_OPP]
    r.state = <int>c[CTX_STATE]
    r.cube = c[CTX_CUBE]
    return _can_double_me(r, 0)


cdef int cube_node(Row* r, const double* p, const int64_t* c, Score* s, double x,
                   const double* e, double eps, double tol, CubeNode* out) noexcept nogil:
    """:func:`_decide_one` of one row (no details) with its node value
    (:func:`_node_value`), as :func:`cubeful_rows` values a row."""
    cdef double q[5]
    cdef double v[10]
    cdef bint bv, can
    cdef int a
    _clip_row(p, tol, q)
    a = _decide_one(r, q, c, s, x, e, eps, False, False, v, &bv, &can, False)
    if c[CTX_MATCH]:
        out.no_double, out.double_take, out.double_pass = v[6], v[7], v[8]
    else:
        out.no_double, out.double_take, out.double_pass = v[0], v[1], v[2]
    out.value = _node_value(out.no_double, 2.0 * out.double_take if bv else out.double_take,
                            out.double_pass, can)
    out.action = a
    out.beaver = bv
    out.can_double = can
    return a


cdef double cube_dead(Row* r, const double* p, const int64_t* c, Score* s) noexcept nogil:
    if not c[CTX_MATCH]:
        if c[CTX_JACOBY] and c[CTX_OWNER] == OWN_CENTRE:
            return 2.0 * p[0] - 1.0
        return _cubeless(p)
    _start(r, p, c[CTX_AWAY_ME], c[CTX_AWAY_OPP], c[CTX_STATE], c[CTX_CUBE], s)
    return _dead(r, 0)


def node_values(const double[::1] nd, const double[::1] dt, const double[::1] dp,
                const uint8_t[::1] can, const uint8_t[::1] beavers, double eps,
                const cnp.int8_t[::1] codes):
    """Nodes from their searched values (one currency per row): no double
    ``nd``, double/take ``dt`` (money: already doubled), double/pass
    ``dp``; ``can`` (the side on roll may double) and ``beavers`` (money
    rows where the taker may beaver).  Returns ``(value float64[n], action
    int8[n], beaver bool[n])``: the node's value (:func:`_node_value`),
    the proper action as ``codes`` name them, and whether the taker
    beavers (money: when double/take is below 0 for the doubler)."""
    cdef Py_ssize_t n = nd.shape[0], i
    cdef bint bv
    cdef double dtc
    val_ = np.empty(n)
    act_ = np.empty(n, dtype=np.int8)
    bv_ = np.zeros(n, dtype=np.uint8)
    cdef double[::1] val = val_
    cdef cnp.int8_t[::1] act = act_
    cdef uint8_t[::1] bvr = bv_
    if not (dt.shape[0] == dp.shape[0] == can.shape[0] == beavers.shape[0] == n):
        raise ValueError("one entry per row in every argument")
    if codes.shape[0] < 10:
        raise ValueError("codes must name the 10 actions")
    with nogil:
        for i in range(n):
            bv = beavers[i] != 0 and can[i] != 0 and dt[i] < 0.0
            dtc = 2.0 * dt[i] if bv else dt[i]
            act[i] = codes[_action(nd[i], dtc, dp[i], can[i] != 0, bv, eps)]
            val[i] = _node_value(nd[i], dtc, dp[i], can[i] != 0)
            bvr[i] = bv
    return val_, act_, bv_.view(bool)


def context_values(const int64_t[:, ::1] params, const double[:, ::1] pre, const double[::1] post):
    """What each context row decides by itself: ``(can uint8[m]`` -- the
    side on roll may double --, ``double_pass``, ``lose`` float64[m] -- the
    values of winning and losing the cube's points: money +1 and -1 per
    unit of cube, match the MWCs)."""
    cdef Py_ssize_t m = params.shape[0], i
    cdef Row r
    cdef const int64_t* c
    can_ = np.empty(m, dtype=np.uint8)
    dp_ = np.empty(m)
    lo_ = np.empty(m)
    cdef uint8_t[::1] can = can_
    cdef double[::1] dp = dp_, lo = lo_
    _set_tables(&r, pre, post)
    _check_contexts(&r, params, None)
    with nogil:
        for i in range(m):
            c = &params[i, 0]
            if not c[CTX_MATCH]:
                can[i] = c[CTX_OWNER] != OWN_OPP
                dp[i] = 1.0
                lo[i] = -1.0
                continue
            r.a = c[CTX_AWAY_ME]
            r.b = c[CTX_AWAY_OPP]
            r.state = <int>c[CTX_STATE]
            r.cube = c[CTX_CUBE]
            can[i] = c[CTX_OWNER] != OWN_OPP and _can_double_me(&r, 0)
            dp[i] = _M_direct(&r, 1, 0, 0)
            lo[i] = _M_direct(&r, 1, 0, 1)
    return can_, dp_, lo_


def normalised(const double[::1] mwc, const double[::1] lose, const double[::1] win):
    """MWCs normalised between losing (-1) and winning (+1) the cube's
    points, as :func:`decide_rows` normalises them (0 where win <= lose)."""
    cdef Py_ssize_t n = mwc.shape[0], i
    out = np.empty(n)
    cdef double[::1] o = out
    if lose.shape[0] != n or win.shape[0] != n:
        raise ValueError("one entry per row in every argument")
    with nogil:
        for i in range(n):
            o[i] = _norm(mwc[i], lose[i], win[i])
    return out


# ---------------------------------------------------------------------------
# checked probabilities
# ---------------------------------------------------------------------------

cdef inline double _upper(double v, double lo) noexcept nogil:
    return lo if lo > v else v


cdef inline double _lower(double v, double hi) noexcept nogil:
    return hi if hi < v else v


cdef int _clip_row(const double* p, double tol, double* o) noexcept nogil:
    """One row of checked_rows: the clipped row into o, the status returned."""
    cdef double w, wg, wb, lg, lb
    cdef int st
    w, wg, wb, lg, lb = p[0], p[1], p[2], p[3], p[4]
    if not (isfinite(w) and isfinite(wg) and isfinite(wb) and isfinite(lg) and isfinite(lb)):
        st = 1
    elif not (-tol <= wb and wb <= wg + tol and wg <= w + tol and w <= 1 + tol):
        st = 2
    elif not (-tol <= lb and lb <= lg + tol and lg <= 1 - w + tol):
        st = 3
    else:
        st = 0
    w = _lower(_upper(w, 0.0), 1.0)
    wg = _lower(_upper(wg, 0.0), w)
    wb = _lower(_upper(wb, 0.0), wg)
    lg = _lower(_upper(lg, 0.0), 1.0 - w)
    lb = _lower(_upper(lb, 0.0), lg)
    o[0], o[1], o[2], o[3], o[4] = w, wg, wb, lg, lb
    return st


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
    with nogil:
        for i in range(n):
            st[i] = _clip_row(&p[i, 0], tol, &o[i, 0])
    return out, st_
