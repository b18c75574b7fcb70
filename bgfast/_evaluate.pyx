# cython: language_level=3
"""Private kernel: Tesauro's pubeval, calibrated probabilities, bear-off
table lookups, 0-ply play choice.

See ``bgfast.evaluate`` for the public API.  Evaluator slots: EVAL_COMPOSITE
(finished games exactly, bear-offs from the installed tables, else the
calibrated pubeval) and EVAL_PUBEVAL (calibrated pubeval alone); slots from
NUM_EVALUATORS on are registered by other kernels (register_evaluator_slot).  Policies: POLICY_PUBEVAL (the raw score,
weights of the position before the move, like pubeval and gnubg's
pub_best_move) and POLICY_EVAL (the best cubeless equity for the mover).  The weights and the calibration
are not in this file: ``bgfast._evaluator`` loads them from ``bgfast/data/pubeval``
at import and installs them with :func:`set_pubeval_weights` and
:func:`set_calibration`.
"""
from math import comb

import numpy as np
cimport numpy as cnp
from cython.parallel cimport prange
from libc.stdint cimport uint8_t, int8_t, int64_t, uint64_t
from libc.string cimport memcpy
from libc.math cimport exp, sqrt

from bgfast._movegen cimport MoveGen, movegen_init, movegen_free, movegen_plays, mg_die
from bgfast._bearoff cimport rank_counts, window_tails, window_at_least

cnp.import_array()

# W[0] race weights, W[1] contact weights
cdef double W[2][122]
# CAL[c][k][0..NCAL-1]: P(outcome k for the mover) = 1 / (1 + exp(-(CAL . f))) with the
# features f of cal_features (the last one is the constant 1), for class c = 0 race,
# 1 contact; outcomes (win, win gammon, win bg, lose gammon, lose bg)
cdef double CAL[2][5][NCAL]


# PT[c][k][n + 15]: the summed weights of block k for n checkers (n < 0: the opponent's)
cdef double PT[2][24][31]


def set_pubeval_weights(const double[::1] race, const double[::1] contact):
    """Install the 122 race and 122 contact weights."""
    cdef int i, c, k, n
    cdef double t
    if race.shape[0] != 122 or contact.shape[0] != 122:
        raise ValueError("pubeval needs 122 weights per row")
    for i in range(122):
        W[0][i] = race[i]
        W[1][i] = contact[i]
    for c in range(2):
        for k in range(24):
            for n in range(-15, 16):
                t = 0.0
                if n == -1:
                    t += W[c][5 * k]
                elif n == 1:
                    t += W[c][5 * k + 1]
                elif n >= 2:
                    t += W[c][5 * k + 2]
                    if n == 3:
                        t += W[c][5 * k + 3]
                    elif n >= 4:
                        t += W[c][5 * k + 4] * (n - 3) * 0.5
                PT[c][k][n + 15] = t


def set_calibration(const double[:, :, ::1] cal):
    """Install the logistic calibration, shape (2, 5, NCAL) (class, outcome, coefficient)."""
    cdef int c, k, j
    if cal.shape[0] != 2 or cal.shape[1] != 5 or cal.shape[2] != NCAL:
        raise ValueError(f"calibration must have shape (2, 5, {NCAL})")
    for c in range(2):
        for k in range(5):
            for j in range(NCAL):
                CAL[c][k][j] = cal[c, k, j]


#: names of the calibration features, in order
CAL_FEATURES = ("score", "pips", "mover_off", "opponent_off", "mover_bar", "opponent_bar", "one")


cdef void cal_features(const uint8_t* b, bint contact, double* f) noexcept nogil:
    """Features of b for the mover (row 0): pubeval score (weights of
    ``contact``), (opponent's pips - mover's pips) / sqrt(pip sum), checkers
    borne off by each side / 15, checkers on each bar, and 1."""
    cdef int i, p0 = 0, p1 = 0, t0 = 0, t1 = 0
    for i in range(25):
        p0 += (i + 1) * b[i]
        p1 += (i + 1) * b[25 + i]
        t0 += b[i]
        t1 += b[25 + i]
    f[0] = pub_score(b, contact)
    f[1] = (p1 - p0) / sqrt(<double>(p0 + p1 + 1))
    f[2] = (15 - t0) / 15.0
    f[3] = (15 - t1) / 15.0
    f[4] = b[24]
    f[5] = b[49]
    f[6] = 1.0


