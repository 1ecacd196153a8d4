"""Type stub of the compiled loop (_core.c); call it only through kanon.fast.kernel, which checks the buffers."""

from collections.abc import Callable

import numpy as np

def run(
    codes: np.ndarray, classes: np.ndarray, counts: np.ndarray, voff: np.ndarray, attr_counts: np.ndarray,
    phat: np.ndarray, log_phat: np.ndarray, class_prior: np.ndarray, log_table: np.ndarray, a_base: int,
    v_base: np.ndarray, order: np.ndarray, draws: np.ndarray, n_tuples: int, n_attrs: int, n_classes: int,
    k: int, cost_id: int, alpha: float, final: np.ndarray, gammas: np.ndarray,
    progress: Callable[[int, int], None] | None, n_models: int, slots: int, hists: np.ndarray, kind: np.ndarray,
    offset: np.ndarray, width: np.ndarray, threshold: np.ndarray, span: np.ndarray, share: np.ndarray,
    logs: np.ndarray, /,
) -> tuple[int, int, int, int, int]: ...
