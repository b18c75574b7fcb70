# cython: language_level=3
"""Private kernel: the neural-net evaluator, n-ply play choice, TD self-play, duels.

See ``bgfast.net`` (weights, evaluator), ``bgfast.train`` (training driver)
and ``bgfast.duel`` for the public API.

Net: inputs TD-Gammon style, 98 per side (on-roll side first): for each of
the 24 points 4 units (n >= 1, n >= 2, n >= 3, (n - 3) / 2 when n > 3), the
bar (n / 2) and the borne-off checkers (n / 15); then 10 hand-made contact
features, 5 per side (on-roll side first; see ``net_features``), and the
inputs of the net's optional feature groups (a bit mask; 2-3 per side
each, 14 for the borne-off thermometer).  One sigmoid hidden layer,
5 sigmoid outputs (win, win gammon, win backgammon, lose gammon, lose
backgammon) for the player on roll.  Two nets, contact and race,
or more (a crashed net, contact plan nets: see ``net_of``).

Speed: the first layer is folded into a table T[(side, slot, count)] of
hidden-sum rows, so a forward pass adds one row per occupied slot, and the
plays of one roll are evaluated incrementally from the hidden sums of the
board before the play (only the slots a play changes are updated).  The
features are not slot-local: they are computed for each board and added
after the table sum (h += f_q * w1[196 + q]).  The row sums, the feature
rows, the sigmoids and the output layer are the C kernels of
``_vecmath.h`` (8 hidden units per vector operation, an AVX2 copy chosen
at load time where the CPU has it, with bit-identical results).
"""
import numpy as np
cimport numpy as cnp
from cython.parallel cimport prange, threadid
from libc.stdint cimport uint8_t, int8_t, int32_t, int64_t, uint64_t, uint32_t
from libc.string cimport memcpy, memset, memcmp
from libc.stdlib cimport malloc, calloc, free
from libc.math cimport exp, expf, log, sqrt, cos
from cpython.pythread cimport (PyThread_type_lock, PyThread_allocate_lock, PyThread_free_lock,
                              PyThread_acquire_lock, PyThread_release_lock, NOWAIT_LOCK)

from bgfast._movegen cimport MoveGen, movegen_init, movegen_free, movegen_plays, mg_die
from bgfast._evaluate cimport (board_contact, over_probs, table_probs, exact_probs, table_empty_slots, invert_probs, order_probs,
                               os_table_side, os_table_points, race_convolve,
                               mover_probs, pub_score,
                               probs_equity, swap_board, choose_play, POLICY_PUBEVAL,
                               register_evaluator_slot, NUM_EVALUATORS, MAX_EVALUATORS)
from bgfast._rollout cimport (Rng, rng_seed, rng_next, rng_roll36, register_policy_slot,
                              register_policy_luck, NUM_POLICIES, MAX_POLICIES)

cnp.import_array()

cdef enum:
    ERR_MEMORY = -1
    ERR_LONG = -3
    MAX_GAME_PLIES = 2000

# ---------------------------------------------------------------------------
# forward pass
# ---------------------------------------------------------------------------

cdef extern from "_vecmath.h" nogil:
    enum: BGV_MAX_HIDDEN              # the output layer's buffer of hidden sigmoids
    float bgv_sigmoid1(float x)
    float bgv_expf(float x)
    void bgv_os_outputs(const float* h, int H, const float* w2, const float* b2, int no, float* z)
    void bgv_rows(float* h, const float* b, const float* T, const int32_t* add, int nadd,
                  const int32_t* sub, int nsub, int H)
    void bgv_output_sums(const float* h, const float* w2t, const float* b2, int H, float* s)
    void bgv_axpys(float* h, const float* W, const float* f, int nf, int H)
    void bgv_point_masks(const uint8_t* row, uint32_t* zero, uint32_t* one, uint32_t* two)
    void bgv_board_masks(const uint8_t* r, const uint8_t* base, uint64_t* diff, uint64_t* nz)
    void bgv_eval_play(const float* hb, const float* T, const int32_t* add, int nadd,
                       const int32_t* sub, int nsub, const float* W, const int32_t* fi,
                       const float* fv, int nfv, const float* w2t, const float* b2, int H,
                       float* s)
    uint32_t bgv_mirror24(uint32_t m)
    int bgv_popcount32(uint32_t m)


if NET_MAX_HIDDEN > BGV_MAX_HIDDEN:     # the two limits are set apart: keep them in step
    raise ImportError("NET_MAX_HIDDEN exceeds _vecmath.h's BGV_MAX_HIDDEN")

#: the most hidden units a net may have
MAX_HIDDEN = NET_MAX_HIDDEN
#: the most nets a weights set may have (contact, race, crashed, the plan nets, crashed-other)
MAX_NETS = NET_MAX_NETS
#: the nets of a set that splits contact by the race (see net_of)
PLAN_NETS = NET_PLAN_NETS
#: the nets of a set that also splits the crashed positions by the side crashed
SIDE_NETS = NET_SIDE_NETS
#: the numbers of nets a weights set may have, and them as the messages name them
NET_COUNTS = (2, 3, NET_PLAN_NETS, NET_SIDE_NETS)
NET_COUNTS_TEXT = (", ".join(map(str, NET_COUNTS[:len(NET_COUNTS) - 1]))
                   + f" or {NET_COUNTS[len(NET_COUNTS) - 1]}")     # no negative index: wraparound is off
#: the edges of the plan bands: the on-roll side's lead in pips
PLAN_EDGES = (NET_PLAN_EDGE1, NET_PLAN_EDGE2, NET_PLAN_EDGE3)
#: a contact position is crashed when a side has at most this many checkers in play
CRASHED_IN_PLAY = NET_CRASHED_IN_PLAY


cdef inline float _sigf(float x) noexcept nogil:
    return bgv_sigmoid1(x)


cdef inline int _slot_row(int side, int slot, int n) noexcept nogil:
    return (side * 26 + slot) * 16 + n


# ---------------------------------------------------------------------------
# hand-made contact features
# ---------------------------------------------------------------------------
#
# Per side X (the other side Y), five inputs, in this order:
#   0  shots: the rolls (of 36) with which Y, rolling now, hits at least one
#      blot of X, / 36.  Y's checkers on the bar enter first (a blot on the
#      entry point is hit by entering); single dice, both dice with one
#      checker (an open intermediate point) and up to four steps of a double
#      (all intermediate points open).  Not modelled: the rule that both dice
#      must be played when possible, bear-off moves.
#   1  trapped: 36 minus the escapes, / 36.  Escapes: the rolls (of 36) that
#      move X's rearmost checker (at distance s from home, 25 on the bar) past
#      every point Y holds (2+ checkers) within the 12 points in front of it
#      and outside X's home board (X's distances max(7, s - 12) .. s - 1),
#      landing on an open point by one die, both dice (an open intermediate)
#      or up to four steps of a double; 36 when no such point is in front of
#      it (so the input is 0).
#   2  the longest run of consecutive points X holds, / 6.
#   3  the distance of X's rearmost checker (25 on the bar, 0 when none), / 25.
#   4  dance: when X has a checker on the bar, (k / 6)^2 for the k points Y
#      holds in its home board (the chance that one checker stays out); else 0.
# The pip counts, anchors and checkers back are linear in the raw inputs, so
# they are not features.

# Bit masks below: bit r stands for the distance r (1..24) from home of the
# side that moves (25 = its bar).

cdef inline uint32_t _double_steps(uint32_t O, uint32_t OPN, uint32_t B, int d,
                                   int m) noexcept nogil:
    """The blots a double (d, d) hits with up to m steps of one checker from
    a point in O, the points before the k-th step open (OPN), as a mask
    (P: the blots whose path so far is open)."""
    cdef uint32_t P = B, h = 0
    cdef int k
    for k in range(1, m + 1):
        h |= P & (O >> (k * d))
        P &= OPN >> (k * d)
    return h


cdef extern from *:
    int __builtin_clz(unsigned int) nogil
    int __builtin_ctz(unsigned int) nogil
    int __builtin_ctzll(unsigned long long) nogil
    int __builtin_clzll(unsigned long long) nogil


cdef inline uint32_t _hit_mask(uint32_t O, uint32_t OPN, uint32_t B, int nb, int d1,
                               int d2) noexcept nogil:
    """The blots (a mask) that the roll (d1, d2) can hit, each by some play
    of it: O the mover's points, OPN the points open to it, B the blots, nb
    its checkers on the bar (which enter first; a blot on the entry point
    is hit by entering).  A non-double hits with either die or with both,
    one checker over an open intermediate point; a double with up to four
    steps of one checker (all intermediate points open)."""
    cdef uint32_t h = 0, e
    cdef int o, a, c
    if d1 == d2:
        if nb == 0:
            return _double_steps(O, OPN, B, d1, 4)
        e = <uint32_t>1 << (25 - d1)
        if not OPN & e:
            return 0
        if nb >= 4:
            return B & e
        return (B & e) | _double_steps(O | e, OPN, B, d1, 4 - nb)
    if nb == 0:
        return B & ((O >> d1) | (O >> d2) | ((O >> (d1 + d2)) & ((OPN >> d1) | (OPN >> d2))))
    if nb >= 2:
        return B & ((<uint32_t>1 << (25 - d1)) | (<uint32_t>1 << (25 - d2)))
    for o in range(2):
        a = d1 if o == 0 else d2
        c = d2 if o == 0 else d1
        e = <uint32_t>1 << (25 - a)
        if OPN & e:
            h |= B & (e | ((O | e) >> c))
    return h


cdef enum:
    NROLLS = 21                  # the rolls (d1, d2), d2 <= d1, in _roll_masks' order


cdef inline void _roll_masks(uint32_t O, uint32_t OPN, uint32_t B, int nb,
                             uint32_t* M) noexcept nogil:
    """M[k]: the blots (_hit_mask) that the k-th roll hits, the rolls in the
    order (1, 1), (2, 1), (2, 2), (3, 1), ... (6, 6) (d2 <= d1), for the
    mover of O, OPN, B, nb as in _hit_mask."""
    cdef int d1, d2, k = 0
    cdef uint32_t D[7]
    cdef uint32_t Q[7]
    if B == 0 or (nb == 0 and (O >> (__builtin_ctz(B) + 1)) == 0):
        for k in range(NROLLS):                    # no blot, or no checker of the
            M[k] = 0                               # mover behind one: no hits
        return
    if nb == 0:
        # no checker on the bar, branch-free (the loops have fixed bounds):
        # D[d], the blots one die d hits from a point of the mover (Q[d]:
        # the points open d pips on); a double hits with one of its four
        # steps (_double_steps), a non-double with either die or with both,
        # one checker over an open intermediate point
        for d1 in range(1, 7):
            D[d1] = B & (O >> d1)
            Q[d1] = OPN >> d1
        for d1 in range(1, 7):
            for d2 in range(1, d1):
                M[k] = D[d1] | D[d2] | (B & (O >> (d1 + d2)) & (Q[d1] | Q[d2]))
                k += 1
            M[k] = _double_steps(O, OPN, B, d1, 4)
            k += 1
        return
    for d1 in range(1, 7):
        for d2 in range(1, d1 + 1):
            M[k] = _hit_mask(O, OPN, B, nb, d1, d2)
            k += 1


cdef int ROLL_WEIGHT[24]          # the chances (of 36) of each roll, in _roll_masks' order (then 0)
ROLL_WEIGHT[:] = [1, 2, 1, 2, 2, 1, 2, 2, 2, 1, 2, 2, 2, 2, 1, 2, 2, 2, 2, 2, 1, 0, 0, 0]


cdef inline int _hit_counts(const uint32_t* M, int* hl) noexcept nogil:
    """From _roll_masks (M padded to 24 masks with zeros): the rolls (of 36)
    that hit at least one blot (the result); in hl[0] the sum over the 36
    rolls of the highest blot each hits (its distance, 0 for none), in
    hl[1] the rolls that hit two or more blots.  Branch-free loops of fixed
    length that the compiler vectorises: the highest bit of m (bits 1..25)
    is one more than the exponent of the float m >> 1, exact below 2**24 and
    rounded within the same power of two above it (m >> 1 never has all 24
    low bits set: at most 15 blots)."""
    cdef int cnt = 0, loss = 0, two = 0, k, w, e
    cdef uint32_t m
    cdef float x
    cdef int32_t bits
    for k in range(24):
        m = M[k]
        w = ROLL_WEIGHT[k]
        cnt += w * (m != 0)
        two += w * ((m & (m - 1)) != 0)
        x = <float>(<int32_t>(m >> 1))
        memcpy(&bits, &x, 4)
        e = (bits >> 23) - 126
        loss += w * (e if m != 0 else 0)
    hl[0] = loss
    hl[1] = two
    return cnt


