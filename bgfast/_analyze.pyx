# cython: language_level=3
"""Private kernels of :mod:`bgfast.analyze`: a chunk of input lines scanned
in one pass, and the rows of a chunk written as JSON Lines or CSV text from
column arrays.

:func:`scan` strips the lines, drops blanks and comments, and reads the
common forms (a Position ID, optionally a Match ID, or ``PositionID:MatchID``,
optionally a roll) of printable-ASCII lines: the Position ID is decoded,
unpacked to a board and checked, and the board classified.  Anything else, and anything that does not decode, is
left to the Python parser (status 1), which also names the error.

:func:`format_rows` writes the rows of a schema of typed columns
(:data:`bgfast.analyze.COLUMNS`) as ``json.dumps(row, separators=(",",
":"))`` and the ``csv`` module would write them: floats are Python's
``round(x, 6)`` (EPCs: their 3-decimal value) printed as ``repr`` prints
them.
"""
import threading

import numpy as np
cimport numpy as cnp
from libc.stdint cimport uint8_t, int8_t, int16_t, int32_t, int64_t, uint32_t, uint64_t
from libc.string cimport memcmp, memcpy, strlen
from libc.math cimport fabs, signbit, isfinite
from libc.stdio cimport snprintf

from bgfast._evaluate cimport board_class
from bgfast._board cimport all_base64, board_possible, decode_position_id, unpack_key
from bgfast._bearoff cimport rank_counts

cnp.import_array()

cdef extern from "Python.h":
    object PyUnicode_FromStringAndSize(const char* u, Py_ssize_t size)
    bint PyUnicode_IS_ASCII(object o)
    void* PyUnicode_DATA(object o)
    Py_ssize_t PyUnicode_GET_LENGTH(object o)

cdef extern from "_analyze.h" nogil:
    void bgv_row_pips(const uint8_t* row, int* pips, int* outside)
    void bgv_copy_short(char* dst, const char* src, size_t n)
    int bgv_last_nonzero_digit(const char* s, int n)


cdef enum:
    K_CUBE = 0
    K_CHECKER = 1
    K_VERBATIM = 2
    K_OVER = 3

#: Row kinds of :func:`format_rows`.
CUBE, CHECKER, VERBATIM, OVER = K_CUBE, K_CHECKER, K_VERBATIM, K_OVER

cdef enum:
    C_INT = 0           # int64[m]
    C_FLOAT6 = 1        # float64[m], 6 decimals; NaN: None
    C_FLOAT3 = 2        # float64[m], 3 decimals; NaN: None
    C_FLOAT6_OMIT = 3   # float64[m], 6 decimals; NaN: no value (JSON: no member)
    C_ENTRY = 4         # int32[m] into the table of encoded strings; -1: no value
    C_TEXT = 5          # encoded per row: bytes with int64[m + 1] offsets; empty: no value
    C_INPUT = 6         # the row's input text, or its C_TEXT override where not empty
    C_PID = 7           # the input text's first 14 characters, or the override
    C_DICE = 8          # int8[m, 2]: the roll as two digits ("" for 0)

#: Column types of :func:`format_rows`.
COLUMN_TYPES = {"int": C_INT, "float6": C_FLOAT6, "float3": C_FLOAT3,
                "float6_omit": C_FLOAT6_OMIT, "entry": C_ENTRY, "text": C_TEXT,
                "input": C_INPUT, "pid": C_PID, "dice": C_DICE}


_scratch = threading.local()       # the row writer's buffer, one per thread


cdef inline bint is_space(uint8_t c) noexcept nogil:
    # str.strip()'s whitespace among the ASCII characters
    return c == 32 or 9 <= c <= 13 or 28 <= c <= 31


cdef Py_ssize_t next_token(const uint8_t* t, Py_ssize_t i, Py_ssize_t n,
                           Py_ssize_t* end) noexcept nogil:
    """Start of the first token at or after ``i`` (``n`` if none); its end in ``end``."""
    while i < n and t[i] == 32:
        i += 1
    end[0] = i
    while end[0] < n and t[end[0]] != 32:
        end[0] += 1
    return i


