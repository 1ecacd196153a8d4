"""Feature selection under k-anonymity by containment (Zhang et al. 2017): binarize, select, ac."""

from .containment import (
                          BinaryCounts,
                          ac_dataset,
                          cm_penalty,
                          containment_supports,
                          distcnt,
                          distcnt_from_groups,
                          equal_groups,
                          feature_hamdist,
                          hamdist,
                          hamdist_from_sums,
                          kanon_dataset,
)
from .greedy import MODES, PRIVACY, Selection, greedy_distcnt, greedy_hamdist
from .maximal import MINERS, frequent_itemsets, maximal_itemsets, maximal_select

#: The selection methods (CLI --method): Greedy HamDist (Alg. 2), Greedy DistCnt (Alg. 3),
#: the best of the maximal k-AC sets (Alg. 1), the CM-greedy baseline (Def. 2).
METHODS = ("hamdist", "distcnt", "maximal", "cm")

__all__ = [
    "BinaryCounts", "METHODS", "MINERS", "MODES", "PRIVACY", "Selection", "ac_dataset", "cm_penalty",
    "containment_supports", "distcnt", "distcnt_from_groups", "equal_groups", "feature_hamdist",
    "frequent_itemsets", "greedy_distcnt", "greedy_hamdist", "hamdist", "hamdist_from_sums",
    "kanon_dataset", "maximal_itemsets", "maximal_select",
]