cdef inline int _escapes(uint32_t Bk, int s) noexcept nogil:
    """The rolls (of 36) that move a checker at distance s past the points Bk
    (the opponent's, in the mover's distances) in front of it."""
    cdef uint32_t W, G, esc, at, open_, A, K, low
    cdef int lo = s - 12, f, d1, k, cnt = 0
    if lo < 7:
        lo = 7
    if s <= lo:
        return 36
    W = Bk & ((<uint32_t>1 << s) - (<uint32_t>1 << lo))
    if W == 0:
        return 36
    f = __builtin_ctz(W)
    G = ((<uint32_t>1 << f) - 2) & ~Bk       # open landing points past them
    # branch-free (fixed bounds).  Doubles: the checker's place as a bit,
    # moved d1 at a time over points not held (a place below 1 falls to bit
    # 0 or off the mask, where neither G nor Bk has a bit); non-doubles:
    # one die or the other lands in G, or both (not over two held points)
    open_ = ~Bk
    for d1 in range(1, 7):
        at = (<uint32_t>1 << s) >> d1
        esc = at & G
        for k in range(3):
            at = (at & open_) >> d1
            esc |= at & G
        cnt += esc != 0
    # with bit d of A and K standing for the point d pips ahead of the
    # checker (landing in G, held): for each d1, the d2 < d1 that escape
    # as a mask, so that the 15 non-doubles take five popcounts
    A = (bgv_mirror24(G >> 1) << 1) >> (25 - s)
    K = (bgv_mirror24(Bk >> 1) << 1) >> (25 - s)
    for d1 in range(2, 7):
        low = (<uint32_t>1 << d1) - 2                          # the d2 = 1 .. d1 - 1
        esc = (A | ((A >> d1) & ~(K & (0 - ((K >> d1) & 1))))) & low
        esc |= low & (0 - ((A >> d1) & 1))                     # d1 alone escapes
        cnt += 2 * bgv_popcount32(esc)
    return cnt


# Optional feature groups, bit g of a net's group mask (bgfast.net.GROUPS
# names them).  Their inputs follow the base ones, group after group in the
# order of g, each group on-roll side first.  Per side X (the other side Y):
#   g = 0, contain (2): the blockade Y sets against X: c = 36 minus the
#      fewest escapes (ESC12, over Y's points outside X's home board) of a
#      checker of X at any distance 15..24, / 36; then c squared.
#   g = 1, contact (2): with Y's rearmost checker at distance r from X's
#      home (r = 25 - its own distance; none: r = 25), the pips X's
#      checkers at distances s > r (the bar: 25) must move to pass it,
#      sum of s - r, / 100; the number of those checkers, / 15.
#   g = 2, anchors (3): 1 when X holds a point in Y's home board (distances
#      19..24), else 0; X's most advanced point held at distances 13..24,
#      (25 - s) / 12, 0 when none; its rearmost one there, (s - 12) / 12.
#   g = 3, hits (2): for each of Y's 36 rolls the blots of X it can hit
#      (_hit_mask, _roll_masks): the mean over the 36 rolls of the most pips X loses
#      by one hit (a blot at X's distance s loses 25 - s), / 24; the rolls
#      that can hit two or more blots, / 36.
#   g = 4, mobility (2): the (die, point) pairs, dice 1..6 and the points
#      and bar of X, from which the die lands on a point Y does not hold
#      (not bearing off; bar checkers are not made to enter first), / 60;
#      the dice 1..6 that no checker of X can play this way, / 6.
#   g = 5, off (14): the checkers X has borne off as a thermometer: input j
#      (0..13) is 1 when more than j are off, else 0.  The inputs depend on
#      the borne-off slot's count alone, so the evaluation folds them into
#      that slot's rows of T (NET_SLOT_GROUPS) and never computes them.

cdef int GROUP_SIZE[NET_GROUPS]
GROUP_SIZE[:] = [2, 2, 3, 2, 2, 14]

# ESC12[P]: the escapes (rolls of 36) of a checker past the points P holds
# among the 12 in front of it (bit i of P: the point 12 - i pips ahead), the
# points further on taken as open: the checker must land beyond the furthest
# of them on a point not held, a non-double by one die or by both (over an
# open intermediate point), a double in up to four steps over open points.
cdef uint8_t ESC12[4096]


cdef inline int _held12(int P, int j) noexcept nogil:
    return (P >> (12 - j)) & 1 if 1 <= j <= 12 else 0


cdef void _build_esc12() noexcept nogil:
    cdef int P, h, j, d1, d2, k, n
    for P in range(4096):
        if P == 0:
            ESC12[P] = 36
            continue
        h = 12 - __builtin_ctz(P)                  # the furthest point held
        n = 0
        for d1 in range(1, 7):
            for k in range(1, 5):
                if _held12(P, k * d1):
                    break
                if k * d1 > h:
                    n += 1
                    break
            for d2 in range(1, d1):
                if ((d1 > h and not _held12(P, d1)) or (d2 > h and not _held12(P, d2))
                        or (d1 + d2 > h and not _held12(P, d1 + d2)
                            and not (_held12(P, d1) and _held12(P, d2)))):
                    n += 2
        ESC12[P] = n


_build_esc12()


cdef int net_feature_count(int groups) noexcept nogil:
    cdef int g, n = NET_FEATURES
    for g in range(NET_GROUPS):
        if (groups >> g) & 1:
            n += 2 * GROUP_SIZE[g]
    return n


cdef inline int _high_bit(uint32_t m) noexcept nogil:
    """The highest set bit of m (0 when m == 0)."""
    return 31 - __builtin_clz(m) if m else 0


cdef inline void _group_features(int g, int q, const uint8_t* b, const uint32_t* occ,
                                 const uint32_t* held, const uint32_t* hmir, const int* rear,
                                 const int* hl, float* f) noexcept nogil:
    """The inputs of group g for side q (see the comment above; hl: the
    _hit_counts sums of the other side's rolls at q's blots)."""
    cdef const uint8_t* row = b + 25 if q == 0 else b
    cdef int s, r, d1, e, mn, pips, n, cnt
    cdef uint32_t m, src, land
    if g == 0:
        mn = 36
        m = hmir[1 - q] & ~(<uint32_t>0x7F)               # Y's points outside X's home board
        for s in range(15, 25):
            e = ESC12[(m >> (s - 12)) & 0xFFF]
            mn = e if e < mn else mn
        f[0] = (36 - mn) * (1.0 / 36.0)
        f[1] = f[0] * f[0]
    elif g == 1:
        r = 25 - rear[1 - q]
        pips = 0
        n = 0
        m = occ[q] & ~((<uint32_t>2 << r) - 1)           # X's points past distance r
        while m:
            s = __builtin_ctz(m)
            m &= m - 1
            e = row[s - 1]
            pips += e * (s - r)
            n += e
        if r < 25:                                       # the bar, at distance 25
            pips += row[24] * (25 - r)
            n += row[24]
        f[0] = pips * (1.0 / 100.0)
        f[1] = n * (1.0 / 15.0)
    elif g == 2:
        m = held[q]
        f[0] = 1.0 if m & 0x1F80000 else 0.0
        m &= 0x1FFE000                                   # distances 13..24
        f[1] = (25 - __builtin_ctz(m)) * (1.0 / 12.0) if m else 0.0
        f[2] = (_high_bit(m) - 12) * (1.0 / 12.0) if m else 0.0
    elif g == 3:
        f[0] = hl[0] * (1.0 / (36.0 * 24.0))
        f[1] = hl[1] * (1.0 / 36.0)
    elif g == 5:
        n = 15
        for s in range(25):
            n -= row[s]
        for s in range(14):
            f[s] = 1.0 if n > s else 0.0
    else:
        src = occ[q] | ((<uint32_t>(row[24] != 0)) << 25)
        land = ~hmir[1 - q] & 0x1FFFFFE                  # distances 1..24 Y does not hold
        cnt = 0
        n = 0
        for d1 in range(1, 7):
            e = bgv_popcount32(src & (land << d1))
            cnt += e
            n += e == 0
        f[0] = cnt * (1.0 / 60.0)
        f[1] = n * (1.0 / 6.0)


cdef inline void _group_pair(int g, const uint8_t* b, const uint32_t* occ,
                             const uint32_t* held, const uint32_t* hmir, const int* rear,
                             int (*hl)[2], float* f) noexcept nogil:
    """The inputs of group g for the side on roll, then for the other (two
    calls with a constant side, which the compiler inlines: cheaper than a
    loop over the sides)."""
    _group_features(g, 0, b, occ, held, hmir, rear, hl[0], f)
    _group_features(g, 1, b, occ, held, hmir, rear, hl[1], f + GROUP_SIZE[g])


cdef int net_features(const uint8_t* b, int groups, float* f) noexcept nogil:
    # masks per side q (0 = on roll, row 1 of b): in its own distances the
    # points it occupies and holds; in the other side's distances its points
    # open to the other side, its blots and the points it holds
    cdef uint32_t occ[2]
    cdef uint32_t held[2]
    cdef uint32_t opn[2]
    cdef uint32_t blot[2]
    cdef uint32_t hmir[2]
    cdef int rear[2]
    cdef uint32_t M[24]               # NROLLS masks, then zeros (_hit_counts)
    cdef int hl[2][2]
    cdef const uint8_t* row
    cdef uint32_t m
    cdef int q, n, s, run, g, o
    cdef uint32_t z, one, two
    cdef float* f0 = f
    M[21] = M[22] = M[23] = 0
    for q in range(2):
        row = b + 25 if q == 0 else b
        bgv_point_masks(row, &z, &one, &two)       # bit i: point i
        occ[q] = (one | two) << 1                  # own distances: bit i + 1
        held[q] = two << 1
        opn[q] = bgv_mirror24(z | one) << 1        # the other side's: bit 24 - i
        blot[q] = bgv_mirror24(one) << 1
        hmir[q] = bgv_mirror24(two) << 1
        if row[24]:                                # the rearmost checker's distance
            rear[q] = 25
        elif occ[q]:
            rear[q] = 31 - __builtin_clz(occ[q])
        else:
            rear[q] = 0
    for q in range(2):
        row = b + 25 if q == 0 else b
        # the other side (1 - q) rolls at q's blots
        if blot[q]:
            _roll_masks(occ[1 - q], opn[q], blot[q], (b if q == 0 else b + 25)[24], M)
            f[0] = _hit_counts(M, hl[q]) * (1.0 / 36.0)
        else:
            hl[q][0] = hl[q][1] = 0
            f[0] = 0.0
        s = rear[q]
        f[1] = (36 - (_escapes(hmir[1 - q], s) if s > 0 else 36)) * (1.0 / 36.0)
        run = 0
        m = held[q]
        for n in range(6):                         # fixed steps, then the rare longer runs
            run += m != 0
            m &= m << 1
        while m:
            m &= m << 1
            run += 1
        f[2] = run * (1.0 / 6.0)
        f[3] = s * (1.0 / 25.0)
        if row[24]:
            n = bgv_popcount32(held[1 - q] & 0x7E)
            f[4] = (n * n) * (1.0 / 36.0)
        else:
            f[4] = 0.0
        f += NET_SIDE_FEATURES
    for g in range(NET_GROUPS):                    # a fixed loop the compiler unrolls
        if (groups >> g) & 1:
            _group_pair(g, b, occ, held, hmir, rear, hl, f)
            f += 2 * GROUP_SIZE[g]
    return <int>(f - f0)


cdef inline void _add_features(const NetC* net, int k, const uint8_t* b, float* h) noexcept nogil:
    """h += the feature rows of w1 times the features of b."""
    cdef float f[NET_MAX_FEATURES]
    net_features(b, net.kgroups[k], f)
    bgv_axpys(h, net.wf[k], f, net.knf[k], net.kh[k])


cdef void _full_sums(const NetC* net, int k, const uint8_t* b, float* h) noexcept nogil:
    """Hidden sums (before the sigmoid) of board b for net k."""
    _table_sums(net, k, b, h)
    _add_features(net, k, b, h)


cdef void _table_sums(const NetC* net, int k, const uint8_t* b, float* h) noexcept nogil:
    """The raw-input part of the hidden sums of board b for net k."""
    cdef int side, i, n, tot, m = 0
    cdef int32_t rows[52]
    cdef const uint8_t* row
    cdef uint32_t z, one, two, occupied
    for side in range(2):
        row = b + 25 if side == 0 else b
        tot = 0
        bgv_point_masks(row, &z, &one, &two)
        occupied = ~z & 0xFFFFFF                 # points 0..23 holding checkers, in order
        while occupied:
            i = __builtin_ctz(occupied)
            occupied &= occupied - 1
            n = row[i]
            tot += n
            rows[m] = _slot_row(side, i, n)
            m += 1
        n = row[24]                              # the bar
        if n:
            tot += n
            rows[m] = _slot_row(side, 24, n)
            m += 1
        n = 15 - tot
        if n > 0:
            rows[m] = _slot_row(side, 25, n)
            m += 1
    bgv_rows(h, net.b1[k], net.T[k], rows, m, rows, 0, net.kh[k])


cdef void _outputs(const NetC* net, int k, const float* h, double* p) noexcept nogil:
    """Outputs from the hidden sums, kept in the cumulative order."""
    cdef float s[5]
    cdef int o
    bgv_output_sums(h, net.w2t[k], net.b2[k], net.kh[k], s)
    for o in range(5):
        p[o] = _sigf(s[o])
    order_probs(p)


cdef inline bint _side_crashed(const uint8_t* row) noexcept nogil:
    """Whether the side of a board row has at most NET_CRASHED_IN_PLAY
    checkers in play: on the board (the bar included), less those piled
    beyond the second on its 1- and 2-points together
    (bgfast.traindata.checkers_in_play)."""
    cdef int i, t = 0, deep = row[0] + row[1]
    for i in range(25):
        t += row[i]
    if deep > 2:
        t -= deep - 2
    return t <= NET_CRASHED_IN_PLAY


cdef inline int _crashed(const uint8_t* b) noexcept nogil:
    """Which side of b is crashed (_side_crashed): 1 the side on roll (row
    1), whatever the other; 2 the other side alone; 0 neither."""
    if _side_crashed(b + 25):
        return 1
    if _side_crashed(b):
        return 2
    return 0


