# Neural-net evaluator kernel shared by the other Cython modules.
from libc.stdint cimport uint8_t, int32_t, int64_t, uint64_t
from bgfast._movegen cimport MoveGen
from bgfast._rollout cimport Rng

cdef enum:
    NET_SIDE_INPUTS = 98         # 24 points x 4 units, bar, borne off
    NET_RAW_INPUTS = 196         # on-roll side first, then the opponent
    NET_SIDE_FEATURES = 5        # base hand-made contact features per side (see _net.pyx)
    NET_FEATURES = 10            # the base features: on-roll side first, then the opponent
    NET_INPUTS = 206             # raw inputs, then the base features (a net without groups)
    NET_GROUPS = 6               # optional feature groups (bit g of a net's group mask)
    NET_SLOT_GROUPS = 32         # the groups folded into the slot tables T (bit 5, off)
    NET_MAX_FEATURES = 60        # the base features and every group's, 2 sides
    NET_MAX_INPUTS = 256         # NET_RAW_INPUTS + NET_MAX_FEATURES
    NET_OUTPUTS = 5
    NET_MAX_HIDDEN = 256
    NET_SLOTS = 52               # 2 sides x 26 slots (24 points, bar, off)
    NET_MAX_DEPTH = 5            # search depth (plies) + 1
    NET_MAX_PLAYS = 12000
    NET_MAX_LUCK_PLAYS = 64      # the most pubeval candidates of a pruned luck play
    NET_MAX_NETS = 7             # contact, race, and optionally crashed, then the plan nets, then crashed-other
    NET_PLAN_NETS = 6            # a set of this many nets splits contact by the race (net_of)
    NET_SIDE_NETS = 7            # a set of this many also splits crashed positions by the side crashed
    NET_CRASHED_OTHER = 6        # in a set of NET_SIDE_NETS: the crashed positions whose side on roll is not
    NET_CRASHED_IN_PLAY = 7      # crashed: contact, and a side with at most this many checkers in play
    NET_PLAN_EDGE1 = -25         # the plan bands' edges: the on-roll side's lead in pips
    NET_PLAN_EDGE2 = -5
    NET_PLAN_EDGE3 = 20
    OS_NET_INPUTS = 100          # the one-sided race net: 24 points x 4 units, then 4 features
    OS_NET_BINS = 64             # its outputs: two or three distributions of this many rolls
    OS_NET_MAX_HIDDEN = 256
    OS_NET_FAR = 18              # a side with a checker on slot 18 (point 19) or beyond: the race net,
                                 # unless the one-sided race net has its third distribution (os_w3)

# Two, three, six or seven nets (0 = contact, 1 = race, 2 = crashed, 3..5 = the
# plan nets, 6 = crashed-other: see net_of) stored with the same number of
# hidden units; a net of two evaluates crashed positions with its contact net.
# A set of six or seven splits the contact positions that are not crashed into
# four bands of the on-roll side's lead in the race (the opponent's pips minus
# its own): below NET_PLAN_EDGE1 net 0, then nets 3, 4 and 5 from each edge on.
# A set of seven also splits the crashed positions by the side crashed: net 2
# when the side on roll is, net 6 (NET_CRASHED_OTHER) when only its opponent is.
# T[c] holds, for every (side, slot, count 0..15), the sum of the first-layer
# weight rows that the count switches on, so a hidden sum is b1 plus one row
# per occupied slot, and a play updates only the slots it changes.  A feature
# group whose inputs depend on one slot's count alone (NET_SLOT_GROUPS: the
# borne-off thermometer) is folded into T as well, so it costs nothing.  The
# evaluation reads only the first kh[c] hidden units of net c (the units past
# its last nonzero output weight add nothing), so T[c], w2t[c] and wf[c] have
# rows of kh[c] floats.
cdef struct NetC:
    int H
    int nets                     # 2, 3, NET_PLAN_NETS or NET_SIDE_NETS
    int kh[NET_MAX_NETS]         # the hidden units each net's evaluation reads (a multiple of 8, or H)
    int groups                   # the optional feature groups (bit mask)
    int nf                       # hand-made inputs: NET_FEATURES + those of the groups
    int kread[NET_MAX_NETS]      # the groups each net reads: those whose rows are not all zero
    int kgroups[NET_MAX_NETS]    # those of kread computed per board (not folded into T)
    int knf[NET_MAX_NETS]        # the hand-made inputs computed per board: NET_FEATURES + kgroups'
    int tables                   # use the bear-off tables of bgfast._evaluate
    float* w1[NET_MAX_NETS]      # [NET_RAW_INPUTS + nf, H] (the feature rows last)
    float* b1[NET_MAX_NETS]      # [H]
    float* w2[NET_MAX_NETS]      # [H, 5]
    float* w2t[NET_MAX_NETS]     # [5, kh]: w2 transposed (rebuilt with T)
    float* wf[NET_MAX_NETS]      # [knf, kh]: the rows of w1 of the computed features (rebuilt with T)
    float* b2[NET_MAX_NETS]      # [5]
    float* T[NET_MAX_NETS]       # [NET_SLOTS * 16, kh]
    uint64_t version             # set by each rebuild of T: no other weights ever had it
    # the one-sided race net (os_h hidden units; 0: none), see os_race_probs: the
    # distributions of one side's rolls to bear off and to take the first
    # checker off, for a side with a checker beyond slot os_min - 1 (point os_min);
    # with os_w3, also of the rolls to bring every checker out of the other side's
    # home board, for a side with a checker there (slots OS_NET_FAR..23)
    int os_h
    int os_min
    float* os_T                  # [24 * 16, os_h]: the first-layer rows of (slot, count)
    float* os_wx                 # [4, os_h]: the rows of the 4 features
    float* os_b1                 # [os_h]
    float* os_w2                 # [os_h, 2 * OS_NET_BINS]
    float* os_b2                 # [2 * OS_NET_BINS]
    float* os_w3                 # [os_h, OS_NET_BINS], or NULL: no third distribution
    float* os_b3                 # [OS_NET_BINS]

