# cython: language_level=3
"""Private kernels of the bear-off databases (see bgfast/bearoff.py).

One-sided positions are checker counts ``c[0..P-1]`` (point 1..P) with up to
C checkers.  They are numbered like gnubg's bear-off databases: by the number
of checkers first, then lexicographically on the ascending list of the
checkers' points.  That numbering does not depend on C, so a table with C
checkers holds indices ``0 .. C(P+C, P) - 1`` (0 = no checker left).

Two-sided tables use a *build order*: one-sided positions sorted by pip
count (stable), so every move leads to a smaller build index.  The table of
value ``t`` is stored column-major: ``E(i, j)`` (roller in i, opponent in j)
at ``t * N * N + j * N + i``.  It is solved shell by shell (see
``solve_shells``).
"""
import numpy as np
cimport numpy as cnp
cimport cython
from cython.parallel cimport prange
from libc.stdint cimport uint8_t, int8_t, int16_t, int32_t, int64_t
from libc.string cimport memset, memcpy
from libc.stdlib cimport malloc, realloc, free, qsort
from libc.math cimport lround

cnp.import_array()

cdef enum:
    MAXP = 24          # one-sided points supported by the kernels
    MAXSEQ = 8192      # distinct play sequences collected for one roll
    LMAX = 256         # longest roll distribution handled while building

cdef int64_t COMB[64][64]

cdef void _init_comb() noexcept:
    cdef int n, k
    for n in range(64):
        for k in range(64):
            COMB[n][k] = 0
        COMB[n][0] = 1
        for k in range(1, n + 1):
            COMB[n][k] = COMB[n - 1][k - 1] + COMB[n - 1][k]

_init_comb()

# The 21 distinct rolls, doubles first; weight out of 36.
cdef int ROLL_D1[21]
cdef int ROLL_D2[21]
cdef int ROLL_W[21]

cdef void _init_rolls() noexcept:
    cdef int a, b, r = 0
    for a in range(1, 7):
        ROLL_D1[r] = a
        ROLL_D2[r] = a
        ROLL_W[r] = 1
        r += 1
    for a in range(1, 7):
        for b in range(a + 1, 7):
            ROLL_D1[r] = b
            ROLL_D2[r] = a
            ROLL_W[r] = 2
            r += 1

_init_rolls()


def comb(int n, int k):
    """Binomial coefficient C(n, k) for 0 <= n < 64."""
    if n < 0 or n >= 64 or k < 0 or k > n:
        return 0
    return COMB[n][k]


def rolls():
    """The 21 rolls as ``(d1, d2, weight_out_of_36)`` in kernel order."""
    return [(ROLL_D1[r], ROLL_D2[r], ROLL_W[r]) for r in range(21)]


# ---------------------------------------------------------------- indexing

cdef int64_t rank_counts(const uint8_t* c, int P) noexcept nogil:
    cdef int n = 0, p, t, prev, s
    cdef int64_t r
    for p in range(P):
        n += c[p]
    if n == 0:
        return 0
    r = COMB[P + n - 1][P]          # positions with fewer checkers
    prev = 1                        # smallest point allowed for the next checker
    t = 0                           # checkers on lower points
    for p in range(1, P + 1):
        if c[p - 1] == 0:
            continue
        # only the first checker of a point counts: the multisets whose t-th
        # checker lies on prev .. p-1 come before (the others start at p)
        if p > prev:
            s = n - t - 1
            r += COMB[P - prev + s + 1][s + 1] - COMB[P - p + s + 1][s + 1]
        prev = p
        t += c[p - 1]
    return r


cdef void unrank_counts(int64_t idx, int P, uint8_t* c) noexcept nogil:
    cdef int n = 0, t, v, s
    cdef int64_t cnt
    memset(c, 0, P)
    if idx <= 0:
        return
    while COMB[P + n][P] <= idx:   # positions with <= n checkers
        n += 1
    idx -= COMB[P + n - 1][P]
    v = 1
    for t in range(n):
        s = n - t - 1
        while True:
            cnt = COMB[P - v + s][s]
            if idx < cnt:
                break
            idx -= cnt
            v += 1
        c[v - 1] += 1


def ranks(const uint8_t[:, ::1] counts):
    """``uint8[N, P]`` checker counts -> ``int64[N]`` gnubg indices."""
    cdef Py_ssize_t n = counts.shape[0], i
    cdef int P = counts.shape[1]
    out = np.empty(n, dtype=np.int64)
    cdef int64_t[::1] o = out
    if P > MAXP:
        raise ValueError("too many points")
    with nogil:
        for i in range(n):
            o[i] = rank_counts(&counts[i, 0], P)
    return out


def unranks(const int64_t[::1] idx, int P):
    """``int64[N]`` gnubg indices -> ``uint8[N, P]`` checker counts."""
    cdef Py_ssize_t n = idx.shape[0], i
    out = np.zeros((n, P), dtype=np.uint8)
    cdef uint8_t[:, ::1] o = out
    if P > MAXP or P < 1:
        raise ValueError("bad number of points")
    with nogil:
        for i in range(n):
            unrank_counts(idx[i], P, &o[i, 0])
    return out


# --------------------------------------------------------- move generation

cdef inline bint _all_home(const uint8_t* c, int P) noexcept nogil:
    cdef int p
    for p in range(6, P):
        if c[p]:
            return False
    return True


cdef inline int _highest(const uint8_t* c, int P) noexcept nogil:
    """The highest occupied point (1-based; 0 for no checker)."""
    cdef int p
    for p in range(P, 0, -1):
        if c[p - 1]:
            return p
    return 0


cdef inline bint _may_move(int p, int d, bint home, int hi) noexcept nogil:
    """RULES.md "Bearing off": a checker on point p (1-based) moves d pips if
    it lands on the board, or bears off with all checkers home, by the exact
    die or, with a larger die, from the highest occupied point hi."""
    return p > d or (home and (p == d or p == hi))


cdef inline bint _can_move(const uint8_t* c, int P, int p, int d) noexcept nogil:
    """Can a checker on point p+1 move d pips (or bear off)?"""
    if c[p] == 0:
        return False
    return p + 1 > d or _may_move(p + 1, d, _all_home(c, P), _highest(c, P))


cdef inline void _do(uint8_t* c, int p, int d) noexcept nogil:
    c[p] -= 1
    if p + 1 > d:
        c[p - d] += 1


cdef inline void _undo(uint8_t* c, int p, int d) noexcept nogil:
    c[p] += 1
    if p + 1 > d:
        c[p - d] -= 1


cdef inline bint _empty(const uint8_t* c, int P) noexcept nogil:
    cdef int p
    for p in range(P):
        if c[p]:
            return False
    return True


cdef inline void _emit(const uint8_t* c, int P, int64_t* out, int* n, int maxout) noexcept nogil:
    if n[0] < maxout:
        out[n[0]] = rank_counts(c, P)
    n[0] += 1


cdef void _doubles(uint8_t* c, int P, int d, int left, int maxsrc,
                   int64_t* out, int* n, int maxout) noexcept nogil:
    # Sources are taken in non-increasing order: every legal sequence of one
    # die can be reordered that way without changing its result.
    cdef int p
    cdef bint moved = False
    if left == 0 or _empty(c, P):
        _emit(c, P, out, n, maxout)
        return
    for p in range(maxsrc, -1, -1):
        if _can_move(c, P, p, d):
            moved = True
            _do(c, p, d)
            _doubles(c, P, d, left - 1, p, out, n, maxout)
            _undo(c, p, d)
    if not moved:
        # Emit only if no checker at all can move (otherwise this prefix is a
        # non-canonical order of a longer sequence).
        for p in range(P - 1, maxsrc, -1):
            if _can_move(c, P, p, d):
                return
        _emit(c, P, out, n, maxout)


cdef int _cmp64(const void* a, const void* b) noexcept nogil:
    cdef int64_t x = (<const int64_t*>a)[0], y = (<const int64_t*>b)[0]
    return (x > y) - (x < y)