cdef inline int _plan_band(const uint8_t* b) noexcept nogil:
    """The plan band (0..3) of b: how many of the edges NET_PLAN_EDGE1..3 the
    on-roll side's lead in the race (the opponent's pips minus its own; row
    1 on roll, slot 24 the bar at 25 pips) reaches."""
    cdef int i, d = 0
    for i in range(25):
        d += (i + 1) * (<int>b[i] - <int>b[25 + i])
    return (d >= NET_PLAN_EDGE1) + (d >= NET_PLAN_EDGE2) + (d >= NET_PLAN_EDGE3)


cdef inline int _plan_net(const uint8_t* b) noexcept nogil:
    """The contact net of b's plan band in a set of NET_PLAN_NETS: 0, then 3, 4, 5."""
    cdef int band = _plan_band(b)
    return 2 + band if band else 0


cdef inline int _net_of_contact(const NetC* net, int contact, const uint8_t* b) noexcept nogil:
    """net_of for a board b whose contact test is done: race 1, crashed 2
    (a net of three or more; in a net of NET_SIDE_NETS, NET_CRASHED_OTHER
    when the side on roll is not the one crashed), contact 0, or in a net
    of NET_PLAN_NETS or more the contact net of its plan band (_plan_net)."""
    cdef int c
    if not contact:
        return 1
    if net.nets > 2:
        c = _crashed(b)
        if c:
            return NET_CRASHED_OTHER if c == 2 and net.nets == NET_SIDE_NETS else 2
    return _plan_net(b) if net.nets >= NET_PLAN_NETS else 0


cdef int net_of(const NetC* net, const uint8_t* b) noexcept nogil:
    return _net_of_contact(net, board_contact(b), b)


cdef void net_forward(const NetC* net, const uint8_t* b, double* p) noexcept nogil:
    cdef float h[NET_MAX_HIDDEN]
    cdef int k = net_of(net, b)
    _full_sums(net, k, b, h)
    _outputs(net, k, h, p)


cdef inline int _over(const uint8_t* b) noexcept nogil:
    cdef int i, t0 = 0, t1 = 0
    for i in range(25):
        t0 += b[i]
        t1 += b[25 + i]
    return t0 == 0 or t1 == 0


# ---------------------------------------------------------------------------
# the one-sided race net
# ---------------------------------------------------------------------------

#: The 4 input units of a point holding 0..15 checkers (count >= 1, >= 2,
#: >= 3, (count - 3) / 2 beyond), as the one-sided race net reads them.
POINT_UNITS = np.array([(c >= 1, c >= 2, c >= 3, max(c - 3, 0) / 2) for c in range(16)],
                       dtype=np.float32)
POINT_UNITS.flags.writeable = False

#: a one-sided race net's chance of a roll below this is none (float32's
#: resolution of the whole distribution)
cdef double OS_NET_FLOOR = 1.0 / (1 << 30)


cdef inline void _os_softmax(float* z, double* d) noexcept nogil:
    """d: the softmax of OS_NET_BINS sums z (overwritten), a chance below
    OS_NET_FLOOR set to none."""
    cdef float m = z[0], sm = 0.0
    cdef int o
    for o in range(1, OS_NET_BINS):
        if z[o] > m:
            m = z[o]
    for o in range(OS_NET_BINS):
        z[o] = bgv_expf(z[o] - m)
        sm += z[o]
    for o in range(OS_NET_BINS):
        d[o] = z[o] / sm
        # below float32's resolution of the whole: none (so that a race
        # the rolls decide whatever the dice comes out certain)
        if d[o] < OS_NET_FLOOR:
            d[o] = 0.0


