# Evaluation kernels shared by the other Cython modules (rollouts, n-ply search).
from libc.stdint cimport uint8_t, int64_t, uint64_t
from bgfast._movegen cimport MoveGen

cdef enum:
    POLICY_PUBEVAL = 0     # Tesauro's pubeval score (weights picked from the position before the move)
    POLICY_EVAL = 1        # the best cubeless equity for the mover by the evaluator
    EVAL_COMPOSITE = 0     # finished -> result, bear-off -> tables, else calibrated pubeval
    EVAL_PUBEVAL = 1       # calibrated pubeval alone (finished games exact)
    NUM_EVALUATORS = 2     # built-in slots; slots NUM_EVALUATORS.. are registered
    MAX_EVALUATORS = 8
    NCAL = 7               # calibration features (see cal_features)
    OS_DENSE = 64          # rolls of os_table_side's dense distributions

# A registered evaluator (e.g. the neural net): 5 probabilities for the player
# on roll (row 1) of a board that is not finished; ctx is the registrant's data.
ctypedef void (*onroll_fn)(const void* ctx, const uint8_t* b, double* p) noexcept nogil
# Install fn in slot (NUM_EVALUATORS <= slot < MAX_EVALUATORS; NULL clears it).
# Returns 0, or -1 for a bad slot.  The kernels then evaluate with it
# wherever they are given that slot (luck, truncation, the evaluator policy).
cdef int register_evaluator_slot(int slot, onroll_fn fn, const void* ctx) noexcept nogil

# the position class (OVER 0, BEAROFF 1, RACE 2, CONTACT 3), defined in _board
from bgfast._board cimport board_class, board_contact
# pubeval score of b seen from row 0 (the side that has just moved)
cdef double pub_score(const uint8_t* b, bint contact) noexcept nogil
cdef void cal_features(const uint8_t* b, bint contact, double* f) noexcept nogil
# exact result of a finished board for the player on roll (row 1)
cdef void over_probs(const uint8_t* b, double* p) noexcept nogil
# 5 probabilities for the side NOT on roll (row 0), e.g. a play's result for its mover
cdef void mover_probs(const uint8_t* b, int evaluator, double* p) noexcept nogil
# 5 probabilities for the player on roll (row 1)
cdef void onroll_probs(const uint8_t* b, int evaluator, double* p) noexcept nogil
cdef void invert_probs(const double* p, double* q) noexcept nogil
cdef void order_probs(double* p) noexcept nogil
cdef double probs_equity(const double* p) noexcept nogil
cdef void swap_board(const uint8_t* b, uint8_t* out) noexcept nogil
# The policy's play for (d1, d2): the result (turn passed) goes to out.
# Returns the number of legal plays (0: the turn is lost, out = b swapped), <0 on error.
cdef Py_ssize_t choose_play(MoveGen* g, const uint8_t* b, int d1, int d2,
                            int policy, int evaluator, uint8_t* out) noexcept nogil
# exact values for the player on roll inside the installed two-sided bear-off table (1) or 0
cdef int exact_probs(const uint8_t* b, double* p) noexcept nogil
# the exact no-double cubeful money equities (per unit of cube: centred, owned
# by the player on roll, by the opponent) inside the installed two-sided table
# (1), or 0 (outside it, or no cubeful table installed)
cdef int exact_cubeful(const uint8_t* b, double* e) noexcept nogil
# exact or one-sided-race values for a position the installed tables hold (1), 0 if none does
cdef int table_probs(const uint8_t* b, double* p) noexcept nogil
# the slots (bit k: row k // 25, slot k % 25) every board the installed tables hold leaves empty
cdef uint64_t table_empty_slots() noexcept nogil
# the points of the installed one-sided table (0: none)
cdef int os_table_points() noexcept nogil
# one side's (row: slots 0..24) dense distributions of rolls to bear off (r) and to
# take the first checker off (g), OS_DENSE each, from the installed one-sided table,
# and its checkers on the board (total): 1, or 0 if the table does not hold the row
cdef int os_table_side(const uint8_t* row, double* r, double* g, int* total) noexcept nogil
# race probabilities for the roller i (on roll) against j by convolution of dense
# distributions (os_table_side's), the sides' checkers on the board and, for a side
# with a checker in the other's home board, the distribution of the rolls it needs
# to bring them all out (ci, cj; NULL for a side with none there)
cdef void race_convolve(const double* ri, const double* gi, const double* ci, int ti,
                        const double* rj, const double* gj, const double* cj, int tj,
                        double* p) noexcept nogil