# The evaluation cache of a search (see _net.pyx, "the evaluation cache"):
# the 0-ply best play of (board, roll) and its probabilities, keyed by the
# packed board and the dice, for one net.
cdef struct CacheEntry:
    uint64_t tag                 # the key's hash | 1 (0: empty)
    uint8_t key[26]              # the board, two counts a byte, then d1 * 8 + d2
    uint8_t play[25]             # the best play, packed alike
    int32_t n                    # the number of legal plays
    double p[5]

cdef struct NetCache:
    CacheEntry* e
    uint64_t mask                # entries - 1 (a power of two)
    const void* net              # the net the entries are for (its slot tables)
    int tables
    int64_t lookups
    int64_t hits

# per-thread work space for searches
cdef struct NetCtx:
    MoveGen g[NET_MAX_DEPTH]
    float hb[NET_MAX_NETS][NET_MAX_HIDDEN] # hidden sums of the base board (its hand-made inputs included), per net
    float fb[NET_MAX_NETS][NET_MAX_FEATURES] # the base board's hand-made inputs, per net
    int hbv[NET_MAX_NETS]
    uint8_t base[64]
    const NetC* bnet             # the net (and its version) of base's sums
    uint64_t bver
    double* eq                   # NET_MAX_PLAYS equities of the root plays
    int btot[2]                  # checkers on the board per row of base (side 0: base[25..])
    int btv
    int ready
    NetCache* cache              # NULL: no evaluation cache
    # the one-sided distributions of the base's side not moving (os_race_probs), per base
    double osr[OS_NET_BINS]
    double osg[OS_NET_BINS]
    double osc[OS_NET_BINS]
    int ost                      # its checkers on the board
    int osv                      # 0: not yet found, 1: in osr/osg, 2: and osc, -1: not valued

cdef int netctx_init(NetCtx* c) noexcept nogil
cdef void netctx_free(NetCtx* c) noexcept nogil
# give c an evaluation cache of 2**log2 entries (0: none); returns 0, or -1 (no memory)
cdef int netctx_cache(NetCtx* c, int log2) noexcept nogil
# the hand-made inputs of board b (player on roll in row 1): the NET_FEATURES
# base ones, then those of each group in `groups`; returns their number
cdef int net_features(const uint8_t* b, int groups, float* f) noexcept nogil
# the number of hand-made inputs of a net with these groups
cdef int net_feature_count(int groups) noexcept nogil
# the net of `net` that evaluates board b: 0 contact, 1 race, 2 crashed (a net of
# three or more), 3..5 the contact plan bands (a net of NET_PLAN_NETS or more),
# 6 crashed with the side on roll not crashed (a net of NET_SIDE_NETS)
cdef int net_of(const NetC* net, const uint8_t* b) noexcept nogil
# 5 probabilities for the player on roll (row 1) by the net alone
cdef void net_forward(const NetC* net, const uint8_t* b, double* p) noexcept nogil
# race probabilities for the player on roll of a race b (not over, no contact) by
# convolution of each side's one-sided distributions: the race table's for a side
# it holds, the one-sided race net's for a side beyond it (net.os_h > 0); 1, or 0
# when neither values a side (a checker on the bar, or on OS_NET_FAR or beyond
# and no third distribution)
cdef int os_race_probs(const NetC* net, const uint8_t* b, double* p) noexcept nogil
# the same, with game-over results and (when net.tables) the bear-off tables
# and the one-sided race net
cdef void net_onroll(const NetC* net, const uint8_t* b, double* p) noexcept nogil
# the play chosen at `plies` (0 .. NET_MAX_DEPTH - 2) with Gaussian equity noise at 0-ply;
# result (turn passed) in out; returns the number of legal plays, <0 on error
cdef Py_ssize_t net_choose(NetCtx* c, const NetC* net, const uint8_t* b, int d1, int d2,
                           int plies, double noise, Rng* rng, uint8_t* out) noexcept nogil
# n-ply probabilities for the player on roll
cdef int net_value(NetCtx* c, const NetC* net, const uint8_t* b, int plies, int depth,
                   double* p) noexcept nogil