cdef void _os_forward(const NetC* net, const uint8_t* row, double* r, double* g,
                      double* cl) noexcept nogil:
    """The one-sided race net's distributions of one side (row: slots 0..23):
    its inputs are 4 units a point (count >= 1, >= 2, >= 3, (count - 3) / 2
    beyond), folded into os_T by (slot, count), then the pips / 100, the
    checkers outside the home board / 15, the crossovers (checkers times
    their quarter of the board) / 30 and the checkers off / 15; tanh hidden
    units; softmaxes of OS_NET_BINS rolls: to bear off (r), to take the
    first checker off (g) and, when cl is not NULL, to bring every checker
    out of the other side's home board (the third, os_w3).  Sums in a fixed
    order."""
    cdef float h[OS_NET_MAX_HIDDEN]
    cdef float z[2 * OS_NET_BINS]
    cdef float x[4]
    cdef const float* w
    cdef int H = net.os_h, j, s, c, q, n = 0, pips = 0, outside = 0, cross = 0
    memcpy(h, net.os_b1, H * sizeof(float))
    for s in range(24):
        c = row[s]
        if c == 0:
            continue
        n += c
        pips += c * (s + 1)
        cross += c * (s // 6)
        if s >= 6:
            outside += c
        w = net.os_T + (s * 16 + c) * H
        for j in range(H):
            h[j] += w[j]
    x[0] = <float>pips / 100.0
    x[1] = <float>outside / 15.0
    x[2] = <float>cross / 30.0
    x[3] = <float>(15 - n) / 15.0
    for q in range(4):
        w = net.os_wx + q * H
        for j in range(H):
            h[j] += x[q] * w[j]
    bgv_os_outputs(h, H, net.os_w2, net.os_b2, 2 * OS_NET_BINS, z)
    _os_softmax(z, r)
    _os_softmax(z + OS_NET_BINS, g)
    if cl != NULL:
        bgv_os_outputs(h, H, net.os_w3, net.os_b3, OS_NET_BINS, z)
        _os_softmax(z, cl)


cdef inline int _os_side(const NetC* net, const uint8_t* row, double* r, double* g,
                         double* cl, int* total) noexcept nogil:
    """One side's distributions for os_race_probs: the race table's, or the
    one-sided race net's beyond it; 0 if neither values the side, 1 if they
    do and it has no checker in the other side's home board, 2 if it has
    (cl: the net's third distribution)."""
    cdef int s, hi = -1, n = 0
    for s in range(25):
        if row[s]:
            hi = s
            n += row[s]
    if hi == 24 or (hi >= OS_NET_FAR and net.os_w3 == NULL):
        return 0
    if hi < OS_NET_FAR and os_table_side(row, r, g, total):
        return 1
    if hi < net.os_min:
        return 0
    total[0] = n
    _os_forward(net, row, r, g, cl if hi >= OS_NET_FAR else NULL)
    return 2 if hi >= OS_NET_FAR else 1


cdef int os_race_probs(const NetC* net, const uint8_t* b, double* p) noexcept nogil:
    cdef double ri[OS_NET_BINS]
    cdef double gi[OS_NET_BINS]
    cdef double ci[OS_NET_BINS]
    cdef double rj[OS_NET_BINS]
    cdef double gj[OS_NET_BINS]
    cdef double cj[OS_NET_BINS]
    cdef int ti, tj, vi, vj
    if net.os_h == 0 or os_table_points() < net.os_min:
        return 0
    vi = _os_side(net, b + 25, ri, gi, ci, &ti)
    if vi == 0:
        return 0
    vj = _os_side(net, b, rj, gj, cj, &tj)
    if vj == 0:
        return 0
    race_convolve(ri, gi, ci if vi == 2 else NULL, ti, rj, gj, cj if vj == 2 else NULL, tj, p)
    return 1


cdef inline int _os_play(NetCtx* c, const NetC* net, const uint8_t* r, double* p) noexcept nogil:
    """os_race_probs of a play's result r from the base c.base: the side on
    roll in r, which did not move, is valued once per base (c.osv)."""
    cdef double rj[OS_NET_BINS]
    cdef double gj[OS_NET_BINS]
    cdef double cj[OS_NET_BINS]
    cdef int tj, vj
    if net.os_h == 0 or os_table_points() < net.os_min:
        return 0
    if c.osv == 0:
        c.osv = _os_side(net, r + 25, c.osr, c.osg, c.osc, &c.ost)
        if c.osv == 0:
            c.osv = -1
    if c.osv < 0:
        return 0
    vj = _os_side(net, r, rj, gj, cj, &tj)
    if vj == 0:
        return 0
    race_convolve(c.osr, c.osg, c.osc if c.osv == 2 else NULL, c.ost, rj, gj,
                  cj if vj == 2 else NULL, tj, p)
    return 1


cdef inline int _os_race(const NetC* net, const uint8_t* b, double* p) noexcept nogil:
    """os_race_probs of b when the tables are on and b is a race (1), else 0."""
    return net.tables and net.os_h and not board_contact(b) and os_race_probs(net, b, p)


cdef void net_onroll(const NetC* net, const uint8_t* b, double* p) noexcept nogil:
    if _over(b):
        over_probs(b, p)
        return
    if net.tables and table_probs(b, p):
        return
    if not _os_race(net, b, p):
        net_forward(net, b, p)


# ---------------------------------------------------------------------------
# incremental evaluation of the plays of one roll
# ---------------------------------------------------------------------------

cdef int netctx_init(NetCtx* c) noexcept nogil:
    cdef int d, bad = 0
    memset(c, 0, sizeof(NetCtx))
    for d in range(NET_MAX_DEPTH):
        if movegen_init(&c.g[d], 1024, 0) != 0:
            bad = 1
    c.eq = <double*>malloc(NET_MAX_PLAYS * sizeof(double))
    if bad or c.eq == NULL:
        netctx_free(c)
        return ERR_MEMORY
    c.ready = 1
    return 0


cdef void netctx_free(NetCtx* c) noexcept nogil:
    cdef int d
    for d in range(NET_MAX_DEPTH):
        movegen_free(&c.g[d])
    free(c.eq)
    c.eq = NULL
    netctx_cache(c, 0)
    c.ready = 0


cdef inline void _set_base(NetCtx* c, const NetC* net, const uint8_t* b) noexcept nogil:
    """The plays of b are compared with b swapped (the mover in row 0).  The
    base's sums stay when b and the net's weights are those of the last
    call (the 21 rolls of a rollout's luck estimate share them)."""
    cdef uint8_t nb[64]
    swap_board(b, nb)
    if c.bnet == net and c.bver == net.version and memcmp(nb, c.base, 50) == 0:
        return
    memcpy(c.base, nb, 50)
    c.bnet = net
    c.bver = net.version
    memset(c.hbv, 0, sizeof(c.hbv))
    c.btv = 0
    c.osv = 0


cdef inline int _row_deltas(const uint8_t* r, const uint8_t* base, uint64_t d, int side,
                            int32_t* add, int* na, int32_t* sub, int* ns) noexcept nogil:
    """The table rows that turn the slots of d (bits: row slots 0..24 that
    differ) of base into r's, appended to add/sub in slot order; returns the
    change in the row's checkers on the board."""
    cdef int i, n, m, delta = 0
    while d:
        i = __builtin_ctzll(d)
        d &= d - 1
        n = base[i]
        m = r[i]
        delta += m - n
        if n:
            sub[ns[0]] = _slot_row(side, i, n)
            ns[0] += 1
        if m:
            add[na[0]] = _slot_row(side, i, m)
            na[0] += 1
    return delta


cdef inline void _off_rows(int tn, int tm, int side, int32_t* add, int* na, int32_t* sub,
                           int* ns) noexcept nogil:
    """The borne-off slot's rows for a row going from tn to tm checkers on the board."""
    if tn != tm:
        if tn < 15:
            sub[ns[0]] = _slot_row(side, 25, 15 - tn)
            ns[0] += 1
        if tm < 15:
            add[na[0]] = _slot_row(side, 25, 15 - tm)
            na[0] += 1


cdef void _eval_play(NetCtx* c, const NetC* net, const uint8_t* r, double* p) noexcept nogil:
    """Probabilities for the player on roll of a play's result r, from the base sums.

    Byte masks of r (which slots differ from the base, which hold checkers)
    give the game-over test, the contact test, whether a bear-off table can
    hold r (no checker where the tables have none: table_probs reads no other board) and the slots
    to update, the rows in the order of the slots (the roller's row first).
    The base's sums include its hand-made inputs, so a play adds only the
    rows of the inputs that differ from the base's (about 8 of the 32 of a
    net with every group), each times the difference."""
    cdef int32_t add[52]
    cdef int32_t sub[52]
    cdef float f[NET_MAX_FEATURES]
    cdef int32_t fi[NET_MAX_FEATURES]
    cdef float fv[NET_MAX_FEATURES]
    cdef float s[5]
    cdef float* fb
    cdef uint64_t diff, nz
    cdef int k, o, b0, b1, d0, q, nf, na = 0, ns = 0, nfv = 0
    bgv_board_masks(r, c.base, &diff, &nz)
    if (nz & 0x1FFFFFF) == 0 or (nz >> 25) == 0:
        over_probs(r, p)
        return
    if net.tables and (nz & table_empty_slots()) == 0 and table_probs(r, p):
        return
    b0 = 63 - __builtin_clzll(nz & 0x1FFFFFF)          # the rearmost checkers (board_contact)
    b1 = 63 - __builtin_clzll(nz >> 25)
    if b0 + b1 < 23 and net.tables and net.os_h and _os_play(c, net, r, p):
        return
    k = _net_of_contact(net, b0 + b1 >= 23, r)
    fb = c.fb[k]
    nf = net.knf[k]
    if not c.hbv[k]:
        _table_sums(net, k, c.base, c.hb[k])
        net_features(c.base, net.kgroups[k], fb)
        bgv_axpys(c.hb[k], net.wf[k], fb, nf, net.kh[k])
        c.hbv[k] = 1
    if not c.btv:
        _base_totals(c)
    d0 = _row_deltas(r + 25, &c.base[25], diff >> 25, 0, add, &na, sub, &ns)
    _off_rows(c.btot[0], c.btot[0] + d0, 0, add, &na, sub, &ns)
    d0 = _row_deltas(r, c.base, diff & 0x1FFFFFF, 1, add, &na, sub, &ns)
    _off_rows(c.btot[1], c.btot[1] + d0, 1, add, &na, sub, &ns)
    net_features(r, net.kgroups[k], f)
    for q in range(nf):
        if f[q] != fb[q]:
            fi[nfv] = q
            fv[nfv] = f[q] - fb[q]
            nfv += 1
    bgv_eval_play(c.hb[k], net.T[k], add, na, sub, ns, net.wf[k],
                  fi, fv, nfv, net.w2t[k], net.b2[k], net.kh[k], s)
    for o in range(5):
        p[o] = _sigf(s[o])
    order_probs(p)


cdef void _base_totals(NetCtx* c) noexcept nogil:
    """The checkers on the board of each row of the base (side 0: c.base[25..49])."""
    cdef int i, t0 = 0, t1 = 0
    for i in range(25):
        t0 += c.base[25 + i]
        t1 += c.base[i]
    c.btot[0] = t0
    c.btot[1] = t1
    c.btv = 1


cdef inline Py_ssize_t _best_of(NetCtx* c, const NetC* net, const uint8_t* b, const MoveGen* g,
                                Py_ssize_t n, const int32_t* idx, int m, uint8_t* out,
                                double* pout) noexcept nogil:
    """Of the n plays of b that g holds, the net's 0-ply best of idx[0..m)
    (in play order; idx NULL: of all n) in out, its probabilities (player
    on roll after it) in pout, ties to the earlier play; n == 0: the turn
    passed.  Returns n."""
    cdef Py_ssize_t i, j, best = 0
    cdef double p[5]
    cdef double e, be = 1e300
    if n == 0:
        swap_board(b, out)
        net_onroll(net, out, pout)
        return 0
    _set_base(c, net, b)
    for j in range(n if idx == NULL else m):
        i = j if idx == NULL else idx[j]
        _eval_play(c, net, g.out + 50 * i, p)
        e = probs_equity(p)          # for the opponent: the mover minimises it
        if e < be:
            be = e
            best = i
            memcpy(pout, p, 5 * sizeof(double))
    memcpy(out, g.out + 50 * best, 50)
    return n


cdef Py_ssize_t _best0(NetCtx* c, const NetC* net, const uint8_t* b, int d1, int d2,
                       int depth, uint8_t* out, double* pout) noexcept nogil:
    """The 0-ply best play of (d1, d2) in out, its probabilities (player on
    roll after it) in pout.  Uses c.g[depth]."""
    cdef MoveGen* g = &c.g[depth]
    cdef Py_ssize_t n
    g.n = 0
    n = movegen_plays(g, b, d1, d2)
    if n < 0:
        return n
    return _best_of(c, net, b, g, n, NULL, 0, out, pout)


# ---------------------------------------------------------------------------
# the evaluation cache
# ---------------------------------------------------------------------------
#
# A search asks the same question many times: the 0-ply best play of a board
# for a roll and its probabilities (_best0).  Iterative deepening asks it
# again at each level, and a rollout's next ply asks again what the ply
# before looked at (the opponent's replies, the luck plays of n-ply
# policies).  The cache keeps the answers, keyed by the board and the dice,
# for one net: a direct-mapped table of a fixed power-of-two size, local to
# a work space (one per worker), the newest entry replacing the old one.
# _best0 evaluates the plays of (b, roll) incrementally from b's hidden sums,
# so its answer is a function of (net, b, d1, d2) alone: a hit returns the
# very bits a miss computes, and results do not depend on what the cache
# holds (on the job count, the chunks or the backend).

cdef int CACHE_LOG2 = 16             # entries of a policy work space's cache: 2**CACHE_LOG2
cdef int64_t CACHE_LOOKUPS = 0        # the totals of the freed policy work spaces' caches
cdef int64_t CACHE_HITS = 0


cdef int netctx_cache(NetCtx* c, int log2) noexcept nogil:
    """A new, empty cache for c (its counters carried over)."""
    cdef NetCache* k = c.cache
    cdef int64_t lookups = 0, hits = 0
    if k != NULL:
        lookups = k.lookups
        hits = k.hits
        free(k.e)
        free(k)
        c.cache = NULL
    if log2 <= 0:
        return 0
    k = <NetCache*>malloc(sizeof(NetCache))
    if k == NULL:
        return ERR_MEMORY
    memset(k, 0, sizeof(NetCache))
    k.lookups = lookups
    k.hits = hits
    k.mask = ((<uint64_t>1) << log2) - 1
    k.e = <CacheEntry*>calloc(k.mask + 1, sizeof(CacheEntry))
    if k.e == NULL:
        free(k)
        return ERR_MEMORY
    c.cache = k
    return 0


cdef inline void _pack(const uint8_t* b, uint8_t* k) noexcept nogil:
    """The 50 counts of b (each 0..15), two a byte."""
    cdef int i
    for i in range(25):
        k[i] = b[2 * i] | (b[2 * i + 1] << 4)


cdef inline void _unpack(const uint8_t* k, uint8_t* b) noexcept nogil:
    cdef int i
    for i in range(25):
        b[2 * i] = k[i] & 15
        b[2 * i + 1] = k[i] >> 4


cdef inline uint64_t _key_hash(const uint8_t* k) noexcept nogil:
    """A 64-bit hash of the 26 key bytes (multiply-xorshift over 8-byte words)."""
    cdef uint64_t w[4]
    cdef uint64_t h = 0x9E3779B97F4A7C15ULL
    cdef int i
    w[3] = 0
    memcpy(w, k, 26)
    for i in range(4):
        h = (h ^ w[i]) * 0xBF58476D1CE4E5B9ULL
        h ^= h >> 29
    return h ^ (h >> 32)


cdef Py_ssize_t _best0_cached(NetCtx* c, const NetC* net, const uint8_t* b, int d1, int d2,
                              int depth, uint8_t* out, double* pout) noexcept nogil:
    """_best0 through the work space's evaluation cache (when it has one)."""
    cdef NetCache* k = c.cache
    cdef uint8_t key[26]
    cdef uint64_t h
    cdef CacheEntry* e
    cdef Py_ssize_t n
    if k == NULL:
        return _best0(c, net, b, d1, d2, depth, out, pout)
    if k.net != <const void*>net.T[0] or k.tables != net.tables:
        # another net (or the same weights with other tables): start afresh
        if k.net != NULL:
            memset(k.e, 0, (k.mask + 1) * sizeof(CacheEntry))
        k.net = <const void*>net.T[0]
        k.tables = net.tables
    _pack(b, key)
    key[25] = <uint8_t>(d1 * 8 + d2)
    h = _key_hash(key) | 1
    e = &k.e[(h >> 1) & k.mask]
    k.lookups += 1
    if e.tag == h and memcmp(e.key, key, 26) == 0:
        k.hits += 1
        _unpack(e.play, out)
        memcpy(pout, e.p, 5 * sizeof(double))
        return e.n
    n = _best0(c, net, b, d1, d2, depth, out, pout)
    if n >= 0:
        e.tag = h
        memcpy(e.key, key, 26)
        _pack(out, e.play)
        e.n = <int32_t>n
        memcpy(e.p, pout, 5 * sizeof(double))
    return n


#: the most candidates a pruned luck play may take (bgfast.rollout.MAX_LUCK_PLAYS)
MAX_LUCK_PLAYS = NET_MAX_LUCK_PLAYS


cdef Py_ssize_t _best0_pruned(NetCtx* c, const NetC* net, const uint8_t* b, int d1, int d2,
                              int k, int depth, uint8_t* out, double* pout) noexcept nogil:
    """The best play of (d1, d2) by the net at 0-ply among the k (1 ..
    NET_MAX_LUCK_PLAYS) plays pubeval scores best (its weights picked from
    b; ties to the earlier play), in out with its probabilities in pout, as
    _best0 gives it (the same bits when there are at most k plays).
    Returns the number of legal plays, <0 on error.  Uses c.g[depth]."""
    cdef MoveGen* g = &c.g[depth]
    cdef Py_ssize_t n, i
    cdef int m = 0, j, t
    cdef int32_t idx[NET_MAX_LUCK_PLAYS]
    cdef double sc[NET_MAX_LUCK_PLAYS]
    cdef double s
    cdef bint contact
    g.n = 0
    n = movegen_plays(g, b, d1, d2)
    if n < 0:
        return n
    if n <= k:
        return _best_of(c, net, b, g, n, NULL, 0, out, pout)
    contact = board_contact(b)
    for i in range(n):                   # the k best scores, best first (insertion)
        s = pub_score(g.out + 50 * i, contact)
        if m == k and s <= sc[k - 1]:
            continue
        j = m if m < k else k - 1
        while j > 0 and sc[j - 1] < s:
            sc[j] = sc[j - 1]
            idx[j] = idx[j - 1]
            j -= 1
        sc[j] = s
        idx[j] = <int32_t>i
        if m < k:
            m += 1
    for j in range(1, k):                # in play order, so ties go as in _best0
        t = idx[j]
        i = j
        while i > 0 and idx[i - 1] > t:
            idx[i] = idx[i - 1]
            i -= 1
        idx[i] = t
    return _best_of(c, net, b, g, n, idx, k, out, pout)


def cache_size():
    """log2 of the entries of the evaluation cache that each n-ply rollout
    policy's work space gets (0: no cache)."""
    return CACHE_LOG2


def set_cache_size(int log2):
    """Give each n-ply policy work space made from now on an evaluation cache
    of 2**log2 entries (0: none; at most 24).  The results are the same
    bits with any size: for measurements.  Forked workers inherit it."""
    global CACHE_LOG2
    if not 0 <= log2 <= 24:
        raise ValueError("the cache size must be 0..24 (log2 of its entries)")
    CACHE_LOG2 = log2


def cache_counters(bint reset=False):
    """(lookups, hits) of the evaluation caches of the policy work spaces
    freed in this process (rollout chunks played here)."""
    global CACHE_LOOKUPS, CACHE_HITS
    out = (CACHE_LOOKUPS, CACHE_HITS)
    if reset:
        CACHE_LOOKUPS = CACHE_HITS = 0
    return out


cdef int net_value(NetCtx* c, const NetC* net, const uint8_t* b, int plies, int depth,
                   double* p) noexcept nogil:
    """n-ply probabilities of b for the player on roll: the average over the 21
    rolls of the value after the best 0-ply play, looked at one ply less.
    The two-sided table's exact values end the search; the one-sided race
    table's convolution (an approximation) is looked past, like the net's."""
    cdef uint8_t nb[64]
    cdef double q[5]
    cdef double r[5]
    cdef double w
    cdef int a, d, o
    cdef Py_ssize_t n
    if plies <= 0 or depth >= NET_MAX_DEPTH or _over(b):
        net_onroll(net, b, p)
        return 0
    if net.tables and exact_probs(b, p):
        return 0
    for o in range(5):
        p[o] = 0.0
    for a in range(1, 7):
        for d in range(1, a + 1):
            w = (1.0 if a == d else 2.0) / 36.0
            n = _best0_cached(c, net, b, a, d, depth, nb, q)
            if n < 0:
                return <int>n
            if plies > 1:
                if net_value(c, net, nb, plies - 1, depth + 1, q) < 0:
                    return -1
            invert_probs(q, r)
            for o in range(5):
                p[o] += w * r[o]
    return 0


cdef inline double _gauss(Rng* rng) noexcept nogil:
    """A standard normal deviate (Box-Muller)."""
    cdef double u1 = ((rng_next(rng) >> 11) + 1.0) * (1.0 / 9007199254740993.0)
    cdef double u2 = (rng_next(rng) >> 11) * (1.0 / 9007199254740992.0)
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2)


# move filters of the search: (kept plays, equity window) after 0-ply and after
# 1-ply.  The 1-ply filter (best 5 within 0.10) only acts at 2 plies and up:
# judged by gnubg 2-ply on 4,000 positions it gains ~0.00015 equity per move
# over the best 3 within 0.06, for ~1.4x the time of a 2-ply choice.
cdef int FILTER_N[2]
cdef double FILTER_W[2]
FILTER_N[0] = 8
FILTER_W[0] = 0.16
FILTER_N[1] = 5
FILTER_W[1] = 0.10


def move_filters():
    """The search's move filters: ((kept plays, equity window) after 0-ply,
    (kept plays, equity window) after 1-ply)."""
    return ((FILTER_N[0], FILTER_W[0]), (FILTER_N[1], FILTER_W[1]))


def set_move_filters(int n0, double w0, int n1, double w1):
    """Set the move filters (see :func:`move_filters`); for experiments,
    not thread-safe against running searches."""
    if not (1 <= n0 <= 16 and 1 <= n1 <= 16) or w0 < 0 or w1 < 0:
        raise ValueError("kept plays must be 1..16 and windows >= 0")
    FILTER_N[0] = n0
    FILTER_W[0] = w0
    FILTER_N[1] = n1
    FILTER_W[1] = w1