def calibration_features(const uint8_t[:, :, ::1] boards):
    """``float64[N, NCAL]`` calibration features of boards for row 0 (weights of each board's class)."""
    cdef Py_ssize_t n = boards.shape[0], i
    out = np.empty((n, NCAL), dtype=np.float64)
    cdef double[:, ::1] o = out
    with nogil:
        for i in range(n):
            cal_features(&boards[i, 0, 0], board_contact(&boards[i, 0, 0]), &o[i, 0])
    return out


cdef double pub_score(const uint8_t* b, bint contact) noexcept nogil:
    """Tesauro's score of b for row 0 (the mover): point p of ours is b[p-1],
    the opponent's checkers there are b[25 + 24 - p].  Block k = 24 - p;
    the per-block weight sums are tabulated in PT."""
    cdef const double* w = &W[1][0] if contact else &W[0][0]
    cdef const double* pt = &PT[1][0][0] if contact else &PT[0][0][0]
    cdef int i, off = 15 - b[24]
    cdef double s = 0.0
    for i in range(24):
        off -= b[i]
        # our index i is point p = i + 1, block k = 23 - i
        s += pt[(23 - i) * 31 + 15 + <int>b[i] - <int>b[48 - i]]
    if off == 15:
        return 99999999.0
    # Tesauro's code sets x[120] = -pos[0] / 2 with the opponent's bar count
    # stored as a NEGATIVE number in pos[0]: the input is +count / 2
    # (gnubg_nn.pub_eval_score agrees; a literal reading of "-bar/2" does not).
    s += w[120] * (0.5 * b[25 + 24])
    s += w[121] * (off / 15.0)
    return s


cdef inline double _sig(double x) noexcept nogil:
    return 1.0 / (1.0 + exp(-x))


cdef void over_probs(const uint8_t* b, double* p) noexcept nogil:
    """Result of a finished game for the player on roll (row 1)."""
    cdef int i, t0 = 0, t1 = 0, bg = 0
    cdef const uint8_t* winner
    cdef const uint8_t* loser
    for i in range(25):
        t0 += b[i]
        t1 += b[25 + i]
    p[0] = p[1] = p[2] = p[3] = p[4] = 0.0
    if t1 == 0:         # the player on roll has already borne off (not a normal state)
        loser = b
        p[0] = 1.0
    else:
        loser = b + 25
    if (loser == b and t0 == 15) or (loser != b and t1 == 15):
        # gammon; backgammon if a loser's checker is on the bar or in the
        # winner's home board (the loser's points 19..24, indices 18..24)
        for i in range(18, 25):
            bg += loser[i]
        if loser == b:
            p[1] = 1.0
            if bg:
                p[2] = 1.0
        else:
            p[3] = 1.0
            if bg:
                p[4] = 1.0


cdef void order_probs(double* p) noexcept nogil:
    """Keep five estimated probabilities cumulative:
    win >= win gammon >= win backgammon and 1 - win >= lose gammon >= lose backgammon."""
    if p[1] > p[0]:
        p[1] = p[0]
    if p[2] > p[1]:
        p[2] = p[1]
    if p[3] > 1.0 - p[0]:
        p[3] = 1.0 - p[0]
    if p[4] > p[3]:
        p[4] = p[3]


cdef void invert_probs(const double* p, double* q) noexcept nogil:
    cdef double w = p[0], wg = p[1], wbg = p[2], lg = p[3], lbg = p[4]
    q[0] = 1.0 - w
    q[1] = lg
    q[2] = lbg
    q[3] = wg
    q[4] = wbg