cdef int successors(const uint8_t* c0, int P, int d1, int d2,
                    int64_t* out, int maxout) noexcept nogil:
    cdef uint8_t c[MAXP]
    cdef int n = 0, p, q, k, m, o, a, b
    cdef bint second
    memcpy(c, c0, P)
    if _empty(c, P):
        return 0
    if d1 == d2:
        _doubles(c, P, d1, 4, P - 1, out, &n, maxout)
    else:
        for o in range(2):
            a = d1 if o == 0 else d2
            b = d2 if o == 0 else d1
            for p in range(P):
                if not _can_move(c, P, p, a):
                    continue
                _do(c, p, a)
                second = False
                if not _empty(c, P):
                    for q in range(P):
                        if _can_move(c, P, q, b):
                            second = True
                            _do(c, q, b)
                            _emit(c, P, out, &n, maxout)
                            _undo(c, q, b)
                if not second:
                    # Only one die can be played (it bore off the last checker).
                    _emit(c, P, out, &n, maxout)
                _undo(c, p, a)
    if n > maxout:
        return -1
    qsort(out, n, sizeof(int64_t), _cmp64)
    m = 0
    for k in range(n):
        if m == 0 or out[k] != out[m - 1]:
            out[m] = out[k]
            m += 1
    return m


def successor_ranks(const uint8_t[::1] counts, int d1, int d2):
    """Distinct results (gnubg indices, ascending) of roll d1-d2 from counts."""
    cdef int P = counts.shape[0], n
    cdef int64_t buf[MAXSEQ]
    if P > MAXP or P < 1:
        raise ValueError("bad number of points")
    n = successors(&counts[0], P, d1, d2, buf, MAXSEQ)
    if n < 0:
        raise RuntimeError("too many plays")
    return [buf[k] for k in range(n)]


def successors_batch(const uint8_t[:, ::1] counts):
    """The distinct results (gnubg indices on P = counts.shape[1] points,
    ascending) of each of the 21 rolls (``rolls()`` order) from each row of
    counts: ``(offsets int64[n * 21 + 1], ranks int64[M])``, the results of
    row i and roll r at ``ranks[offsets[21 i + r]:offsets[21 i + r + 1]]``."""
    cdef Py_ssize_t n = counts.shape[0], i, cap = 1 << 20, used = 0
    cdef int P = counts.shape[1], r, m
    cdef int64_t buf[MAXSEQ]
    cdef int64_t* out
    cdef int64_t* grown
    if P > MAXP or P < 1:
        raise ValueError("bad number of points")
    offsets = np.zeros(n * 21 + 1, dtype=np.int64)
    cdef int64_t[::1] off = offsets
    out = <int64_t*>malloc(cap * sizeof(int64_t))
    if out == NULL:
        raise MemoryError()
    try:
        with nogil:
            for i in range(n):
                for r in range(21):
                    m = successors(&counts[i, 0], P, ROLL_D1[r], ROLL_D2[r], buf, MAXSEQ)
                    if m < 0:
                        break
                    if used + m > cap:
                        while used + m > cap:
                            cap *= 2
                        grown = <int64_t*>realloc(out, cap * sizeof(int64_t))
                        if grown == NULL:
                            m = -2
                            break
                        out = grown
                    memcpy(out + used, buf, m * sizeof(int64_t))
                    used += m
                    off[21 * i + r + 1] = used
                if m < 0:
                    break
        if m == -1:
            raise RuntimeError("too many plays")
        if m == -2:
            raise MemoryError()
        ranks = np.empty(used, dtype=np.int64)
        if used:
            memcpy(cnp.PyArray_DATA(ranks), out, used * sizeof(int64_t))
        return offsets, ranks
    finally:
        free(out)


# ---------------------------------------------------------- one-sided build

# ------------------------------------------- single-die move table (fast path)

def single_moves(int P, int C, int nthreads=2):
    """For every position and die, the distinct results of moving one checker.

    Returns ``(mv int32[N*6*P], nmv uint8[N*6])``: the results of die d from
    index i are ``mv[(i*6 + d-1)*P : ... + nmv[i*6 + d-1]]`` (gnubg indices).
    """
    cdef int64_t N = COMB[P + C][P]
    mv_np = np.zeros(N * 6 * P, dtype=np.int32)
    nmv_np = np.zeros(N * 6, dtype=np.uint8)
    cdef int32_t[::1] mv = mv_np
    cdef uint8_t[::1] nmv = nmv_np
    cdef Py_ssize_t i
    with nogil:
        for i in prange(1, N, schedule="static", num_threads=nthreads):
            _single_moves_of(i, P, &mv[0], &nmv[0])
    return mv_np, nmv_np


cdef void _single_moves_of(int64_t i, int P, int32_t* mv, uint8_t* nmv) noexcept nogil:
    cdef uint8_t c[MAXP]
    cdef int d, p, n
    unrank_counts(i, P, c)
    for d in range(1, 7):
        n = 0
        for p in range(P - 1, -1, -1):
            if _can_move(c, P, p, d):
                _do(c, p, d)
                mv[(i * 6 + d - 1) * P + n] = <int32_t>rank_counts(c, P)
                _undo(c, p, d)
                n += 1
        nmv[i * 6 + d - 1] = <uint8_t>n


cdef struct _Moves:
    int P
    const int32_t* mv
    const uint8_t* nmv
    int32_t* stamp      # per thread: int32[N], marks of the current set
    int32_t cur


cdef inline void _add(_Moves* m, int32_t x, int32_t* out, int* n) noexcept nogil:
    if m.stamp[x] != m.cur:
        m.stamp[x] = m.cur
        out[n[0]] = x
        n[0] += 1


cdef inline void _next_set(_Moves* m, int64_t N) noexcept nogil:
    m.cur += 1
    if m.cur >= 2000000000:
        memset(m.stamp, 0, N * sizeof(int32_t))
        m.cur = 1


cdef int _roll_succ(_Moves* m, int64_t N, int32_t i, int d1, int d2,
                    int32_t* out, int32_t* work) noexcept nogil:
    """Distinct results (gnubg indices, unsorted) of roll d1-d2 from i."""
    cdef int P = m.P, n = 0, nw, s, s2, lev, o, a, b, na, nb
    cdef int32_t x, y
    cdef int32_t* A
    cdef int32_t* B
    cdef int32_t* T
    _next_set(m, N)
    if d1 != d2:
        for o in range(2):
            a = d1 if o == 0 else d2
            b = d2 if o == 0 else d1
            na = m.nmv[i * 6 + a - 1]
            for s in range(na):
                x = m.mv[(i * 6 + a - 1) * P + s]
                nb = m.nmv[x * 6 + b - 1]
                if x == 0 or nb == 0:
                    _add(m, x, out, &n)
                else:
                    for s2 in range(nb):
                        _add(m, m.mv[(x * 6 + b - 1) * P + s2], out, &n)
        return n
    A = work
    B = out
    A[0] = i
    nw = 1
    for lev in range(4):
        _next_set(m, N)
        n = 0
        for s in range(nw):
            x = A[s]
            nb = m.nmv[x * 6 + d1 - 1]
            if x == 0 or nb == 0:
                _add(m, x, B, &n)
            else:
                for s2 in range(nb):
                    _add(m, m.mv[(x * 6 + d1 - 1) * P + s2], B, &n)
        T = A
        A = B
        B = T
        nw = n
    if A != out:
        memcpy(out, A, nw * sizeof(int32_t))
    return nw


def roll_successors(int P, mv, nmv, int32_t i, int d1, int d2):
    """Distinct results (ascending gnubg indices) of roll d1-d2 from index i,
    using the single-die move table of ``single_moves``."""
    cdef const int32_t[::1] mvv = mv
    cdef const uint8_t[::1] nmvv = nmv
    cdef int64_t N = nmvv.shape[0] // 6
    stamp = np.zeros(N, dtype=np.int32)
    cdef int32_t[::1] st = stamp
    out = np.zeros(MAXSEQ, dtype=np.int32)
    work = np.zeros(MAXSEQ, dtype=np.int32)
    cdef int32_t[::1] o = out
    cdef int32_t[::1] w = work
    cdef _Moves m
    m.P = P
    m.mv = &mvv[0]
    m.nmv = &nmvv[0]
    m.stamp = &st[0]
    m.cur = 0
    n = _roll_succ(&m, N, i, d1, d2, &o[0], &w[0])
    return sorted(out[:n].tolist())


cdef void _to_window(double* buf, int hi, int W, uint8_t* start, uint8_t* length,
                     float* out, double* lost) noexcept nogil:
    """Store the distribution buf[0..hi) (zero beyond) as W bins from start:
    the bins before the first one >= 1e-13 are folded into the first bin, and
    the bins after the last one >= 1e-13 (or past the window) into the last
    stored bin, so the total mass stays 1.  ``length`` gets the number of
    stored bins (the rest of the window is 0), ``lost`` the folded mass."""
    cdef int s = 0, k, e
    cdef double head = 0.0, tail = 0.0
    while s < hi - 1 and buf[s] < 1e-13:
        head += buf[s]
        s += 1
    if s > 255 - W:
        s = 255 - W
    e = hi
    while e > s + 1 and buf[e - 1] < 1e-13:
        e -= 1
    if e > s + W:
        e = s + W
    for k in range(e, hi):
        tail += buf[k]
    start[0] = <uint8_t>s
    length[0] = <uint8_t>(e - s)
    for k in range(e - s):
        out[k] = <float>buf[s + k]
    for k in range(e - s, W):
        out[k] = 0.0
    out[0] += <float>head
    out[e - s - 1] += <float>tail
    lost[0] = head + tail


