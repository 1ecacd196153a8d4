"""The HiGHS solver as the attackers use it (tables' LP, `attack refine`'s LP/MILP): loaded on
first use with one clear error naming the extra that installs it, constructed silently, and
switched between the warm-started LP and the whole-number MILP. Pure: no SQL, no connection."""

from __future__ import annotations

import os
import sys
from typing import Any

import numpy as np

from .errors import AnonsqlError


def load_highs() -> Any:
    """The highspy module, or a clear error naming the extra that installs it."""
    try:
        import highspy
    except ImportError:
        raise AnonsqlError("the attacker's linear program needs the HiGHS LP solver: pip install 'anonsql[tables]' "
                           "(the highspy package)") from None
    return highspy


def new_model(hs: Any) -> Any:
    """A silent HiGHS instance for warm-started objective changes (primal simplex, no presolve).
    HiGHS prints its banner on stdout when constructed, which would corrupt --json output, so
    file descriptor 1 points at /dev/null meanwhile."""
    sys.stdout.flush()
    saved = os.dup(1)
    try:
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), 1)
            h = hs.Highs()
    finally:
        os.dup2(saved, 1)
        os.close(saved)
    h.setOptionValue("output_flag", False)
    h.setOptionValue("presolve", "off")
    h.setOptionValue("simplex_strategy", 4)
    return h


def whole_numbers(h: Any, hs: Any, on: bool) -> None:
    """Make every column of HiGHS model `h` integer (`on`: a MILP, solved with presolve) or
    continuous again (the warm-started LP, without presolve)."""
    n = h.getNumCol()
    kind = hs.HighsVarType.kInteger if on else hs.HighsVarType.kContinuous
    h.changeColsIntegrality(n, np.arange(n, dtype=np.int32), np.full(n, kind))
    h.setOptionValue("presolve", "on" if on else "off")
