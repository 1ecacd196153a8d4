"""anonsql.ordering: one packed sort gives np.lexsort's order, and falls back to it when too wide."""

import numpy as np
import pytest

from anonsql.ordering import lexicographic_order


def _reference(keys):
    return np.lexsort(tuple(reversed(keys)))


@pytest.mark.parametrize("sizes", [[3, 1, 5], [1], [40, 7, 2, 9, 300, 12, 2, 41, 2]])
def test_packed_order_is_lexsort_order_with_null_and_unknown_codes_and_ties(sizes):
    rng = np.random.default_rng(len(sizes))
    n = 2_000
    keys = [rng.integers(-2, s, n).astype(np.int32) for s in sizes]  # -1: ⊥, -2: unknown value
    keys[0][:10] = keys[0][10:20]  # and whole duplicate rows: a stable order keeps them by position
    for key in keys[1:]:
        key[:10] = key[10:20]
    order = lexicographic_order(keys, sizes)
    assert (order == _reference(keys)).all()
    rows = np.column_stack(keys)[order]
    assert all(tuple(a) <= tuple(b) for a, b in zip(rows[:-1], rows[1:]))


def test_keys_too_wide_to_pack_fall_back_to_lexsort():
    rng = np.random.default_rng(7)
    sizes = [2**31 - 1] * 3  # 93 bits packed
    keys = [rng.integers(-2, 2**31 - 1, 500, dtype=np.int64) for _ in sizes]
    keys[0][:250] = 5  # ties on the primary key, decided by the next
    assert (lexicographic_order(keys, sizes) == _reference(keys)).all()
