"""Safe tables by the cell key method (CKM; Fraser & Wooton 2005, Giessing 2016; R's cellKey and
ptable, tau-ARGUS): every record carries a record key in [0, 1), a cell's cell key is the
fractional part of the sum of its records' keys, and the cell's noise is read from a
perturbation table (ptable) by (original count, cell key), so the same records get the same noise
in every table, margin and rerun.

`ptable.ptable` builds the ptable (numpy, no SQL); `job.run` is the database job behind
`anonsql.ckm_table` and `anonsql tables --method ckm`, `job.audit` the re-derivation behind
`anonsql tables audit` on a CKM table.
"""

from ..lazy import exports

__all__ = ["CkmReport", "Params", "Ptable", "ptable"]

__getattr__ = exports(__name__, [".job", ".ptable"], __all__)