cdef double probs_equity(const double* p) noexcept nogil:
    return 2.0 * p[0] - 1.0 + p[1] - p[3] + p[2] - p[4]


cdef void _pub_mover_probs(const uint8_t* b, double* p) noexcept nogil:
    cdef bint contact = board_contact(b)
    cdef double f[NCAL]
    cdef double x
    cdef int c = 1 if contact else 0
    cdef int k, j
    cal_features(b, contact, f)
    for k in range(5):
        x = 0.0
        for j in range(NCAL):
            x += CAL[c][k][j] * f[j]
        p[k] = _sig(x)
    order_probs(p)


# ---------------------------------------------------------------------------
# bear-off tables (installed by bgfast.evaluate from bgfast.bearoff)
# ---------------------------------------------------------------------------

# two-sided: TS_EQ[i * TS_N + j] cubeless equity of roller i against opponent j
cdef const double* TS_EQ = NULL
# TS_CF[(i * TS_N + j) * 3 + k]: the no-double cubeful money equities (k: cube
# centred, owned by the roller, by the opponent), or NULL
cdef const double* TS_CF = NULL
cdef Py_ssize_t TS_N = 0
cdef int TS_C = 0
# one-sided 15-checker table on OS_P points (6 or more): distributions of
# rolls to finish (r) and to take the first checker off (g), row i of each
# holding OS_L*[i] values from OS_*[OS_O*[i]] that start at roll OS_S*[i]
cdef const float* OS_R = NULL
cdef const float* OS_G = NULL
cdef const int64_t* OS_OR = NULL
cdef const int64_t* OS_OG = NULL
cdef const uint8_t* OS_SR = NULL
cdef const uint8_t* OS_SG = NULL
cdef const uint8_t* OS_LR = NULL
cdef const uint8_t* OS_LG = NULL
cdef Py_ssize_t OS_N = 0
cdef int OS_P = 6
# the slots a board in an installed table leaves empty: OS_P..24 of both rows
# (6..24 without a one-sided table)
cdef uint64_t TABLE_EMPTY = ((<uint64_t>0x7FFFF) << 6) | ((<uint64_t>0x7FFFF) << 31)
cdef enum:
    OS_MAX_WINDOW = 64         # the longest one-sided row table_probs handles
cdef object _keep = None