cdef struct _OneSided:
    int P
    int C
    int W
    int quantize
    int64_t N
    int64_t R
    const int64_t* perm    # build index -> gnubg index
    const int32_t* inv     # gnubg index -> build index
    const uint8_t* cnt     # [N, P] checker counts in build order
    const int64_t* T       # rank terms [P+1][16][16] (see _rank_terms)
    const int64_t* K       # [16]
    const int8_t* nchk
    uint8_t* start_r
    uint8_t* start_g
    uint8_t* len_r      # stored bins of each distribution (the rest are 0)
    uint8_t* len_g
    float* dist_r
    float* dist_g
    double* mean_r
    double* mean_g      # mean_g[-1] == 0: "a checker is off"
    int32_t* hk         # ring [R][2][3][6] (see _h): the best result after 1..3 moves of die d
    double* lost


cdef void _quantize(float* d, int W) noexcept nogil:
    """Round to multiples of 1/65535 (gnubg's storage precision)."""
    cdef int b
    for b in range(W):
        d[b] = <float>(lround(d[b] * 65535.0) / 65535.0)


cdef inline void _keep_min(const double* mean, int32_t k, double* bv, int32_t* bk) noexcept nogil:
    """(bv, bk) = the lexicographic minimum of (mean[k], k) and (bv, bk), without
    a branch (the comparisons of a best-play search are unpredictable)."""
    cdef double v = mean[k]
    cdef bint lt = (v < bv[0]) | ((v == bv[0]) & (k < bk[0]))
    bv[0] = v if lt else bv[0]
    bk[0] = k if lt else bk[0]


cdef inline int64_t _h(int64_t R, int64_t y, int g, int lev, int d) noexcept nogil:
    # The 36 entries [g][lev][d] of position y lie together (one position's
    # lookups touch few cache lines).  A ring of R slots (a power of two):
    # H(y) is only read while positions at most 6 pips above y are being
    # solved, and R covers that window.  An entry is the position reached;
    # its value is mean_r / mean_g of it.
    return (y & (R - 1)) * 36 + (g * 3 + lev) * 6 + d - 1


cdef void _pos_moves(_OneSided* x, int64_t i, int32_t* mvl, int32_t* nm) noexcept nogil:
    """The single-die moves of i (build indices): mvl[(d-1)*MAXP + s], nm[d-1].

    The index of a result comes from the index of i by the rank's point
    terms (see ``_rank_terms``): moving one checker from point p to q
    changes the terms of points q..p only, bearing it off those of 1..p and
    the checker count."""
    cdef int P = x.P, d, p, q, n
    cdef const uint8_t* c = x.cnt + i * P
    cdef int m[MAXP + 2]
    cdef int64_t S[MAXP + 1]
    cdef int64_t r0 = x.perm[i], delta
    cdef const int64_t* T = x.T
    cdef int hi = _highest(c, P)
    cdef bint home = hi <= 6
    m[P + 1] = 0
    for p in range(P, 0, -1):
        m[p] = m[p + 1] + c[p - 1]
    n = m[1]
    # S[p] = the sum over points 1..p of the change of their term when one
    # more checker lies below them (m - 1)
    S[0] = 0
    for p in range(1, P + 1):
        S[p] = S[p - 1]
        if m[p] > 0:
            S[p] += T[_ti(p, m[p] - 1, c[p - 1])] - T[_ti(p, m[p], c[p - 1])]
    for d in range(1, 7):
        nm[d - 1] = 0
        for p in range(P, 0, -1):
            if c[p - 1] == 0 or not _may_move(p, d, home, hi):
                continue
            # the checker leaves p: its term with one checker fewer
            delta = T[_ti(p, m[p] - 1, c[p - 1] - 1)] - T[_ti(p, m[p], c[p - 1])]
            if p > d:
                q = p - d
                delta += (T[_ti(q, m[q], c[q - 1] + 1)] - T[_ti(q, m[q], c[q - 1])]
                          + S[p - 1] - S[q])
            else:           # borne off
                delta += x.K[n - 1] - x.K[n] + S[p - 1]
            mvl[(d - 1) * MAXP + nm[d - 1]] = x.inv[r0 + delta]
            nm[d - 1] += 1


cdef inline int _ti(int p, int m, int c) noexcept nogil:
    return (p * 16 + m) * 16 + c


def _rank_terms(int P):
    """The rank of gnubg's one-sided numbering as a sum of point terms:
    ``index(c) = K[n] + sum over points p of T[p, m_p, c_p]``, where n is the
    number of checkers and m_p the number on points >= p.  Returns
    ``(T int64[P+1, 16, 16], K int64[16])``."""
    T = np.zeros((P + 1, 16, 16), dtype=np.int64)
    K = np.zeros(16, dtype=np.int64)

    def A(s, p):
        return COMB[P - p + s + 1][s + 1]

    for p in range(1, P + 1):
        for m in range(1, 16):
            for c in range(m + 1):
                T[p, m, c] = A(m - c - 1, p) - A(m - 1, p)
    for n in range(1, 16):
        K[n] = COMB[P + n - 1][P] + A(n - 1, 1) - 1
    return T, K


cdef void _pos_roll(_OneSided* x, int64_t i, int r, const int32_t* mvl,
                    const int32_t* nm, int32_t* kr, int32_t* kg) noexcept nogil:
    """Best play of roll r from i: the lexicographic minimum of (expected
    rolls, index) over the results, through the tables hk: for a solved
    position y and die d, the best result of 1, 2, 3 moves of d from y.  A
    roll a-b is min over y in M(i, a) of H1(y, b) (and the other order), a
    double d is min over y in M(i, d) of H3(y, d).  kg: the same for the
    gammon distribution (-1: a checker is off; only for positions with C
    checkers)."""
    cdef int ni = x.nchk[i], o, a, bb, lev, s
    cdef bint full = ni == x.C
    cdef int32_t kbest_r = 2147483647, kbest_g = 2147483647
    cdef double best_r = 1e300, best_g = 1e300
    cdef int64_t y
    cdef const int32_t* mvs
    lev = 2 if ROLL_D1[r] == ROLL_D2[r] else 0
    for o in range(1 if ROLL_D1[r] == ROLL_D2[r] else 2):
        a = ROLL_D1[r] if o == 0 else ROLL_D2[r]
        bb = ROLL_D2[r] if o == 0 else ROLL_D1[r]
        mvs = mvl + (a - 1) * MAXP
        for s in range(nm[a - 1]):
            _keep_min(x.mean_r, x.hk[_h(x.R, mvs[s], 0, lev, bb)], &best_r, &kbest_r)
        if full:
            for s in range(nm[a - 1]):
                y = mvs[s]
                _keep_min(x.mean_g, -1 if x.nchk[y] < ni else x.hk[_h(x.R, y, 1, lev, bb)],
                          &best_g, &kbest_g)
    kr[0] = kbest_r
    kg[0] = kbest_g if full else -1


cdef inline void _add_shifted(double* buf, double w, const uint8_t* start,
                             const uint8_t* length, const float* dist, int64_t k,
                             int W) noexcept nogil:
    """buf += w * (the distribution of k, one roll later)."""
    cdef int b, n = length[k]
    cdef double* o = buf + start[k] + 1
    cdef const float* d = dist + k * W
    for b in range(n):
        o[b] += w * d[b]


cdef inline int _shifted_end(const uint8_t* start, const uint8_t* length,
                             const int32_t* ks, int hi) noexcept nogil:
    """The end of the sum of the 21 distributions ks (one roll later)."""
    cdef int r, e
    for r in range(21):
        if ks[r] >= 0:
            e = start[ks[r]] + length[ks[r]] + 1
            if e > hi:
                hi = e
    return hi


cdef inline void _settle(double* buf, int hi, int W, uint8_t* start, uint8_t* length,
                         float* out, double* lost) noexcept nogil:
    """Divide the 36-weighted sums and store them as a window."""
    cdef int b
    for b in range(hi):
        buf[b] *= (1.0 / 36.0)
    _to_window(buf, hi, W, start, length, out, lost)


