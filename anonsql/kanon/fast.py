"""Python side of the compiled loop: lay the prepared table out flat and call `_core.run`.

`kernel` is the one door to the C code: keyword arguments, and every buffer checked for its
dtype, shape, C-contiguity and (for outputs) writability before the call, so a wrong input
raises a clear TypeError/ValueError instead of reading the wrong bytes or past an array's end.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from . import _core
from .diversity import Layout, layout
from .model import COST_IDS, PreparedTable

LoopProgress = Callable[[int, int], None]


def _flat(per_attribute: list[np.ndarray], dtype: type) -> np.ndarray:
    """Concatenate per-attribute (|V_j|, |C|) arrays: value v of j sits at row voff[j] + v."""
    return np.ascontiguousarray(np.concatenate([a.reshape(-1) for a in per_attribute]), dtype=dtype)


def trie_order(prepared: PreparedTable) -> np.ndarray:
    """Attribute of each trie level. Only speed depends on it, never the result.

    Γ_ham ties are frequent: the search checks every one-cell-away tuple, which is cheapest with
    few-valued attributes at the top (Adult k=10: 0.25 s instead of 0.44 s; 10^5 rows: 1.1 s
    instead of 2.3 s). The real-valued costs prune best with many-valued attributes first
    (mar on 10^5 rows: 1.0 s instead of 1.4 s).
    """
    sizes = prepared.domain_sizes
    return np.argsort(sizes if prepared.cost == "ham" else -sizes, kind="stable").astype(np.int64)


def run(prepared: PreparedTable, draws: np.ndarray,
        progress: LoopProgress | None = None) -> tuple[np.ndarray, np.ndarray, int, int, int]:
    """Same contract as `reference.run`; `progress(iteration, n_violating)` every 1024 steps."""
    n_tuples, n_attrs = prepared.codes.shape
    width = prepared.log_table.shape[1]
    final = np.empty((n_tuples, n_attrs), dtype=np.int32)
    gammas = np.empty(len(draws), dtype=np.float64)
    models = layout(prepared.models, prepared.sensitive, prepared.sensitive_tables, prepared.count_logs) \
        if prepared.models and prepared.count_logs is not None else None
    iterations, solo, cross, groups, _evaluations = kernel(
        codes=np.ascontiguousarray(prepared.codes, dtype=np.int32),
        classes=np.ascontiguousarray(prepared.classes, dtype=np.int64),
        counts=np.ascontiguousarray(prepared.counts, dtype=np.int64),
        voff=np.concatenate([[0], np.cumsum(prepared.domain_sizes)]).astype(np.int64),
        attr_counts=_flat(prepared.attr_counts, np.int64),  # becomes N(x_j, c) of D^(l) in place
        phat=_flat(prepared.phat, np.float64),
        log_phat=_flat(prepared.log_phat, np.float64),
        class_prior=np.ascontiguousarray(prepared.class_prior, dtype=np.float64),
        log_table=np.ascontiguousarray(prepared.log_table, dtype=np.float64),
        a_base=prepared.a_row * width + prepared.a_shift,
        v_base=(prepared.v_rows * width + prepared.v_shift).astype(np.int64),
        order=trie_order(prepared),
        draws=np.ascontiguousarray(draws, dtype=np.float64),
        k=prepared.k, cost=prepared.cost, alpha=prepared.alpha,
        final=final, gammas=gammas, progress=progress, models=models,
    )
    return final, gammas[:iterations], solo, cross, groups


def _checked(name: str, array: object, dtype: type, shape: tuple[int, ...], *, writable: bool = False) -> np.ndarray:
    """`array` exactly as the kernel reads it (no copy, no cast), or a clear error naming it."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"kanon kernel: {name} must be a numpy array, got {type(array).__name__}")
    if array.dtype != np.dtype(dtype):
        raise TypeError(f"kanon kernel: {name} must have dtype {np.dtype(dtype)}, got {array.dtype}")
    if array.shape != shape:
        raise ValueError(f"kanon kernel: {name} must have shape {shape}, got {array.shape}")
    if not array.flags.c_contiguous:
        raise ValueError(f"kanon kernel: {name} must be C-contiguous")
    if writable and not array.flags.writeable:
        raise ValueError(f"kanon kernel: {name} is an output and must be writable")
    return array