cdef int parse_line(const uint8_t* t, Py_ssize_t n, uint8_t* key, uint8_t* board,
                    int8_t* dice, int32_t* mpos) noexcept nogil:
    """0 if the stripped line ``t[:n]`` is one of the fast forms, else 1."""
    cdef Py_ssize_t j, a, e
    cdef bint colon = False
    cdef uint8_t outside = 0
    for j in range(n):                 # printable ASCII only (32..126)
        outside |= <uint8_t>(<uint8_t>(t[j] - 32) > 94)
    if outside:
        return 1
    a = next_token(t, 0, n, &e)
    if e - a == 27 and t[a + 14] == 58:          # PositionID:MatchID
        if not all_base64(t + a + 15, 12):
            return 1
        colon = True
        mpos[0] = <int32_t>(a + 15)
    elif e - a != 14:
        return 1
    if decode_position_id(t + a, key) != 0 or unpack_key(key, board) != 0:
        return 1
    a = next_token(t, e, n, &e)
    if a < n and not colon and e - a == 12 and all_base64(t + a, 12):
        mpos[0] = <int32_t>a
        a = next_token(t, e, n, &e)
    if a < n:                                    # a roll: 31, 3-1 or 3,1
        if e - a == 3 and (t[a + 1] == 45 or t[a + 1] == 44):
            dice[0], dice[1] = t[a] - 48, t[a + 2] - 48
        elif e - a == 2:
            dice[0], dice[1] = t[a] - 48, t[a + 1] - 48
        else:
            return 1
        if not (1 <= dice[0] <= 6 and 1 <= dice[1] <= 6):
            return 1
        a = next_token(t, e, n, &e)
    return 1 if a < n else 0


cdef bint possible(const uint8_t* b, int64_t* pips, uint8_t* home) noexcept nogil:
    """:func:`bgfast._board.board_possible`; the pip counts and whether
    every checker is in the home board (on roll, opponent) into ``pips`` and
    ``home``."""
    cdef int out0, out1, p0, p1
    bgv_row_pips(b, &p0, &out0)
    bgv_row_pips(b + 25, &p1, &out1)
    pips[0], pips[1] = p1, p0
    home[0], home[1] = out1 == 0, out0 == 0
    return board_possible(b)


cdef struct Cols:
    int64_t* number
    int8_t* status
    uint8_t* boards
    int8_t* dice
    int8_t* classes
    int64_t* pips
    uint8_t* home
    int32_t* hrank
    int32_t* mpos
    int32_t* mtok
    uint8_t* mid          # the distinct Match IDs' characters, 12 each
    int32_t* slots        # hash table of the distinct Match IDs (-1: empty)
    uint64_t mask
    int shift
    int32_t ntok
    int64_t* offs
    uint8_t* text


cdef class _Scan:
    """The column arrays of a scan of at most n lines and ``total`` ASCII characters."""
    cdef dict arrays
    cdef Cols c

    def __cinit__(self, Py_ssize_t n, Py_ssize_t total):
        cdef int bits = 4
        while (<Py_ssize_t>1 << bits) < 2 * n:       # at most half full
            bits += 1
        a = self.arrays = {
            "number": np.empty(n, dtype=np.int64), "status": np.ones(n, dtype=np.int8),
            "boards": np.zeros((n, 2, 25), dtype=np.uint8), "dice": np.zeros((n, 2), dtype=np.int8),
            "classes": np.zeros(n, dtype=np.int8), "pips": np.zeros((n, 2), dtype=np.int64),
            "home": np.zeros((n, 2), dtype=np.uint8), "hrank": np.full((n, 2), -1, dtype=np.int32),
            "mpos": np.full(n, -1, dtype=np.int32),
            "mtok": np.full(n, -1, dtype=np.int32), "mid": np.zeros((n, 12), dtype=np.uint8),
            "slots": np.full(1 << bits, -1, dtype=np.int32),
            "offsets": np.zeros(n + 1, dtype=np.int64), "text": np.empty(max(total, 1), dtype=np.uint8)}
        self.c.number = <int64_t*>cnp.PyArray_DATA(a["number"])
        self.c.status = <int8_t*>cnp.PyArray_DATA(a["status"])
        self.c.boards = <uint8_t*>cnp.PyArray_DATA(a["boards"])
        self.c.dice = <int8_t*>cnp.PyArray_DATA(a["dice"])
        self.c.classes = <int8_t*>cnp.PyArray_DATA(a["classes"])
        self.c.pips = <int64_t*>cnp.PyArray_DATA(a["pips"])
        self.c.home = <uint8_t*>cnp.PyArray_DATA(a["home"])
        self.c.hrank = <int32_t*>cnp.PyArray_DATA(a["hrank"])
        self.c.mpos = <int32_t*>cnp.PyArray_DATA(a["mpos"])
        self.c.mtok = <int32_t*>cnp.PyArray_DATA(a["mtok"])
        self.c.mid = <uint8_t*>cnp.PyArray_DATA(a["mid"])
        self.c.slots = <int32_t*>cnp.PyArray_DATA(a["slots"])
        self.c.mask = (<uint64_t>1 << bits) - 1
        self.c.shift = 64 - bits
        self.c.ntok = 0
        self.c.offs = <int64_t*>cnp.PyArray_DATA(a["offsets"])
        self.c.text = <uint8_t*>cnp.PyArray_DATA(a["text"])

    cdef dict result(self, Py_ssize_t m, dict other):
        a = self.arrays
        out = {k: a[k][:m] for k in ("number", "status", "boards", "classes", "pips", "dice",
                                       "hrank", "mtok")}
        out["mid"] = a["mid"][:self.c.ntok]
        out["offsets"] = a["offsets"][:m + 1]
        out["text"] = a["text"][:self.c.offs[m]].tobytes()
        out["other"] = other
        return out