cdef inline double _window_mean(const float* d, int s, int n) noexcept nogil:
    cdef double m = 0.0
    cdef int b
    for b in range(n):
        m += (s + b) * d[b]
    return m


cdef void _pos_finish(_OneSided* x, int64_t i, const int32_t* kr,
                      const int32_t* kg) noexcept nogil:
    """Distributions, window and means of i from its 21 best plays."""
    cdef int W = x.W, r, hi
    cdef bint full = x.nchk[i] == x.C
    cdef double buf_r[LMAX]
    cdef double buf_g[LMAX]
    cdef double lr = 0.0, lg = 0.0
    hi = _shifted_end(x.start_r, x.len_r, kr, 1)
    memset(buf_r, 0, hi * sizeof(double))
    for r in range(21):
        _add_shifted(buf_r, ROLL_W[r], x.start_r, x.len_r, x.dist_r, kr[r], W)
    _settle(buf_r, hi, W, &x.start_r[i], &x.len_r[i], &x.dist_r[i * W], &lr)
    if full:
        hi = _shifted_end(x.start_g, x.len_g, kg, 2)
        memset(buf_g, 0, hi * sizeof(double))
        for r in range(21):
            if kg[r] >= 0:
                _add_shifted(buf_g, ROLL_W[r], x.start_g, x.len_g, x.dist_g, kg[r], W)
            else:
                buf_g[1] += ROLL_W[r]    # this roll bears a checker off
        _settle(buf_g, hi, W, &x.start_g[i], &x.len_g[i], &x.dist_g[i * W], &lg)
    else:
        # fewer than C checkers: a checker is already off (0 rolls)
        x.start_g[i] = 0
        x.len_g[i] = 1
        memset(&x.dist_g[i * W], 0, W * sizeof(float))
        x.dist_g[i * W] = 1.0
    x.lost[i] = lr if lr > lg else lg
    if x.quantize:
        _quantize(&x.dist_r[i * W], x.len_r[i])
        if full:
            _quantize(&x.dist_g[i * W], x.len_g[i])
    # the expectations that later choices use (from the stored window)
    x.mean_r[i] = _window_mean(&x.dist_r[i * W], x.start_r[i], x.len_r[i])
    x.mean_g[i] = _window_mean(&x.dist_g[i * W], x.start_g[i], x.len_g[i]) if full else 0.0


cdef void _pos_h(_OneSided* x, int64_t i, int d, int lev, const int32_t* mvl,
                 const int32_t* nm) noexcept nogil:
    """H(i, lev, d): best result of lev+1 moves of die d from i."""
    cdef int ni = x.nchk[i], s
    cdef bint full = ni == x.C
    cdef const int32_t* mvs = mvl + (d - 1) * MAXP
    cdef int nmoves = nm[d - 1]
    cdef double best_r = 1e300, best_g = 1e300
    cdef int32_t kbest_r = 2147483647, kbest_g = 2147483647, hk
    cdef int64_t y
    if lev == 0:
        for s in range(nmoves):
            _keep_min(x.mean_r, mvs[s], &best_r, &kbest_r)
    else:
        for s in range(nmoves):
            _keep_min(x.mean_r, x.hk[_h(x.R, mvs[s], 0, lev - 1, d)], &best_r, &kbest_r)
    if full:
        for s in range(nmoves):
            y = mvs[s]
            if x.nchk[y] < ni:
                hk = -1
            elif lev == 0:
                hk = <int32_t>y
            else:
                hk = x.hk[_h(x.R, y, 1, lev - 1, d)]
            _keep_min(x.mean_g, hk, &best_g, &kbest_g)
    if nmoves == 0:     # no checker can move: the position stays
        kbest_r = <int32_t>i
        kbest_g = <int32_t>i
    x.hk[_h(x.R, i, 0, lev, d)] = kbest_r
    x.hk[_h(x.R, i, 1, lev, d)] = kbest_g if full else -1


cdef extern from *:
    void __builtin_prefetch(const void* p) noexcept nogil


cdef void _pos_solve(_OneSided* x, int64_t q) noexcept nogil:
    """Solve position q: its moves, the best play of each roll, its
    distributions and its H entries (its successors are solved)."""
    cdef int32_t mv[6 * MAXP]
    cdef int32_t nm[6]
    cdef int32_t kk[42]
    cdef int r, d, s
    cdef const int32_t* e
    _pos_moves(x, q, mv, nm)
    for d in range(6):
        for s in range(nm[d]):
            e = x.hk + _h(x.R, mv[d * MAXP + s], 0, 0, 1)
            __builtin_prefetch(e)
            __builtin_prefetch(e + 16)
            __builtin_prefetch(e + 32)
    for r in range(21):
        _pos_roll(x, q, r, mv, nm, &kk[r], &kk[21 + r])
        # the distributions that _pos_finish adds: fetch them meanwhile
        __builtin_prefetch(&x.dist_r[kk[r] * x.W])
        if kk[21 + r] >= 0:
            __builtin_prefetch(&x.dist_g[kk[21 + r] * x.W])
    _pos_finish(x, q, kk, &kk[21])
    _pos_h_all(x, q, mv, nm)


cdef void _pos_ring(_OneSided* x, int64_t q) noexcept nogil:
    """The ring entries of a solved position q (from the stored means)."""
    cdef int32_t mv[6 * MAXP]
    cdef int32_t nm[6]
    _pos_moves(x, q, mv, nm)
    _pos_h_all(x, q, mv, nm)


cdef inline void _pos_h_all(_OneSided* x, int64_t q, const int32_t* mv,
                            const int32_t* nm) noexcept nogil:
    cdef int d, lev
    for d in range(1, 7):
        for lev in range(3):
            _pos_h(x, q, d, lev, mv, nm)


cdef void _solve_group(_OneSided* x, int64_t q0, int64_t q1, int nthreads) noexcept nogil:
    """Solve the positions q0 .. q1-1 (one pip count: independent of each
    other), one position at a time; threads share the group."""
    cdef int64_t q
    if nthreads > 1 and q1 - q0 >= 64:
        # dynamic: a thread that the system holds back delays the group by
        # one chunk at most
        for q in prange(q0, q1, schedule="dynamic", chunksize=16, num_threads=nthreads):
            _pos_solve(x, q)
    else:
        for q in range(q0, q1):
            _pos_solve(x, q)


ONE_SIDED_STATE = (("start_r", np.uint8, 0), ("start_g", np.uint8, 0), ("len_r", np.uint8, 0),
                   ("len_g", np.uint8, 0), ("dist_r", np.float32, 0), ("dist_g", np.float32, 0),
                   ("mean_r", np.float64, 0), ("mean_g", np.float64, 1), ("lost", np.float64, 0))
"""The arrays of a one-sided build in progress (build order): name, dtype,
and a shift (``mean_g`` holds position i at i + 1; its element 0 is 0)."""


def one_sided_state(int64_t N, int W):
    """A fresh build state: ``{name: array}`` (see ``ONE_SIDED_STATE``) with
    the empty position 0 solved."""
    st = {}
    for name, dt, shift in ONE_SIDED_STATE:
        shape = (N, W) if name.startswith("dist") else (N + shift,)
        st[name] = np.zeros(shape, dtype=dt)
    for name in ("dist_r", "dist_g"):
        st[name][0, 0] = 1.0
    st["len_r"][0] = 1
    st["len_g"][0] = 1
    return st


