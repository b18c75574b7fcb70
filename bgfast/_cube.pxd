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
