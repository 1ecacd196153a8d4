"""The classifiers `evaluate` offers: naive Bayes (numpy) and the scikit-learn entropy tree (the
`eval` extra). A module of its own, so the CLI's choices and the job read them without a circle
through the package face, and without loading anything else."""

CLASSIFIERS = ("nb", "tree")