def set_tables(two_sided, int ts_checkers, one_sided=None, cubeful=None):
    """Install the bear-off tables (None to remove): ``two_sided`` float64[N, N]
    cubeless equities in gnubg index order; ``one_sided`` a one-sided
    15-checker table's rows, ``(points, values_r, offsets_r, lengths_r,
    starts_r, values_g, offsets_g, lengths_g, starts_g)`` (float32[M],
    int64[N], uint8[N], uint8[N] each; row i is ``lengths[i]`` values from
    ``values[offsets[i]]``, the first for roll ``starts[i]``); ``cubeful``
    float64[N, N, 3] the two-sided no-double cubeful money equities (cube
    centred, owned by the roller, by the opponent), or None."""
    global TS_EQ, TS_CF, TS_N, TS_C, OS_R, OS_G, OS_OR, OS_OG, OS_SR, OS_SG, OS_LR, OS_LG
    global OS_N, OS_P, TABLE_EMPTY, _keep
    cdef const double[:, ::1] ts
    cdef const double[:, :, ::1] cf
    cdef const float[::1] vr
    cdef const float[::1] vg
    cdef const int64_t[::1] orr
    cdef const int64_t[::1] og
    cdef const uint8_t[::1] lr
    cdef const uint8_t[::1] lg
    cdef const uint8_t[::1] sr
    cdef const uint8_t[::1] sg
    cdef int points = 6
    cdef Py_ssize_t i, n
    if one_sided is not None:
        points = one_sided[0]
        vr, orr, lr, sr, vg, og, lg, sg = one_sided[1:]
        n = orr.shape[0]
        if not 6 <= points <= 24:
            raise ValueError("a one-sided table on 6 to 24 points")
        if n != comb(points + 15, 15):
            raise ValueError(f"a one-sided 15-checker table on {points} points has "
                             f"{comb(points + 15, 15)} rows, not {n}")
        if not (lr.shape[0] == sr.shape[0] == og.shape[0] == lg.shape[0] == sg.shape[0] == n):
            raise ValueError("the one-sided rows' arrays differ in length")
        for i in range(n):
            if lr[i] > OS_MAX_WINDOW or lg[i] > OS_MAX_WINDOW:
                raise ValueError(f"one-sided rows of at most {OS_MAX_WINDOW} rolls")
            if (orr[i] < 0 or orr[i] + lr[i] > vr.shape[0]
                    or og[i] < 0 or og[i] + lg[i] > vg.shape[0]):
                raise ValueError("a one-sided row lies outside its values")
    TS_EQ = TS_CF = NULL
    TS_N = 0
    OS_R = OS_G = NULL
    OS_N = 0
    OS_P = points
    TABLE_EMPTY = ((<uint64_t>0x1FFFFFF >> points) << points)
    TABLE_EMPTY |= TABLE_EMPTY << 25
    _keep = (two_sided, one_sided, cubeful)
    if two_sided is not None:
        if ts_checkers > 14:
            raise ValueError("the two-sided table must have fewer than 15 checkers")
        ts = two_sided
        if cubeful is not None:
            cf = cubeful
            if cf.shape[0] != ts.shape[0] or cf.shape[1] != ts.shape[1] or cf.shape[2] != 3:
                raise ValueError("the cubeful table must have shape (N, N, 3)")
            TS_CF = &cf[0, 0, 0]
        TS_N = ts.shape[0]
        TS_C = ts_checkers
        TS_EQ = &ts[0, 0]
    if one_sided is not None:
        OS_N = n
        OS_R = &vr[0]
        OS_G = &vg[0]
        OS_OR = &orr[0]
        OS_OG = &og[0]
        OS_SR = &sr[0]
        OS_SG = &sg[0]
        OS_LR = &lr[0]
        OS_LG = &lg[0]


cdef uint64_t table_empty_slots() noexcept nogil:
    return TABLE_EMPTY


cdef inline int _home_counts(const uint8_t* row, int points, int* total) noexcept nogil:
    cdef int i, t = 0
    for i in range(points, 25):
        if row[i]:
            return 0
    for i in range(points):
        t += row[i]
    total[0] = t
    return 1


cdef inline int64_t _ts_pair(const uint8_t* b) noexcept nogil:
    """The two-sided table's entry (roller i, opponent j: i * TS_N + j) of
    b, or -1 outside the installed table."""
    cdef int t0, t1
    if TS_EQ == NULL or not _home_counts(b, 6, &t0) or not _home_counts(b + 25, 6, &t1):
        return -1
    if t0 == 0 or t1 == 0 or t0 > TS_C or t1 > TS_C:
        return -1
    return rank_counts(b + 25, 6) * TS_N + rank_counts(b, 6)


cdef int exact_cubeful(const uint8_t* b, double* e) noexcept nogil:
    cdef int64_t k = _ts_pair(b) if TS_CF != NULL else -1
    if k < 0:
        return 0
    e[0] = TS_CF[3 * k]
    e[1] = TS_CF[3 * k + 1]
    e[2] = TS_CF[3 * k + 2]
    return 1


cdef int exact_probs(const uint8_t* b, double* p) noexcept nogil:
    cdef int64_t k = _ts_pair(b)
    cdef double eq
    if k < 0:
        return 0
    eq = TS_EQ[k]
    p[0] = 0.5 * (eq + 1.0)
    if p[0] < 0.0:
        p[0] = 0.0
    elif p[0] > 1.0:
        p[0] = 1.0
    p[1] = p[2] = p[3] = p[4] = 0.0
    return 1


cdef inline double _at(const float* v, const int64_t* o, const uint8_t* st, const uint8_t* ln,
                       int64_t i, int k) noexcept nogil:
    """P(exactly k rolls) from row i."""
    cdef int d = k - st[i]
    if d < 0 or d >= ln[i]:
        return 0.0
    return v[o[i] + d]


