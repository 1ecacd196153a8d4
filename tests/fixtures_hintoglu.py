"""Table 1.2 of Hintoglu (2011) with Bob's true diagnosis (Table 1.1) and the helpers to code it."""

from __future__ import annotations

import numpy as np
import pandas as pd

from anonsql.protect.id3 import distinct
from anonsql.protect.rows import FetchedRows
from anonsql.stats import encode

AP, DYS, GAS = "Angina Pectoris", "Dyspepsia", "Gastritis"

TABLE_1_2 = {
    "id": list(range(1, 10)),
    "zipcode": ["90302", "90410", "90301", "90310", "90301", "90410", "90305", "90402", "90301"],
    "gender": ["Female", "Male", "Male", "Female", "Male", "Male", "Female", "Male", "Male"],
    "age": [29, 22, 27, 43, 52, 47, 30, 36, 52],
    "indigestion": ["Y", "N", "Y", "Y", "N", "Y", "N", "N", "Y"],
    "chest_pain": ["N", "Y", "N", "N", "Y", "Y", "N", "Y", "Y"],
    "palpitation": ["Y", "Y", "N", "N", "Y", "Y", "Y", "Y", "Y"],
    "diagnosis": [DYS, AP, DYS, GAS, GAS, AP, AP, AP, GAS],
}
SYMPTOMS = ["indigestion", "chest_pain", "palpitation"]
BOB = 1  # tuple d_2, row index 1


def coded(columns: list[str], data: dict | None = None) -> tuple[np.ndarray, list[np.ndarray]]:
    """The columns as the job codes them: sorted value dictionaries, -1 for NULL."""
    frame = pd.DataFrame(data or TABLE_1_2)
    pairs = [encode(frame[c]) for c in columns]
    return np.column_stack([c for c, _ in pairs]), [v for _, v in pairs]


def decoded(X: np.ndarray, values: list[np.ndarray]) -> list[tuple]:
    """Rows of X back as values, '?' for ν (the thesis's notation)."""
    return [tuple("?" if c < 0 else values[j][c] for j, c in enumerate(row)) for row in X]


def fetched(X: np.ndarray, keys: list, confidential: list[int]) -> tuple[FetchedRows, list[dict]]:
    """X as the protect job reads it: rows named by `keys` (sorted, so the row order is X's),
    the `confidential` rows read upfront, the others fetched when an algorithm selects them
    (WHERE on the ORIGINAL codes; each WHERE logged), counts from the distinct tuples."""
    source, asked = X.copy(), []

    def fetch(where):
        asked.append(dict(where))
        hit = np.flatnonzero(np.all([source[:, c] == v for c, v in where.items()], axis=0))
        return [keys[i] for i in hit], source[hit]

    tuples = distinct(source, [int(source.max()) + 1] * X.shape[1])
    return FetchedRows(len(X), fetch, lambda: tuples, {keys[i]: source[i] for i in confidential}), asked
