# The layout of a cube context row: the ``params`` rows every kernel of
# bgfast._cube reads (bgfast.cube.ContextColumn mirrors the columns, and
# bgfast.cube's owner and state codes the values; tests check them equal).
# ContextColumn: the columns (anonymous enums: their values index memoryviews)
cdef enum:
    CTX_MATCH = 0        # 0 money, 1 match
    CTX_AWAY_ME = 1      # away scores (1 in money rows)
    CTX_AWAY_OPP = 2
    CTX_STATE = 3        # a ContextState code
    CTX_CUBE = 4         # the cube value (read in match rows; money rows are per unit of cube)
    CTX_OWNER = 5        # a ContextOwner code
    CTX_JACOBY = 6       # money: the Jacoby rule (0/1)
    CTX_BEAVERS = 7      # money: beavers (0/1)
    CTX_COLUMNS = 8

# ContextState: the codes of the CTX_STATE column
cdef enum:
    PRE = 0              # pre-Crawford (and every money row)
    POST = 1             # post-Crawford
    CRAWFORD = 2         # the Crawford game

# ContextOwner: the codes of the CTX_OWNER column
cdef enum:
    OWN_CENTRE = 0
    OWN_ME = 1           # the side on roll
    OWN_OPP = 2

# -- the model's pieces the rollout loop uses -------------------------------
from libc.stdint cimport int64_t, uint8_t, uint32_t

cdef enum:
    MAX_POINTS = 4
    LEVELS = 16                  # cube levels whose MWCs a row remembers

cdef enum:
    # the proper actions (bgfast.cube's _KERNEL_CODES order)
    ACT_TOO_GOOD_PASS = 0
    ACT_DOUBLE_PASS = 1
    ACT_TOO_GOOD_TAKE = 2
    ACT_OPTIONAL_DOUBLE_TAKE = 3
    ACT_OPTIONAL_DOUBLE_BEAVER = 4
    ACT_NO_DOUBLE_TAKE = 5
    ACT_NO_DOUBLE_BEAVER = 6
    ACT_DOUBLE_TAKE = 7
    ACT_DOUBLE_BEAVER = 8
    ACT_DEAD_CUBE = 9

cdef struct Score:
    # what a score and cube alone give, remembered per cube level j: the
    # MWCs after k = 1, 2, 3 cubes won by me (side 0) or the opponent (side 1);
    # bit j of ``known``: level j is there (0: nothing remembered)
    uint32_t known
    double mv[LEVELS][2][3]

cdef struct Row:
    const double* p
    double win[3]                # single, gammon, backgammon wins
    double lose[3]
    int64_t a, b, cube
    int state
    const double* pre            # [N, N]: pre[a - 1, b - 1]
    const double* post           # [N]
    int64_t N
    Score* s                     # the MWCs of the row's score and cube (shared by its rows)
    # remembered per cube level j (bit j of ``known``): W and L; (bit j of
    # ``points_known[k]``) my cash (k = 0) and take (k = 1) points
    uint32_t known
    uint32_t points_known[2]
    double wv[LEVELS]
    double lv[LEVELS]
    double points[2][LEVELS]

cdef struct CubeNode:
    # a position's cube decision for the side on roll, in the context's
    # currency (money: per unit of the cube; match: MWC)
    double value           # after the proper action (a beaver counted)
    double no_double
    double double_take     # a plain take (money: already doubled); NaN if it may not double
    double double_pass
    int action             # ACT_*
    bint beaver            # the taker beavers
    bint can_double

# The match equity table of rows r (pre[N, N], post[N]; N = 0 for money only).
cdef void cube_tables(Row* r, const double* pre, const double* post, int64_t N) noexcept nogil
# Whether the side on roll at context c may double.
cdef bint cube_may_double(Row* r, const int64_t* c) noexcept nogil
# The cube decision (0-ply Janowski) of probabilities p (clipped within tol
# first) at context c (a match context's MWCs remembered in s), cube
# efficiency x and exact money equities e (centred, mine, the opponent's;
# NaN: none), equities closer than eps equal.  Returns the action.
cdef int cube_node(Row* r, const double* p, const int64_t* c, Score* s, double x,
                   const double* e, double eps, double tol, CubeNode* out) noexcept nogil
# The dead-cube value of p at context c (money: the cubeless equity per unit
# of cube, without gammons under the Jacoby rule with a centred cube; match:
# the MWC), e.g. a finished game's result.
cdef double cube_dead(Row* r, const double* p, const int64_t* c, Score* s) noexcept nogil
# The cube efficiency of board b (player on roll in row 1) by its class and
# the roller's pips (eff as bgfast.cube's _EFFICIENCY).
cdef double board_efficiency(const uint8_t* b, const double* eff) noexcept nogil