cdef inline void _race_clamp(double* p) noexcept nogil:
    """Race probabilities of float32 rows into [0, 1], a gammon no likelier
    than the game it is won or lost in and a backgammon no likelier than
    the gammon (rounding can break the order)."""
    cdef int k
    for k in range(5):
        if p[k] < 0.0:
            p[k] = 0.0
        elif p[k] > 1.0:
            p[k] = 1.0
    order_probs(p)


cdef int table_probs(const uint8_t* b, double* p) noexcept nogil:
    cdef int t0, t1, k, kmax
    cdef int64_t i, j
    cdef double f
    cdef double tj[OS_MAX_WINDOW + 1]
    cdef double tg[OS_MAX_WINDOW + 1]
    if exact_probs(b, p):
        return 1
    if OS_R == NULL or not _home_counts(b, OS_P, &t0) or not _home_counts(b + 25, OS_P, &t1):
        return 0
    if t0 == 0 or t1 == 0:
        return 0
    i = rank_counts(b + 25, OS_P)     # the roller
    j = rank_counts(b, OS_P)
    p[0] = p[1] = p[2] = p[3] = p[4] = 0.0
    # the rows end at their lengths: the tails and sums stop there
    window_tails(OS_R + OS_OR[j], OS_LR[j], tj)
    if t0 == 15:
        window_tails(OS_G + OS_OG[j], OS_LG[j], tg)
    kmax = OS_SR[i] + OS_LR[i]
    for k in range(OS_SR[i], kmax):
        f = _at(OS_R, OS_OR, OS_SR, OS_LR, i, k)
        if f == 0.0:
            continue
        # the roller rolls first: it wins if the opponent needs >= k rolls
        p[0] += f * window_at_least(tj, OS_SR[j], OS_LR[j], k)
        if t0 == 15:
            p[1] += f * window_at_least(tg, OS_SG[j], OS_LG[j], k)
    if t1 == 15:
        window_tails(OS_G + OS_OG[i], OS_LG[i], tg)
        kmax = OS_SR[j] + OS_LR[j]
        for k in range(OS_SR[j], kmax):
            f = _at(OS_R, OS_OR, OS_SR, OS_LR, j, k)
            if f != 0.0:
                p[3] += f * window_at_least(tg, OS_SG[i], OS_LG[i], k + 1)
    _race_clamp(p)
    return 1



cdef int os_table_points() noexcept nogil:
    return OS_P if OS_R != NULL else 0


cdef int os_table_side(const uint8_t* row, double* r, double* g, int* total) noexcept nogil:
    """One side's distributions from the installed one-sided table, dense:
    r[k] = P(exactly k rolls to bear off), g[k] = P(exactly k rolls to take
    the first checker off) (g[0] = 1 for a side with a checker off), k <
    OS_MAX_WINDOW, and its checkers on the board in total; 1, or 0 when the
    table does not hold the row (slots 0..24 of one side)."""
    cdef int k
    cdef int64_t i
    if OS_R == NULL or not _home_counts(row, OS_P, total) or total[0] == 0:
        return 0
    i = rank_counts(row, OS_P)
    if OS_SR[i] + OS_LR[i] > OS_MAX_WINDOW or OS_SG[i] + OS_LG[i] > OS_MAX_WINDOW:
        return 0
    for k in range(OS_MAX_WINDOW):
        r[k] = _at(OS_R, OS_OR, OS_SR, OS_LR, i, k)
        g[k] = 0.0
    if total[0] < 15:
        g[0] = 1.0
    else:
        for k in range(OS_MAX_WINDOW):
            g[k] = _at(OS_G, OS_OG, OS_SG, OS_LG, i, k)
    return 1