cdef int _filter(double* eq, Py_ssize_t* idx, int m, int keep, double window) noexcept nogil:
    """Sort idx[0..m) by eq (descending, stable) and keep the top plays."""
    cdef int i, j
    cdef Py_ssize_t t
    for i in range(1, m):
        t = idx[i]
        j = i - 1
        while j >= 0 and eq[idx[j]] < eq[t]:
            idx[j + 1] = idx[j]
            j -= 1
        idx[j + 1] = t
    if m > keep:
        m = keep
    i = 1
    while i < m and eq[idx[i]] >= eq[idx[0]] - window:
        i += 1
    return i


cdef Py_ssize_t net_choose(NetCtx* c, const NetC* net, const uint8_t* b, int d1, int d2,
                           int plies, double noise, Rng* rng, uint8_t* out) noexcept nogil:
    cdef MoveGen* g = &c.g[0]
    cdef Py_ssize_t n, i, best = 0
    cdef Py_ssize_t idx[16]
    cdef Py_ssize_t* all_idx
    cdef double p[5]
    cdef double be = -1e300
    cdef int m, lev, j
    g.n = 0
    n = movegen_plays(g, b, d1, d2)
    if n < 0:
        return n
    if n == 0:
        swap_board(b, out)
        return 0
    if n == 1:
        memcpy(out, g.out, 50)
        return 1
    if n > NET_MAX_PLAYS:
        return ERR_MEMORY
    _set_base(c, net, b)
    for i in range(n):
        _eval_play(c, net, g.out + 50 * i, p)
        c.eq[i] = -probs_equity(p)
        if noise > 0.0:
            c.eq[i] += noise * _gauss(rng)
        if c.eq[i] > be:
            be = c.eq[i]
            best = i
    if plies > 0:
        # the top plays at 0-ply: a partial selection into idx
        m = 0
        for i in range(n):
            if m < 16:
                idx[m] = i
                m += 1
            else:
                # replace the worst kept play when this one is better
                j = 0
                for lev in range(1, 16):
                    if c.eq[idx[lev]] < c.eq[idx[j]]:
                        j = lev
                if c.eq[i] > c.eq[idx[j]]:
                    idx[j] = i
        m = _filter(c.eq, idx, m, FILTER_N[0], FILTER_W[0])
        for lev in range(1, plies + 1):
            for j in range(m):
                if net_value(c, net, g.out + 50 * idx[j], lev, 1, p) < 0:
                    return -1
                c.eq[idx[j]] = -probs_equity(p)
            if lev < plies:
                m = _filter(c.eq, idx, m, FILTER_N[1], FILTER_W[1])
        best = idx[0]
        be = c.eq[best]
        for j in range(1, m):
            if c.eq[idx[j]] > be or (c.eq[idx[j]] == be and idx[j] < best):
                be = c.eq[idx[j]]
                best = idx[j]
    memcpy(out, g.out + 50 * best, 50)
    return n


# ---------------------------------------------------------------------------
# the Python-visible model
# ---------------------------------------------------------------------------

# ---------------------------------------------------------------------------
# a Model's 0-ply evaluation cache
# ---------------------------------------------------------------------------
#
# Model.evaluate answers the same boards again and again: the plays of a
# position ranked once more, the positions of a game analysed with several
# settings.  A table of the net's outputs keyed by the whole board answers
# them without the forward pass.  It is set-associative: a board's hash
# picks a set of EC_WAYS entries, whose tags (the hash, 0 for an empty
# entry) sit together in one cache line, and a miss replaces the set's
# entries in turn.  A call first prefetches the tags of all its boards, then
# the entries whose tags match, then answers them, so that the memory
# latencies of a position's plays overlap.  A hit copies the doubles a miss
# stored, so the values are the same bits with or without the cache,
# whatever it holds.

cdef enum:
    EC_WAYS = 4                  # entries per set (a power of two)
    EC_WAYS_LOG2 = 2
    EC_MAX_BATCH = 256           # EVAL_CACHE_MAX_BATCH


cdef struct EvalEntry:
    uint8_t key[50]
    double p[5]


cdef struct EvalCache:
    EvalEntry* ent               # 2**log2 entries, set s at s * EC_WAYS
    uint64_t* tag                # per entry: its board's hash | 1, 0 when empty
    uint8_t* turn                # per set: the way the next miss replaces
    int log2                     # 0: no cache, else at least EC_WAYS_LOG2
    int64_t lookups, hits


cdef inline uint64_t _board_hash(const uint8_t* b) noexcept nogil:
    cdef uint64_t w, h = 0x243F6A8885A308D3ULL
    cdef int i
    for i in range(6):
        memcpy(&w, b + 8 * i, 8)
        h = (h ^ w) * 0x9E3779B97F4A7C15ULL
        h ^= h >> 29
    w = <uint64_t>b[48] | (<uint64_t>b[49] << 8)
    h = (h ^ w) * 0x9E3779B97F4A7C15ULL
    return h ^ (h >> 32)


cdef inline Py_ssize_t _ec_first(const EvalCache* k, uint64_t tag) noexcept nogil:
    """The first entry of the set of a board whose tag is ``tag``."""
    cdef int sbits = k.log2 - EC_WAYS_LOG2
    return 0 if sbits == 0 else <Py_ssize_t>(tag >> (64 - sbits)) << EC_WAYS_LOG2


cdef inline int _ec_way(const EvalCache* k, Py_ssize_t first, uint64_t tag,
                        const uint8_t* b) noexcept nogil:
    """The way of the set at ``first`` that holds board b, or -1."""
    cdef int w
    for w in range(EC_WAYS):
        if k.tag[first + w] == tag and memcmp(k.ent[first + w].key, b, 50) == 0:
            return w
    return -1


cdef int _ec_alloc(EvalCache* k) noexcept nogil:
    """Allocate the (empty) table of k.log2 > 0; 0, or -1 out of memory."""
    cdef size_t n = <size_t>1 << k.log2
    k.ent = <EvalEntry*>malloc(n * sizeof(EvalEntry))
    k.tag = <uint64_t*>calloc(n, sizeof(uint64_t))
    k.turn = <uint8_t*>calloc(n >> EC_WAYS_LOG2, 1)
    if k.ent == NULL or k.tag == NULL or k.turn == NULL:
        _ec_free(k)
        return -1
    return 0


cdef void _ec_free(EvalCache* k) noexcept nogil:
    free(k.ent)
    free(k.tag)
    free(k.turn)
    k.ent = NULL
    k.tag = NULL
    k.turn = NULL


cdef extern from *:
    void __builtin_prefetch(const void* p) noexcept nogil


cdef void _cached_onroll_batch(EvalCache* k, const NetC* net, const uint8_t* boards,
                               Py_ssize_t n, double* out) noexcept nogil:
    """net_onroll(net, board i, out + 5 i) for n <= EVAL_CACHE_MAX_BATCH
    boards (50 bytes apart) through the cache k (net.tables set)."""
    cdef uint64_t tags[EC_MAX_BATCH]
    cdef Py_ssize_t first[EC_MAX_BATCH]
    cdef Py_ssize_t i, f
    cdef int w
    cdef uint64_t t
    cdef const uint8_t* b
    cdef double* p
    cdef EvalEntry* e
    for i in range(n):
        tags[i] = t = _board_hash(boards + 50 * i) | 1
        first[i] = f = _ec_first(k, t)
        __builtin_prefetch(&k.tag[f])
    for i in range(n):
        f = first[i]
        for w in range(EC_WAYS):
            if k.tag[f + w] == tags[i]:
                __builtin_prefetch(&k.ent[f + w])
                __builtin_prefetch(<const char*>&k.ent[f + w] + 64)
                break
    for i in range(n):
        b = boards + 50 * i
        p = out + 5 * i
        if _over(b):
            over_probs(b, p)
            continue
        if table_probs(b, p):
            continue
        # the cache holds the net's values, which do not depend on the tables
        if _os_race(net, b, p):
            continue
        f = first[i]
        k.lookups += 1
        w = _ec_way(k, f, tags[i], b)
        if w >= 0:
            k.hits += 1
            memcpy(p, k.ent[f + w].p, 5 * sizeof(double))
            continue
        net_forward(net, b, p)
        w = k.turn[f >> EC_WAYS_LOG2]
        k.turn[f >> EC_WAYS_LOG2] = (w + 1) & (EC_WAYS - 1)
        e = &k.ent[f + w]
        memcpy(e.key, b, 50)
        memcpy(e.p, p, 5 * sizeof(double))
        k.tag[f + w] = tags[i]


#: log2 of the entries of a new Model's evaluation cache (104 bytes each
#: with their tags), in sets of EVAL_CACHE_WAYS
EVAL_CACHE_LOG2 = 17
EVAL_CACHE_WAYS = EC_WAYS
#: the most boards of a Model.evaluate call that goes through the cache: a
#: bulk call of distinct boards would only pay for the lookups
EVAL_CACHE_MAX_BATCH = EC_MAX_BATCH
#: the most entries a Model's evaluation cache can have (log2)
EVAL_CACHE_MAX_LOG2 = 26


def nets_of(const uint8_t[:, :, ::1] boards, int nets):
    """The net that evaluates each board (player on roll in row 1) in a set
    of ``nets`` nets (2, 3, NET_PLAN_NETS or NET_SIDE_NETS), by the rule of
    net_of, int64[N]."""
    if nets not in NET_COUNTS:
        raise ValueError(f"a set of nets has {NET_COUNTS_TEXT}, not {nets}")
    if boards.shape[1] != 2 or boards.shape[2] != 25:
        raise ValueError("boards must have shape (N, 2, 25)")
    out = np.zeros(boards.shape[0], dtype=np.int64)
    cdef int64_t[::1] o = out
    cdef Py_ssize_t i
    cdef NetC c
    c.nets = nets
    with nogil:
        for i in range(boards.shape[0]):
            o[i] = net_of(&c, &boards[i, 0, 0])
    return out


def plan_nets(const uint8_t[:, :, ::1] boards):
    """The plan net (0, 3, 4 or 5: see net_of) of each contact board (player
    on roll in row 1) in a set of NET_PLAN_NETS nets, int64[N]."""
    out = np.zeros(boards.shape[0], dtype=np.int64)
    cdef int64_t[::1] o = out
    cdef Py_ssize_t i
    if boards.shape[1] != 2 or boards.shape[2] != 25:
        raise ValueError("boards must have shape (N, 2, 25)")
    with nogil:
        for i in range(boards.shape[0]):
            o[i] = _plan_net(&boards[i, 0, 0])
    return out


