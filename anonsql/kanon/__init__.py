"""Kameya & Hayashi (2016): k-anonymity by bottom-up cell suppression (Algorithms 1-3, costs eqs. 1-12).

`anonymize` runs the loop on a count table (arrays, no SQL); `job.run` is the whole database
job (stats → algorithm → rewrite → verify) behind `anonsql.k_anonymize`. `diversity` holds the
attribute-disclosure models (l-diversity, entropy l, recursive (c,l), t-closeness) the same loop
enforces beside k (issue 32); `restore` the optional pass after the loop (`--restore`) that gives
blanked cells back while every class keeps k and those models.
"""

from .algorithm import anonymize
from .model import COSTS, NEEDS_POSITIVE_ALPHA, KanonResult, kl_divergence

__all__ = ["COSTS", "NEEDS_POSITIVE_ALPHA", "KanonResult", "anonymize", "kl_divergence"]
