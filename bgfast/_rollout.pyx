# cython: language_level=3
"""Private kernel: the rollout game loop, entirely in C with the GIL released.

See ``bgfast.rollout`` for the public API.  Each trial has its own random
stream, seeded from (seed, trial index) with splitmix64 into xoshiro256**,
so a trial's dice do not depend on which worker plays it or on the other
trials.  The first two rolls are stratified: trial t plays outcome
``perm0[t % 36]`` first and ``perm1[(t + t // 36) % 36]`` second, so every
block of 1296 trials sees each pair of first rolls exactly once.
Candidates rolled out together use the same dice (same trial stream).

With a cube (``params["cube"]``, :func:`cube_params`) the loop plays it:
before each roll the side on roll, when it may double, takes its 0-ply
cube decision from ``bgfast._cube`` (cimported through ``_cube.pxd``: the
cube model's own arithmetic), the opponent takes, beavers or passes as it
says, and each trial also gives its cubeful result (luck-adjusted in
cubeful 0-ply values).  The decisions use no random numbers, so the dice
stay the trial's.
"""
import numpy as np
cimport numpy as cnp
from libc.stdint cimport uint8_t, int8_t, int64_t, uint64_t
from libc.string cimport memcpy

from bgfast._movegen cimport MoveGen, movegen_init, movegen_free
from libc.math cimport NAN
from bgfast._evaluate cimport (POLICY_PUBEVAL, POLICY_EVAL, EVAL_PUBEVAL, board_class,
                               board_contact, pub_score, mover_probs, onroll_probs,
                               invert_probs, probs_equity, choose_play, exact_probs,
                               exact_cubeful)
from bgfast._cube cimport (CTX_MATCH, CTX_AWAY_ME, CTX_AWAY_OPP, CTX_STATE, CTX_CUBE, CTX_OWNER,
                           CTX_COLUMNS, OWN_ME, OWN_OPP, ACT_DOUBLE_PASS,
                           ACT_OPTIONAL_DOUBLE_TAKE, ACT_OPTIONAL_DOUBLE_BEAVER, ACT_DOUBLE_TAKE,
                           ACT_DOUBLE_BEAVER, Score, Row, CubeNode, cube_tables, cube_may_double,
                           cube_node, cube_dead, board_efficiency)

cnp.import_array()

cdef enum:
    MAX_PLIES = 4000      # safety net; real games end far sooner


cdef inline uint64_t _splitmix(uint64_t* x) noexcept nogil:
    x[0] += 0x9E3779B97F4A7C15ULL
    cdef uint64_t z = x[0]
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL
    return z ^ (z >> 31)


cdef void rng_seed(Rng* r, uint64_t seed, uint64_t stream) noexcept nogil:
    cdef uint64_t x = seed * 0xD1B54A32D192ED03ULL
    x ^= _splitmix(&x) + stream * 0x8CB92BA72F3D8DD7ULL
    cdef int i
    for i in range(4):
        r.s[i] = _splitmix(&x)


cdef inline uint64_t _rotl(uint64_t x, int k) noexcept nogil:
    return (x << k) | (x >> (64 - k))


cdef uint64_t rng_next(Rng* r) noexcept nogil:
    """xoshiro256** (Blackman and Vigna)."""
    cdef uint64_t result = _rotl(r.s[1] * 5, 7) * 9
    cdef uint64_t t = r.s[1] << 17
    r.s[2] ^= r.s[0]
    r.s[3] ^= r.s[1]
    r.s[1] ^= r.s[2]
    r.s[0] ^= r.s[3]
    r.s[2] ^= t
    r.s[3] = _rotl(r.s[3], 45)
    return result


cdef int rng_roll36(Rng* r) noexcept nogil:
    """A uniform outcome 0..35 (rejection sampling, no modulo bias)."""
    cdef uint64_t x
    while True:
        x = rng_next(r) >> 58           # 0..63
        if x < 36:
            return <int>x


# roll index (of 21) for each of the 36 outcomes; dice of the 21 rolls
cdef int R21_OF36[36]
cdef int R21_D1[21]
cdef int R21_D2[21]
cdef double R21_W[21]


