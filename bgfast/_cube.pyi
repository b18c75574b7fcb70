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
def choose_actions(
    nd: npt.NDArray[np.float64],
    dt: npt.NDArray[np.float64],
    dp: npt.NDArray[np.float64],
    can_double: npt.NDArray[np.bool_],
    beaver: npt.NDArray[np.bool_],
    eps: float,
    codes: npt.NDArray[np.int8],
) -> npt.NDArray[np.int8]: ...
