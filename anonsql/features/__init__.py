"""Feature selection under k-anonymity by containment (Zhang et al. 2017): pure algorithms."""

from .containment import (BinaryCounts, ac_dataset, cm_penalty, containment_supports, distcnt,
                          distcnt_from_groups, equal_groups, feature_hamdist, hamdist, hamdist_from_sums,
                          kanon_dataset)
from .greedy import MODES, PRIVACY, Selection, greedy_distcnt, greedy_hamdist
from .maximal import MINERS, frequent_itemsets, maximal_itemsets, maximal_select

METHODS = ("hamdist", "distcnt", "maximal", "cm")

__all__ = [
    "BinaryCounts", "METHODS", "MINERS", "MODES", "PRIVACY", "Selection", "ac_dataset", "cm_penalty",
    "containment_supports", "distcnt", "distcnt_from_groups", "equal_groups", "feature_hamdist",
    "frequent_itemsets", "greedy_distcnt", "greedy_hamdist", "hamdist", "hamdist_from_sums",
    "kanon_dataset", "maximal_itemsets", "maximal_select",
]