cdef void _init_rolls() noexcept:
    cdef int a, b, k = 0
    for a in range(1, 7):
        for b in range(1, a + 1):
            R21_D1[k] = a
            R21_D2[k] = b
            R21_W[k] = (1.0 if a == b else 2.0) / 36.0
            R21_OF36[(a - 1) * 6 + (b - 1)] = k
            R21_OF36[(b - 1) * 6 + (a - 1)] = k
            k += 1


_init_rolls()


cdef inline void _to_start(const double* p, int flip, double* acc, double sign) noexcept nogil:
    """acc += sign * p, with p seen from the player on roll at the start (flip=0)
    or from the other player (flip=1)."""
    if flip:
        acc[0] -= sign * p[0]
        acc[1] += sign * p[3]
        acc[2] += sign * p[4]
        acc[3] += sign * p[1]
        acc[4] += sign * p[2]
    else:
        acc[0] += sign * p[0]
        acc[1] += sign * p[1]
        acc[2] += sign * p[2]
        acc[3] += sign * p[3]
        acc[4] += sign * p[4]


cdef inline void _result_to_start(const double* p, int flip, double* res) noexcept nogil:
    """res = p seen from the player on roll at the start (p is for the player
    on roll now: the starter when flip = 0, the other player when flip = 1)."""
    cdef int j
    if flip:
        invert_probs(p, res)
    else:
        for j in range(5):
            res[j] = p[j]


cdef PolicySlot POLICY_SLOTS[MAX_POLICIES]


cdef int register_policy_slot(int slot, policy_fn choose, ws_new_fn ws_new,
                              ws_free_fn ws_free, const void* ctx) noexcept nogil:
    if slot < NUM_POLICIES or slot >= MAX_POLICIES:
        return -1
    POLICY_SLOTS[slot].choose = choose
    POLICY_SLOTS[slot].ws_new = ws_new
    POLICY_SLOTS[slot].ws_free = ws_free
    POLICY_SLOTS[slot].ctx = ctx
    POLICY_SLOTS[slot].luck = NULL
    POLICY_SLOTS[slot].luck_always = 0
    return 0


cdef int register_policy_luck(int slot, luck_fn luck, int always) noexcept nogil:
    if slot < NUM_POLICIES or slot >= MAX_POLICIES:
        return -1
    POLICY_SLOTS[slot].luck = luck
    POLICY_SLOTS[slot].luck_always = always
    return 0


def policy_registered(int slot):
    """Whether a play policy is in kernel slot ``slot`` (built-ins: always)."""
    if 0 <= slot < NUM_POLICIES:
        return True
    return NUM_POLICIES <= slot < MAX_POLICIES and POLICY_SLOTS[slot].choose != NULL


cdef inline Py_ssize_t _choose(MoveGen* g, const uint8_t* b, int d1, int d2,
                               const RolloutParams* P, Rng* prng, uint8_t* out) noexcept nogil:
    if P.ps != NULL:
        return P.ps.choose(P.ws, P.ps.ctx, g, b, d1, d2, prng, out)
    return choose_play(g, b, d1, d2, P.policy, P.evaluator, out)


cdef inline bint _own_luck_plays(const RolloutParams* P) noexcept nogil:
    """Whether the policy has luck plays of its own (see :func:`_luck_play`):
    an n-ply level always, a 0-ply net level when the luck plays are pruned."""
    return P.ps != NULL and P.ps.luck != NULL and (P.ps.luck_always or P.luck_plays > 0)


cdef inline Py_ssize_t _luck_play(MoveGen* g, const uint8_t* b, int d1, int d2,
                                  const RolloutParams* P, Rng* prng, uint8_t* out,
                                  double* v) noexcept nogil:
    """The play of (d1, d2) whose value v (for the mover) measures the luck of
    that roll: the policy's luck play where it has one (an n-ply level: its
    0-ply best play, valued n-1 plies deep, as gnubg does; with
    ``luck_plays`` the best of pubeval's best few), else the policy's own
    play valued by the evaluator."""
    cdef Py_ssize_t n
    if _own_luck_plays(P):
        return P.ps.luck(P.ws, P.ps.ctx, g, b, d1, d2, P.evaluator, P.luck_plays, out, v)
    n = _choose(g, b, d1, d2, P, prng, out)
    if n >= 0:
        mover_probs(out, P.evaluator, v)
    return n