cdef inline void _support(const double* d, int* lo, int* hi) noexcept nogil:
    """The first and last rolls of a dense distribution with a nonzero chance."""
    cdef int k
    lo[0] = OS_MAX_WINDOW
    hi[0] = -1
    for k in range(OS_MAX_WINDOW):
        if d[k] != 0.0:
            if lo[0] == OS_MAX_WINDOW:
                lo[0] = k
            hi[0] = k


cdef double _before(const double* a, const double* b, int shift) noexcept nogil:
    """The sum over k of a[k] P(b >= k + shift) for dense distributions of
    rolls: the chance that the side of a finishes at its k-th roll before
    the side of b at its (k + shift)-th.  Exactly 1, or 0, when the
    distributions' supports make it certain, or impossible."""
    cdef double tail[OS_MAX_WINDOW + 1]
    cdef double s = 0.0
    cdef int k, lo_a, hi_a, lo_b, hi_b
    _support(a, &lo_a, &hi_a)
    _support(b, &lo_b, &hi_b)
    if hi_a + shift <= lo_b:
        return 1.0
    if hi_b < lo_a + shift:
        return 0.0
    tail[OS_MAX_WINDOW] = 0.0
    for k in range(OS_MAX_WINDOW - 1, -1, -1):
        tail[k] = tail[k + 1] + b[k]
    for k in range(OS_MAX_WINDOW - shift):
        s += a[k] * tail[k + shift]
    return s


cdef void race_convolve(const double* ri, const double* gi, const double* ci, int ti,
                        const double* rj, const double* gj, const double* cj, int tj,
                        double* p) noexcept nogil:
    """The race probabilities of table_probs for the roller i (on roll)
    against j from dense distributions (os_table_side's, OS_MAX_WINDOW
    rolls) and the sides' checkers on the board ti, tj (a side with all 15
    can be gammoned).  A side with a checker in the other's home board can
    also be backgammoned: ci (cj) is the distribution of the rolls it needs
    to bring every checker out of there, which it must do before it can
    bear off, so that the other side wins a backgammon when it bears off
    first (NULL: none there)."""
    p[0] = p[1] = p[2] = p[3] = p[4] = 0.0
    # the roller rolls first: it wins if the opponent needs at least as many rolls
    p[0] = _before(ri, rj, 0)
    if tj == 15 and p[0] != 0.0:
        p[1] = _before(ri, gj, 0)
        if cj != NULL and p[1] != 0.0:
            p[2] = _before(ri, cj, 0)
    # the opponent wins at its k-th roll before the roller's first checker is off
    if ti == 15 and p[0] != 1.0:
        p[3] = _before(rj, gi, 1)
        if ci != NULL and p[3] != 0.0:
            p[4] = _before(rj, ci, 1)
    _race_clamp(p)

# registered evaluators (slots NUM_EVALUATORS .. MAX_EVALUATORS - 1)
cdef onroll_fn SLOT_FN[MAX_EVALUATORS]
cdef const void* SLOT_CTX[MAX_EVALUATORS]


cdef int register_evaluator_slot(int slot, onroll_fn fn, const void* ctx) noexcept nogil:
    if slot < NUM_EVALUATORS or slot >= MAX_EVALUATORS:
        return -1
    SLOT_FN[slot] = fn
    SLOT_CTX[slot] = ctx
    return 0


def slot_registered(int slot):
    """Whether an evaluator is registered in kernel slot ``slot`` (built-ins: always)."""
    if 0 <= slot < NUM_EVALUATORS:
        return True
    return NUM_EVALUATORS <= slot < MAX_EVALUATORS and SLOT_FN[slot] != NULL


cdef void _builtin_slot(const void* ctx, const uint8_t* b, double* p) noexcept nogil:
    """A built-in evaluator behind a registered slot (ctx holds its number)."""
    onroll_probs(b, <int><Py_ssize_t>ctx, p)