cdef class Model:
    """Weights of N nets (2: contact and race; 3: and crashed;
    NET_PLAN_NETS: and the contact plan nets; NET_SIDE_NETS: and a crashed
    net for the positions whose side on roll is not the one crashed; see
    net_of), float32:
    w1[N, 196 + F, H], b1[N, H], w2[N, H, 5], b2[N, 5], F the hand-made
    inputs of the feature groups ``groups`` (10 for none).  The arrays are used in
    place (training updates them); call :meth:`refresh` after changing them
    from Python."""

    cdef NetC net
    cdef readonly object w1, b1, w2, b2, T, W2T, WF
    cdef readonly object one_sided       # (os_T, os_wx, b1, w2, b2, w3, b3, min_points) or None
    cdef EvalCache ec
    cdef PyThread_type_lock ec_lock

    def __cinit__(self):
        self.ec.log2 = EVAL_CACHE_LOG2
        self.ec_lock = PyThread_allocate_lock()
        if self.ec_lock == NULL:
            raise MemoryError()

    def __dealloc__(self):
        _ec_free(&self.ec)
        if self.ec_lock != NULL:
            PyThread_free_lock(self.ec_lock)

    def __init__(self, w1, b1, w2, b2, int groups=0):
        w1 = np.ascontiguousarray(w1, dtype=np.float32)
        b1 = np.ascontiguousarray(b1, dtype=np.float32)
        w2 = np.ascontiguousarray(w2, dtype=np.float32)
        b2 = np.ascontiguousarray(b2, dtype=np.float32)
        if groups < 0 or groups >> NET_GROUPS:
            raise ValueError(f"feature groups must be a mask of {NET_GROUPS} bits, not {groups}")
        cdef int nin = NET_RAW_INPUTS + net_feature_count(groups)
        if w1.ndim != 3 or w1.shape[0] not in NET_COUNTS or w1.shape[1] != nin:
            raise ValueError(f"w1 must have shape ({NET_COUNTS_TEXT} nets, "
                             f"{nin}, H), not {w1.shape}")
        N, H = w1.shape[0], w1.shape[2]
        if not 1 <= H <= NET_MAX_HIDDEN:
            raise ValueError(f"hidden units must be 1..{NET_MAX_HIDDEN}, not {H}")
        if b1.shape != (N, H) or w2.shape != (N, H, 5) or b2.shape != (N, 5):
            raise ValueError("inconsistent weight shapes")
        self.w1, self.b1, self.w2, self.b2 = w1, b1, w2, b2
        self.T = np.zeros((N, NET_SLOTS * 16, H), dtype=np.float32)
        self.W2T = np.zeros((N, 5, H), dtype=np.float32)
        self.WF = np.zeros((N, nin - NET_RAW_INPUTS, H), dtype=np.float32)
        cdef float[:, :, ::1] a1 = self.w1
        cdef float[:, ::1] c1 = self.b1
        cdef float[:, :, ::1] a2 = self.w2
        cdef float[:, ::1] c2 = self.b2
        cdef float[:, :, ::1] t = self.T
        cdef float[:, :, ::1] t2 = self.W2T
        cdef float[:, :, ::1] tf = self.WF
        cdef int k
        self.net.H = H
        self.net.groups = groups
        self.net.nf = nin - NET_RAW_INPUTS
        self.net.tables = 0
        self.net.os_h = 0
        self.net.os_w3 = NULL
        self.net.nets = N
        for k in range(N):
            self.net.w1[k] = &a1[k, 0, 0]
            self.net.b1[k] = &c1[k, 0]
            self.net.w2[k] = &a2[k, 0, 0]
            self.net.b2[k] = &c2[k, 0]
            self.net.T[k] = &t[k, 0, 0]
            self.net.w2t[k] = &t2[k, 0, 0]
            self.net.wf[k] = &tf[k, 0, 0]
        self.refresh()

    def set_one_sided(self, w1, b1, w2, b2, int min_points):
        """Give the net a one-sided race net (None: remove it): ``w1``
        float32[OS_NET_INPUTS, H], ``b1[H]``, ``w2[H, D * OS_NET_BINS]``,
        ``b2[D * OS_NET_BINS]``, D = 2 or 3 distributions, valuing a side with
        a checker beyond its point ``min_points`` (see os_race_probs); with
        the third, also a side with a checker in the other's home board."""
        self.net.os_h = 0
        self.net.os_w3 = NULL
        self.net.os_b3 = NULL
        self.one_sided = None
        if w1 is None:
            self.clear_cache()
            return
        w1 = np.ascontiguousarray(w1, dtype=np.float32)
        b1 = np.ascontiguousarray(b1, dtype=np.float32)
        w2 = np.asarray(w2, dtype=np.float32)
        b2 = np.asarray(b2, dtype=np.float32)
        if w1.ndim != 2 or w1.shape[0] != OS_NET_INPUTS or not 1 <= w1.shape[1] <= OS_NET_MAX_HIDDEN:
            raise ValueError(f"the one-sided race net's w1 must have shape ({OS_NET_INPUTS}, H), "
                             f"H 1..{OS_NET_MAX_HIDDEN}, not {w1.shape}")
        H = w1.shape[1]
        D = w2.shape[1] // OS_NET_BINS if w2.ndim == 2 else 0
        if (D not in (2, 3) or b1.shape != (H,) or w2.shape != (H, D * OS_NET_BINS)
                or b2.shape != (D * OS_NET_BINS,)):
            raise ValueError("inconsistent one-sided race net shapes")
        if not 6 <= min_points <= OS_NET_FAR:
            raise ValueError(f"the one-sided race net's first point must be 6..{OS_NET_FAR}, "
                             f"not {min_points}")
        # the rows of (slot, count): the four units' rows weighted by their values
        T = np.einsum("cu,suh->sch", POINT_UNITS, w1[:96].reshape(24, 4, H)).astype(np.float32)
        T = np.ascontiguousarray(T.reshape(24 * 16, H))
        wx = np.ascontiguousarray(w1[96:])
        w2a = np.ascontiguousarray(w2[:, :2 * OS_NET_BINS])
        b2a = np.ascontiguousarray(b2[:2 * OS_NET_BINS])
        w3 = np.ascontiguousarray(w2[:, 2 * OS_NET_BINS:]) if D == 3 else None
        b3 = np.ascontiguousarray(b2[2 * OS_NET_BINS:]) if D == 3 else None
        cdef float[:, ::1] t = T
        cdef float[:, ::1] x = wx
        cdef float[::1] c1 = b1
        cdef float[:, ::1] a2 = w2a
        cdef float[::1] c2 = b2a
        cdef float[:, ::1] a3
        cdef float[::1] c3
        self.one_sided = (T, wx, b1, w2a, b2a, w3, b3, min_points)
        self.net.os_T = &t[0, 0]
        self.net.os_wx = &x[0, 0]
        self.net.os_b1 = &c1[0]
        self.net.os_w2 = &a2[0, 0]
        self.net.os_b2 = &c2[0]
        if D == 3:
            a3 = w3
            c3 = b3
            self.net.os_w3 = &a3[0, 0]
            self.net.os_b3 = &c3[0]
        self.net.os_min = min_points
        self.net.os_h = H
        self.clear_cache()

    @property
    def hidden(self):
        return self.net.H

    @property
    def groups(self):
        """The optional feature groups (bit mask; see net_features)."""
        return self.net.groups

    @property
    def nets(self):
        """2 (contact, race), 3 (contact, race, crashed), NET_PLAN_NETS
        (and the contact plan nets) or NET_SIDE_NETS (and crashed-other)."""
        return self.net.nets

    def net_of(self, const uint8_t[:, :, ::1] boards):
        """The net that evaluates each board (player on roll in row 1):
        0 contact, 1 race, 2 crashed (a net of three or more), 3..5 the
        contact plan bands (a net of NET_PLAN_NETS or more), 6 the crashed
        positions whose side on roll is not crashed (a net of
        NET_SIDE_NETS), int8[N]."""
        out = np.zeros(boards.shape[0], dtype=np.int8)
        cdef int8_t[::1] o = out
        cdef Py_ssize_t i
        if boards.shape[1] != 2 or boards.shape[2] != 25:
            raise ValueError("boards must have shape (N, 2, 25)")
        with nogil:
            for i in range(boards.shape[0]):
                o[i] = <int8_t>net_of(&self.net, &boards[i, 0, 0])
        return out

    @property
    def inputs(self):
        return NET_RAW_INPUTS + self.net.nf

    @property
    def read_groups(self):
        """The feature groups each net (contact, race, crashed, ...) reads when it
        evaluates: those of its groups whose rows are not all zero (the others
        would add nothing)."""
        return tuple(self.net.kread[k] for k in range(self.net.nets))

    @property
    def read_hidden(self):
        """The hidden units each net (contact, race, crashed, ...) computes when it
        evaluates: up to its last unit with a nonzero output weight, in
        whole blocks of 8 (the units past it would add nothing)."""
        return tuple(self.net.kh[k] for k in range(self.net.nets))

    def refresh(self):
        """Rebuild the per-slot tables from w1 (and empty the evaluation cache)."""
        with nogil:
            _build_tables(&self.net)
        self.clear_cache()

    def clear_cache(self):
        """Empty the evaluation cache (its counters stay)."""
        if self.ec.ent != NULL:
            memset(self.ec.tag, 0, sizeof(uint64_t) << self.ec.log2)
            memset(self.ec.turn, 0, (<size_t>1 << self.ec.log2) >> EC_WAYS_LOG2)

    def set_cache(self, int log2):
        """Give :meth:`evaluate` a cache of ``2**log2`` entries (0: none; at
        least one set of EVAL_CACHE_WAYS), empty, its counters reset.  The
        cache changes the speed, never the values."""
        if not 0 <= log2 <= EVAL_CACHE_MAX_LOG2:
            raise ValueError(f"cache size must be 0..{EVAL_CACHE_MAX_LOG2} (log2), not {log2}")
        PyThread_acquire_lock(self.ec_lock, 1)
        _ec_free(&self.ec)
        self.ec.log2 = 0 if log2 == 0 else max(log2, EC_WAYS_LOG2)
        self.ec.lookups = self.ec.hits = 0
        PyThread_release_lock(self.ec_lock)

    def cache_info(self):
        """``(log2 of the entries, lookups, hits)`` of the evaluation cache:
        the lookups are the evaluations the net would have made."""
        return self.ec.log2, self.ec.lookups, self.ec.hits

    def evaluate(self, const uint8_t[:, :, ::1] boards, bint tables=True, int nthreads=1):
        """float64[N, 5] for the player on roll of each board (validated by the caller)."""
        cdef Py_ssize_t n = boards.shape[0], i
        out = np.empty((n, 5), dtype=np.float64)
        cdef double[:, ::1] o = out
        cdef NetC net = self.net
        net.tables = tables
        if n == 0:
            return out
        if (nthreads <= 1 and tables and self.ec.log2 and n <= EVAL_CACHE_MAX_BATCH
                and PyThread_acquire_lock(self.ec_lock, NOWAIT_LOCK)):
            # one caller at a time uses the cache; another evaluates without it
            try:
                if self.ec.ent == NULL and _ec_alloc(&self.ec) != 0:
                    raise MemoryError()
                with nogil:
                    _cached_onroll_batch(&self.ec, &net, &boards[0, 0, 0], n, &o[0, 0])
            finally:
                PyThread_release_lock(self.ec_lock)
        elif nthreads <= 1:
            with nogil:
                for i in range(n):
                    net_onroll(&net, &boards[i, 0, 0], &o[i, 0])
        else:
            for i in prange(n, nogil=True, num_threads=nthreads, schedule="static"):
                net_onroll(&net, &boards[i, 0, 0], &o[i, 0])
        return out

    def evaluate_plies(self, const uint8_t[:, :, ::1] boards, int plies, bint tables=True,
                       int cache=-1):
        """n-ply probabilities float64[N, 5] for the player on roll.  ``cache``:
        log2 of the evaluation cache's entries (0: none; -1: 16 from 2 plies
        up), which changes the speed, never the bits."""
        cdef Py_ssize_t n = boards.shape[0], i
        out = np.empty((n, 5), dtype=np.float64)
        cdef double[:, ::1] o = out
        cdef NetC net = self.net
        cdef NetCtx* c
        cdef int rc = 0
        net.tables = tables
        if plies < 0 or plies >= NET_MAX_DEPTH:
            raise ValueError(f"plies must be 0..{NET_MAX_DEPTH - 1}")
        c = _new_ctx(_cache_log2(cache, plies))
        try:
            with nogil:
                for i in range(n):
                    rc = net_value(c, &net, &boards[i, 0, 0], plies, 0, &o[i, 0])
                    if rc < 0:
                        break
        finally:
            _del_ctx(c)
        if rc < 0:
            raise RuntimeError("move generation failed")
        return out

    def choose(self, const uint8_t[:, :, ::1] boards, const int64_t[:, ::1] dice, int plies=0,
               double noise=0.0, uint64_t seed=0, bint tables=True, int cache=-1):
        """The chosen play for each (board, dice): (counts int64[N], results
        uint8[N,2,25]).  ``cache`` as in :meth:`evaluate_plies` (by default
        from 2 plies up).  Duels give their searches the same cache."""
        cdef Py_ssize_t n = boards.shape[0], i
        counts = np.empty(n, dtype=np.int64)
        results = np.empty((n, 2, 25), dtype=np.uint8)
        cdef int64_t[::1] cn = counts
        cdef uint8_t[:, :, ::1] r = results
        cdef NetC net = self.net
        cdef Rng rng
        cdef NetCtx* c
        net.tables = tables
        if plies < 0 or plies >= NET_MAX_DEPTH - 1:
            raise ValueError(f"plies must be 0..{NET_MAX_DEPTH - 2}")
        c = _new_ctx(_cache_log2(cache, plies))
        rng_seed(&rng, seed, 0x6E6F697365)
        try:
            with nogil:
                for i in range(n):
                    cn[i] = net_choose(c, &net, &boards[i, 0, 0], mg_die(dice[i, 0]), mg_die(dice[i, 1]),
                                       plies, noise, &rng, &r[i, 0, 0])
        finally:
            _del_ctx(c)
        return counts, results

    def train(self, uint64_t seed, int64_t first_game, int64_t ngames, int round_games,
              double alpha, double lam, int nthreads=1):
        """TD(lambda) self-play: games first_game .. first_game+ngames-1 (in
        rounds of round_games played in parallel with the weights of the
        round's start, then learned from in game order).  The result does
        not depend on nthreads.  Returns (plies played, games)."""
        return _train(self, seed, first_game, ngames, round_games, alpha, lam, nthreads)

    def learn(self, const uint8_t[:, :, ::1] boards, const double[:, ::1] targets, double alpha):
        """Supervised steps: each board in turn moves towards its target
        probabilities (cross-entropy gradient), then the tables are rebuilt."""
        return _supervised(self, boards, targets, alpha)

    def selfplay_states(self, uint64_t seed, int64_t first_game, int64_t ngames):
        """The boards (player to move on roll) of 0-ply self-play games
        first_game.. (dice stream (seed, k) as in training), uint8[M, 2, 25]."""
        return _selfplay_states(self, seed, first_game, ngames)


cdef uint64_t NET_VERSION = 0          # the last version given to a net's weights


