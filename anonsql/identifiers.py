"""Direct identifiers in a published table: the warning every writing job gives about columns a
reviewer would read as identifiers (by name, by format, or (nearly) unique), and the two
remedies, `--drop` and `--pseudonymize` (a keyed HMAC-SHA256 in SQL over the value's text in
Unicode NFC, so that the two spellings of one value, é as one code point or as e + accent, get
one pseudonym; ASCII text and text already in NFC keep the pseudonyms of earlier versions).

The key of the pseudonyms comes from a file (`--key-file`) or the environment variable
ANONSQL_PSEUDONYM_KEY; it is bound as a query parameter (as two padded keys, RFC 2104), never
written to a table, a report, a script or the terminal.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass

from . import sql
from .catalog import Table
from .engine import Engine, engine_class
from .errors import AnonsqlError
from .files import read_text
from .report import Progress, Report, silent
from .sql import exp  # sqlglot.expressions, imported on first use

#: A column outside the quasi-identifiers is reported as nearly unique when its distinct non-NULL
#: values make up at least this share of the rows and at least this share of the rows hold a
#: value that at most HANDFUL rows share (a patient id with repeat visits, an admission time).
NEAR_UNIQUE = 0.5
HANDFUL = 5

#: A column reads as a format of identifiers when at least this share of its values match it.
FORMAT_SHARE = 0.9

#: Words of a column's name a reviewer reads as a direct identifier (the name split at `_`,
#: spaces and CamelCase: `PatientId` -> patient, id; `paid` and `valid` stay one word).
NAME_WORDS = frozenset({
    "id", "ids", "uuid", "guid", "ssn", "nhs", "mrn", "passport", "iban",
    "email", "mail", "phone", "telephone", "mobile", "fax", "name", "firstname", "lastname", "surname",
    "fullname", "username", "login", "patient", "address", "street", "ip"})

#: The text formats of identifiers (the parameters of sql/common/text_formats.sql): what a
#: match reads as, in the order of the query's measures.
TEXT_FORMATS = {
    "email": ("e-mail addresses", r"^[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}$"),
    "uuid": ("UUIDs", r"^[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}$"),
    "phone": ("phone numbers", r"^(\+|00)?\(?[0-9][0-9 ().-]{6,18}[0-9]$"),
    "long_digits": ("digit strings of 9 or more digits", r"^[0-9]{9,}$"),
    "scientific": ("whole numbers in scientific notation (e.g. 2.98e+13)",
                   r"^[0-9](\.[0-9]+)?[eE]\+?(0?[89]|[1-9][0-9])$"),
}
#: What a phone number is not: a date, one plain number.
NOT_PHONE = dict(date=r"^([0-9]{4}[-./][0-9]{1,2}[-./][0-9]{1,2}|[0-9]{1,2}[-./][0-9]{1,2}[-./][0-9]{2,4})$",
                 digits=r"^[0-9]+([.,][0-9]+)?$")

#: A number reads as an id when it is whole with 9 digits or more (sql/common/long_numbers.sql).
LONG_NUMBER = 10 ** 8

#: The environment variable holding the pseudonymization key when no --key-file is given.
KEY_ENV = "ANONSQL_PSEUDONYM_KEY"

_BLOCK = 64  # the block size of SHA-256, in bytes (RFC 2104's B)


def name_words(name: str) -> list[str]:
    """The words of a column name, lower case: `PatientId` and `patient_id` -> ['patient', 'id'].

    >>> name_words("AppointmentID"), name_words("No-show"), name_words("paid")
    (['appointment', 'id'], ['no', 'show'], ['paid'])
    """
    spaced = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1 \2", re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", name))
    return [w.lower() for w in re.split(r"[^A-Za-z0-9]+", spaced) if w]


def scan(engine: Engine, table: Table, columns: Sequence[str], named: sql.TableName | None = None) -> list[str]:
    """A warning for each of `columns` of `table` that a reviewer would read as a direct
    identifier: by its name (NAME_WORDS), by its values' format (e-mail, UUID, phone, long
    digit strings, whole numbers of 9+ digits such as 2.98e+13; sql/common/text_formats.sql, one
    GROUP BY per text column, and long_numbers.sql, one scan of the numeric ones), or because it
    is (nearly) unique (sql/common/value_spread.sql, one GROUP BY per column). [] when none is,
    or the table has fewer than 2 rows. The warnings name `named` (default: `table`): a job may
    scan a source whose columns it writes unchanged and name its output."""
    if not columns:
        return []
    rows = int(engine.fetch_all(*sql.render("common/row_count", engine.dialect, tbl=table.expr))[0][0])
    if rows < 2:
        return []
    reasons: dict[str, list[str]] = {c: [] for c in columns}
    lead = dict.fromkeys(columns, "reads as a direct identifier")
    for name in columns:
        distinct, few = (int(v) for v in engine.fetch_all(*sql.render(
            "common/value_spread", engine.dialect, tbl=table.expr, col=sql.column(name), handful=HANDFUL))[0])
        if distinct == rows:
            lead[name] = "is unique"
            reasons[name].append(f"{distinct:,} distinct values in {rows:,} rows")
        elif distinct >= NEAR_UNIQUE * rows and few >= NEAR_UNIQUE * rows:
            lead[name] = "is nearly unique"
            reasons[name].append(f"{distinct:,} distinct values in {rows:,} rows, {few / rows:.0%} of the rows "
                                 f"sharing their value with at most {HANDFUL - 1} others")
    for name in columns:
        if NAME_WORDS & set(name_words(name)):
            reasons[name].append("its name says so")
    for name, reason in _formats(engine, table, columns):
        reasons[name].append(reason)
    return [f"column '{name}' {lead[name]} in {named or table} ({'; '.join(reasons[name])}) and is not a "
            "quasi-identifier: it names a row on its own (a direct identifier); drop it (--drop) or pseudonymize "
            "it (--pseudonymize), or list it in --qi" for name in columns if reasons[name]]


def _formats(engine: Engine, table: Table, columns: Sequence[str]) -> list[tuple[str, str]]:
    """(column, reason) for each of `columns` whose values mostly (FORMAT_SHARE) read as an
    identifier's format: text columns by pattern, numeric ones as long whole numbers."""
    text = [c for c in columns if table.column(c).kind == "text"]
    numbers = [c for c in columns if table.column(c).kind in ("integer", "float", "decimal")]
    found: list[tuple[str, str]] = []
    if text:
        patterns = {name: pattern for name, (_, pattern) in TEXT_FORMATS.items()}
        for name in text:
            values, *counts = (int(v) for v in engine.fetch_all(*sql.render(
                "common/text_formats", engine.dialect, tbl=table.expr, col=sql.column(name), **patterns,
                **NOT_PHONE))[0])
            found += [(name, f"{n / values:.0%} of its values are {what}")
                      for (what, _), n in zip(TEXT_FORMATS.values(), counts) if n and n >= FORMAT_SHARE * values]
    if numbers:
        row = engine.fetch_all(*sql.render("common/long_numbers", engine.dialect, tbl=table.expr,
                                           col=sql.columns(numbers), least=LONG_NUMBER))[0]
        # the query's items repeat per column: n_values_0.., n_long_0..
        for name, v, n in zip(numbers, row[:len(numbers)], row[len(numbers):]):
            if n and n >= FORMAT_SHARE * v:
                found.append((name, f"{n / v:.0%} of its values are whole numbers of 9 or more digits"
                              + (" stored as floats (e.g. 2.98e+13)" if table.column(name).kind == "float" else "")))
    return found