def alias_slot(int slot, int builtin):
    """Register built-in evaluator ``builtin`` (EVAL_*) in ``slot`` through the
    registration path (or clear the slot with builtin = -1); what a
    registrant such as the neural net does from its own kernel."""
    cdef onroll_fn fn = NULL
    if builtin >= NUM_EVALUATORS or builtin < -1:
        raise ValueError(f"no built-in evaluator {builtin}")
    if builtin >= 0:
        fn = _builtin_slot
    if register_evaluator_slot(slot, fn, <const void*><Py_ssize_t>builtin) != 0:
        raise ValueError(f"slot must be in {NUM_EVALUATORS}..{MAX_EVALUATORS - 1}")


cdef void mover_probs(const uint8_t* b, int evaluator, double* p) noexcept nogil:
    cdef double q[5]
    cdef int t0 = 0, t1 = 0, i
    cdef onroll_fn fn
    for i in range(25):
        t0 += b[i]
        t1 += b[25 + i]
    if t0 == 0 or t1 == 0:
        over_probs(b, q)
        invert_probs(q, p)
        return
    if evaluator >= NUM_EVALUATORS:
        fn = SLOT_FN[evaluator] if evaluator < MAX_EVALUATORS else NULL
        if fn != NULL:
            fn(SLOT_CTX[evaluator], b, q)
            invert_probs(q, p)
            return
    if evaluator == EVAL_COMPOSITE and table_probs(b, q):
        invert_probs(q, p)
        return
    _pub_mover_probs(b, p)


cdef void onroll_probs(const uint8_t* b, int evaluator, double* p) noexcept nogil:
    cdef double q[5]
    mover_probs(b, evaluator, q)
    invert_probs(q, p)


cdef void swap_board(const uint8_t* b, uint8_t* out) noexcept nogil:
    cdef uint8_t tmp[50]
    memcpy(tmp, b + 25, 25)
    memcpy(tmp + 25, b, 25)
    memcpy(out, tmp, 50)


cdef Py_ssize_t choose_play(MoveGen* g, const uint8_t* b, int d1, int d2,
                            int policy, int evaluator, uint8_t* out) noexcept nogil:
    cdef Py_ssize_t n, i, best = 0
    cdef double s, bs = -1e300
    cdef double p[5]
    cdef bint contact
    cdef const uint8_t* r
    g.n = 0
    n = movegen_plays(g, b, d1, d2)
    if n < 0:
        return n
    if n == 0:
        swap_board(b, out)
        return 0
    if n > 1:
        contact = board_contact(b)
        for i in range(n):
            r = g.out + 50 * i
            if policy == POLICY_PUBEVAL:
                s = pub_score(r, contact)
            else:
                mover_probs(r, evaluator, p)
                s = probs_equity(p)
            if s > bs:
                bs = s
                best = i
    memcpy(out, g.out + 50 * best, 50)
    return n


# ---------------------------------------------------------------------------
# batch entry points (bgfast.evaluate validates the input)
# ---------------------------------------------------------------------------

def pubeval_scores(const uint8_t[:, :, ::1] boards, const int8_t[::1] contact):
    """Scores of boards for row 0; contact[i] = 1/0 picks the weights, -1 = from the board."""
    cdef Py_ssize_t n = boards.shape[0], i
    out = np.empty(n, dtype=np.float64)
    cdef double[::1] o = out
    cdef bint c
    with nogil:
        for i in range(n):
            if contact[i] < 0:
                c = board_contact(&boards[i, 0, 0])
            else:
                c = contact[i] != 0
            o[i] = pub_score(&boards[i, 0, 0], c)
    return out


def evaluate_probs(const uint8_t[:, :, ::1] boards, int evaluator, int nthreads=1):
    """5 probabilities for the player on roll of each board, float64[N, 5]."""
    cdef Py_ssize_t n = boards.shape[0], i
    out = np.empty((n, 5), dtype=np.float64)
    cdef double[:, ::1] o = out
    if nthreads <= 1:
        with nogil:
            for i in range(n):
                onroll_probs(&boards[i, 0, 0], evaluator, &o[i, 0])
    else:
        for i in prange(n, nogil=True, num_threads=nthreads, schedule="static"):
            onroll_probs(&boards[i, 0, 0], evaluator, &o[i, 0])
    return out


