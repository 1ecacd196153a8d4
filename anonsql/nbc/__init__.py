"""Mozafari & Zaniolo (2009): safe, NBC-equivalent publication of naive Bayes views.

Pure algorithms (no SQL): views.py (P, N and Corollary 4), equivalence.py (Definition 2),
transform.py (SafetyTransform, Figure 2), est.py (EST, Figure 7), breach.py (Section 4's
possible-worlds attacker). Then stats.py (the views by SQL), rewrite.py (the published tables
and the --emit-sql script), verify.py (the independent checks) and job.py (the jobs).
"""

from .breach import Breach, breach
from .equivalence import differences
from .est import EstResult, est
from .transform import Transformed, publish_safe, safety_transform
from .views import Viewset, amplification, is_safe, k_sind, smallest_rho

__all__ = ["SYNTHETIC_ROW_LIMIT", "Breach", "EstResult", "Transformed", "Viewset", "amplification", "breach",
           "differences", "est", "is_safe", "k_sind", "publish_safe", "safety_transform", "smallest_rho"]

#: --synthetic writes Σ_c P_c rows; the transformed counts are often astronomically large,
#: so beyond this many rows it refuses (before writing anything) instead of filling the disk.
#: Here, not in job.py, so the CLI loads neither pandas nor the jobs for its help.
SYNTHETIC_ROW_LIMIT = 10**7