def build_one_sided(int P, int C, int W, progress=None, int nthreads=2,
                    bint quantize=False, state=None, int start_group=0, checkpoint=None):
    """Build the one-sided table.

    ``state`` (from :func:`one_sided_state`, or read back from a checkpoint)
    holds the build-order arrays; ``start_group`` pip groups of it are
    solved already (the best-result ring is rebuilt from them), and
    ``checkpoint(state, groups_done, positions_done)`` is called after every
    pip group, so the caller can save what is solved.

    Returns ``(start_r, dist_r, start_g, dist_g, folded)``: for every gnubg
    index, the distribution of the number of rolls to bear off all checkers
    (``dist_r[i, k]`` = P(rolls == start_r[i] + k)) under the play that
    minimises the expected number of rolls, the same for the number of rolls
    until the first checker is off (play minimising that expectation; a
    position with fewer than C checkers has already lost one: 0 rolls), and
    the largest probability mass folded into the window's end bins.
    ``quantize`` rounds every stored probability to 1/65535 as it is made
    (what gnubg's files hold), so that later choices see the rounded values.
    The work is done in build order (positions sorted by pip count), where a
    move's results lie in the last few pip groups (cache-friendly), one pip
    group at a time (its positions are independent: ``nthreads`` share it,
    and the result does not depend on the split); each position is solved
    whole (``_pos_solve``): its single-die moves (indexed incrementally from
    its own index), the best play of each roll through the best-result
    ring of the last few pip groups (the 36 entries of a position side by
    side), and its distributions, summed over the stored bins only.  The
    rows are permuted to gnubg order in place at the end, so the memory is
    the output (N * (8W + 2) bytes) plus about 40 + P bytes a position and
    the ring.  Ties between plays of equal expectation go to the smallest
    build index.
    """
    if P < 1 or P > MAXP or C < 1 or C > 15 or W < 2 or W > 64:
        raise ValueError("bad table size")
    cdef int64_t N = COMB[P + C][P]
    nthreads = max(1, nthreads)
    perm, inv, cnt_np, pips_sorted, nchk_np = _pip_order(P, N)   # perm: build -> gnubg
    T_np, K_np = _rank_terms(P)
    # boundaries of equal-pip groups (positions in a group are independent)
    bounds_np = np.flatnonzero(np.diff(pips_sorted)) + 1
    bounds_np = np.concatenate([[0], bounds_np, [N]]).astype(np.int64)

    if state is None:
        state = one_sided_state(N, W)
    start_r_np, start_g_np = state["start_r"], state["start_g"]
    dist_r_np, dist_g_np = state["dist_r"], state["dist_g"]
    mean_r_np, mean_g_np = state["mean_r"], state["mean_g"]   # mean_g[0]: mean_g[-1] = 0
    len_r_np, len_g_np, lost_np = state["len_r"], state["len_g"], state["lost"]
    if dist_r_np.shape[0] != N or dist_r_np.shape[1] != W or mean_g_np.shape[0] != N + 1:
        raise ValueError("the build state does not fit the table")
    # ring size for the H tables: positions within 6 pips below a group,
    # plus the group itself
    gp = np.asarray(bounds_np[:-1])
    R = 1
    pip_of_group = pips_sorted[gp]
    lo = np.searchsorted(pip_of_group, pip_of_group - 6, side="left")
    span = int((bounds_np[1:] - gp[lo]).max())
    while R < span:
        R *= 2
    del pips_sorted
    hk_np = np.zeros(R * 36, dtype=np.int32)   # position 0 reaches position 0

    cdef const int64_t[::1] permv = perm
    cdef const int32_t[::1] invv = inv
    cdef const int64_t[::1] bounds = bounds_np
    cdef const int8_t[::1] nchk = nchk_np
    cdef const uint8_t[:, ::1] cntv = cnt_np
    cdef const int64_t[:, :, ::1] Tv = T_np
    cdef const int64_t[::1] Kv = K_np
    cdef uint8_t[::1] start_r = start_r_np
    cdef uint8_t[::1] start_g = start_g_np
    cdef float[:, ::1] dist_r = dist_r_np
    cdef float[:, ::1] dist_g = dist_g_np
    cdef double[::1] mean_r = mean_r_np
    cdef double[::1] mean_g = mean_g_np
    cdef double[::1] lost = lost_np
    cdef int32_t[::1] hkv = hk_np
    cdef uint8_t[::1] len_r = len_r_np
    cdef uint8_t[::1] len_g = len_g_np
    cdef Py_ssize_t ngroups = bounds_np.shape[0] - 1, gi, q, qlo, qhi
    cdef _OneSided ctx
    ctx.P = P
    ctx.C = C
    ctx.W = W
    ctx.N = N
    ctx.R = R
    ctx.quantize = quantize
    ctx.perm = &permv[0]
    ctx.inv = &invv[0]
    ctx.nchk = &nchk[0]
    ctx.cnt = &cntv[0, 0]
    ctx.T = &Tv[0, 0, 0]
    ctx.K = &Kv[0]
    ctx.start_r = &start_r[0]
    ctx.start_g = &start_g[0]
    ctx.dist_r = &dist_r[0, 0]
    ctx.dist_g = &dist_g[0, 0]
    ctx.mean_r = &mean_r[0]
    ctx.mean_g = &mean_g[1]
    ctx.len_r = &len_r[0]
    ctx.len_g = &len_g[0]
    ctx.hk = &hkv[0]
    ctx.lost = &lost[0]

    start_group = max(1, min(start_group, ngroups))
    if 1 < start_group < ngroups:
        # resumed: the ring entries that the next groups read come from the
        # groups at most 18 pips below (H after 3 moves of 6 pips each)
        gi = int(np.searchsorted(pip_of_group, pip_of_group[start_group] - 18, side="left"))
        with nogil:
            for q in range(bounds[max(gi, 1)], bounds[start_group]):
                _pos_ring(&ctx, q)
    for gi in range(start_group, ngroups):
        qlo = bounds[gi]
        qhi = bounds[gi + 1]
        with nogil:
            _solve_group(&ctx, qlo, qhi, nthreads)
        if progress is not None and (gi % 8 == 0 or gi == ngroups - 1):
            progress(int(bounds[gi + 1]), int(N))
        if checkpoint is not None:
            checkpoint(state, gi + 1, int(bounds[gi + 1]))
    # rows from build order to gnubg order, in place (no second copy)
    cdef const int64_t* pp = &permv[0]
    with nogil:
        _permute_rows(&dist_r[0, 0], &start_r[0], pp, N, W)
        _permute_rows(&dist_g[0, 0], &start_g[0], pp, N, W)
    return start_r_np, dist_r_np, start_g_np, dist_g_np, float(lost_np.max())


cdef void _permute_rows(float* a, uint8_t* st, const int64_t* perm, int64_t N,
                        int W) noexcept nogil:
    """In place: row b (and st[b]) moves to row perm[b], by following cycles."""
    cdef uint8_t* seen = <uint8_t*>malloc(N)
    cdef float* hold = <float*>malloc(W * sizeof(float))
    cdef float* tmp = <float*>malloc(W * sizeof(float))
    cdef int64_t s0, pos
    cdef uint8_t hs, ts
    memset(seen, 0, N)
    for s0 in range(N):
        if seen[s0]:
            continue
        seen[s0] = 1
        memcpy(hold, a + s0 * W, W * sizeof(float))
        hs = st[s0]
        pos = perm[s0]
        while pos != s0:
            memcpy(tmp, a + pos * W, W * sizeof(float))
            ts = st[pos]
            memcpy(a + pos * W, hold, W * sizeof(float))
            st[pos] = hs
            memcpy(hold, tmp, W * sizeof(float))
            hs = ts
            seen[pos] = 1
            pos = perm[pos]
        memcpy(a + s0 * W, hold, W * sizeof(float))
        st[s0] = hs
    free(seen)
    free(hold)
    free(tmp)


# ---------------------------------------------------------- two-sided build

def build_order(int C):
    """Build order of the 6-point positions with up to C checkers.

    Returns ``(order, inverse, counts_in_build_order)``: ``order[b]`` is the
    gnubg index of build index b, ``inverse`` maps back.
    """
    return _pip_order(6, COMB[6 + C][6])[:3]


def _pip_order(int P, int64_t N):
    """The one-sided positions 0..N-1 on P points sorted by pip count (stable
    in gnubg order): every move leads to a smaller build index.  Returns
    ``(order int64[N], inverse int32[N], counts uint8[N, P], pips int32[N],
    checkers int8[N])``, ``order[b]`` the gnubg index of build index b,
    the last three in build order."""
    counts_np = unranks(np.arange(N, dtype=np.int64), P)
    pips_np = np.empty(N, dtype=np.int32)
    nchk_np = np.empty(N, dtype=np.int8)
    cdef const uint8_t[:, ::1] c = counts_np
    cdef int32_t[::1] pv = pips_np
    cdef int8_t[::1] nv = nchk_np
    cdef Py_ssize_t i, p
    cdef int t, n
    with nogil:
        for i in range(N):
            t = 0
            n = 0
            for p in range(P):
                t += (p + 1) * c[i, p]
                n += c[i, p]
            pv[i] = t
            nv[i] = <int8_t>n
    order_np = np.argsort(pips_np, kind="stable").astype(np.int64)
    inv_np = np.empty(N, dtype=np.int32)
    inv_np[order_np] = np.arange(N, dtype=np.int32)
    return (order_np, inv_np, np.ascontiguousarray(counts_np[order_np]), pips_np[order_np],
            nchk_np[order_np])


