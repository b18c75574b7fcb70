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