# ---------------------------------------------------------------------------
# the cube in a trial
# ---------------------------------------------------------------------------

cdef enum:
    MAX_CUBE_LEVEL = 40    # a money cube of 2**40 is never turned again (int64 stays exact)


cdef struct TrialCube:
    # the trial's cube context seen from the side that was on roll at the
    # start (0) and from the other side (1); their MWCs remembered in s
    int64_t row[2][CTX_COLUMNS]
    Score s[2]
    Row r
    double norm
    bint money


cdef void _cube_begin(TrialCube* t, const RolloutParams* P, Py_ssize_t cand) noexcept nogil:
    cdef int j
    cdef const int64_t* c = &P.cube.rows[cand * CTX_COLUMNS]
    for j in range(CTX_COLUMNS):
        t.row[0][j] = c[j]
        t.row[1][j] = c[j]
    t.row[1][CTX_AWAY_ME] = c[CTX_AWAY_OPP]
    t.row[1][CTX_AWAY_OPP] = c[CTX_AWAY_ME]
    if c[CTX_OWNER] != 0:
        t.row[1][CTX_OWNER] = OWN_OPP if c[CTX_OWNER] == OWN_ME else OWN_ME
    t.s[0].known = t.s[1].known = 0
    cube_tables(&t.r, P.cube.pre, P.cube.post, P.cube.N)
    t.norm = P.cube.norm[cand]
    t.money = c[CTX_MATCH] == 0


cdef void _cube_turn(TrialCube* t, int side, int64_t factor) noexcept nogil:
    """``side`` doubles and the other side takes (factor 2) or beavers
    (factor 4): the cube goes up, and the taker owns it."""
    t.row[0][CTX_CUBE] *= factor
    t.row[1][CTX_CUBE] *= factor
    t.row[side][CTX_OWNER] = OWN_OPP
    t.row[1 - side][CTX_OWNER] = OWN_ME
    t.s[0].known = t.s[1].known = 0


cdef inline bint _may_double(TrialCube* t, int side) noexcept nogil:
    if t.money and t.row[side][CTX_CUBE] >= (<int64_t>1) << MAX_CUBE_LEVEL:
        return False
    return cube_may_double(&t.r, t.row[side])


cdef inline double _to_starter(const TrialCube* t, double v, int side) noexcept nogil:
    """A value in the currency of ``side``'s context (money: per unit of
    the cube; match: its MWC) as the starter's result (money: in units of
    the norm cube; match: the starter's MWC)."""
    if t.money:
        v = v * <double>t.row[0][CTX_CUBE] / t.norm
        return -v if side else v
    return 1.0 - v if side else v


cdef inline int _node(TrialCube* t, const RolloutParams* P, const uint8_t* b, const double* p,
                      int side, CubeNode* nd) noexcept nogil:
    """The 0-ply cube decision of b (``side`` on roll, p its probabilities),
    with the exact money equities of the two-sided bear-off table."""
    cdef double e[3]
    if not (t.money and exact_cubeful(b, e)):
        e[0] = e[1] = e[2] = NAN
    return cube_node(&t.r, p, t.row[side], &t.s[side], board_efficiency(b, P.cube.eff), e,
                     P.cube.eps, P.cube.tol, nd)


cdef inline double _cube_value(TrialCube* t, const RolloutParams* P, const uint8_t* b,
                               const double* p, int side, bint no_double) noexcept nogil:
    """The cubeful 0-ply value of b to the starter: the node value of the
    side on roll's cube decision (its no-double value with ``no_double``)."""
    cdef CubeNode nd
    _node(t, P, b, p, side, &nd)
    return _to_starter(t, nd.no_double if no_double else nd.value, side)


cdef inline double _over_value(TrialCube* t, const double* p, int side) noexcept nogil:
    """A finished game's result to the starter (p: exact, for ``side``)."""
    return _to_starter(t, cube_dead(&t.r, p, t.row[side], &t.s[side]), side)