cdef void _build_tables(NetC* net) noexcept nogil:
    global NET_VERSION
    cdef int H = net.H, k, side, i, n, j, kh, last, g, at, slot_at
    NET_VERSION += 1
    net.version = NET_VERSION
    cdef float* T
    cdef const float* w
    cdef float* row
    for k in range(net.nets):
        # the hidden units up to the last with a nonzero output weight, in
        # whole blocks of 8: a unit past it adds sigmoid * 0 = +0 to a lane
        # of the output sums (bgv_output_sums), so the sums stay the same bits
        last = -1
        for j in range(H * 5):
            if net.w2[k][j] != 0.0:
                last = j // 5
        kh = (last + 8) & ~7
        net.kh[k] = H if kh >= H else kh
        kh = net.kh[k]
        for j in range(kh):
            for n in range(5):
                net.w2t[k][n * kh + j] = net.w2[k][j * 5 + n]
        # the groups whose rows are not all zero in those units: a net reads
        # only those (the race net of a net widened for its contact net reads
        # none).  wf: the base features' rows, then those of each group read
        # and computed per board; a group folded into T (NET_SLOT_GROUPS) is
        # added to the borne-off slot's rows below instead
        for i in range(NET_FEATURES):
            memcpy(net.wf[k] + i * kh, net.w1[k] + (NET_RAW_INPUTS + i) * H, kh * sizeof(float))
        net.kread[k] = 0
        net.knf[k] = NET_FEATURES
        slot_at = -1
        at = NET_RAW_INPUTS + NET_FEATURES
        for g in range(NET_GROUPS):
            if not (net.groups >> g) & 1:
                continue
            for j in range(2 * GROUP_SIZE[g] * H):
                if j % H < kh and net.w1[k][at * H + j] != 0.0:
                    net.kread[k] |= 1 << g
                    break
            if (net.kread[k] >> g) & 1:
                if (NET_SLOT_GROUPS >> g) & 1:
                    slot_at = at
                else:
                    for i in range(2 * GROUP_SIZE[g]):
                        memcpy(net.wf[k] + net.knf[k] * kh, net.w1[k] + (at + i) * H,
                               kh * sizeof(float))
                        net.knf[k] += 1
            at += 2 * GROUP_SIZE[g]
        net.kgroups[k] = net.kread[k] & ~NET_SLOT_GROUPS
        T = net.T[k]
        w = net.w1[k]
        memset(T, 0, NET_SLOTS * 16 * kh * sizeof(float))
        for side in range(2):
            for n in range(1, 16):
                for i in range(24):
                    row = T + _slot_row(side, i, n) * kh
                    _axpy(row, w + (side * NET_SIDE_INPUTS + 4 * i) * H, 1.0, kh)
                    if n >= 2:
                        _axpy(row, w + (side * NET_SIDE_INPUTS + 4 * i + 1) * H, 1.0, kh)
                    if n >= 3:
                        _axpy(row, w + (side * NET_SIDE_INPUTS + 4 * i + 2) * H, 1.0, kh)
                    if n > 3:
                        _axpy(row, w + (side * NET_SIDE_INPUTS + 4 * i + 3) * H, (n - 3) * 0.5, kh)
                _axpy(T + _slot_row(side, 24, n) * kh, w + (side * NET_SIDE_INPUTS + 96) * H,
                      n * 0.5, kh)
                _axpy(T + _slot_row(side, 25, n) * kh, w + (side * NET_SIDE_INPUTS + 97) * H,
                      n / 15.0, kh)
                if slot_at >= 0:             # the off group: inputs j < n are 1
                    for j in range(min(n, GROUP_SIZE[5])):
                        _axpy(T + _slot_row(side, 25, n) * kh,
                              w + (slot_at + GROUP_SIZE[5] * side + j) * H, 1.0, kh)


cdef inline void _axpy(float* y, const float* x, float a, int H) noexcept nogil:
    cdef int j
    for j in range(H):
        y[j] += a * x[j]


cdef NetCtx* _new_ctx(int cache_log2=0) except NULL:
    cdef NetCtx* c = <NetCtx*>malloc(sizeof(NetCtx))
    if c == NULL:
        raise MemoryError("net work space")
    if netctx_init(c) != 0:
        free(c)
        raise MemoryError("net work space")
    if netctx_cache(c, cache_log2) != 0:
        _del_ctx(c)
        raise MemoryError("evaluation cache")
    return c


cdef int _cache_log2(int cache, int depth) except -1:
    """The cache size of a search ``depth`` plies deep (see Model.evaluate_plies):
    from 2 plies up, where iterative deepening asks _best0 again (1 ply:
    a cache costs about 4% and saves nothing)."""
    if cache < 0:
        return 16 if depth >= 2 else 0
    if cache > 24:
        raise ValueError("the cache size must be 0..24 (log2 of its entries)")
    return cache


cdef void _del_ctx(NetCtx* c) noexcept nogil:
    if c != NULL:
        netctx_free(c)
        free(c)


def feature_count(int groups=0):
    """The number of hand-made inputs of a net with these feature groups."""
    if groups < 0 or groups >> NET_GROUPS:
        raise ValueError(f"feature groups must be a mask of {NET_GROUPS} bits, not {groups}")
    return net_feature_count(groups)


def features(const uint8_t[:, :, ::1] boards, int groups=0):
    """The hand-made features float32[N, feature_count(groups)] (see the
    comments at net_features)."""
    cdef Py_ssize_t n = boards.shape[0], i
    out = np.zeros((n, feature_count(groups)), dtype=np.float32)
    cdef float[:, ::1] x = out
    with nogil:
        for i in range(n):
            net_features(&boards[i, 0, 0], groups, &x[i, 0])
    return out


def encode(const uint8_t[:, :, ::1] boards, int groups=0):
    """Dense inputs float32[N, 196 + feature_count(groups)]: the 196 raw
    inputs, then the features (for tests, references and supervised training)."""
    cdef Py_ssize_t n = boards.shape[0], i
    out = np.zeros((n, NET_RAW_INPUTS + feature_count(groups)), dtype=np.float32)
    cdef float[:, ::1] x = out
    cdef int nact, a
    cdef int ai[NET_MAX_INPUTS]
    cdef float av[NET_MAX_INPUTS]
    for i in range(n):
        nact = _active(&boards[i, 0, 0], groups, ai, av)
        for a in range(nact):
            x[i, ai[a]] = av[a]
    return out


cdef int _active(const uint8_t* b, int groups, int* ai, float* av) noexcept nogil:
    """The non-zero inputs of b (indices and values); returns their count."""
    cdef int side, i, n, tot, o, nf, m = 0
    cdef float f[NET_MAX_FEATURES]
    cdef const uint8_t* row
    for side in range(2):
        row = b + 25 if side == 0 else b
        o = side * NET_SIDE_INPUTS
        tot = 0
        for i in range(24):
            n = row[i]
            tot += n
            if n >= 1:
                ai[m] = o + 4 * i
                av[m] = 1.0
                m += 1
            if n >= 2:
                ai[m] = o + 4 * i + 1
                av[m] = 1.0
                m += 1
            if n >= 3:
                ai[m] = o + 4 * i + 2
                av[m] = 1.0
                m += 1
            if n > 3:
                ai[m] = o + 4 * i + 3
                av[m] = (n - 3) * 0.5
                m += 1
        n = row[24]
        tot += n
        if n:
            ai[m] = o + 96
            av[m] = n * 0.5
            m += 1
        if tot < 15:
            ai[m] = o + 97
            av[m] = (15 - tot) / 15.0
            m += 1
    nf = net_features(b, groups, f)
    for i in range(nf):
        if f[i] != 0.0:
            ai[m] = NET_RAW_INPUTS + i
            av[m] = f[i]
            m += 1
    return m


# ---------------------------------------------------------------------------
# TD(lambda) self-play
# ---------------------------------------------------------------------------

cdef struct GameRec:
    uint8_t* states      # [MAX_GAME_PLIES + 1, 50] boards with the player to move on roll
    float* vals          # [MAX_GAME_PLIES, 5] value of states[t + 1] for its player on roll
    int nplies
    int error


cdef void _start_board(uint8_t* b) noexcept nogil:
    cdef int s
    memset(b, 0, 50)
    for s in range(2):
        b[25 * s + 5] = 5
        b[25 * s + 7] = 3
        b[25 * s + 12] = 5
        b[25 * s + 23] = 2