def successor_table(int C, int nthreads=1):
    """S(i, r) for the 6-point positions with up to C checkers, build order.

    Returns ``(offsets int64[N*21+1], succ int32[M])``: the distinct results
    of roll r from build index i are ``succ[offsets[i*21+r] : offsets[i*21+r+1]]``,
    ascending (so a bear-off of the last checker, build index 0, is first).
    """
    order_np, inv_np, _ = build_order(C)
    cdef int64_t N = order_np.shape[0]
    mv_np, nmv_np = single_moves(6, C, nthreads)
    cdef const int32_t[::1] mv = mv_np
    cdef const uint8_t[::1] nmv = nmv_np
    cdef const int64_t[::1] order = order_np
    cdef const int32_t[::1] inv = inv_np
    stamp_np = np.zeros(N, dtype=np.int32)
    cdef int32_t[::1] stamp = stamp_np
    buf_np = np.zeros(2 * MAXSEQ, dtype=np.int32)
    cdef int32_t[::1] buf = buf_np
    cdef _Moves m
    m.P = 6
    m.mv = &mv[0]
    m.nmv = &nmv[0]
    m.stamp = &stamp[0]
    m.cur = 0
    cap = 64 * N * 21 // 10 + 1024
    out_np = np.empty(cap, dtype=np.int32)
    offsets_np = np.zeros(N * 21 + 1, dtype=np.int64)
    cdef int32_t[::1] out = out_np
    cdef int64_t[::1] offsets = offsets_np
    cdef int64_t i, pos = 0
    cdef int r, ns, k
    for i in range(N):
        if pos + 21 * MAXSEQ > cap:
            cap = cap * 3 // 2 + 21 * MAXSEQ
            out_np = np.resize(out_np, cap)
            out = out_np
        with nogil:
            for r in range(21):
                if i > 0:
                    ns = _roll_succ(&m, N, <int32_t>order[i], ROLL_D1[r], ROLL_D2[r],
                                    &buf[0], &buf[MAXSEQ])
                    for k in range(ns):
                        out[pos + k] = inv[buf[k]]
                    qsort_int32(&out[pos], ns)
                    pos += ns
                offsets[i * 21 + r + 1] = pos
    return offsets_np, np.ascontiguousarray(out_np[:pos])


cdef int _cmp32(const void* a, const void* b) noexcept nogil:
    cdef int32_t x = (<const int32_t*>a)[0], y = (<const int32_t*>b)[0]
    return (x > y) - (x < y)


cdef inline void qsort_int32(int32_t* p, int n) noexcept nogil:
    qsort(p, n, sizeof(int32_t), _cmp32)


cdef extern from *:
    """
    #include <stdint.h>
    #include <stddef.h>
    #if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
    #define BO_CLONES __attribute__((target_clones("avx2", "default")))
    #else
    #define BO_CLONES
    #endif
    /* Elementwise dst = min(dst, src) and a -= w * t, written so that the
       compiler vectorises them (restrict, no branches); AVX2 when the CPU
       has it (runtime dispatch), SSE2 otherwise. */
    BO_CLONES static void bo_min_i16(int16_t* __restrict dst, const int16_t* __restrict src, ptrdiff_t n) {
        for (ptrdiff_t i = 0; i < n; i++) dst[i] = src[i] < dst[i] ? src[i] : dst[i];
    }
    BO_CLONES static void bo_min_f32(float* __restrict dst, const float* __restrict src, ptrdiff_t n) {
        for (ptrdiff_t i = 0; i < n; i++) dst[i] = src[i] < dst[i] ? src[i] : dst[i];
    }
    BO_CLONES static void bo_sub_i16(double* __restrict a, const int16_t* __restrict t, double w, ptrdiff_t n) {
        for (ptrdiff_t i = 0; i < n; i++) a[i] -= w * (double)t[i];
    }
    BO_CLONES static void bo_sub_f32(double* __restrict a, const float* __restrict t, double w, ptrdiff_t n) {
        for (ptrdiff_t i = 0; i < n; i++) a[i] -= w * (double)t[i];
    }
    /* dst = min(dst, src) elementwise, carrying two payloads (dw, dx) from
       the same source: the values of the successor that is the minimum
       (the first one on ties) */
    #define BO_MINPAY(NAME, T) \
    BO_CLONES static void NAME(T* __restrict dst, T* __restrict dw, T* __restrict dx, \
                               const T* __restrict src, const T* __restrict sw, \
                               const T* __restrict sx, ptrdiff_t n) { \
        for (ptrdiff_t i = 0; i < n; i++) { \
            int m = src[i] < dst[i]; \
            dst[i] = m ? src[i] : dst[i]; \
            dw[i] = m ? sw[i] : dw[i]; \
            dx[i] = m ? sx[i] : dx[i]; \
        } \
    }
    BO_MINPAY(bo_minpay_i16, int16_t)
    BO_MINPAY(bo_minpay_f32, float)
    /* index (into idx) of the first minimum of rb[idx[0..n)], n >= 1 */
    static ptrdiff_t bo_gather_argmin(const double* rb, const int32_t* idx, ptrdiff_t n) {
        ptrdiff_t b = 0;
        double m = rb[idx[0]];
        for (ptrdiff_t i = 1; i < n; i++) {
            double x = rb[idx[i]];
            if (x < m) { m = x; b = i; }
        }
        return b;
    }
    /* min over rb[idx[0..n)], n >= 1, with four independent chains */
    BO_CLONES static double bo_gather_min(const double* __restrict rb, const int32_t* __restrict idx, ptrdiff_t n) {
        double m0 = rb[idx[0]], m1 = m0, m2 = m0, m3 = m0;
        ptrdiff_t i = 1;
        for (; i + 4 <= n; i += 4) {
            double x0 = rb[idx[i]], x1 = rb[idx[i + 1]], x2 = rb[idx[i + 2]], x3 = rb[idx[i + 3]];
            m0 = x0 < m0 ? x0 : m0; m1 = x1 < m1 ? x1 : m1;
            m2 = x2 < m2 ? x2 : m2; m3 = x3 < m3 ? x3 : m3;
        }
        for (; i < n; i++) { double x = rb[idx[i]]; m0 = x < m0 ? x : m0; }
        m0 = m1 < m0 ? m1 : m0; m2 = m3 < m2 ? m3 : m2;
        return m2 < m0 ? m2 : m0;
    }
    """
    double bo_gather_min(const double* rb, const int32_t* idx, ptrdiff_t n) noexcept nogil
    ptrdiff_t bo_gather_argmin(const double* rb, const int32_t* idx, ptrdiff_t n) noexcept nogil
    void bo_minpay_i16(int16_t* dst, int16_t* dw, int16_t* dx, const int16_t* src,
                       const int16_t* sw, const int16_t* sx, ptrdiff_t n) noexcept nogil
    void bo_minpay_f32(float* dst, float* dw, float* dx, const float* src,
                       const float* sw, const float* sx, ptrdiff_t n) noexcept nogil
    void bo_min_i16(int16_t* dst, const int16_t* src, ptrdiff_t n) noexcept nogil
    void bo_min_f32(float* dst, const float* src, ptrdiff_t n) noexcept nogil
    void bo_sub_i16(double* a, const int16_t* t, double w, ptrdiff_t n) noexcept nogil
    void bo_sub_f32(double* a, const float* t, double w, ptrdiff_t n) noexcept nogil


ctypedef fused val_t:
    int16_t
    float


cdef inline double _load(val_t x) noexcept nogil:
    return <double>x


cdef inline val_t _store(double x, val_t* dummy) noexcept nogil:
    cdef long v
    if val_t is int16_t:
        v = lround(x)
        if v > 32767:
            v = 32767
        elif v < -32767:
            v = -32767
        return <int16_t>v
    else:
        return <float>x


cdef inline void _compose(const double* nd, int T, double scale, double* e) noexcept nogil:
    """Stored values -> values after the roller's cube decision.

    Tables: 0 cubeless; with T == 4, the cubeful equity (normalised to the
    cube value) when the roller does not double now, with 1 the cube
    centred, 2 the roller owning it, 3 the opponent owning it (gnubg's
    two-sided files store these same no-double values).  The roller with
    access doubles when that is better: the opponent takes (then owns the
    cube at twice the value) or passes (1)."""
    cdef double dt
    e[0] = nd[0]
    if T == 4:
        dt = 2.0 * nd[3]
        if dt > scale:
            dt = scale          # the opponent passes
        e[1] = nd[1] if nd[1] >= dt else dt
        e[2] = nd[2] if nd[2] >= dt else dt
        e[3] = nd[3]