def warn(engine: Engine, report: Report, table: Table, quasi: Sequence[str], say: Progress = silent,
         named: sql.TableName | None = None) -> list[str]:
    """The one call of a writing job after it wrote `table`: a privacy warning on `report` (and
    on the progress channel) for every column not among `quasi` (its quasi-identifiers) that
    reads as a direct identifier; `named` names the output when `table` is its staging table."""
    return tell(report, scan(engine, table, unlisted(table.column_names, quasi), named), say)


def unlisted(columns: Sequence[str], quasi: Sequence[str]) -> list[str]:
    """The `columns` the identifier scan reads: those not among `quasi` (in any letter case)."""
    taken = {q.lower() for q in quasi}
    return [c for c in columns if c.lower() not in taken]


def tell(report: Report, warnings: list[str], say: Progress = silent) -> list[str]:
    """Record scan's warnings on `report` (Report.warnings) and say them (`--quiet` never hides them)."""
    for text in warnings:
        report.warn(text, say)
    return warnings


@dataclass(frozen=True)
class Key:
    """A pseudonymization key K as RFC 2104's two padded keys; its repr shows nothing."""

    ipad: bytes
    opad: bytes

    def __repr__(self) -> str:
        return "Key(<hidden>)"


def read_key(key_file: str | None) -> Key:
    """The key from `key_file` (its text, surrounding whitespace stripped) or from $ANONSQL_PSEUDONYM_KEY."""
    if key_file:
        raw = read_text(key_file, "pseudonymization key file").strip()
        where = f"key file {key_file}"
    else:
        raw = os.environ.get(KEY_ENV, "").strip()
        where = f"environment variable {KEY_ENV}"
        if not raw:
            raise AnonsqlError(f"--pseudonymize needs a secret key: give --key-file FILE or set {KEY_ENV}")
    if len(raw) < 16:
        raise AnonsqlError(f"the pseudonymization key in the {where} is too short: use at least 16 characters "
                           "(e.g. python -c 'import secrets; print(secrets.token_hex(32))')")
    key = raw.encode("utf-8")
    if len(key) > _BLOCK:
        key = hashlib.sha256(key).digest()
    key = key.ljust(_BLOCK, b"\0")
    return Key(bytes(b ^ 0x36 for b in key), bytes(b ^ 0x5C for b in key))


