# Rollout kernel: per-trial PRNG and the game loop (see bgfast/_rollout.pyx).
from libc.stdint cimport uint8_t, uint64_t, int64_t
from bgfast._movegen cimport MoveGen

cdef struct Rng:
    uint64_t s[4]

# A registered play policy (e.g. a computer level from bgfast._net): the play
# of (d1, d2) from b (player on roll = row 1), result (turn passed) in out;
# returns the number of legal plays, <0 on error.  ws: per-caller work space
# from ws_new (freed with ws_free); ctx: the registrant's data; rng: the
# trial's policy stream (noise, random choices); g: a free move generator.
ctypedef Py_ssize_t (*policy_fn)(void* ws, const void* ctx, MoveGen* g, const uint8_t* b,
                                 int d1, int d2, Rng* rng, uint8_t* out) noexcept nogil
ctypedef void* (*ws_new_fn)() noexcept nogil
# The luck play of a policy (gnubg's scheme for n-ply policies): the play of
# (d1, d2) from b whose value measures the luck of that roll, result (turn
# passed) in out, and that value in v (5 probabilities for the player who
# made the play: mover_probs' convention; ``evaluator`` is the rollout's
# EVAL_*; k > 0: the luck play is chosen among the k plays pubeval scores
# best, the rollout's ``luck_plays``).  Any deterministic function of (b,
# d1, d2) keeps the luck adjustment unbiased.  Returns the number of legal
# plays, <0 on error.
ctypedef Py_ssize_t (*luck_fn)(void* ws, const void* ctx, MoveGen* g, const uint8_t* b,
                               int d1, int d2, int evaluator, int k, uint8_t* out,
                               double* v) noexcept nogil
ctypedef void (*ws_free_fn)(void* ws) noexcept nogil

cdef enum:
    NUM_POLICIES = 2       # built-in: POLICY_PUBEVAL, POLICY_EVAL of bgfast._evaluate
    MAX_POLICIES = 10      # slots NUM_POLICIES .. MAX_POLICIES - 1 are registered

cdef struct PolicySlot:
    policy_fn choose
    ws_new_fn ws_new
    ws_free_fn ws_free
    const void* ctx
    luck_fn luck          # NULL: the luck of a roll is valued at the policy's own play
    int luck_always       # 1: always its luck plays; 0: only in rollouts that prune them

# Install a policy in slot (NUM_POLICIES <= slot < MAX_POLICIES; choose NULL
# clears it).  Returns 0, or -1 for a bad slot.
cdef int register_policy_slot(int slot, policy_fn choose, ws_new_fn ws_new,
                              ws_free_fn ws_free, const void* ctx) noexcept nogil
# Give the policy in slot its luck play (NULL: none), used always (an n-ply
# policy) or only by rollouts that prune the luck plays (luck_plays > 0);
# after register_policy_slot.
cdef int register_policy_luck(int slot, luck_fn luck, int always) noexcept nogil

# Cubeful rollouts: each candidate's starting cube context (a row of
# bgfast._cube's CTX_* columns for the side on roll, the real cube value),
# the cube its money results are normalised to, and whether its side on
# roll rolls without a cube decision first (a "no double" rollout).
cdef struct RolloutCube:
    int on                # play the cube (else cubeless)
    const int64_t* rows   # [ncand, CTX_COLUMNS]
    const double* norm    # [ncand]
    const uint8_t* skip   # [ncand]
    Py_ssize_t ncand
    const double* pre     # the match equity table: pre[N, N], post[N] (N = 0: money only)
    const double* post
    int64_t N
    double eff[6]         # cube efficiencies (bgfast.cube's _EFFICIENCY)
    double eps            # equities closer than this are equal
    double tol            # probabilities are clipped within this

cdef struct RolloutParams:
    uint64_t seed
    int truncate          # plies before the position is evaluated (0 = play to the end)
    int vr                # luck adjustment (variance reduction)
    int quasi             # stratified first two rolls
    int policy            # POLICY_* of bgfast._evaluate
    int evaluator         # EVAL_* of bgfast._evaluate (for luck, truncation)
    int early_stop        # stop with exact values inside the two-sided bear-off table
    int luck_plays        # > 0: a policy's luck plays among pubeval's best luck_plays plays
    int perm[2][36]       # seed-dependent permutations of the 36 outcomes, plies 0 and 1
    const PolicySlot* ps  # a registered policy (policy >= NUM_POLICIES), else NULL
    void* ws              # its work space
    RolloutCube cube

cdef void rng_seed(Rng* r, uint64_t seed, uint64_t stream) noexcept nogil
cdef uint64_t rng_next(Rng* r) noexcept nogil
cdef int rng_roll36(Rng* r) noexcept nogil
# One trial from board (player on roll = row 1), candidate ``cand`` of the
# rollout: out[0..4] the (adjusted) probabilities for that player, out[5] the
# cubeless equity and, when P.cube.on, out[6] the (adjusted) cubeful value
# (money: equity in units of the candidate's norm cube; match: MWC).
# Returns the number of plies played or <0 on error.
cdef int play_trial(MoveGen* g, const uint8_t* board, int64_t trial,
                    const RolloutParams* P, Py_ssize_t cand, double* out) noexcept nogil
