"""The `anonsql` command: parse, call the Python API, print; nothing else lives here.

Exit codes: 0 success, 1 a check that ran and failed (e.g. not k-anonymous), 2 bad input
(one line on stderr, nothing changed in the database).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, Sequence

from . import api, datasets
from .errors import AnonsqlError

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2

DB_HELP = "DuckDB database file (created by load/dataset) or postgresql://user@host:port/dbname URL"


class _Parser(argparse.ArgumentParser):
    """argparse that reports a usage error as a single line, like every other error."""

    def error(self, message: str) -> None:  # type: ignore[override]
        sys.stderr.write(f"{self.prog}: error: {message} (see {self.prog} --help)\n")
        sys.exit(EXIT_USAGE)


def _k_value(text: str) -> int:
    try:
        k = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"k must be an integer >= 1, got {text!r}") from None
    if k < 1:
        raise argparse.ArgumentTypeError(f"k must be an integer >= 1, got {k}")
    return k


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="anonsql",
        description="Anonymize tables where they live: statistics and rewrites run as SQL in "
        "DuckDB (a file path) or PostgreSQL (a postgresql:// URL).",
        epilog="NULL in a quasi-identifier is the papers' suppressed value (⊥): it counts as a value "
        "of its own when rows are grouped, and no row is ever dropped for holding one.",
    )
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser, metavar="COMMAND")

    p = sub.add_parser("load", help="load a CSV file into a new table",
                       description="Load a CSV (header row; gzip OK) into a new table. Fields are trimmed; "
                       "empty fields and --na markers become NULL; all-integer columns become BIGINT, "
                       "numeric ones DOUBLE, the rest text.",
                       epilog="example: anonsql load fixtures/adult.csv.gz --db demo.duckdb --table adult --na '?'")
    p.add_argument("csv", help="path of the CSV file")
    _common(p, table_help="name of the table to create (name or schema.name)")
    p.add_argument("--na", action="append", default=[], metavar="MARKER",
                   help="a value meaning missing, e.g. '?' (repeatable)")
    p.add_argument("--replace", action="store_true", help="replace the table if it exists")

    p = sub.add_parser("dataset", help="load a bundled real data set (Adult, Car, Breast Cancer)",
                       description="Load a bundled UCI data set. Names: "
                       + "; ".join(f"{n}: {d.description}" for n, d in datasets.DATASETS.items()),
                       epilog="example: anonsql dataset adult-kh --db demo.duckdb --table adult")
    p.add_argument("name", choices=list(datasets.DATASETS), metavar="NAME",
                   help="one of: " + ", ".join(datasets.DATASETS))
    p.add_argument("--db", required=True, help=DB_HELP)
    p.add_argument("--table", help="table to create (default: the data set's name)")
    p.add_argument("--replace", action="store_true", help="replace the table if it exists")
    p.add_argument("--json", action="store_true", help="print a JSON object instead of text")

    p = sub.add_parser("profile", help="row count, column facts, current k and class balance",
                       description="Profile a table: rows; per column type, distinct and NULL counts; "
                       "with --qi the current k (smallest equivalence class), the number of equivalence "
                       "classes and the rows in classes smaller than 2/5/10/20/50/100; with --class the "
                       "class distribution.",
                       epilog="example: anonsql profile --db demo.duckdb --table adult "
                       "--qi age,workclass,education --class income")
    _common(p)
    p.add_argument("--qi", help="comma-separated quasi-identifier columns")
    p.add_argument("--class", dest="class_column", help="class (label) column")

    p = sub.add_parser("check", help="is the table k-anonymous over the QIs? (exit 0 yes, 1 no)",
                       description="Check k-anonymity: every combination of the quasi-identifier values "
                       "(NULL counting as its own value) must occur at least k times. Exits 0 when it "
                       "holds, 1 when not, listing the smallest violating groups.",
                       epilog="example: anonsql check --db demo.duckdb --table adult "
                       "--qi age,workclass,education --k 10")
    _common(p)
    p.add_argument("--qi", required=True, help="comma-separated quasi-identifier columns")
    p.add_argument("--k", required=True, type=_k_value, help="the anonymity threshold k >= 1")
    p.add_argument("--show", type=int, default=20, metavar="N",
                   help="list at most N violating groups, smallest first (default 20)")
    return parser


def _common(p: argparse.ArgumentParser, table_help: str = "table name (name or schema.name)") -> None:
    p.add_argument("--db", required=True, help=DB_HELP)
    p.add_argument("--table", required=True, help=table_help)
    p.add_argument("--json", action="store_true", help="print a JSON object instead of text")


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return _COMMANDS[args.command](args)
    except AnonsqlError as exc:
        sys.stderr.write(f"anonsql {args.command}: error: {exc}\n")
        return EXIT_USAGE


def _emit(args: argparse.Namespace, data: dict[str, Any], text: str) -> None:
    print(json.dumps(data, indent=2, default=str) if args.json else text)


def _load(args: argparse.Namespace) -> int:
    result = api.load_csv(args.db, args.csv, args.table, na=args.na, replace=args.replace)
    _emit(args, result.to_dict(), _load_text(result))
    return EXIT_OK


def _dataset(args: argparse.Namespace) -> int:
    result = api.load_dataset(args.db, args.name, args.table, replace=args.replace)
    _emit(args, result.to_dict(), _load_text(result))
    return EXIT_OK


def _load_text(result) -> str:
    cols = ", ".join(f"{c} ({k})" for c, k in result.columns.items())
    return f"loaded {result.rows:,} rows into {result.table}: {cols}"


def _profile(args: argparse.Namespace) -> int:
    p = api.profile(args.db, args.table, qi=args.qi, class_column=args.class_column)
    lines = [f"table {p.table}: {p.rows:,} rows, {len(p.columns)} columns", ""]
    width = max(len(c.name) for c in p.columns)
    lines.append(f"  {'column':<{width}}  {'type':<9} {'distinct':>9} {'nulls':>9}")
    lines += [f"  {c.name:<{width}}  {c.type:<9} {c.distinct:>9,} {c.nulls:>9,}" for c in p.columns]
    if p.qi:
        lines += ["", f"quasi-identifiers: {', '.join(p.qi)}",
                  f"  current k (smallest equivalence class): {p.k}",
                  f"  equivalence classes: {p.equivalence_classes:,}"]
        lines += [f"  rows in classes smaller than {t}: {n:,} ({n / p.rows:.1%})"
                  for t, n in p.rows_in_classes_smaller_than.items()]
    if p.class_column:
        lines += ["", f"class {p.class_column}:"]
        lines += [f"  {v}: {n:,} ({n / p.rows:.1%})" for v, n in p.class_distribution.items()]
    _emit(args, p.to_dict(), "\n".join(lines))
    return EXIT_OK


def _check(args: argparse.Namespace) -> int:
    r = api.check(args.db, args.table, args.qi, args.k, show=args.show)
    if r.ok:
        text = f"{r.table} is {r.k}-anonymous over {', '.join(r.qi)}"
    else:
        lines = [f"{r.table} is NOT {r.k}-anonymous over {', '.join(r.qi)}: "
                 f"{r.violating_groups:,} groups holding {r.violating_rows:,} rows have fewer than {r.k} rows"]
        if r.shown_groups:
            lines.append(f"smallest {len(r.shown_groups)} group(s):")
            lines += ["  " + ", ".join(f"{k}={v}" for k, v in g.items()) for g in r.shown_groups]
        text = "\n".join(lines)
    _emit(args, r.to_dict(), text)
    return EXIT_OK if r.ok else EXIT_FAILED


_COMMANDS = {"load": _load, "dataset": _dataset, "profile": _profile, "check": _check}


if __name__ == "__main__":
    sys.exit(main())
