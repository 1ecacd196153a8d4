"""Kameya & Hayashi (2016) bottom-up cell suppression: k-anonymity by merging tuples.

`anonymize` runs Algorithms 1-3 on a count table (arrays, no SQL) with the costs of
eqs. 1, 2, 9-11 and 12; `kl_divergence` is eq. 7 for the report.
"""

from .api import anonymize
from .model import COSTS, KanonResult, kl_divergence

__all__ = ["COSTS", "KanonResult", "anonymize", "kl_divergence"]
