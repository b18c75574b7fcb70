import numpy as np
import numpy.typing as npt

def legal_plays_batch(
    boards: npt.NDArray[np.uint8], dice: npt.NDArray[np.int64], with_moves: bool = ...
) -> tuple[
    npt.NDArray[np.int64] | None,
    npt.NDArray[np.uint8] | None,
    npt.NDArray[np.int8] | None,
    tuple[int, int] | None,
]: ...
def count_plays_batch(
    boards: npt.NDArray[np.uint8], dice: npt.NDArray[np.int64]
) -> npt.NDArray[np.int64]: ...
def legal_plays_one(
    board: object, d1: int, d2: int, with_moves: bool = ..., validate: bool = ...
) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.int8] | None] | None: ...
