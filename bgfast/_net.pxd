# Neural-net evaluator kernel shared by the other Cython modules.
from libc.stdint cimport uint8_t, uint64_t
from bgfast._movegen cimport MoveGen
from bgfast._rollout cimport Rng

cdef enum:
    NET_SIDE_INPUTS = 98         # 24 points x 4 units, bar, borne off
    NET_RAW_INPUTS = 196         # on-roll side first, then the opponent
    NET_SIDE_FEATURES = 5        # hand-made contact features per side (see _net.pyx)
    NET_FEATURES = 10            # on-roll side first, then the opponent
    NET_INPUTS = 206             # raw inputs, then the features
    NET_OUTPUTS = 5
    NET_MAX_HIDDEN = 256
    NET_SLOTS = 52               # 2 sides x 26 slots (24 points, bar, off)
    NET_MAX_DEPTH = 5            # search depth (plies) + 1
    NET_MAX_PLAYS = 12000

# Two nets (0 = contact, 1 = race) with the same number of hidden units.
# T[c] holds, for every (side, slot, count 0..15), the sum of the first-layer
# weight rows that the count switches on, so a hidden sum is b1 plus one row
# per occupied slot, and a play updates only the slots it changes.
cdef struct NetC:
    int H
    int tables                   # use the bear-off tables of bgfast._evaluate
    float* w1[2]                 # [NET_INPUTS, H] (the feature rows last)
    float* b1[2]                 # [H]
    float* w2[2]                 # [H, 5]
    float* w2t[2]                # [5, H]: w2 transposed (rebuilt with T)
    float* b2[2]                 # [5]
    float* T[2]                  # [NET_SLOTS * 16, H]

# per-thread work space for searches
cdef struct NetCtx:
    MoveGen g[NET_MAX_DEPTH]
    float hb[2][NET_MAX_HIDDEN]  # hidden sums of the base board, per net
    int hbv[2]
    uint8_t base[64]
    double* eq                   # NET_MAX_PLAYS equities of the root plays
    int btot[2]                  # checkers on the board per row of base (side 0: base[25..])
    int btv
    int ready

cdef int netctx_init(NetCtx* c) noexcept nogil
cdef void netctx_free(NetCtx* c) noexcept nogil
# the NET_FEATURES hand-made inputs of board b (player on roll in row 1)
cdef void net_features(const uint8_t* b, float* f) noexcept nogil
# 5 probabilities for the player on roll (row 1) by the net alone
cdef void net_forward(const NetC* net, const uint8_t* b, double* p) noexcept nogil
# the same, with game-over results and (when net.tables) the bear-off tables
cdef void net_onroll(const NetC* net, const uint8_t* b, double* p) noexcept nogil
# the play chosen at `plies` (0, 1, 2) with Gaussian equity noise at 0-ply;
# result (turn passed) in out; returns the number of legal plays, <0 on error
cdef Py_ssize_t net_choose(NetCtx* c, const NetC* net, const uint8_t* b, int d1, int d2,
                           int plies, double noise, Rng* rng, uint8_t* out) noexcept nogil
# n-ply probabilities for the player on roll
cdef int net_value(NetCtx* c, const NetC* net, const uint8_t* b, int plies, int depth,
                   double* p) noexcept nogil
