"""Classifier utility of an anonymized table (Kameya & Hayashi 2016, Sec. 4): stratified CV error
of classifiers trained on the anonymized rows and tested on the original rows.

Read-only, so it has no rewrite.py or verify.py: the pure classifiers (model.py, nb.py, tree.py),
choices.py (their names),
stats.py (folds and per-fold count tables from SQL), job.py (the run and its EvaluationReport).
"""

from typing import TYPE_CHECKING

from ..lazy import exports
from .choices import CLASSIFIERS

if TYPE_CHECKING:  # the names below load on first use (anonsql.lazy)
    from .job import ClassifierResult, EvaluationReport, evaluate
    from .stats import find_key, fold_assignment

__all__ = ["CLASSIFIERS", "ClassifierResult", "EvaluationReport", "evaluate", "find_key", "fold_assignment"]
__getattr__ = exports(__name__, ('.job', '.stats'), __all__[1:])
