import numpy as np
import numpy.typing as npt

def money_cubeful(
    p: npt.NDArray[np.float64], owner: int, x: npt.NDArray[np.float64], jacoby: bool
) -> npt.NDArray[np.float64]: ...
def match_rows(
    p: npt.NDArray[np.float64],
    a: npt.NDArray[np.int64],
    b: npt.NDArray[np.int64],
    state: npt.NDArray[np.int64],
    cube: npt.NDArray[np.int64],
    owner: npt.NDArray[np.int64],
    x_nd: npt.NDArray[np.float64],
    x_dt: npt.NDArray[np.float64],
    pre: npt.NDArray[np.float64],
    post: npt.NDArray[np.float64],
) -> dict[str, npt.NDArray[np.float64] | npt.NDArray[np.bool_]]: ...
DECISION_COLUMNS: tuple[str, ...]

def decide_rows(
    p: npt.NDArray[np.float64],
    ctx: npt.NDArray[np.int32],
    params: npt.NDArray[np.int64],
    x: npt.NDArray[np.float64],
    exact: npt.NDArray[np.float64],
    pre: npt.NDArray[np.float64],
    post: npt.NDArray[np.float64],
    eps: float,
    codes: npt.NDArray[np.int8],
    values: npt.NDArray[np.float64] | None = None,
) -> dict[str, npt.NDArray[np.float64] | npt.NDArray[np.int8] | npt.NDArray[np.bool_]]: ...
def checked_rows(
    p: npt.NDArray[np.float64], tol: float
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.int8]]: ...

CONTEXT_COLUMNS: tuple[str, ...]
CONTEXT_LAYOUT: dict[str, int]
STATE_CODES: dict[str, int]
OWNER_CODES: dict[str, int]
CUBEFUL_COLUMNS: tuple[str, ...]

def efficiencies(
    classes: npt.NDArray[np.int8], pips: npt.NDArray[np.float64], eff: npt.NDArray[np.float64]
) -> npt.NDArray[np.float64]: ...
def board_efficiencies(
    boards: npt.NDArray[np.uint8], eff: npt.NDArray[np.float64]
) -> npt.NDArray[np.float64]: ...
def cubeful_rows(
    p: npt.NDArray[np.float64],
    ctx: npt.NDArray[np.int32],
    params: npt.NDArray[np.int64],
    boards: npt.NDArray[np.uint8],
    eff: npt.NDArray[np.float64],
    exact: npt.NDArray[np.float64] | None,
    pre: npt.NDArray[np.float64],
    post: npt.NDArray[np.float64],
    eps: float,
    tol: float,
    codes: npt.NDArray[np.int8],
    movers: npt.NDArray[np.int64] | None = None,
    every_double: bool = False,
    index: npt.NDArray[np.int64] | None = None,
) -> tuple[
    npt.NDArray[np.float64], npt.NDArray[np.int8], npt.NDArray[np.bool_], npt.NDArray[np.int8],
    npt.NDArray[np.int8],
]: ...
def node_values(
    nd: npt.NDArray[np.float64],
    dt: npt.NDArray[np.float64],
    dp: npt.NDArray[np.float64],
    can: npt.NDArray[np.uint8],
    beavers: npt.NDArray[np.uint8],
    eps: float,
    codes: npt.NDArray[np.int8],
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.int8], npt.NDArray[np.bool_]]: ...
def context_values(
    params: npt.NDArray[np.int64], pre: npt.NDArray[np.float64], post: npt.NDArray[np.float64]
) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.float64], npt.NDArray[np.float64]]: ...
def normalised(
    mwc: npt.NDArray[np.float64], lose: npt.NDArray[np.float64], win: npt.NDArray[np.float64]
) -> npt.NDArray[np.float64]: ...