cdef inline double _child_value(TrialCube* t, const RolloutParams* P, const uint8_t* nb,
                                const double* mp, int mover) noexcept nogil:
    """The cubeful 0-ply value to the starter of the play nb of ``mover``
    (mp: its probabilities for him), the opponent's cube decision next."""
    cdef double q[5]
    if board_class(nb) == 0:
        return _over_value(t, mp, mover)
    invert_probs(mp, q)
    return _cube_value(t, P, nb, q, 1 - mover, False)


# ---------------------------------------------------------------------------
# one trial
# ---------------------------------------------------------------------------

cdef Py_ssize_t _luck_values(MoveGen* g, const uint8_t* b, const RolloutParams* P, Rng* prng,
                             uint8_t* best, double* v, double* mean) noexcept nogil:
    """What the luck of a roll from b (the player on roll in row 1) is
    measured against: for each of the 21 rolls k, its luck play
    (:func:`_luck_play`: the policy's play, or an n-ply level's own luck
    play; ``best[64 k ..]``, the turn passed) and its value for the mover
    (``v[5 k ..]``; a finished game's exact result), and their mean over
    the 36 outcomes (``mean[0..4]``).  The luck
    of roll k is ``v[k] - mean``: its expectation over the dice is zero, so
    subtracting it leaves the rollout unbiased whatever the evaluator.  The
    rolls are played in a fixed order, so the policy's stream is the same
    for every split of the trials.  Returns 0, or <0 on an error."""
    cdef int k, j
    cdef Py_ssize_t n
    for k in range(21):
        n = _luck_play(g, b, R21_D1[k], R21_D2[k], P, prng, best + 64 * k, v + 5 * k)
        if n < 0:
            return n
    for j in range(5):
        mean[j] = 0.0
        for k in range(21):
            mean[j] += R21_W[k] * v[5 * k + j]
    return 0