def pseudonymize_sql(dialect: str) -> str:
    """The sql/ file of the keyed pseudonyms on `dialect` (Engine.pseudonymize_sql). Spark takes DuckDB's:
    sqlglot writes its SHA256, ENCODE (UTF-8), UNHEX and binary || as Spark's SHA2(.., 256), ENCODE(..,
    'utf-8'), UNHEX and ||, so the digests are the same HMAC-SHA256 hex texts."""
    name = engine_class(dialect).pseudonymize_sql
    if name is None:
        raise AnonsqlError(f"--pseudonymize is not available on {dialect} (DuckDB, PostgreSQL and Spark only)")
    return name


def hashed_text(dialect: str, value: exp.Expr) -> exp.Expr:
    """The HMAC's input: `value` as text in Unicode NFC (Engine.text_nfc_sql), so that one value
    typed two ways (é as U+00E9, or e + U+0301 as macOS file names and some exports write it) gets
    one pseudonym. Text already in NFC, every ASCII text among it, is unchanged, so its pseudonyms
    are those earlier versions wrote with the same key."""
    as_text = exp.Cast(this=value.copy(), to=exp.DataType.build("VARCHAR"))
    return sql.fragment(engine_class(dialect).text_nfc_sql, text=as_text)


def pseudonym(dialect: str, value: exp.Expr) -> exp.Expr:
    """The keyed pseudonym HMAC-SHA256(K, value) as an expression (the SET value of
    pseudonymize_sql(dialect)), with $ipad / $opad left to bind, for a CREATE TABLE AS SELECT."""
    update = sql.template(pseudonymize_sql(dialect))
    expr = update.expressions[0].expression
    for ph in list(expr.find_all(exp.Placeholder)):
        if ph.name == "text":
            ph.replace(hashed_text(dialect, value))
    return expr


def check_same_text(engine: Engine, table: Table, pseudonymize: Sequence[str]) -> None:
    """Refuse (one line) to pseudonymize a column whose text, the HMAC's input, the engine writes
    unlike DuckDB and PostgreSQL (Engine.same_text_kinds: a float's text on Spark, 1.0E20 vs 1e+20),
    so its pseudonyms would differ."""
    kinds = engine.same_text_kinds
    for name in pseudonymize:
        kind = table.column(name).kind
        if kinds is not None and kind not in kinds:
            raise AnonsqlError(f"--pseudonymize on {engine.dialect} takes {' and '.join(kinds)} columns: '{name}' is "
                               f"{kind}, whose text (the HMAC's input) {engine.dialect} writes unlike DuckDB and "
                               "PostgreSQL, so its pseudonyms would differ; cast it to text first or run on "
                               "DuckDB/PostgreSQL")


def apply(engine: Engine, table: exp.Table, *, drop: Sequence[str] = (), pseudonymize: Sequence[str] = (),
          key: Key | None = None) -> None:
    """Drop columns of a written table and replace others by their keyed pseudonyms (the caller
    holds the transaction)."""
    d = engine.dialect
    for name in drop:
        engine.execute(*sql.render("common/drop_column", d, tbl=table, col=sql.column(name)))
    if not pseudonymize:
        return
    if key is None:
        raise AnonsqlError("--pseudonymize needs a key")
    for name in pseudonymize:
        engine.execute(*sql.render("common/column_to_text", d, tbl=table, col=sql.column(name)))
    engine.execute(*sql.render(pseudonymize_sql(d), d, tbl=table, col=sql.columns(pseudonymize),
                               text=_texts(d, pseudonymize), ipad=key.ipad, opad=key.opad))