cdef int32_t _token(Cols* c, const uint8_t* t) noexcept nogil:
    """The index of the 12 characters at t among the distinct Match IDs seen
    (a new one is added): open addressing on a 64-bit mix of them."""
    cdef uint64_t lo, h
    cdef uint32_t hi
    cdef int32_t k
    memcpy(&lo, t, 8)
    memcpy(&hi, t + 8, 4)
    h = (lo ^ (<uint64_t>hi * <uint64_t>0x9E3779B97F4A7C15)) * <uint64_t>0xD6E8FEB86659FD93
    h >>= c.shift
    while True:
        k = c.slots[h]
        if k < 0:
            k = c.ntok
            c.ntok += 1
            memcpy(&c.mid[12 * k], t, 12)
            c.slots[h] = k
            return k
        if memcmp(&c.mid[12 * k], t, 12) == 0:
            return k
        h = (h + 1) & c.mask


cdef int _scan_line(Cols* c, Py_ssize_t m, const uint8_t* data, Py_ssize_t ln,
                    int64_t number) noexcept nogil:
    """Read one ASCII line into row m: 0 when the line is blank or a
    comment (no row), else 1."""
    cdef Py_ssize_t s = 0, e = ln
    cdef uint8_t key[10]
    while s < e and is_space(data[s]):
        s += 1
    while e > s and is_space(data[e - 1]):
        e -= 1
    if s == e or data[s] == 35:          # blank or a '#' comment
        return 0
    c.number[m] = number
    if e - s:
        bgv_copy_short(<char*>&c.text[c.offs[m]], <const char*>data + s, e - s)
    c.offs[m + 1] = c.offs[m] + (e - s)
    c.status[m] = parse_line(data + s, e - s, key, &c.boards[50 * m], &c.dice[2 * m],
                             &c.mpos[m])
    if c.mpos[m] >= 0:                        # the Match ID's 12 characters
        c.mtok[m] = _token(c, data + s + c.mpos[m])
    if c.status[m] == 0 and not possible(&c.boards[50 * m], &c.pips[2 * m], &c.home[2 * m]):
        c.status[m] = 1                       # the Python parser names the problem
    if c.status[m] == 0:
        c.classes[m] = <int8_t>board_class(&c.boards[50 * m])
        # the one-sided 6-point index of each side with every checker home
        # (on roll: board row 1), for its EPC
        if c.home[2 * m]:
            c.hrank[2 * m] = <int32_t>rank_counts(&c.boards[50 * m + 25], 6)
        if c.home[2 * m + 1]:
            c.hrank[2 * m + 1] = <int32_t>rank_counts(&c.boards[50 * m], 6)
    return 1