# which table the opponent's reply is read from (cube ownership flips)
cdef int SRC[4]
SRC[0] = 0
SRC[1] = 1
SRC[2] = 3
SRC[3] = 2


# Tables: T == 1 the cubeless equity E; T == 4 adds the cubeful no-double
# equities; T == 3 is the probability mode: E, then W (the roller's winning
# chance) and X (its chance of winning a gammon), both times pscale.  Each
# roll's play is the one of the equity (the first minimum of the opponent's
# E, in build order); W and X follow it: with k the successor, W gains
# 1 - W(j, k) and X gains LG(j, k) = 2 W - 1 + X - E, the opponent's chance
# of losing a gammon (from E = 2W - 1 + WG - LG); bearing off the last
# checker wins (a gammon when gam[j]).

cdef struct _Shell:
    # what every part of a shell needs besides the table
    int64_t NN
    int64_t N
    int T
    const int64_t* off
    const int32_t* succ
    const double* winv
    const double* gam      # T == 3: 1.0 for positions with all their checkers
    double scale
    double pscale          # T == 3: fixed-point scale of W and X


cdef inline void _row_chunk(val_t* base, double* ac, double* rb, val_t* tp,
                            double* tpd, val_t* tpw, val_t* tpx, const _Shell* S,
                            int64_t m, int64_t j0, int64_t j1) noexcept nogil:
    """Row part of shell m for j0 <= j < j1: E(m, j) for every table."""
    cdef int64_t NN = S.NN, N = S.N
    cdef int T = S.T, t, r, w, src
    cdef int64_t j, lo, hi, q, k
    cdef double* a
    cdef double* aw = ac + N
    cdef double* ax = ac + 2 * N
    cdef const val_t* sb
    cdef const val_t* col
    cdef const val_t* colb
    cdef double v, u, pw
    for t in range(1 if T == 3 else T):
        a = ac + t * N
        src = SRC[t]
        sb = base + src * NN
        for j in range(j0, j1):
            a[j] = 0.0
            if T == 3:
                aw[j] = 0.0
                ax[j] = 0.0
        for r in range(21):
            w = ROLL_W[r]
            lo = S.off[m * 21 + r]
            hi = S.off[m * 21 + r + 1]
            k = S.succ[lo]
            if k == 0:
                for j in range(j0, j1):
                    a[j] += w * S.winv[j]
                    if T == 3:
                        aw[j] += w
                        ax[j] += w * S.gam[j]
            elif src == 0 or src == 3:
                # the opponent has no cube decision: stored values as they are
                col = sb + k * N
                memcpy(tp + j0, col + j0, (j1 - j0) * sizeof(val_t))
                if T == 3:
                    memcpy(tpw + j0, col + NN + j0, (j1 - j0) * sizeof(val_t))
                    memcpy(tpx + j0, col + 2 * NN + j0, (j1 - j0) * sizeof(val_t))
                for q in range(lo + 1, hi):
                    col = sb + S.succ[q] * N
                    if T == 3:
                        # the minimum carries W and X of the same successor
                        if val_t is int16_t:
                            bo_minpay_i16(tp + j0, tpw + j0, tpx + j0, col + j0,
                                          col + NN + j0, col + 2 * NN + j0, j1 - j0)
                        else:
                            bo_minpay_f32(tp + j0, tpw + j0, tpx + j0, col + j0,
                                          col + NN + j0, col + 2 * NN + j0, j1 - j0)
                    elif val_t is int16_t:
                        bo_min_i16(tp + j0, col + j0, j1 - j0)
                    else:
                        bo_min_f32(tp + j0, col + j0, j1 - j0)
                if val_t is int16_t:
                    bo_sub_i16(a + j0, tp + j0, w, j1 - j0)
                else:
                    bo_sub_f32(a + j0, tp + j0, w, j1 - j0)
                if T == 3:
                    for j in range(j0, j1):
                        pw = _load(tpw[j]) / S.pscale
                        aw[j] += w * (1.0 - pw)
                        ax[j] += w * (2.0 * pw - 1.0 + _load(tpx[j]) / S.pscale
                                      - _load(tp[j]) / S.scale)
            else:
                # the opponent may double first: max(ND, min(2 * ND_oppowned, 1))
                for j in range(j0, j1):
                    tpd[j] = 1e300
                for q in range(lo, hi):
                    col = sb + S.succ[q] * N
                    colb = base + 3 * NN + S.succ[q] * N
                    for j in range(j0, j1):
                        v = _load(col[j])
                        u = 2.0 * _load(colb[j])
                        if u > S.scale:
                            u = S.scale
                        if u > v:
                            v = u
                        if v < tpd[j]:
                            tpd[j] = v
                for j in range(j0, j1):
                    a[j] -= w * tpd[j]
    for j in range(j0, j1):
        _store_entry(base, S, j * N + m, ac + j, N, rb, j)


cdef inline void _col_entry(val_t* base, double* rb, const _Shell* S,
                            int64_t m, int64_t j) noexcept nogil:
    """E(j, m) for every table (roller j, opponent m), from row m in rb:
    the column part of shell m, and its diagonal (j == m, whose values then
    join row m in rb)."""
    cdef int64_t N = S.N
    cdef int T = S.T, r, t
    cdef double wv, pw, e
    cdef double v[4]
    cdef double ac4[4]
    cdef int64_t lo, hi, q, k
    for t in range(T):
        ac4[t] = 0.0
    for r in range(21):
        wv = ROLL_W[r]
        lo = S.off[j * 21 + r]
        hi = S.off[j * 21 + r + 1]
        k = S.succ[lo]
        if k == 0:
            ac4[0] += wv * S.winv[m]
            if T == 3:
                ac4[1] += wv
                ac4[2] += wv * S.gam[m]
            elif T == 4:
                for t in range(1, 4):
                    ac4[t] += wv * S.winv[m]
        elif T == 1:
            ac4[0] -= wv * bo_gather_min(rb, S.succ + lo, hi - lo)
        elif T == 3:
            k = S.succ[lo + bo_gather_argmin(rb, S.succ + lo, hi - lo)]
            e = rb[k]
            pw = rb[N + k]
            ac4[0] -= wv * e
            ac4[1] += wv * (1.0 - pw)
            ac4[2] += wv * (2.0 * pw - 1.0 + rb[2 * N + k] - e / S.scale)
        else:
            for t in range(4):
                v[t] = rb[SRC[t] * N + k]
            for q in range(lo + 1, hi):
                k = S.succ[q]
                for t in range(4):
                    if rb[SRC[t] * N + k] < v[t]:
                        v[t] = rb[SRC[t] * N + k]
            for t in range(4):
                ac4[t] -= wv * v[t]
    _store_entry(base, S, m * N + j, ac4, 1, rb if j == m else NULL, m)


cdef inline void _store_entry(val_t* base, const _Shell* S, int64_t at, const double* sums,
                              int64_t stride, double* rb, int64_t ri) noexcept nogil:
    """Store one pair at ``at`` in every table: table t's value is
    sums[t * stride] / 36 (sums over the 36 rolls).  With ``rb``, the
    stored values (after the roller's cube decision in cubeful tables, in
    probabilities for W and X) also go to rb[t * N + ri] for the column
    pass."""
    cdef double nd[4]
    cdef double e[4]
    cdef int t
    cdef int T = S.T
    cdef val_t dummy
    for t in range(T):
        if T == 3 and t > 0:
            base[t * S.NN + at] = _store(sums[t * stride] / 36.0 * S.pscale, &dummy)
            nd[t] = _load(base[t * S.NN + at]) / S.pscale
        else:
            base[t * S.NN + at] = _store(sums[t * stride] / 36.0, &dummy)
            nd[t] = _load(base[t * S.NN + at])
    if rb == NULL:
        return
    if T == 4:
        _compose(nd, T, S.scale, e)
        for t in range(T):
            rb[t * S.N + ri] = e[t]
    else:
        for t in range(T):
            rb[t * S.N + ri] = nd[t]


