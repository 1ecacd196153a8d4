"""Record keys: where each row's key r_x in [0, 1) comes from, as SQL expressions (no SQL runs here).

Either derived from a unit key column u by the keyed hash of `--pseudonymize`, HMAC-SHA256(K, u)
(anonsql.identifiers: K from --key-file or $ANONSQL_PSEUDONYM_KEY, bound as two padded keys,
never stored), its first 32 bits making the key; or read from a declared column of keys in
[0, 1) (a float column) or of whole numbers in [0, 2^32) (an integer column: the key in units of
2^-32). Keys are whole numbers in units of 2^-32 (anonsql.ckm.ptable.KEY_UNITS), so a cell key,
the sum of its rows' keys mod 2^32, is exact and the same on every engine; the same unit gets
the same key in every table made with the same K.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from sqlglot import exp

from .. import sql
from ..errors import AnonsqlError
from ..identifiers import KEY_ENV, Key, pseudonym, read_key

#: The column the publishing and recount statements hold a row's hash (or declared key) in.
HASH = "ckm_hash"


@dataclass(frozen=True)
class RecordKeys:
    """`column`: the unit key (derived, with `key`) or the declared record key column."""

    column: str
    key: Key | None = None
    units: bool = False  # a declared column of whole numbers in [0, 2^32) (units of 2^-32), not [0, 1)

    @property
    def derived(self) -> bool:
        return self.key is not None

    @property
    def kind(self) -> str:
        """How the keys are made, as the report and the spec table say it (never the key)."""
        return "hmac-sha256" if self.derived else "column-units" if self.units else "column"

    def hash_expr(self, dialect: str) -> exp.Expr:
        """h: HMAC-SHA256(K, u) as hex text, or the declared key itself."""
        col = sql.column(self.column)
        return pseudonym(dialect, col) if self.derived else col

    def rkey_expr(self) -> exp.Expr:
        """r_x in units of 2^-32 from h (sql/ckm/record_key_hmac.sql, record_key_column.sql or
        record_key_units.sql)."""
        name = "ckm/record_key_hmac" if self.derived else "ckm/record_key_units" if self.units else \
            "ckm/record_key_column"
        return sql.fragment(name, h=sql.column(HASH))

    def params(self) -> dict[str, Any]:
        """The values the hash binds (the padded keys), none for a declared column."""
        return {"ipad": self.key.ipad, "opad": self.key.opad} if self.key is not None else {}


def record_keys(record_key: str | None, key_column: str | None, key_file: str | None) -> RecordKeys:
    """The record keys of the user's options (column names not yet resolved against the table)."""
    if (record_key is None) == (key_column is None):
        raise AnonsqlError("--method ckm needs record keys: --record-key UNIT_COLUMN (keyed by --key-file or "
                           f"${KEY_ENV}) or --record-key-column COLUMN (keys in [0, 1)), one of them")
    if key_column is not None:
        if key_file:
            raise AnonsqlError("--key-file keys --record-key; a --record-key-column holds its keys already")
        return RecordKeys(key_column)
    if not key_file and not os.environ.get(KEY_ENV, "").strip():
        raise AnonsqlError(f"--record-key needs a secret key: give --key-file FILE or set {KEY_ENV}")
    assert record_key is not None
    return RecordKeys(record_key, read_key(key_file))
