"""scipy.sparse, from the `tables` extra: the modules that build sparse matrices import it from
here, so a missing extra is one clear line where tables are used, and the package itself (its
MARGINS for the CLI's choices, `anonsql --help`) loads without it."""

from ..errors import AnonsqlError

try:
    import scipy.sparse as sp
except ImportError:  # pragma: no cover - exercised only without the extra
    raise AnonsqlError("safe aggregate tables need scipy and highspy: pip install 'anonsql[tables]'") from None

__all__ = ["sp"]