cdef int play_trial(MoveGen* g, const uint8_t* board, int64_t trial,
                    const RolloutParams* P, Py_ssize_t cand, double* out) noexcept nogil:
    cdef uint8_t b[64]
    cdef uint8_t nb[64]
    cdef uint8_t best[21][64]
    cdef double v[21][5]
    cdef double cv[21]
    cdef double mean[5]
    cdef double res[5]
    cdef double luck[5]
    cdef double p[5]
    cdef double cf = 0.0, cf_luck = 0.0, cmean
    cdef Rng rng
    cdef Rng prng
    cdef TrialCube tc
    cdef CubeNode node
    cdef int ply = 0, flip = 0, o, k, j, d1, d2, a
    cdef Py_ssize_t n
    cdef int finished = 0
    cdef bint cubeful = P.cube.on, first_nd
    rng_seed(&rng, P.seed, <uint64_t>trial)
    # the policy's own stream (noise, random plays): the dice never depend on it
    rng_seed(&prng, P.seed ^ 0xC2B2AE3D27D4EB4FULL, <uint64_t>trial)
    memcpy(b, board, 50)
    for j in range(5):
        luck[j] = 0.0
        res[j] = 0.0
    if cubeful:
        _cube_begin(&tc, P, cand)
    # on-roll results: b always has the player to move in row 1
    if board_class(b) == 0:
        onroll_probs(b, P.evaluator, p)
        _result_to_start(p, 0, res)
        if cubeful:
            cf = _over_value(&tc, p, 0)
        finished = 1
    while not finished:
        # a "no double" candidate: its first roll is played without a cube decision
        first_nd = cubeful and ply == 0 and P.cube.skip[cand] != 0
        if P.early_stop and exact_probs(b, p):
            _result_to_start(p, flip, res)
            if cubeful:
                cf = _cube_value(&tc, P, b, p, flip, first_nd)
            break
        if (P.truncate > 0 and ply >= P.truncate) or ply >= MAX_PLIES:
            onroll_probs(b, P.evaluator, p)
            _result_to_start(p, flip, res)
            if cubeful:
                cf = _cube_value(&tc, P, b, p, flip, first_nd)
            break
        if cubeful and not first_nd and _may_double(&tc, flip):
            onroll_probs(b, P.evaluator, p)
            a = _node(&tc, P, b, p, flip, &node)
            if a == ACT_DOUBLE_PASS:
                # the trial ends at the value before the double (cubeless: the evaluation)
                _result_to_start(p, flip, res)
                cf = _to_starter(&tc, node.double_pass, flip)
                break
            if (a == ACT_DOUBLE_TAKE or a == ACT_DOUBLE_BEAVER or a == ACT_OPTIONAL_DOUBLE_TAKE
                    or a == ACT_OPTIONAL_DOUBLE_BEAVER):
                _cube_turn(&tc, flip, 4 if node.beaver else 2)
        if P.quasi and ply < 2:
            if ply == 0:
                o = P.perm[0][trial % 36]
            else:
                o = P.perm[1][(trial + trial // 36) % 36]
        else:
            o = rng_roll36(&rng)
        d1 = o // 6 + 1
        d2 = o % 6 + 1
        if P.vr:
            n = _luck_values(g, b, P, &prng, &best[0][0], &v[0][0], mean)
            if n < 0:
                return <int>n
            k = R21_OF36[o]
            for j in range(5):
                p[j] = v[k][j] - mean[j]
            _to_start(p, flip, luck, 1.0)
            if cubeful:
                cmean = 0.0
                for j in range(21):
                    cv[j] = _child_value(&tc, P, best[j], v[j], flip)
                    cmean += R21_W[j] * cv[j]
                cf_luck += cv[k] - cmean
            if _own_luck_plays(P):
                # the luck plays are not the policy's: it plays the roll thrown
                n = _choose(g, b, d1, d2, P, &prng, nb)
                if n < 0:
                    return <int>n
                memcpy(b, nb, 50)
            else:
                memcpy(b, best[k], 50)
        else:
            n = _choose(g, b, d1, d2, P, &prng, nb)
            if n < 0:
                return <int>n
            memcpy(b, nb, 50)
        ply += 1
        flip ^= 1
        # b now has the player who just moved in row 0 ... and the next player on roll
        if board_class(b) == 0:
            onroll_probs(b, P.evaluator, p)
            _result_to_start(p, flip, res)
            if cubeful:
                cf = _over_value(&tc, p, flip)
            break
    for j in range(5):
        out[j] = res[j] - luck[j]
    out[5] = probs_equity(out)
    if cubeful:
        out[6] = cf - cf_luck
    return ply


def make_params(uint64_t seed, int truncate, bint vr, bint quasi, int policy,
                int evaluator, bint early_stop, int luck_plays=0):
    """The kernel's parameters as a dict (picklable, for workers)."""
    return dict(seed=seed, truncate=truncate, vr=vr, quasi=quasi, policy=policy,
                evaluator=evaluator, early_stop=early_stop, luck_plays=luck_plays)


cdef void _permutations(uint64_t seed, int perm[2][36]) noexcept nogil:
    """Seed-dependent permutations of the 36 outcomes for the first two plies
    (Fisher-Yates on streams of their own, apart from every trial's)."""
    cdef Rng r
    cdef int i, j, t, ply
    cdef uint64_t x
    for ply in range(2):
        rng_seed(&r, seed, 0xFFFFFFFFFFFFFF00ULL + <uint64_t>ply)
        for i in range(36):
            perm[ply][i] = i
        for i in range(35, 0, -1):
            while True:                     # uniform 0..i without modulo bias
                x = rng_next(&r) >> 58
                if x <= <uint64_t>i:
                    break
            j = <int>x
            t = perm[ply][i]
            perm[ply][i] = perm[ply][j]
            perm[ply][j] = t


def permutations(uint64_t seed):
    """The stratification permutations of ``seed``: int32[2, 36]."""
    cdef int perm[2][36]
    _permutations(seed, perm)
    return np.array([[perm[0][i] for i in range(36)], [perm[1][i] for i in range(36)]],
                    dtype=np.int32)


cdef void _fill(RolloutParams* P, dict d) except *:
    P.seed = d["seed"]
    P.truncate = d["truncate"]
    P.vr = d["vr"]
    P.quasi = d["quasi"]
    P.policy = d["policy"]
    P.evaluator = d["evaluator"]
    P.early_stop = d["early_stop"]
    P.luck_plays = d.get("luck_plays", 0)
    P.ps = NULL
    P.ws = NULL
    P.cube.on = 0
    cube = d.get("cube")
    if cube is not None:
        _fill_cube(&P.cube, cube)
    if P.policy >= NUM_POLICIES:
        if not policy_registered(P.policy):
            raise ValueError(f"no play policy is registered in kernel slot {P.policy}")
        P.ps = &POLICY_SLOTS[P.policy]
    _permutations(P.seed, P.perm)


cdef void _fill_cube(RolloutCube* C, dict cube) except *:
    """The cube part of the kernel's parameters (see :func:`cube_params`),
    checked; the arrays stay in the dict."""
    cdef const int64_t[:, ::1] rows = cube["rows"]
    cdef const double[::1] norm = cube["norm"]
    cdef const uint8_t[::1] skip = cube["skip"]
    cdef const double[:, ::1] pre = cube["pre"]
    cdef const double[::1] post = cube["post"]
    cdef const double[::1] eff = cube["eff"]
    cdef Py_ssize_t i, n = rows.shape[0], N = pre.shape[0]
    cdef int j
    if rows.shape[1] != CTX_COLUMNS or norm.shape[0] != n or skip.shape[0] != n:
        raise ValueError(f"cube rows must be ({n}, {CTX_COLUMNS}), with one norm and skip each")
    if pre.shape[1] != N or post.shape[0] != N or eff.shape[0] != 6:
        raise ValueError("the table's pre- and post-Crawford arrays do not match")
    for i in range(n):
        if not (0 <= rows[i, CTX_OWNER] <= 2 and 0 <= rows[i, CTX_STATE] <= 2
                and rows[i, CTX_CUBE] >= 1 and norm[i] > 0):
            raise ValueError(f"cube row {i} is not a cube context")
        if rows[i, CTX_MATCH] and not (1 <= rows[i, CTX_AWAY_ME] <= N
                                       and 1 <= rows[i, CTX_AWAY_OPP] <= N):
            raise ValueError(f"cube row {i}: away scores outside the table")
    C.on = 1
    C.ncand = n
    C.rows = &rows[0, 0] if n else NULL
    C.norm = &norm[0] if n else NULL
    C.skip = &skip[0] if n else NULL
    C.N = N
    C.pre = &pre[0, 0] if N else NULL
    C.post = &post[0] if N else NULL
    for j in range(6):
        C.eff[j] = eff[j]
    C.eps = cube["eps"]
    C.tol = cube["tol"]


def cube_params(rows, norm, skip, pre, post, eff, double eps, double tol):
    """The cube part of the kernel's parameters (``params["cube"]``):
    ``rows`` int64[ncand, 8] each candidate's starting context (the kernel
    row of :class:`bgfast.cube.CubeContext`, the real cube value),
    ``norm`` float64[ncand] the cube its money results are in units of,
    ``skip`` uint8[ncand] no cube decision before its first roll (a "no
    double" candidate), the match table's ``pre`` float64[N, N] and
    ``post`` float64[N] (N = 0 for money), the cube efficiencies ``eff``
    float64[6], the equality margin ``eps`` and the probability
    tolerance ``tol``."""
    return dict(rows=np.ascontiguousarray(rows, dtype=np.int64),
                norm=np.ascontiguousarray(norm, dtype=np.float64),
                skip=np.ascontiguousarray(skip, dtype=np.uint8),
                pre=np.ascontiguousarray(pre, dtype=np.float64),
                post=np.ascontiguousarray(post, dtype=np.float64),
                eff=np.ascontiguousarray(eff, dtype=np.float64), eps=eps, tol=tol)


def run_trials(const uint8_t[:, :, ::1] starts, int64_t first, int64_t count, dict params):
    """Trials first .. first+count-1 of every start board (common dice).

    Returns ``(values float64[count, ncand, 6], plies int32[count, ncand])``,
    with a seventh value column, the cubeful result, when ``params`` has
    ``cube`` (:func:`cube_params`, one row per start board).  Raises
    RuntimeError when move generation fails.
    """
    cdef RolloutParams P
    _fill(&P, params)
    cdef Py_ssize_t nc = starts.shape[0], c
    cdef int64_t t
    if P.cube.on and P.cube.ncand != nc:
        raise ValueError(f"{P.cube.ncand} cube rows for {nc} start boards")
    out = np.empty((count, nc, 7 if P.cube.on else 6), dtype=np.float64)
    plies = np.empty((count, nc), dtype=np.int32)
    cdef double[:, :, ::1] o = out
    cdef int[:, ::1] pl = plies
    cdef int r, err = 0
    cdef MoveGen g
    if P.ps != NULL and P.ps.ws_new != NULL:
        P.ws = P.ps.ws_new()
        if P.ws == NULL:
            raise MemoryError("policy work space")
    if movegen_init(&g, 4096, 0) != 0:
        if P.ws != NULL:
            P.ps.ws_free(P.ws)
        raise MemoryError("move generator")
    try:
        with nogil:
            for t in range(count):
                for c in range(nc):
                    r = play_trial(&g, &starts[c, 0, 0], first + t, &P, c, &o[t, c, 0])
                    if r < 0:
                        err = r
                        break
                    pl[t, c] = r
                if err:
                    break
    finally:
        movegen_free(&g)
        if P.ws != NULL and P.ps.ws_free != NULL:
            P.ps.ws_free(P.ws)
    if err:
        raise RuntimeError(f"move generation failed in a rollout (code {err})")
    return out, plies


def selfplay_samples(int64_t ngames, uint64_t seed, int policy, int64_t first_game=0):
    """Positions met in seeded self-play from the opening, to calibrate pubeval.

    Every play made (except game-ending ones) gives a sample: its result
    (the mover in row 0), the mover's parity (0 = the side that opened) and
    the game.  Game g plays the random stream (seed, first_game + g), so
    batches of games can be drawn separately.  Per game: the result for the side that made the last play and
    that side's parity.  Returns ``(boards u1[M, 2, 25], parity u1[M],
    game i8[M], results f8[G, 5], winner u1[G])``.
    """
    cdef Rng rng
    cdef MoveGen g
    cdef uint8_t b[64]
    cdef uint8_t nb[64]
    cdef double p[5]
    cdef Py_ssize_t cap = ngames * 200 + 16, m = 0
    cdef int64_t game
    cdef int o, ply
    cdef Py_ssize_t n
    cdef int err = 0
    boards = np.empty((cap, 2, 25), dtype=np.uint8)
    cdef uint8_t[:, :, ::1] bd = boards
    parity = np.empty(cap, dtype=np.uint8)
    gid = np.empty(cap, dtype=np.int64)
    results = np.zeros((ngames, 5), dtype=np.float64)
    winner = np.zeros(ngames, dtype=np.uint8)
    cdef uint8_t[::1] pa = parity
    cdef int64_t[::1] gi = gid
    cdef double[:, ::1] res = results
    cdef uint8_t[::1] win = winner
    from bgfast.position import INITIAL_BOARD
    init = np.ascontiguousarray(INITIAL_BOARD, dtype=np.uint8)
    cdef const uint8_t[:, ::1] ini = init
    if movegen_init(&g, 4096, 0) != 0:
        raise MemoryError("move generator")
    try:
        with nogil:
            for game in range(ngames):
                rng_seed(&rng, seed, <uint64_t>(first_game + game))
                memcpy(b, &ini[0, 0], 50)
                ply = 0
                while ply < MAX_PLIES:
                    o = rng_roll36(&rng)
                    if ply == 0:
                        while o // 6 == o % 6:     # the opening roll is never a double
                            o = rng_roll36(&rng)
                    n = choose_play(&g, b, o // 6 + 1, o % 6 + 1, policy, EVAL_PUBEVAL, nb)
                    if n < 0:
                        err = <int>n
                        break
                    memcpy(b, nb, 50)
                    if board_class(b) == 0:
                        onroll_probs(b, EVAL_PUBEVAL, p)     # the loser is on roll
                        invert_probs(p, &res[game, 0])
                        win[game] = ply & 1
                        break
                    if m < cap:
                        memcpy(&bd[m, 0, 0], b, 50)
                        pa[m] = ply & 1
                        gi[m] = game
                        m += 1
                    ply += 1
                if err:
                    break
    finally:
        movegen_free(&g)
    if err:
        raise RuntimeError(f"move generation failed in self-play (code {err})")
    return boards[:m], parity[:m], gid[:m], results, winner