def kernel(*, codes: np.ndarray, classes: np.ndarray, counts: np.ndarray, voff: np.ndarray,
           attr_counts: np.ndarray, phat: np.ndarray, log_phat: np.ndarray, class_prior: np.ndarray,
           log_table: np.ndarray, a_base: int, v_base: np.ndarray, order: np.ndarray, draws: np.ndarray,
           k: int, cost: str, alpha: float, final: np.ndarray, gammas: np.ndarray,
           progress: LoopProgress | None = None, models: Layout | None = None) -> tuple[int, int, int, int, int]:
    """Check every buffer, then run `_core.run`; returns (iterations, solo, cross, groups,
    evaluations), the last the number of exact Γ evaluations the search could not prune.

    Shapes follow from `codes` (T, M), `class_prior` (|C|,), `voff` (M+1,) and `draws` (D,):
    per-value arrays hold voff[M] x |C| entries, `final` is (T, M), `gammas` (D,). The log
    table must cover every index the loop reads (a_base + N, v_base[j] + N). `models`
    (anonsql.kanon.diversity.layout) adds the attribute-disclosure models: histograms (T, VT),
    per-model arrays (NM,), shares (VT,) and count logarithms (N + 1,).
    """
    if not isinstance(codes, np.ndarray) or codes.ndim != 2:
        raise ValueError("kanon kernel: codes must be a 2-d numpy array (T tuples x M attributes)")
    n_tuples, n_attrs = codes.shape
    if not isinstance(class_prior, np.ndarray) or class_prior.ndim != 1:
        raise ValueError("kanon kernel: class_prior must be a 1-d numpy array (one entry per class)")
    n_classes = len(class_prior)
    _checked("codes", codes, np.int32, (n_tuples, n_attrs))
    _checked("classes", classes, np.int64, (n_tuples,))
    _checked("counts", counts, np.int64, (n_tuples,))
    _checked("voff", voff, np.int64, (n_attrs + 1,))
    if voff[0] != 0 or (np.diff(voff) < 0).any():
        raise ValueError("kanon kernel: voff must start at 0 and never decrease")
    if ((codes < -1) | (codes >= np.diff(voff)[None, :])).any():
        raise ValueError("kanon kernel: codes of attribute j must be -1 (⊥) or 0..voff[j+1]-voff[j]-1")
    values = int(voff[-1]) * n_classes
    _checked("attr_counts", attr_counts, np.int64, (values,), writable=True)
    _checked("phat", phat, np.float64, (values,))
    _checked("log_phat", log_phat, np.float64, (values,))
    _checked("class_prior", class_prior, np.float64, (n_classes,))
    if not isinstance(log_table, np.ndarray) or log_table.ndim != 2:
        raise ValueError("kanon kernel: log_table must be a 2-d numpy array")
    _checked("log_table", log_table, np.float64, log_table.shape)
    _checked("v_base", v_base, np.int64, (n_attrs,))
    _checked("order", order, np.int64, (n_attrs,))
    if sorted(order.tolist()) != list(range(n_attrs)):
        raise ValueError("kanon kernel: order must be a permutation of the attributes 0..M-1")
    if not isinstance(draws, np.ndarray) or draws.ndim != 1:
        raise ValueError("kanon kernel: draws must be a 1-d numpy array")
    _checked("draws", draws, np.float64, draws.shape)
    _checked("final", final, np.int32, (n_tuples, n_attrs), writable=True)
    _checked("gammas", gammas, np.float64, draws.shape, writable=True)
    if ((classes < 0) | (classes >= n_classes)).any():
        raise ValueError(f"kanon kernel: class codes must be 0..{n_classes - 1}")
    n_rows = int(counts.sum())  # the largest count any logarithm is read for
    if int(a_base) < 0 or (v_base < 0).any() or max(int(a_base), int(v_base.max(initial=0))) + n_rows >= log_table.size:
        raise ValueError("kanon kernel: a_base / v_base index past the end of log_table")
    if cost not in COST_IDS:
        raise ValueError(f"kanon kernel: unknown cost {cost!r}")
    lay = models or Layout(np.zeros((n_tuples, 0), np.int64), *(np.zeros(0, t) for t in (np.int64,) * 3),
                           *(np.zeros(0, np.float64) for _ in range(4)))
    n_models, slots = len(lay.kind), lay.hists.shape[1] if lay.hists.ndim == 2 else -1
    _checked("models.hists", lay.hists, np.int64, (n_tuples, slots), writable=True)
    for name in ("kind", "offset", "width"):
        _checked(f"models.{name}", getattr(lay, name), np.int64, (n_models,))
    _checked("models.threshold", lay.threshold, np.float64, (n_models,))
    _checked("models.span", lay.span, np.float64, (n_models,))
    _checked("models.share", lay.share, np.float64, (slots,))
    if n_models and ((lay.offset < 0) | (lay.width < 1) | (lay.offset + lay.width > slots)).any():
        raise ValueError("kanon kernel: a model's slots lie outside the histograms")
    if n_models and len(lay.logs) <= n_rows:
        raise ValueError("kanon kernel: models.logs must hold ln i for every count i = 0..N")
    _checked("models.logs", lay.logs, np.float64, lay.logs.shape)
    return _core.run(codes, classes, counts, voff, attr_counts, phat, log_phat, class_prior, log_table,
                     int(a_base), v_base, order, draws, n_tuples, n_attrs, n_classes, int(k),
                     COST_IDS[cost], float(alpha), final, gammas, progress, n_models, slots if n_models else 0,
                     lay.hists, lay.kind, lay.offset, lay.width, lay.threshold, lay.span, lay.share, lay.logs)