def _texts(dialect: str, columns: Sequence[str]) -> list[exp.Expr]:
    """The HMAC's input of each of `columns` (hashed_text), bound beside them in the UPDATE."""
    return [hashed_text(dialect, sql.column(name)) for name in columns]


def script_steps(dialect: str, table: exp.Table, *, drop: Sequence[str] = (),
                 pseudonymize: Sequence[str] = ()) -> list[tuple[str, str]]:
    """The same statements for an `--emit-sql` script: (comment, statement); the padded keys
    stay the placeholders $ipad / $opad (the key never goes into a file)."""
    steps = [(f"drop the direct identifier {name} (sql/common/drop_column.sql)",
              sql.readable("common/drop_column", dialect, tbl=table, col=sql.column(name))) for name in drop]
    if pseudonymize:
        steps += [(f"{name} becomes text (sql/common/column_to_text.sql)",
                   sql.readable("common/column_to_text", dialect, tbl=table, col=sql.column(name)))
                  for name in pseudonymize]
        holder = dict(ipad=exp.Placeholder(this="ipad"), opad=exp.Placeholder(this="opad"))
        steps.append(("keyed pseudonyms HMAC-SHA256(K, v); the key is NOT in this script: bind $ipad and $opad "
                      f"to K xor 0x36.. and K xor 0x5c.. (sql/{pseudonymize_sql(dialect)}.sql)",
                      sql.readable(pseudonymize_sql(dialect), dialect, tbl=table, col=sql.columns(pseudonymize),
                                   text=_texts(dialect, pseudonymize), **holder)))
    return steps


def check_columns(table: Table, quasi: Sequence[str], drop: Sequence[str], pseudonymize: Sequence[str],
                  protected: Sequence[str] = ()) -> tuple[list[str], list[str]]:
    """Resolve --drop and --pseudonymize: existing columns, neither a quasi-identifier nor one of
    `protected` (the class), none in both lists."""
    dropped, pseudo = table.resolve(drop), table.resolve(pseudonymize)
    for name in (*dropped, *pseudo):
        if name in quasi:
            raise AnonsqlError(f"column '{name}' is a quasi-identifier: it cannot also be dropped or pseudonymized")
        if name in protected:
            raise AnonsqlError(f"column '{name}' is the class column: it cannot be dropped or pseudonymized")
    both = sorted(set(dropped) & set(pseudo))
    if both:
        raise AnonsqlError(f"column '{both[0]}' is listed in both --drop and --pseudonymize")
    if len(dropped) == len(table.column_names):
        raise AnonsqlError("--drop would remove every column")
    return dropped, pseudo


def verify(engine: Engine, report: Report, out: Table, *, source: Table | None, drop: Sequence[str],
                pseudonymize: Sequence[str]) -> None:
    """--drop: the columns are gone from the output; --pseudonymize with a copy: no value of the
    source's column is left in the output's (sql/common/values_shared.sql)."""
    if drop:
        left = [c for c in drop if c in out.column_names]
        report.check("dropped columns gone", not left, "common/table_columns",
                     "" if not left else "still there: " + ", ".join(left))
    if pseudonymize and source is not None:
        _note_not_nfc(engine, report, source, pseudonymize)
        kept = 0
        for name in pseudonymize:
            text, params = sql.render("common/values_shared", engine.dialect, a=source.expr, b=out.expr,
                                      col=sql.column(name))
            kept += int(engine.fetch_all(text, params)[0][0])
        report.check("no original value left in the pseudonymized columns", kept == 0, "common/values_shared",
                     "" if kept == 0 else f"{kept} original values left")


def _note_not_nfc(engine: Engine, report: Report, source: Table, pseudonymize: Sequence[str]) -> None:
    """A note per pseudonymized column of `source` holding text not in Unicode NFC: its values got
    the pseudonyms of their NFC spelling, not those of earlier versions (sql/common/not_nfc.sql)."""
    for name in pseudonymize:
        col = sql.column(source.column(name).name)
        n = int(engine.fetch_all(*sql.render("common/not_nfc", engine.dialect, tbl=source.expr, col=col,
                                             nfc=hashed_text(engine.dialect, col)))[0][0])
        if n:
            report.notes.append(f"{n:,} value(s) of column '{name}' are not in Unicode NFC (e.g. an accent typed as "
                                "its own character): their pseudonyms are those of their NFC spelling, one per "
                                "value however it is typed (earlier versions of anonsql hashed them as typed)")