def scan(list lines, int64_t first):
    """Scan raw input lines numbered from ``first``.

    Returns a dict of ``number int64[m]`` (the lines kept: not blank, not a
    comment), ``status int8[m]`` (0: read here, 1: for the Python parser),
    ``boards uint8[m, 2, 25]`` with their ``classes int8[m]``
    (:class:`bgfast.position.PositionClass`), ``pips int64[m, 2]``,
    ``hrank int32[m, 2]`` (the one-sided 6-point index of each side with
    every checker home, on roll then opponent, else -1; rows read here),
    ``dice int8[m, 2]`` (0 = no roll), ``mtok int32[m]`` (which of the
    distinct Match IDs ``mid uint8[k, 12]``, in
    the order first seen, the line holds; -1 = none), ``text``
    (the stripped ASCII texts, concatenated) with ``offsets int64[m + 1]``,
    and ``other`` {row: stripped text} for lines that are not ASCII."""
    cdef Py_ssize_t n = len(lines), i, m = 0, total = 0
    for raw in lines:
        if type(raw) is str and PyUnicode_IS_ASCII(raw):
            total += PyUnicode_GET_LENGTH(raw)
    cdef _Scan sc = _Scan(n, total)
    other = {}
    for i in range(n):
        raw = lines[i]
        if type(raw) is str and PyUnicode_IS_ASCII(raw):
            m += _scan_line(&sc.c, m, <const uint8_t*>PyUnicode_DATA(raw),
                            PyUnicode_GET_LENGTH(raw), first + i)
        else:
            stripped = raw.strip()
            if not stripped or stripped.startswith("#"):
                continue
            sc.c.number[m] = first + i
            sc.c.offs[m + 1] = sc.c.offs[m]
            other[m] = stripped
            m += 1
    return sc.result(m, other)


def scan_packed(const uint8_t[::1] blob, const int64_t[::1] ends, int64_t first):
    """:func:`scan` of ASCII lines given joined: line i is ``blob[ends[i - 1]:ends[i]]``."""
    cdef Py_ssize_t n = ends.shape[0], i, m = 0, start = 0
    if n and (ends[n - 1] > blob.shape[0] or ends[0] < 0):
        raise ValueError("line ends outside the text")
    for i in range(1, n):
        if ends[i] < ends[i - 1]:
            raise ValueError("line ends out of order")
    cdef _Scan sc = _Scan(n, ends[n - 1] if n else 0)
    with nogil:
        for i in range(n):
            m += _scan_line(&sc.c, m, &blob[start] if ends[i] > start else NULL,
                            ends[i] - start, first + i)
            start = ends[i]
    return sc.result(m, {})


# ---------------------------------------------------------------------------
# writing rows
# ---------------------------------------------------------------------------

cdef inline char* put(char* p, const char* s) noexcept nogil:
    cdef size_t n = strlen(s)                     # a constant for a literal, once inlined
    memcpy(p, s, n)
    return p + n


cdef const char* PAIRS = (b"00010203040506070809101112131415161718192021222324252627282930313233343536"
                          b"37383940414243444546474849505152535455565758596061626364656667686970717273"
                          b"7475767778798081828384858687888990919293949596979899")


cdef inline char* put_bytes(char* p, const uint8_t* s, Py_ssize_t n) noexcept nogil:
    if n > 0:
        bgv_copy_short(p, <const char*>s, n)
    return p + n