cdef void _selfplay(NetCtx* c, const NetC* net, uint64_t seed, int64_t game, GameRec* rec) noexcept nogil:
    cdef Rng rng
    cdef uint8_t* st
    cdef double q[5]
    cdef int t = 0, k, r, o
    cdef Py_ssize_t n
    rng_seed(&rng, seed, <uint64_t>game)
    _start_board(rec.states)
    rec.error = 0
    while True:
        st = rec.states + 50 * t
        r = rng_roll36(&rng)
        if t == 0:
            while r % 7 == 0:         # the opening roll is not a double
                r = rng_roll36(&rng)
        n = _best0(c, net, st, r // 6 + 1, r % 6 + 1, 0, st + 50, q)
        if n < 0:
            rec.error = <int>n
            break
        for o in range(5):
            rec.vals[5 * t + o] = <float>q[o]
        t += 1
        if _over(st + 50) or t >= MAX_GAME_PLIES:
            break
    rec.nplies = t


cdef void _learn(NetC* net, const uint8_t* b, const double* target, double alpha) noexcept nogil:
    """One gradient step of the cross-entropy between the outputs and target."""
    cdef int H = net.H, k, j, o, a, nact
    cdef int ai[NET_MAX_INPUTS]
    cdef float av[NET_MAX_INPUTS]
    cdef float z[NET_MAX_HIDDEN]
    cdef float dh[NET_MAX_HIDDEN]
    cdef float s[5]
    cdef float d[5]
    cdef float* w1
    cdef float* w2
    cdef float* row
    cdef float x, g
    k = net_of(net, b)
    w1 = net.w1[k]
    w2 = net.w2[k]
    nact = _active(b, net.groups, ai, av)
    memcpy(z, net.b1[k], H * sizeof(float))
    for a in range(nact):
        _axpy(z, w1 + ai[a] * H, av[a], H)
    for j in range(H):
        z[j] = _sigf(z[j])
    for o in range(5):
        s[o] = net.b2[k][o]
    for j in range(H):
        for o in range(5):
            s[o] += z[j] * w2[j * 5 + o]
    for o in range(5):
        d[o] = <float>(alpha * (target[o] - _sigf(s[o])))
        net.b2[k][o] += d[o]
    for j in range(H):
        g = 0.0
        for o in range(5):
            g += d[o] * w2[j * 5 + o]
            w2[j * 5 + o] += d[o] * z[j]
        dh[j] = g * z[j] * (1.0 - z[j])
        net.b1[k][j] += dh[j]
    for a in range(nact):
        _axpy(w1 + ai[a] * H, dh, av[a], H)


cdef void _learn_game(NetC* net, GameRec* rec, double alpha, double lam) noexcept nogil:
    """Targets are lambda-returns from the values recorded in play (weights
    of the round's start), learned from in the order of the game."""
    cdef int T = rec.nplies, t, o
    cdef double G[5]
    cdef double v[5]
    cdef double mix[5]
    cdef double* targets
    if T <= 0:
        return
    targets = <double*>malloc(T * 5 * sizeof(double))
    if targets == NULL:
        return
    # G_T: the value of the last state for its player on roll (exact when over)
    for o in range(5):
        G[o] = rec.vals[5 * (T - 1) + o]
    if _over(rec.states + 50 * T):
        over_probs(rec.states + 50 * T, G)
    t = T - 1
    while t >= 0:
        if t == T - 1:
            memcpy(mix, G, 5 * sizeof(double))
        else:
            for o in range(5):
                mix[o] = (1.0 - lam) * rec.vals[5 * t + o] + lam * G[o]
        invert_probs(mix, G)                 # now G is the return for states[t]
        memcpy(targets + 5 * t, G, 5 * sizeof(double))
        t -= 1
    for t in range(T):
        _learn(net, rec.states + 50 * t, targets + 5 * t, alpha)
    free(targets)


def _train(Model model, uint64_t seed, int64_t first_game, int64_t ngames, int round_games,
           double alpha, double lam, int nthreads):
    if round_games < 1:
        raise ValueError("round_games must be >= 1")
    if nthreads < 1:
        nthreads = 1
    cdef int R = round_games, i, th
    cdef int64_t done = 0, plies = 0, g0
    model.clear_cache()
    cdef int nth = nthreads if nthreads < R else R
    cdef NetCtx** ctx = <NetCtx**>malloc(nth * sizeof(NetCtx*))
    cdef GameRec* recs = <GameRec*>malloc(R * sizeof(GameRec))
    cdef NetC* net = &model.net
    cdef int err = 0
    if ctx == NULL or recs == NULL:
        free(ctx)
        free(recs)
        raise MemoryError("training buffers")
    for i in range(nth):
        ctx[i] = NULL
    for i in range(R):
        recs[i].states = NULL
        recs[i].vals = NULL
    try:
        for i in range(nth):
            ctx[i] = _new_ctx()
        for i in range(R):
            recs[i].states = <uint8_t*>malloc((MAX_GAME_PLIES + 1) * 50)
            recs[i].vals = <float*>malloc(MAX_GAME_PLIES * 5 * sizeof(float))
            if recs[i].states == NULL or recs[i].vals == NULL:
                raise MemoryError("training buffers")
        net.tables = 0
        with nogil:
            while done < ngames:
                g0 = first_game + done
                if ngames - done < R:
                    R = <int>(ngames - done)
                _build_tables(net)
                if nth <= 1:
                    for i in range(R):
                        _selfplay(ctx[0], net, seed, g0 + i, &recs[i])
                else:
                    for i in prange(R, num_threads=nth, schedule="dynamic"):
                        _selfplay(ctx[threadid()], net, seed, g0 + i, &recs[i])
                for i in range(R):
                    if recs[i].error < 0:
                        err = recs[i].error
                    plies += recs[i].nplies
                    _learn_game(net, &recs[i], alpha, lam)
                done += R
            _build_tables(net)
    finally:
        for i in range(nth):
            _del_ctx(ctx[i])
        for i in range(round_games):
            free(recs[i].states)
            free(recs[i].vals)
        free(ctx)
        free(recs)
    if err < 0:
        raise RuntimeError(f"move generation failed in self-play ({err})")
    model.clear_cache()
    return plies, done


# ---------------------------------------------------------------------------
# duels (cubeless money games, duplicate dice)
# ---------------------------------------------------------------------------

cdef enum:
    P_RANDOM = 0
    P_PUBEVAL = 1
    P_NET = 2

cdef struct Player:
    int kind
    int plies
    double noise
    NetC net


cdef Py_ssize_t _player_choose(NetCtx* c, const Player* pl, const uint8_t* b, int d1, int d2,
                               Rng* rng, uint8_t* out) noexcept nogil:
    """The play of player ``pl`` (a level) for (d1, d2); result (turn
    passed) in out.  Returns the number of legal plays, <0 on error."""
    cdef Py_ssize_t n
    if pl.kind == P_NET:
        return net_choose(c, &pl.net, b, d1, d2, pl.plies, pl.noise, rng, out)
    if pl.kind == P_PUBEVAL:
        return choose_play(&c.g[0], b, d1, d2, POLICY_PUBEVAL, 0, out)
    c.g[0].n = 0                          # random: a uniformly drawn legal play
    n = movegen_plays(&c.g[0], b, d1, d2)
    if n > 0:
        memcpy(out, c.g[0].out + 50 * <Py_ssize_t>(rng_next(rng) % <uint64_t>n), 50)
    elif n == 0:
        swap_board(b, out)
    return n


cdef int _fill_player(Player* p, spec) except -1:
    """A Player from a spec tuple (kind, plies, noise, Model or None)."""
    kind, plies, noise, model = spec
    memset(p, 0, sizeof(Player))
    p.kind = kind
    p.plies = plies
    p.noise = noise
    if kind == P_NET:
        if not isinstance(model, Model):
            raise TypeError("a net player needs a Model")
        if plies < 0 or plies >= NET_MAX_DEPTH - 1:
            raise ValueError(f"plies must be 0..{NET_MAX_DEPTH - 2}")
        p.net = (<Model>model).net
        p.net.tables = 1
    elif kind not in (P_RANDOM, P_PUBEVAL):
        raise ValueError(f"unknown player kind {kind}")
    return 0


cdef int _duel_game(NetCtx* c, const Player* P, uint64_t seed, int64_t pair, int swap,
                    int* plies_out) noexcept nogil:
    """One game of pair `pair`: seat 0 moves first; P[swap] sits in seat 0.
    Returns the points won by player P[0] (+-1, 2, 3), 0 on error."""
    cdef Rng dice
    cdef Rng prng[2]
    cdef uint8_t b[64]
    cdef uint8_t nb[64]
    cdef double q[5]
    cdef int t = 0, r, seat, who, pts
    cdef Py_ssize_t n
    rng_seed(&dice, seed, <uint64_t>pair)
    rng_seed(&prng[0], seed ^ 0x5DEECE66DULL, <uint64_t>(4 * pair + 2 * swap))
    rng_seed(&prng[1], seed ^ 0x5DEECE66DULL, <uint64_t>(4 * pair + 2 * swap + 1))
    _start_board(b)
    while t < 10 * MAX_GAME_PLIES:
        r = rng_roll36(&dice)
        if t == 0:
            while r % 7 == 0:
                r = rng_roll36(&dice)
        seat = t & 1
        who = seat ^ swap                 # index into P of the player to move
        n = _player_choose(c, &P[who], b, r // 6 + 1, r % 6 + 1, &prng[who], nb)
        if n < 0:
            return 0
        t += 1
        memcpy(b, nb, 50)
        if _over(b):
            over_probs(b, q)             # for the loser, now on roll
            pts = 1 + <int>(q[3] + 0.5) + <int>(q[4] + 0.5)
            plies_out[0] = t
            return pts if who == 0 else -pts
    return 0


def duel(specs, uint64_t seed, int64_t first_pair, int64_t npairs, int nthreads=1):
    """Play pairs first_pair .. first_pair+npairs-1; specs = two tuples
    (kind, plies, noise, Model or None).  Returns int8[npairs, 2] points for
    player 0 (column = which player sat in seat 0, moving first) and
    int32[npairs, 2] plies."""
    cdef Player P[2]
    cdef int k
    for k in range(2):
        _fill_player(&P[k], specs[k])
    if nthreads < 1:
        nthreads = 1
    pts = np.zeros((npairs, 2), dtype=np.int8)
    plies_arr = np.zeros((npairs, 2), dtype=np.int32)
    cdef int8_t[:, ::1] o = pts
    cdef int[:, ::1] pl = plies_arr
    cdef int nth = nthreads
    cdef NetCtx** ctx = <NetCtx**>malloc(nth * sizeof(NetCtx*))
    cdef Py_ssize_t i
    cdef int s
    if ctx == NULL:
        raise MemoryError("duel work space")
    for k in range(nth):
        ctx[k] = NULL
    try:
        for k in range(nth):
            ctx[k] = _new_ctx(_cache_log2(-1, max(P[0].plies, P[1].plies)))
        if nth <= 1:
            with nogil:
                for i in range(npairs):
                    for s in range(2):
                        o[i, s] = <int8_t>_duel_game(ctx[0], P, seed, first_pair + i, s, &pl[i, s])
        else:
            for i in prange(npairs, nogil=True, num_threads=nth, schedule="dynamic"):
                for s in range(2):
                    o[i, s] = <int8_t>_duel_game(ctx[threadid()], P, seed, first_pair + i, s,
                                                 &pl[i, s])
    finally:
        for k in range(nth):
            _del_ctx(ctx[k])
        free(ctx)
    if (pts == 0).any():
        raise RuntimeError("a duel game failed (move generation error or no end)")
    return pts, plies_arr



# ---------------------------------------------------------------------------
# levels as rollout policies, the net as a rollout evaluator
# ---------------------------------------------------------------------------

cdef Player POLICY_PLAYERS[MAX_POLICIES]
cdef NetC EVAL_NETS[MAX_EVALUATORS]
_installed = {}          # ("policy" | "evaluator", slot) -> the Model kept alive


cdef inline void _want_cache(NetCtx* c, const Player* pl) noexcept nogil:
    """Give the work space of an n-ply (n >= 1) net level its evaluation
    cache, when caches are on and it has a smaller one or none: 2**CACHE_LOG2
    entries, four times that at 3 plies and up (a 3-ply search meets about
    50,000 new boards a move; the bigger cache is about 10% faster).  Made on
    first use, so that a 0-ply policy's work space (which never looks a board
    up) costs no table.  Any size gives the same bits: if the memory is
    refused the search runs uncached, slower."""
    cdef int log2 = CACHE_LOG2 + 2 if pl.plies >= 3 else CACHE_LOG2
    if CACHE_LOG2 <= 0 or pl.plies < 1:
        return
    if c.cache == NULL or c.cache.mask + 1 < (<uint64_t>1) << log2:
        netctx_cache(c, log2)


cdef Py_ssize_t _policy_choose(void* ws, const void* ctx, MoveGen* g, const uint8_t* b,
                               int d1, int d2, Rng* rng, uint8_t* out) noexcept nogil:
    cdef NetCtx* c = <NetCtx*>ws
    cdef const Player* pl = <const Player*>ctx
    _want_cache(c, pl)
    return _player_choose(c, pl, b, d1, d2, rng, out)


cdef Py_ssize_t _policy_luck(void* ws, const void* ctx, MoveGen* g, const uint8_t* b,
                             int d1, int d2, int evaluator, int k, uint8_t* out,
                             double* v) noexcept nogil:
    """A net level's luck play, gnubg's scheme: the 0-ply best play of (d1,
    d2) (with k > 0 the best of the k plays pubeval scores best,
    _best0_pruned), valued one ply less deep than the level searches (at 0
    plies by the rollout's evaluator, else by the level's net)."""
    cdef NetCtx* c = <NetCtx*>ws
    cdef const Player* pl = <const Player*>ctx
    cdef double q[5]
    cdef Py_ssize_t n
    _want_cache(c, pl)
    if k > 0:
        n = _best0_pruned(c, &pl.net, b, d1, d2, k, 0, out, q)
    else:
        n = _best0_cached(c, &pl.net, b, d1, d2, 0, out, q)
    if n < 0:
        return n
    if pl.plies <= 1:
        mover_probs(out, evaluator, v)
    else:
        if net_value(c, &pl.net, out, pl.plies - 1, 1, q) < 0:
            return -1
        invert_probs(q, v)
    return n


cdef void* _policy_ws_new() noexcept nogil:
    cdef NetCtx* c = <NetCtx*>malloc(sizeof(NetCtx))
    if c != NULL and netctx_init(c) != 0:
        free(c)
        c = NULL
    return c


cdef void _policy_ws_free(void* ws) noexcept nogil:
    cdef NetCtx* c = <NetCtx*>ws
    global CACHE_LOOKUPS, CACHE_HITS
    if c != NULL and c.cache != NULL:
        CACHE_LOOKUPS += c.cache.lookups
        CACHE_HITS += c.cache.hits
    _del_ctx(c)


cdef void _eval_slot(const void* ctx, const uint8_t* b, double* p) noexcept nogil:
    net_onroll(<const NetC*>ctx, b, p)


def install_policy(int slot, spec):
    """Make the player ``spec`` (kind, plies, noise, Model or None; see
    :func:`duel`) the rollout policy in kernel slot ``slot`` of
    ``bgfast._rollout`` (its plays, noise and random choices use each
    trial's own policy stream).  Bear-off databases as in duels.  A net
    level searching n >= 1 plies gets gnubg's luck plays (:func:`_policy_luck`:
    the 0-ply best play of each roll, valued n - 1 plies deep) and an
    evaluation cache (:func:`set_cache_size`) in each work space; a 0-ply
    net level gets luck plays of its own only when a rollout prunes them
    (``luck_plays``)."""
    if not NUM_POLICIES <= slot < MAX_POLICIES:
        raise ValueError(f"policy slot must be in {NUM_POLICIES}..{MAX_POLICIES - 1}")
    cdef Player p
    _fill_player(&p, spec)
    register_policy_slot(slot, NULL, NULL, NULL, NULL)
    POLICY_PLAYERS[slot] = p
    _installed[("policy", slot)] = spec[3]
    register_policy_slot(slot, _policy_choose, _policy_ws_new, _policy_ws_free,
                         <const void*>&POLICY_PLAYERS[slot])
    if p.kind == P_NET:
        # n >= 1 plies: always its own luck plays; 0 plies: with pruned ones only
        register_policy_luck(slot, _policy_luck, p.plies >= 1)


def install_evaluator(int slot, Model model):
    """Make ``model`` (with the bear-off databases) the evaluator in kernel
    slot ``slot`` of ``bgfast._evaluate`` (rollout luck and truncation, the
    evaluator policy)."""
    if not NUM_EVALUATORS <= slot < MAX_EVALUATORS:
        raise ValueError(f"evaluator slot must be in {NUM_EVALUATORS}..{MAX_EVALUATORS - 1}")
    register_evaluator_slot(slot, NULL, NULL)
    EVAL_NETS[slot] = model.net
    EVAL_NETS[slot].tables = 1
    _installed[("evaluator", slot)] = model
    register_evaluator_slot(slot, _eval_slot, <const void*>&EVAL_NETS[slot])


def installed_model(str kind, int slot):
    """The Model installed in a policy or evaluator slot by this module, or None."""
    return _installed.get((kind, slot))


def dice_rolls(uint64_t seed, int64_t pair, int n):
    """The first n roll outcomes (0..35, d1 = r // 6 + 1, d2 = r % 6 + 1) of
    duel pair `pair`, as the duel kernel draws them (the opening roll is
    re-drawn while it is a double)."""
    cdef Rng dice
    cdef int t, r
    out = np.empty(n, dtype=np.int8)
    cdef int8_t[::1] o = out
    rng_seed(&dice, seed, <uint64_t>pair)
    for t in range(n):
        r = rng_roll36(&dice)
        if t == 0:
            while r % 7 == 0:
                r = rng_roll36(&dice)
        o[t] = <int8_t>r
    return out


def _supervised(Model model, const uint8_t[:, :, ::1] boards, const double[:, ::1] targets,
                double alpha):
    cdef Py_ssize_t n = boards.shape[0], i
    if targets.shape[0] != n or targets.shape[1] != 5:
        raise ValueError("targets must have shape (N, 5)")
    cdef NetC* net = &model.net
    with nogil:
        for i in range(n):
            _learn(net, &boards[i, 0, 0], &targets[i, 0], alpha)
        _build_tables(net)
    model.clear_cache()


def _selfplay_states(Model model, uint64_t seed, int64_t first_game, int64_t ngames):
    cdef GameRec rec
    cdef NetCtx* c = _new_ctx()
    cdef NetC net = model.net
    cdef int64_t k
    net.tables = 0
    chunks = []
    rec.states = <uint8_t*>malloc((MAX_GAME_PLIES + 1) * 50)
    rec.vals = <float*>malloc(MAX_GAME_PLIES * 5 * sizeof(float))
    try:
        if rec.states == NULL or rec.vals == NULL:
            raise MemoryError("self-play buffers")
        for k in range(first_game, first_game + ngames):
            with nogil:
                _selfplay(c, &net, seed, k, &rec)
            if rec.error < 0:
                raise RuntimeError("move generation failed in self-play")
            chunks.append(np.frombuffer((<char*>rec.states)[:rec.nplies * 50],
                                        dtype=np.uint8).reshape(rec.nplies, 2, 25).copy())
    finally:
        free(rec.states)
        free(rec.vals)
        _del_ctx(c)
    if not chunks:
        return np.zeros((0, 2, 25), dtype=np.uint8)
    return np.concatenate(chunks)
