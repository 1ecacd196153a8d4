"""Suppressing microdata against classification-based inference (Hintoglu 2011), pure algorithms.

Arrays in, decisions out: no SQL here. `naive_bayes` and `id3` are the thesis's two
adversaries, `deletion` its single-cell algorithms (Chapter 3), `enhanced` e-DECP/e-DROPP,
`protect` the multi-cell driver, `metrics` Section 2.4; Chapter 4: `taxonomy` (value
hierarchies), `partial_counts` (Section 4.1.1) and `generalization` (the -g methods).
"""
