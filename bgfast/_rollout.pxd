# Rollout kernel: per-trial PRNG and the game loop (see bgfast/_rollout.pyx).
from libc.stdint cimport uint8_t, uint64_t, int64_t
from bgfast._movegen cimport MoveGen

cdef struct Rng:
    uint64_t s[4]

cdef struct RolloutParams:
    uint64_t seed
    int truncate          # plies before the position is evaluated (0 = play to the end)
    int vr                # luck adjustment (variance reduction)
    int quasi             # stratified first two rolls
    int policy            # POLICY_* of bgfast._evaluate
    int evaluator         # EVAL_* of bgfast._evaluate (for luck, truncation)
    int early_stop        # stop with exact values inside the two-sided bear-off table
    int perm[2][36]       # seed-dependent permutations of the 36 outcomes, plies 0 and 1

cdef void rng_seed(Rng* r, uint64_t seed, uint64_t stream) noexcept nogil
cdef uint64_t rng_next(Rng* r) noexcept nogil
cdef int rng_roll36(Rng* r) noexcept nogil
# One trial from board (player on roll = row 1): out[0..4] the (adjusted)
# probabilities for that player, out[5] the cubeless equity.  Returns the
# number of plies played or <0 on error.
cdef int play_trial(MoveGen* g, const uint8_t* board, int64_t trial,
                    const RolloutParams* P, double* out) noexcept nogil
