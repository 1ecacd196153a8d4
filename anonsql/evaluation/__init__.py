"""Utility of an anonymized table for classifiers (Kameya & Hayashi 2016, Sec. 4).

Stratified F-fold cross validation where each fold's classifier is TRAINED on the
anonymized table (the other folds' rows) and TESTED on the original table (the fold's
rows), next to the baseline trained on the original. Folds are assigned in SQL from the
original's key and class; naive Bayes learns from SQL count tables; the optional decision
tree (scikit-learn) learns from distinct weighted combinations.
"""

from .core import ClassifierResult, EvaluationResult, CLASSIFIERS, evaluate, find_key, fold_assignment

__all__ = ["CLASSIFIERS", "ClassifierResult", "EvaluationResult", "evaluate", "find_key", "fold_assignment"]