def choose_plays(const uint8_t[:, :, ::1] boards, const int64_t[:, ::1] dice,
                 int policy, int evaluator):
    """The policy's play for each (board, dice): (counts int64[N], results uint8[N,2,25]).

    counts[i] = 0 means the roll cannot be played (the result is the board
    with the turn passed); a negative count is a move generation error
    (MG_ERR_DICE for dice outside 1..6; that result row is not written).
    """
    cdef Py_ssize_t n = boards.shape[0], i
    counts = np.empty(n, dtype=np.int64)
    results = np.empty((n, 2, 25), dtype=np.uint8)
    cdef int64_t[::1] c = counts
    cdef uint8_t[:, :, ::1] r = results
    cdef MoveGen g
    if movegen_init(&g, 4096, 0) != 0:
        raise MemoryError("move generator")
    try:
        with nogil:
            for i in range(n):
                c[i] = choose_play(&g, &boards[i, 0, 0], mg_die(dice[i, 0]), mg_die(dice[i, 1]),
                                   policy, evaluator, &r[i, 0, 0])
    finally:
        movegen_free(&g)
    return counts, results



def mover_values(onroll, bint sort=True):
    """The values of plays for the player who made them, from the
    probabilities ``onroll`` (float64[n, 5], C order) of their results for
    the player on roll: ``(probs float64[n, 5], equity float64[n], order
    int64[n])`` -- the probabilities inverted, their cubeless equity and the
    rows by equity, best first, ties in row order.  The same numbers as
    ``bgfast.evaluate.invert``, ``equity`` and ``numpy.argsort(-equity,
    kind="stable")`` (which sorts many plays, or NaN equities, itself);
    without ``sort`` the order is None.  (Raw pointers, not memoryviews:
    the call ranks the plays of one position, where their set-up would
    cost as much as the work.)"""
    if (not isinstance(onroll, np.ndarray) or onroll.dtype != np.float64 or onroll.ndim != 2
            or onroll.shape[1] != 5 or not onroll.flags.c_contiguous):
        raise ValueError("onroll must be a C-ordered float64[n, 5] array")
    cdef Py_ssize_t n = onroll.shape[0], i, j
    cdef double e
    cdef bint nan = False
    probs = cnp.PyArray_EMPTY(2, cnp.PyArray_DIMS(onroll), cnp.NPY_FLOAT64, 0)
    eq = cnp.PyArray_EMPTY(1, cnp.PyArray_DIMS(onroll), cnp.NPY_FLOAT64, 0)
    cdef const double* src = <const double*>cnp.PyArray_DATA(onroll)
    cdef double* p = <double*>cnp.PyArray_DATA(probs)
    cdef double* q = <double*>cnp.PyArray_DATA(eq)
    cdef int64_t* o
    for i in range(n):
        invert_probs(src + 5 * i, p + 5 * i)
        q[i] = probs_equity(p + 5 * i)
        nan = nan or q[i] != q[i]
    if not sort:
        return probs, eq, None
    if n > 64 or nan:
        return probs, eq, np.argsort(-eq, kind="stable")
    order = cnp.PyArray_EMPTY(1, cnp.PyArray_DIMS(onroll), cnp.NPY_INT64, 0)
    o = <int64_t*>cnp.PyArray_DATA(order)
    for i in range(n):                       # insertion sort: stable, fast for few plays
        e = q[i]
        j = i
        while j > 0 and q[o[j - 1]] < e:
            o[j] = o[j - 1]
            j -= 1
        o[j] = i
    return probs, eq, order


def equities(const double[:, ::1] probs):
    """The cubeless equity of each row of probabilities ``float64[n, 5]``
    (the numbers of ``bgfast.evaluate.equity``, without numpy's per-call
    cost on a few rows)."""
    cdef Py_ssize_t n = probs.shape[0], i
    out = np.empty(n, dtype=np.float64)
    cdef double[::1] e = out
    for i in range(n):
        e[i] = probs_equity(&probs[i, 0])
    return out