def solve_shells(val_t[:, ::1] tab, int64_t N, const int64_t[::1] offsets,
                 const int32_t[::1] succ, const double[::1] winv,
                 double scale, int64_t m0, int64_t m1, int nthreads=2,
                 int64_t chunk=2048, int64_t parallel_from=2048,
                 const double[::1] gam=None, double pscale=1.0):
    """Solve shells m0 .. m1-1 of a two-sided table in place.

    ``tab`` is ``[T, N*N]`` (T = 1 cubeless, or 4 with cubeful values), value
    (i, j) of table t at ``tab[t, j*N + i]``; shells < m0 must be solved.
    ``winv[j]`` is the scaled value of bearing off the last checker against
    opponent j (scale, or 2*scale when j would lose a gammon).

    Shell m is row E(m, j), j < m (streaming min over whole columns k of
    S(m, r): contiguous), the diagonal E(m, m), then column E(j, m), j < m
    (gathers from the row just made, which fits in cache).  Shells with
    m >= parallel_from use ``nthreads`` threads.

    T == 3 is the probability mode: tables E, W (the roller's winning
    chance) and X (its chance of winning a gammon), W and X times
    ``pscale``; ``gam[j]`` is 1.0 when j still has all its checkers (a
    gammon when the roller finishes first), else 0.0.
    """
    cdef int T = tab.shape[0]
    if T != 1 and T != 3 and T != 4:
        raise ValueError("T must be 1, 3 or 4")
    if T == 3 and (gam is None or gam.shape[0] != N):
        raise ValueError("probability mode needs gam[N]")
    if tab.shape[1] != N * N:
        raise ValueError("table shape does not match N")
    if offsets.shape[0] != N * 21 + 1 or winv.shape[0] != N:
        raise ValueError("successor table does not match N")
    acc_np = np.zeros((T, N), dtype=np.float64)
    rowbuf_np = np.zeros((T, N), dtype=np.float64)
    if val_t is int16_t:
        tmp_np = np.zeros(N, dtype=np.int16)
    else:
        tmp_np = np.zeros(N, dtype=np.float32)
    cdef double[:, ::1] acc = acc_np
    cdef double[:, ::1] rowbuf = rowbuf_np
    cdef val_t[::1] tmp = tmp_np
    tmpd_np = np.zeros(N, dtype=np.float64)
    cdef double[::1] tmpd = tmpd_np
    cdef double* tpd = &tmpd[0]
    cdef val_t* base = &tab[0, 0]
    cdef val_t* tp = &tmp[0]
    cdef double* ac = &acc[0, 0]
    cdef double* rb = &rowbuf[0, 0]
    cdef int64_t NN = N * N
    cdef int64_t m, nch, c, j0, j1, j
    cdef int t
    cdef val_t dummy
    cdef val_t* tpw = NULL
    cdef val_t* tpx = NULL
    cdef _Shell S
    S.NN = NN
    S.N = N
    S.T = T
    S.off = &offsets[0]
    S.succ = &succ[0]
    S.winv = &winv[0]
    S.gam = NULL
    S.scale = scale
    S.pscale = pscale
    if T == 3:
        S.gam = &gam[0]
        tpw_np = np.zeros(N, dtype=tmp_np.dtype)
        tpx_np = np.zeros(N, dtype=tmp_np.dtype)
        tpw = <val_t*>cnp.PyArray_DATA(tpw_np)
        tpx = <val_t*>cnp.PyArray_DATA(tpx_np)

    with nogil:
        for m in range(m0, m1):
            if m == 0:
                for t in range(T):
                    base[t * NN] = _store(0.0, &dummy)
                continue
            # ---- row part: E(m, j), 1 <= j < m (j == 0 is game over: 0)
            nch = (m - 1 + chunk - 1) // chunk
            if m >= parallel_from and nthreads > 1:
                for c in prange(nch, schedule="static", num_threads=nthreads):
                    j0 = 1 + c * chunk
                    j1 = j0 + chunk
                    if j1 > m:
                        j1 = m
                    _row_chunk(base, ac, rb, tp, tpd, tpw, tpx, &S, m, j0, j1)
            else:
                for c in range(nch):
                    j0 = 1 + c * chunk
                    j1 = j0 + chunk
                    if j1 > m:
                        j1 = m
                    _row_chunk(base, ac, rb, tp, tpd, tpw, tpx, &S, m, j0, j1)
            for t in range(T):
                base[t * NN + m] = _store(0.0, &dummy)      # E(m, 0): game over
                rb[t * N] = 0.0
            # ---- diagonal E(m, m), which joins row m in rb
            _col_entry(base, rb, &S, m, m)
            # ---- column part: E(j, m), 1 <= j < m, from the row in rb
            if m >= parallel_from and nthreads > 1:
                for j in prange(1, m, schedule="static", chunksize=256,
                                num_threads=nthreads):
                    _col_entry(base, rb, &S, m, j)
            else:
                for j in range(1, m):
                    _col_entry(base, rb, &S, m, j)


# ------------------------------------------------- packed one-sided windows

def row_lengths(const float[:, ::1] dist):
    """``uint8[N]``: one past the last non-zero value of each row."""
    cdef Py_ssize_t n = dist.shape[0], W = dist.shape[1], i, k
    out = np.zeros(n, dtype=np.uint8)
    cdef uint8_t[::1] o = out
    with nogil:
        for i in range(n):
            k = W
            while k > 0 and dist[i, k - 1] == 0.0:
                k -= 1
            o[i] = <uint8_t>k
    return out


def pack_rows(const float[:, ::1] dist, const uint8_t[::1] lengths):
    """The first ``lengths[i]`` values of every row, one row after the other."""
    cdef Py_ssize_t n = dist.shape[0], i, t = 0
    for i in range(n):
        t += lengths[i]
    out = np.empty(t, dtype=np.float32)
    cdef float[::1] o = out
    t = 0
    with nogil:
        for i in range(n):
            memcpy(&o[t], &dist[i, 0], lengths[i] * sizeof(float))
            t += lengths[i]
    return out


def unpack_rows(const float[::1] values, const uint8_t[::1] lengths, int W):
    """Inverse of :func:`pack_rows`: windows ``float32[N, W]``, zero after
    each row's values.  The caller checks that the lengths fit ``values``
    and ``W``."""
    cdef Py_ssize_t n = lengths.shape[0], i, t = 0
    out = np.zeros((n, W), dtype=np.float32)
    cdef float[:, ::1] o = out
    with nogil:
        for i in range(n):
            memcpy(&o[i, 0], &values[t], lengths[i] * sizeof(float))
            t += lengths[i]
    return out


cdef inline double _clip01(double v) noexcept nogil:
    return 0.0 if v < 0.0 else (1.0 if v > 1.0 else v)


def race_probs(const float[:, ::1] dr, const uint8_t[::1] sr, const float[:, ::1] dg,
               const uint8_t[::1] sg, const int64_t[::1] i, const int64_t[::1] j,
               const uint8_t[::1] full_r, const uint8_t[::1] full_o):
    """Race probabilities ``float64[n, 5]`` of roller ``i[k]`` against
    opponent ``j[k]`` from the one-sided windows (``dr``/``sr``: rolls to
    finish, ``dg``/``sg``: rolls to take the first checker off).  The
    roller rolls first and wins ties; a side with ``full_*`` set (all 15
    checkers still on) can be gammoned.  Indices must be in the table."""
    cdef Py_ssize_t n = i.shape[0], r, N = dr.shape[0]
    cdef int W = <int>dr.shape[1], k, si, so
    cdef const float* fr
    cdef const float* fo
    cdef double win, wg, lg, f
    cdef double* t = NULL
    if W > LMAX:
        raise ValueError(f"windows of {W} rolls: at most {LMAX}")
    for r in range(n):
        if i[r] < 0 or i[r] >= N or j[r] < 0 or j[r] >= N:
            raise IndexError(f"position index outside the table (row {r})")
    out = np.zeros((n, 5), dtype=np.float64)
    cdef double[:, ::1] o = out
    cdef double to[LMAX + 1]
    cdef double tg[LMAX + 1]
    with nogil:
        for r in range(n):
            fr = &dr[i[r], 0]
            fo = &dr[j[r], 0]
            si = sr[i[r]]
            so = sr[j[r]]
            win = wg = lg = 0.0
            window_tails(fo, W, to)
            if full_o[r]:
                window_tails(&dg[j[r], 0], W, tg)
            for k in range(W):
                f = fr[k]
                if f != 0.0:
                    win += f * window_at_least(to, so, W, si + k)
                    if full_o[r]:
                        wg += f * window_at_least(tg, sg[j[r]], W, si + k)
            if full_r[r]:
                # the roller is gammoned if the opponent finishes in k rolls
                # while the roller needs more than k for a first checker off
                window_tails(&dg[i[r], 0], W, tg)
                for k in range(W):
                    f = fo[k]
                    if f != 0.0:
                        lg += f * window_at_least(tg, sg[i[r]], W, so + k + 1)
            o[r, 0] = _clip01(win)
            o[r, 1] = _clip01(wg)
            o[r, 3] = _clip01(lg)
    return out