cdef char* put_uint(char* p, uint64_t u) noexcept nogil:
    """The decimal digits of u: two at a time from the end (pip counts and
    line numbers are short: their lengths are tested first)."""
    cdef int n
    cdef uint64_t v
    if u < 100:
        if u < 10:
            p[0] = <char>(48 + u)
            return p + 1
        memcpy(p, PAIRS + 2 * u, 2)
        return p + 2
    if u < 1000:
        p[0] = <char>(48 + u // 100)
        memcpy(p + 1, PAIRS + 2 * (u % 100), 2)
        return p + 3
    n = 4
    v = u // 10000
    while v:
        n += 1
        v //= 10
    p += n
    while u >= 100:
        p -= 2
        memcpy(p, PAIRS + 2 * (u % 100), 2)
        u //= 100
    if u >= 10:
        p -= 2
        memcpy(p, PAIRS + 2 * u, 2)
    else:
        p -= 1
        p[0] = <char>(48 + u)
    return p + n


cdef inline char* put_int(char* p, int64_t v) noexcept nogil:
    if v < 0:
        p[0] = 45
        return put_uint(p + 1, <uint64_t>0 - <uint64_t>v)   # (no overflow at -2**63)
    return put_uint(p, <uint64_t>v)


cdef int64_t scaled_round(double x, int digits) noexcept nogil:
    """Python's ``round(x, digits)`` times ``10**digits`` (digits 3 or 6), as
    an integer: the correctly rounded decimal, ties to even."""
    cdef double v = x * (1e6 if digits == 6 else 1e3)
    cdef double frac
    cdef char buf[64]
    cdef int64_t k = 0
    cdef int j = 0
    cdef bint neg = False
    if fabs(v) < 1e12:
        k = <int64_t>v                            # floor(v), without a libm call:
        if <double>k > v:                         # exact below 2**53
            k -= 1
        frac = v - <double>k
        if fabs(frac - 0.5) > 1e-6:
            # far from a tie: the error of x * 10**digits cannot change the result
            return k + (1 if frac > 0.5 else 0)
        k = 0
    # near a tie: the C library rounds the exact binary value (ties to even)
    snprintf(buf, 64, "%.*f", digits, x)
    if buf[0] == 45:
        neg = True
        j = 1
    while buf[j]:
        if buf[j] != 46:
            k = 10 * k + (buf[j] - 48)
        j += 1
    return -k if neg else k


cdef char* put_float(char* p, double x, int digits) noexcept nogil:
    """``repr(round(x, digits))`` (``x`` finite)."""
    cdef int64_t k = scaled_round(x, digits)
    cdef uint64_t u, scale = 1000000 if digits == 6 else 1000, frac
    cdef char tmp[8]
    cdef int j, last
    if k < 0 or (k == 0 and signbit(x)):
        p[0] = 45
        p += 1
    u = <uint64_t>(-k if k < 0 else k)
    if u == 0:
        return put(p, "0.0")
    if digits == 6 and u < 100:
        # below 1e-4 repr switches to exponent notation
        if u < 10:
            p[0] = <char>(48 + u)
            return put(p + 1, "e-06")
        p[0] = <char>(48 + u // 10)
        p += 1
        if u % 10:
            p[0] = 46
            p[1] = <char>(48 + u % 10)
            p += 2
        return put(p, "e-05")
    if u < 10 * scale:                            # one integer digit (probabilities)
        p[0] = <char>(48 + u // scale)
        p += 1
    else:
        p = put_uint(p, u // scale)
    p[0] = 46
    p += 1
    frac = u % scale
    if frac == 0:
        p[0] = 48
        return p + 1
    if digits == 6:
        memcpy(tmp, PAIRS + 2 * (frac // 10000), 2)
        memcpy(tmp + 2, PAIRS + 2 * (frac // 100 % 100), 2)
        memcpy(tmp + 4, PAIRS + 2 * (frac % 100), 2)
    else:
        tmp[0] = <char>(48 + frac // 100)
        memcpy(tmp + 1, PAIRS + 2 * (frac % 100), 2)
    last = bgv_last_nonzero_digit(tmp, digits)    # frac > 0: a non-zero digit remains
    memcpy(p, tmp, 8)                             # one store; the row buffer has room after
    return p + last + 1


def int_text(int64_t v):
    """``str(v)`` as the row writer prints it."""
    cdef char buf[32]
    cdef char* end = put_int(buf, v)
    return buf[:end - buf].decode("ascii")


cdef inline object _float_text(double x, int digits):
    """``repr(round(x, digits))``: by the row writer where it is exact
    (finite, and small enough for its integer arithmetic), else by Python."""
    cdef char buf[64]
    cdef char* end
    if isfinite(x) and fabs(x) < (1e6 if digits == 6 else 1e9):
        end = put_float(buf, x, digits)
        return PyUnicode_FromStringAndSize(buf, end - buf)
    return repr(round(x, digits))


def float_texts(const double[::1] x, int digits=6):
    """:func:`float_text` of each value, as a list of str."""
    cdef Py_ssize_t i
    if digits != 3 and digits != 6:
        raise ValueError("digits must be 3 or 6")
    return [_float_text(x[i], digits) for i in range(x.shape[0])]


def float_text(double x, int digits=6):
    """``repr(round(x, digits))`` as the row writer prints it (digits 3 or 6)."""
    if digits != 3 and digits != 6:
        raise ValueError("digits must be 3 or 6")
    return _float_text(x, digits)


cdef inline char* put_opt_float(char* p, double x, int digits, bint csv) noexcept nogil:
    if x != x:                                    # NaN: None
        return p if csv else put(p, "null")
    return put_float(p, x, digits)


cdef char* put_text(char* p, const uint8_t* s, Py_ssize_t n, bint csv) noexcept nogil:
    """A printable-ASCII string as a JSON string or a CSV field."""
    cdef Py_ssize_t j
    cdef bint quote = False
    if csv:
        for j in range(n):
            if s[j] == 44 or s[j] == 34:
                quote = True
                break
        if not quote:
            return put_bytes(p, s, n)
    p[0] = 34
    p += 1
    for j in range(n):
        if s[j] == 34:
            p[0] = 34 if csv else 92
            p += 1
        elif s[j] == 92 and not csv:
            p[0] = 92
            p += 1
        p[0] = s[j]
        p += 1
    p[0] = 34
    return p + 1


cdef inline char* put_quoted(char* p, const uint8_t* s, Py_ssize_t n) noexcept nogil:
    """A JSON string of characters that need no escaping."""
    p[0] = 34
    bgv_copy_short(p + 1, <const char*>s, n)
    p[n + 1] = 34
    return p + n + 2


cdef inline char* put_entry(char* p, const uint8_t[::1] tab, const int64_t[::1] toff,
                            int k) noexcept nogil:
    return put_bytes(p, &tab[toff[k]], toff[k + 1] - toff[k])


cdef struct Col:
    int type
    int kinds                 # bit k: present in rows of kind k
    const char* key           # what comes before the value: ',' or ',"name":'
    Py_ssize_t keylen
    const char* data
    const int64_t* offs       # C_TEXT, C_INPUT, C_PID: the per-row offsets into data


def format_rows(bint csv, const int8_t[::1] kind, list columns, bytes end,
                const uint8_t[::1] text, const int64_t[::1] offsets,
                const uint8_t[::1] table, const int64_t[::1] table_offsets,
                const uint8_t[::1] extra, const int64_t[::1] extra_offsets, into=None):
    """The text of rows ``0..m-1``: bytes, or written into the writable
    buffer ``into`` when it is large enough, then a memoryview of it.

    ``columns``: the schema, in output order, each ``(type, kinds, key,
    data, offsets)``: a :data:`COLUMN_TYPES` code, the bit mask of the row
    kinds it is given in, the bytes written before its value (CSV: a comma,
    none for the first; JSON: ``,"name":``, ``{"name":`` for the first),
    its values (an array of a row each, as the type says) and, for the
    per-row texts, their ``int64[m + 1]`` offsets (else None).  A column
    without a value in a row (not of its kinds, or no value) is an empty
    CSV field and no JSON member; a None value is an empty CSV field and a
    JSON null.  ``end`` closes each row.  ``kind``: CUBE, CHECKER, OVER, or
    VERBATIM (``extra`` holds the whole row, formatted apart).  The input
    text of row ``i`` is ``text[offsets[i]:offsets[i + 1]]``: base64,
    spaces, ``:``, ``-``, ``,`` and digits, nothing a JSON string escapes."""
    cdef Py_ssize_t m = kind.shape[0], i, j, n, cap, widest = 0, per_row = 0, texts = 0
    cdef int ncol = len(columns)
    cdef int t
    cdef int64_t k
    cdef double x
    cdef Col* cols
    cdef Col* c
    keep = []                                         # the columns' buffers, alive
    buf = np.empty(max(1, ncol) * sizeof(Col), dtype=np.uint8)
    cols = <Col*>cnp.PyArray_DATA(buf)
    for i in range(table_offsets.shape[0] - 1):
        widest = max(widest, table_offsets[i + 1] - table_offsets[i])
    for j, (ctype, kinds, ckey, data, offs) in enumerate(columns):
        c = &cols[j]
        c.type, c.kinds = ctype, kinds
        ckey = bytes(ckey)
        keep.append(ckey)
        c.key, c.keylen = <const char*>ckey, len(ckey)
        want = {C_INT: np.int64, C_FLOAT6: np.float64, C_FLOAT3: np.float64,
                C_FLOAT6_OMIT: np.float64, C_ENTRY: np.int32, C_TEXT: np.uint8,
                C_INPUT: np.uint8, C_PID: np.uint8, C_DICE: np.int8}[ctype]
        arr = np.ascontiguousarray(data, dtype=want)
        rows = (m + 1) if ctype in (C_TEXT, C_INPUT, C_PID) else m
        if ctype in (C_TEXT, C_INPUT, C_PID):
            o = np.ascontiguousarray(offs, dtype=np.int64)
            if o.shape[0] != m + 1 or (m and (o[0] < 0 or o[m] > arr.shape[0]
                                              or (np.diff(o) < 0).any())):
                raise ValueError(f"column {j}: its offsets do not fit its text")
            keep.append(o)
            c.offs = <const int64_t*>cnp.PyArray_DATA(o)
            texts += arr.shape[0]
            if arr.shape[0] == 0:
                arr = np.zeros(1, dtype=np.uint8)
        else:
            c.offs = NULL
            if arr.shape[0] != m or (ctype == C_DICE and (arr.ndim != 2 or arr.shape[1] != 2)):
                raise ValueError(f"column {j} must have a row per row")
        keep.append(arr)
        c.data = <const char*>cnp.PyArray_DATA(arr)
        per_row += c.keylen + (5 * widest if ctype == C_ENTRY else 40)
    cap = 2 * text.shape[0] + extra.shape[0] + texts + m * (per_row + len(end)) + 64
    if into is not None and len(into) >= cap:
        out = into
    else:
        out = getattr(_scratch, "buf", None)
        if out is None or out.shape[0] < cap:      # kept: no fresh pages for every chunk
            out = _scratch.buf = np.empty(cap + cap // 4, dtype=np.uint8)
    cdef uint8_t[::1] o_ = out
    cdef char* start = <char*>&o_[0]
    cdef char* p = start
    cdef const uint8_t* tx
    cdef Py_ssize_t tn
    cdef const char* e = end
    cdef Py_ssize_t elen = len(end)
    with nogil:
        for i in range(m):
            if kind[i] == K_VERBATIM:
                p = put_bytes(p, &extra[extra_offsets[i]], extra_offsets[i + 1] - extra_offsets[i])
                continue
            tx = &text[offsets[i]]
            tn = offsets[i + 1] - offsets[i]
            for j in range(ncol):
                c = &cols[j]
                t = c.type
                if not (c.kinds >> kind[i]) & 1:
                    if csv:
                        p = put_bytes(p, <const uint8_t*>c.key, c.keylen)
                    continue
                # the values that may be missing: no JSON member
                if t == C_FLOAT6_OMIT:
                    x = (<const double*>c.data)[i]
                    if x != x:
                        if csv:
                            p = put_bytes(p, <const uint8_t*>c.key, c.keylen)
                        continue
                elif t == C_ENTRY:
                    k = (<const int32_t*>c.data)[i]
                    if k < 0:
                        if csv:
                            p = put_bytes(p, <const uint8_t*>c.key, c.keylen)
                        continue
                elif t == C_TEXT:
                    n = c.offs[i + 1] - c.offs[i]
                    if n == 0:
                        if csv:
                            p = put_bytes(p, <const uint8_t*>c.key, c.keylen)
                        continue
                p = put_bytes(p, <const uint8_t*>c.key, c.keylen)
                if t == C_INT:
                    p = put_int(p, (<const int64_t*>c.data)[i])
                elif t == C_FLOAT6 or t == C_FLOAT3:
                    p = put_opt_float(p, (<const double*>c.data)[i], 6 if t == C_FLOAT6 else 3,
                                      csv)
                elif t == C_FLOAT6_OMIT:
                    p = put_float(p, x, 6)
                elif t == C_ENTRY:
                    p = put_entry(p, table, table_offsets, <int>k)
                elif t == C_TEXT:
                    p = put_bytes(p, <const uint8_t*>&c.data[c.offs[i]], n)
                elif t == C_INPUT or t == C_PID:
                    n = c.offs[i + 1] - c.offs[i]
                    if n:
                        p = put_bytes(p, <const uint8_t*>&c.data[c.offs[i]], n)
                    elif t == C_INPUT:
                        p = put_text(p, tx, tn, True) if csv else put_quoted(p, tx, tn)
                    elif csv:
                        memcpy(p, tx, 14)
                        p += 14
                    else:
                        p = put_quoted(p, tx, 14)
                elif t == C_DICE:
                    if not csv:
                        p[0] = 34
                        p += 1
                    if (<const int8_t*>c.data)[2 * i]:
                        p[0] = <char>(48 + (<const int8_t*>c.data)[2 * i])
                        p[1] = <char>(48 + (<const int8_t*>c.data)[2 * i + 1])
                        p += 2
                    if not csv:
                        p[0] = 34
                        p += 1
            memcpy(p, e, elen)
            p += elen
    if out is into:
        return memoryview(into)[:p - start]
    return bytes(out[:p - start])
