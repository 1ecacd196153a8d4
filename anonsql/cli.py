"""The `anonsql` command: parse, call the Python API, print; nothing else lives here.

Exit codes: 0 success, 1 a check that ran and failed (e.g. not k-anonymous), 2 bad input
(one line on stderr, nothing changed in the database).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
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
    _common(p, table_help=None)
    p.add_argument("--table", help="table to create (default: the data set's name)")
    p.add_argument("--replace", action="store_true", help="replace the table if it exists")

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
    p = sub.add_parser("bin", help="bin numeric columns into ranges (by width or quantiles) in a new table",
                       description="Copy a table with numeric columns replaced by range labels, so a near-unique "
                       "column (exact age, income) can serve as a quasi-identifier. width:W gives '[lo,hi)' ranges "
                       "of whole-number width W; quantiles:Q gives about Q ranges of equal row counts, cut at the "
                       "column's own values. NULL stays NULL; other columns are copied unchanged.",
                       epilog="example: anonsql bin --db demo.duckdb --table adult_raw --bin age=width:5 "
                       "--bin fnlwgt=quantiles:10 --out adult_binned")
    _common(p)
    p.add_argument("--bin", dest="specs", action="append", required=True, metavar="COLUMN=width:W|quantiles:Q",
                   help="a column and its binning (repeatable)")
    p.add_argument("--out", required=True, help="the new table")
    p.add_argument("--replace", action="store_true", help="replace the output table if it exists")

    p = sub.add_parser("evaluate", help="classifier error when trained on the anonymized table (cross validation)",
                       description="Utility of an anonymized table for classification (Kameya & Hayashi 2016, "
                       "Sec. 4): stratified cross validation in which each fold's classifier is trained on the "
                       "ANONYMIZED rows of the other folds and tested on the ORIGINAL rows of the fold, next to "
                       "the baseline trained on the original. Rows of the two tables are matched by --key. "
                       "nb: naive Bayes with Laplace smoothing, NULL cells ignored; tree: scikit-learn entropy "
                       "tree, a stand-in for C4.5/J48 (needs pip install 'anonsql[eval]'). Reads only.",
                       epilog="example: anonsql evaluate --db demo.duckdb --original adult --anonymized adult_k10 "
                       "--qi age,workclass,education,marital_status,occupation,race,sex,native_country "
                       "--class income --folds 10 --seed 0")
    _common(p, table_help=None)
    p.add_argument("--original", required=True, help="the original table (tested on)")
    p.add_argument("--anonymized", required=True, help="the anonymized table (trained on)")
    p.add_argument("--qi", required=True, help="comma-separated quasi-identifier columns (the classifiers' attributes)")
    p.add_argument("--class", dest="class_column", required=True, help="class (label) column")
    p.add_argument("--key", help="column matching the rows of the two tables (default: the one column besides "
                   "--qi and --class that is in both tables and unique in the original)")
    p.add_argument("--folds", type=int, default=10, help="number of folds, >= 2 (default 10)")
    p.add_argument("--seed", type=int, default=0, help="seed of the fold assignment and the tree (default 0)")
    p.add_argument("--classifiers", default="nb,tree", help="comma-separated, from nb, tree (default nb,tree)")

    p = sub.add_parser("kanon", help="k-anonymize by bottom-up cell suppression (Kameya & Hayashi 2016)",
                       description="Make a table k-anonymous over its quasi-identifiers by blanking (NULL) as few "
                       "and as harmless cells as possible: distinct (QI, class) tuples are merged within their "
                       "class, cheapest first by the chosen cost, until every QI combination occurs k times. "
                       "The result is written by one set-based UPDATE into a copy of the table (default "
                       "<table>_k<k>) or, with --in-place, into the source inside one transaction, and "
                       "re-checked by SQL before success is reported.",
                       epilog="costs: ham = cells suppressed (eq. 1); info = information loss (eq. 2); "
                       "mar = change of KL divergence, keeps the missing-at-random condition (eq. 9-11); "
                       "hybrid = mar weighted by ham (eq. 12).  example: anonsql kanon --db demo.duckdb "
                       "--table adult --qi age,workclass,education,marital_status,occupation,race,sex,"
                       "native_country --class income --k 10 --cost mar --seed 0 --out adult_k10")
    _common(p)
    p.add_argument("--qi", required=True, help="comma-separated quasi-identifier columns")
    p.add_argument("--class", dest="class_column", required=True, help="class (label) column, never suppressed")
    p.add_argument("--k", required=True, type=_k_value, help="the anonymity threshold k >= 1")
    p.add_argument("--cost", default="mar", help="suppression cost: ham, info, mar (default) or hybrid")
    p.add_argument("--alpha", type=float, default=1.0, help="pseudo count of the estimates (default 1: Laplace)")
    p.add_argument("--seed", type=int, default=0, help="seed of the random choice of violating tuples (default 0)")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--out", help="output table (default <table>_k<k>)")
    where.add_argument("--in-place", action="store_true", help="rewrite the source table in one transaction")
    p.add_argument("--replace", action="store_true", help="replace the output table if it exists")
    p.add_argument("--report", metavar="FILE", help="also write the JSON report to FILE")
    p.add_argument("--emit-sql", metavar="FILE", help="write the statements of the rewrite to FILE for review")
    p.add_argument("--dry-run", action="store_true", help="with --emit-sql: write the script, change nothing")
    p.add_argument("--quiet", action="store_true", help="no progress lines on stderr")

    _add_nbc_parser(sub)

    p = sub.add_parser("protect", help="hide confidential cells so that classifiers cannot predict them "
                       "(Hintoglu 2011)",
                       description="Hide confidential cells (NULL) and a few more, so that naive Bayes (decp, "
                       "incp, dropp, e-decp, e-dropp) or an ID3 tree (hid3), or both (hid3+decp, hid3+incp, "
                       "hid3+dropp), trained on the rest of the table no longer predict them. nrd deletes the "
                       "whole tuple (the thesis's baseline). A tuple an algorithm must delete keeps its key with "
                       "every other cell NULL (--delete-rows removes it). Writes a copy (default "
                       "<table>_protected) or, with --in-place, the source, plus <out>_changes(key, column_name, "
                       "old_value, new_value) - which holds the ORIGINAL values: keep it private - in one "
                       "transaction, re-checked by SQL before success is reported.",
                       epilog="example: anonsql protect --db demo.duckdb --table records --key id --target diagnosis "
                       "--rows 2,7 --method dropp --out records_pub")
    _common(p)
    p.add_argument("--key", required=True, help="column identifying the rows (unique, no NULL)")
    p.add_argument("--target", help="column holding the confidential values (with --rows)")
    p.add_argument("--rows", help="comma-separated key values of the rows whose --target value is confidential")
    p.add_argument("--cells", metavar="CSV", help="file of key,column pairs, one confidential cell per line "
                   "(instead of --target/--rows)")
    p.add_argument("--method", default="dropp", help="decp, incp, dropp (default), hid3, hid3+decp, hid3+incp, "
                   "hid3+dropp, e-decp, e-dropp, nrd; generalizing (with --taxonomy): decp-g, incp-g, dropp-g, "
                   "hid3-g, e-decp-g, e-dropp-g")
    p.add_argument("--predictors", help="comma-separated columns the classifiers use (default: all but the key "
                   "and the target)")
    p.add_argument("--top-k", type=int, default=2, help="draw the random next best guess among the k most "
                   "probable values, k >= 2 (default 2)")
    p.add_argument("--seed", type=int, default=0, help="seed of the next best guess and of the coin flip for "
                   "two-valued targets (default 0)")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--out", help="output table (default <table>_protected)")
    where.add_argument("--in-place", action="store_true", help="rewrite the source table in one transaction")
    p.add_argument("--replace", action="store_true", help="replace the output and changes tables if they exist")
    p.add_argument("--delete-rows", action="store_true", help="remove the tuples an algorithm had to delete "
                   "(default: keep them with every cell but the key NULL)")
    p.add_argument("--report", metavar="FILE", help="also write the JSON report (every changed cell) to FILE")
    p.add_argument("--taxonomy", metavar="ATTR=NAME,...", help="generalization methods (decp-g, incp-g, "
                   "dropp-g, hid3-g, e-decp-g, e-dropp-g): the stored taxonomy of each column to generalize "
                   "along, the target's at least (see 'anonsql taxonomy load')")
    _add_taxonomy_parser(sub)

    _features_parsers(sub)
    return parser


def _add_taxonomy_parser(sub) -> None:
    """`anonsql taxonomy load|show`: value generalization hierarchies stored in the database."""
    p = sub.add_parser("taxonomy", help="store a value generalization hierarchy (for protect's -g methods)",
                       description="Taxonomies (one rooted tree of labels per attribute) live in the table "
                       "anonsql_taxonomies(taxonomy, position, value, parent), so a run that generalizes "
                       "along them can be repeated from the database alone.")
    tsub = p.add_subparsers(dest="taxonomy_command", required=True, parser_class=_Parser,
                            metavar="TAXONOMY_COMMAND")
    q = tsub.add_parser("load", help="validate a taxonomy and store it",
                        description="Validate a taxonomy (one root, no cycle, every label once) and store it. "
                        "File form (TOML or JSON), one key, the root; a node is a list of leaves or a table "
                        "of children, e.g. TOML: [Any] / Low = [1, 2] / [Any.Mid-High] / 3 = [] / "
                        "High = [4, 5].",
                        epilog="example: anonsql taxonomy load --db demo.duckdb --name severity "
                        "--file severity.toml")
    _common(q, table_help=None)
    q.add_argument("--name", required=True, help="the name protect --taxonomy refers to")
    src = q.add_mutually_exclusive_group(required=True)
    src.add_argument("--file", help="a .toml or .json file with the nested form")
    src.add_argument("--from-table", metavar="TABLE", help="a table with columns value and parent "
                     "(NULL parent: the root)")
    q.add_argument("--replace", action="store_true", help="replace a stored taxonomy of that name")
    q = tsub.add_parser("show", help="print a stored taxonomy", description="Print a stored taxonomy as an "
                        "indented tree (--json: its (value, parent) rows).")
    _common(q, table_help=None)
    q.add_argument("--name", required=True, help="the stored taxonomy's name")


def _common(p: argparse.ArgumentParser, table_help: str | None = "table name (name or schema.name)") -> None:
    """--db, --table (unless `table_help` is None) and --json, shared by every command."""
    p.add_argument("--db", required=True, help=DB_HELP)
    if table_help:
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


def _bin(args: argparse.Namespace) -> int:
    r = api.bin_columns(args.db, args.table, args.specs, args.out, replace=args.replace)
    lines = [f"{r.table} -> {r.out}"] + [
        f"  {col}: {len(labels)} bins: {', '.join(map(str, labels[:8]))}{' ...' if len(labels) > 8 else ''}"
        for col, labels in r.bins.items()]
    _emit(args, r.to_dict(), "\n".join(lines))
    return EXIT_OK


def _evaluate(args: argparse.Namespace) -> int:
    r = api.evaluate(args.db, args.original, args.anonymized, args.qi, args.class_column, key=args.key,
                     folds=args.folds, seed=args.seed, classifiers=args.classifiers)
    lines = [f"stratified {r.folds}-fold cross validation (seed {r.seed}), {r.rows:,} rows matched by {r.key}: "
             f"trained on {r.anonymized}, tested on {r.original}; baseline trained on {r.original}"]
    lines += [f"  {c.classifier:<4}  error {c.error:.2%}  baseline {c.baseline_error:.2%}  "
              f"({c.degradation * 100:+.2f} points)" for c in r.classifiers.values()]
    _emit(args, r.to_dict(), "\n".join(lines))
    return EXIT_OK


def _kanon(args: argparse.Namespace) -> int:
    if args.dry_run and not args.emit_sql:
        raise AnonsqlError("--dry-run needs --emit-sql FILE (it only writes the script)")
    r = api.k_anonymize(args.db, args.table, args.qi, args.class_column, args.k, cost=args.cost, alpha=args.alpha,
                  seed=args.seed, out=args.out, in_place=args.in_place, replace=args.replace,
                  emit_sql=args.emit_sql, execute=not args.dry_run,
                  progress=None if args.quiet or args.json else _Progress())
    if args.report:
        with open(args.report, "w") as fh:
            json.dump(r.to_dict(), fh, indent=2, default=str)
    secs = ", ".join(f"{k} {v:.2f}" for k, v in r.seconds.items())
    lines = [
        f"{r.table} -> {r.out}: {r.k}-anonymous over {len(r.qi)} QIs (cost {r.cost}, alpha {r.alpha:g}, seed {r.seed})"
        if r.verified else f"{r.table}: script written to {r.emitted_sql}; database unchanged",
        f"  rows {r.rows:,}; distinct (QI, class) tuples {r.groups:,}; merges {r.iterations:,}",
        f"  suppressed cells {r.suppressed_cells:,} of {r.qi_cells:,} ({r.suppressed_ratio:.1%})",
        f"  KL divergence (eq. 7) {r.kl_divergence:.6f}" if r.verified else f"  sum of Γ {r.gamma_sum:.6f}",
        f"  verified by SQL: {'yes' if r.verified else 'not run'}; seconds: {secs}",
    ] + [f"  note: {n}" for n in r.notes]
    _emit(args, r.to_dict(), "\n".join(lines))
    return EXIT_OK


class _Progress:
    """Progress lines on stderr, at most one per second for the loop's frequent reports."""

    def __init__(self):
        self._last = 0.0

    def __call__(self, message: str) -> None:
        now = time.monotonic()
        if message.startswith("  ") and now - self._last < 1.0:
            return
        self._last = now
        sys.stderr.write(message + "\n")


def _add_nbc_parser(sub) -> None:
    """`anonsql nbc views|check|publish|verify|breach`: Mozafari & Zaniolo (2009)."""
    p = sub.add_parser("nbc", help="publish naive Bayes views that are provably safe (Mozafari & Zaniolo 2009)",
                       description="NBC-enabling views (P_c, N^i_{t,c}): check Corollary 4, publish a "
                       "rho-safe NBC-equivalent version (SafetyTransform), verify it, or run the "
                       "possible-worlds attacker on a tiny table. NULL attribute values are ignored "
                       "(counted in P_c only), as the paper's NBC counts complete (value, class) pairs.")
    nsub = p.add_subparsers(dest="nbc_command", required=True, parser_class=_Parser, metavar="NBC_COMMAND")
    helps = {
        "views": "compute (P, N) in one SQL scan and Corollary 4's smallest rho",
        "check": "are the raw views already rho-safe? (exit 0 yes, 1 no)",
        "publish": "write <out>_class and <out>_attr: rho-safe, NBC-equivalent counts (SafetyTransform)",
        "verify": "does the NBC of the published tables rank classes exactly like the source's? (exit 0/1)",
        "breach": "tiny tables: attacker's prior and posterior over all consistent worlds (Section 4)",
    }
    for name, text in helps.items():
        q = nsub.add_parser(name, help=text, description=text)
        _common(q)
        q.add_argument("--class", dest="class_column", required=True, help="the class (sensitive) column C")
        q.add_argument("--attrs", required=True, help="comma-separated attributes A_1..A_n")
        q.add_argument("--precedence", metavar="A,B,C",
                       help="class precedence, lowest first: ties go to the later class "
                       "(default: the classes' sort order, last wins)")
        if name == "views":
            q.add_argument("--counts", action="store_true", help="also list every N^i_{t,c}")
        if name in ("check", "publish"):
            q.add_argument("--rho", required=name == "check",
                           help="amplification ratio rho > 1 (Corollary 4); publish: SafetyTransform")
        if name == "publish":
            q.add_argument("--prior", metavar="C=W,...",
                           help="EST (Figure 7): the attacker's prior as class=weight pairs, e.g. '<=50K=3,>50K=1'")
            q.add_argument("--r", help="with --prior: r-closeness level r > 1")
            q.add_argument("--out", required=True, help="prefix of the tables <out>_class and <out>_attr")
            q.add_argument("--replace", action="store_true", help="replace the output tables if they exist")
            q.add_argument("--synthetic", action="store_true",
                           help="also write <out>_rows, rows whose NBC views equal the published counts "
                           f"(refused above {10**7:,} rows)")
        if name == "verify":
            q.add_argument("--published", required=True, metavar="OUT", help="the --out prefix of a publish run")
        if name == "breach":
            q.add_argument("--known", required=True, metavar="A=V,...", help="Bob's quasi-identifier value I_0")
            q.add_argument("--published", metavar="OUT", help="use these published views instead of the table's")


def _nbc(args: argparse.Namespace) -> int:
    common = dict(precedence=args.precedence)
    t, c, a = args.table, args.class_column, args.attrs
    if args.nbc_command == "views":
        r = api.nbc_views(args.db, t, c, a, counts=args.counts, **common)
        rho = r.smallest_rho_exact or "none (a zero count: no rho makes the raw views safe)"
        lines = [f"{r.table}: {r.rows:,} rows, class {r.class_column} "
                 f"(precedence, last wins: {', '.join(r.classes)})",
                 "P_c: " + ", ".join(f"{k}={v:,}" for k, v in r.P.items()),
                 "values per attribute: " + ", ".join(f"{k}={v}" for k, v in r.domain_sizes.items()),
                 f"zero counts N^i_(t,c) = 0: {r.zero_counts}", f"smallest rho (Corollary 4): {rho}",
                 f"k-SIND (Lemma 10, min P_c): {r.k_sind:,}"]
        if any(r.null_cells.values()):
            lines.append("NULL cells ignored: " + ", ".join(f"{k}={v:,}" for k, v in r.null_cells.items() if v))
        if r.N:
            lines += [f"  {x['attribute']}={x['value']} {x['class']}: {x['count']}" for x in r.N]
        _emit(args, r.to_dict(), "\n".join(lines))
        return EXIT_OK
    if args.nbc_command == "check":
        r = api.nbc_check(args.db, t, c, a, args.rho, **common)
        verdict = "satisfy" if r.safe else "do NOT satisfy"
        _emit(args, r.to_dict(), f"the views of {r.table} {verdict} condition (10) for rho = {r.rho:g} "
              f"(smallest rho: {r.smallest_rho if r.smallest_rho is not None else 'none, a zero count'})")
        return EXIT_OK if r.safe else EXIT_FAILED
    if args.nbc_command == "publish":
        r = api.nbc_publish(args.db, t, c, a, args.rho, args.out, replace=args.replace, prior=args.prior,
                            r=args.r, synthetic=args.synthetic, **common)
        how = "already safe, published unchanged" if r.identity else f"{r.method} k = {r.k}, {r.bits} bits"
        _emit(args, r.to_dict(), f"published {r.out_class} and {r.out_attr} ({how}): achieved rho "
              f"{r.achieved_rho:.6g} (requested {r.rho:g}), NBC-equivalent on the {r.equivalence_checked_on}, "
              f"checked by SQL; class precedence {', '.join(r.classes)}; k-SIND {r.k_sind}"
              + (f"; synthetic rows in {r.out_rows}" if r.out_rows else ""))
        return EXIT_OK
    if args.nbc_command == "verify":
        r = api.nbc_verify(args.db, t, c, a, args.published, **common)
        text = (f"{r.published}: NBC-equivalent to {r.table} on the {r.checked_on} ({r.tuples_checked:,} tuples)"
                if r.equivalent else
                f"{r.published}: NOT NBC-equivalent to {r.table}:\n  " + "\n  ".join(r.differences))
        _emit(args, r.to_dict(), text)
        return EXIT_OK if r.equivalent else EXIT_FAILED
    r = api.nbc_breach(args.db, t, c, a, args.known, published=args.published, **common)
    lines = [f"{r['worlds']:,} consistent worlds for {', '.join(f'{k}={v}' for k, v in r['known'].items())}:"]
    lines += [f"  {k}: prior {r['prior'][k]:.2%} (class share {r['class_share'][k]:.2%}) -> posterior {v:.2%}"
              for k, v in r["posterior"].items()]
    _emit(args, r, "\n".join(lines))
    return EXIT_OK


def _protect(args: argparse.Namespace) -> int:
    cells = api.read_cells_csv(args.cells) if args.cells else None
    r = api.protect(args.db, args.table, args.key, method=args.method, target=args.target, rows=args.rows,
                    cells=cells, predictors=args.predictors, top_k=args.top_k, seed=args.seed, out=args.out,
                    in_place=args.in_place, replace=args.replace, delete_rows=args.delete_rows,
                    taxonomies=args.taxonomy)
    if args.report:
        with open(args.report, "w") as fh:
            json.dump(r.to_dict(), fh, indent=2, default=str)
    lines = [f"{r.table} -> {r.out} ({r.method}, top-k {r.top_k}, seed {r.seed}); changes in {r.changes_table}"]
    for c in r.cells:
        lines.append(f"  {r.key} = {c.key}, {c.column}: {c.status}; predicted {c.prediction_before}, "
                     f"now {c.prediction_after}; "
                     f"{c.side_effects} other cell(s) {'generalized' if r.taxonomies else 'hidden'}"
                     + ("; TUPLE DELETED" if c.deleted else ""))
    m = r.metrics
    lines.append(f"  changed cells {r.changed_cells:,}; deleted tuples {r.deleted_tuples}"
                 + (" (rows removed)" if r.rows_removed else " (kept, all cells NULL)" if r.deleted_tuples else ""))
    lines.append(f"  sum KL {m['sum_kl_distance']:.4f}; avg change MI {m['avg_change_mutual_information']}; "
                 f"sum cond. entropy {m['sum_conditional_entropy']:.4f}")
    done = "generalized" if r.taxonomies else "hidden"
    lines.append(f"  verified by SQL: every cell {done} and no longer predicted" if r.verified else "  NOT verified")
    _emit(args, r.to_dict(), "\n".join(lines))
    return EXIT_OK


def _features_parsers(sub: argparse._SubParsersAction) -> None:
    """binarize, features, ac: Zhang et al. 2017 feature selection under k-anonymity by containment."""
    p = sub.add_parser("binarize", help="derive 0/1 columns from categorical and numeric ones (TOML spec)",
                       description="Write a new table with one 0/1 column per [[binary]] entry of a TOML spec: "
                       "an interval (lower, upper] of a numeric column or a set of values of any column; NULL "
                       "cells give 0. --key and --class are copied unchanged.",
                       epilog="example: anonsql binarize --db demo.duckdb --table adult --class income "
                       "--spec benchmarks/adult_bins.toml --out adult_bin")
    _common(p)
    p.add_argument("--spec", required=True, help="TOML file of [[binary]] entries (name, column, lower/upper or equals/in)")
    p.add_argument("--out", required=True, help="output table")
    p.add_argument("--class", dest="class_column", help="class column, copied unchanged")
    p.add_argument("--key", help="row key column, copied unchanged")
    p.add_argument("--replace", action="store_true", help="replace the output table if it exists")

    p = sub.add_parser("features", help="publish the columns that keep the class signal under k-AC (Zhang et al. 2017)",
                       description="Select 0/1 feature columns so that every row's set of 1-columns is contained in "
                       "those of at least k-1 other rows (k-anonymity by containment), keeping the columns that "
                       "separate the two classes best. The selected columns plus the class are published as a "
                       "view (or a table with --materialize), re-checked by SQL to have AC >= k.",
                       epilog="methods: distcnt = Greedy DistCnt (Alg. 3); hamdist = Greedy HamDist (Alg. 2); "
                       "maximal = best HamDist among the --top-r largest maximal k-frequent itemsets (Alg. 1); "
                       "cm = CM-greedy baseline (Def. 2). --privacy kanon: plain k-anonymity of the projection "
                       "(the paper's baselines). --mode stop (the paper's) ends at the first infeasible feature; "
                       "skip passes over it.  example: anonsql features --db demo.duckdb --table adult_bin "
                       "--class income --k 5 --method distcnt --out adult_pub")
    _common(p)
    p.add_argument("--class", dest="class_column", required=True, help="class column with exactly two values")
    p.add_argument("--k", required=True, type=_k_value, help="the anonymity threshold k >= 1")
    p.add_argument("--method", default="distcnt", help="distcnt (default), hamdist, maximal or cm")
    p.add_argument("--privacy", default="ac", help="ac (k-anonymity by containment, default) or kanon")
    p.add_argument("--mode", default="stop", help="stop (the paper's, default) or skip")
    p.add_argument("--top-r", type=int, default=20, help="maximal: how many of the largest maximal sets to score (default 20)")
    p.add_argument("--key", help="row key column, not a feature (with --items: the key in both tables)")
    p.add_argument("--features", help="comma-separated feature columns (default: all but --key and --class)")
    p.add_argument("--items", help="long input: a (key, item) table; --table then holds key and class per row")
    p.add_argument("--item", dest="item_column", help="with --items: the item column")
    p.add_argument("--out", help="output view/table (default <table>_ac<k>)")
    p.add_argument("--materialize", action="store_true", help="write a table instead of a view")
    p.add_argument("--replace", action="store_true", help="replace the output if it exists")
    p.add_argument("--report", metavar="FILE", help="also write the JSON report to FILE")
    p.add_argument("--quiet", action="store_true", help="no progress lines on stderr")

    p = sub.add_parser("ac", help="AC(D): the k for which a 0/1 table is k-anonymous by containment",
                       description="Compute, in SQL, each row's containment support AC(e) (rows whose 1-columns "
                       "include its own) and AC(D), their minimum; with --class also DistCnt and HamDist.",
                       epilog="example: anonsql ac --db demo.duckdb --table adult_pub --class income")
    _common(p)
    p.add_argument("--class", dest="class_column", help="class column (excluded from the features)")
    p.add_argument("--key", help="row key column, not a feature")
    p.add_argument("--features", help="comma-separated feature columns (default: all but --key and --class)")


def _binarize(args: argparse.Namespace) -> int:
    r = api.binarize(args.db, args.table, args.spec, args.out, class_column=args.class_column, key=args.key,
                     replace=args.replace)
    lines = [f"{r.table} -> {r.out}: {len(r.columns)} binary columns, {r.rows:,} rows, density {r.density:.1%}"]
    lines += [f"  {c}: {n:,} rows with 1" for c, n in r.ones.items()]
    _emit(args, r.to_dict(), "\n".join(lines))
    return EXIT_OK


def _features(args: argparse.Namespace) -> int:
    r = api.select_features(args.db, args.table, args.class_column, args.k, method=args.method,
                            privacy=args.privacy, mode=args.mode, top_r=args.top_r, key=args.key,
                            features=args.features, items=args.items, item_column=args.item_column, out=args.out,
                            materialize=args.materialize, replace=args.replace,
                            progress=None if args.quiet or args.json else _Progress())
    if args.report:
        with open(args.report, "w") as fh:
            json.dump(r.to_dict(), fh, indent=2, default=str)
    secs = ", ".join(f"{k} {v:.2f}" for k, v in r.seconds.items())
    kind = "table" if r.materialized else "view"
    lines = [
        f"{r.table} -> {r.out} ({kind}): {len(r.selected)} of {r.features_considered} features by {r.method} "
        f"({'k-AC' if r.privacy == 'ac' else 'k-anonymity'} k = {r.k}, mode {r.mode})",
        f"  selected, in order: {', '.join(r.selected) if r.selected else '(none)'}",
        f"  AC of the projection {r.ac}; k-anonymous for k = {r.kanon}",
        f"  HamDist {r.hamdist:.4f} (all features {r.full_hamdist:.4f}); "
        f"DistCnt {r.distcnt:.4f} (all features {r.full_distcnt:.4f})",
    ]
    if r.stopped_by:
        lines.append(f"  stopped at {r.stopped_by}: adding it breaks the constraint (--mode skip passes over it)")
    if r.skipped:
        lines.append(f"  skipped {r.skipped} infeasible feature(s)")
    lines.append(f"  verified by SQL: {'yes' if r.verified else 'no'}; seconds: {secs}")
    _emit(args, r.to_dict(), "\n".join(lines))
    return EXIT_OK


def _ac(args: argparse.Namespace) -> int:
    r = api.containment(args.db, args.table, class_column=args.class_column, key=args.key, features=args.features)
    lines = [f"{r.table}: AC(D) = {r.ac} over {len(r.features)} features ({r.rows:,} rows, "
             f"{r.distinct_masks:,} distinct containment sets); k-anonymous for k = {r.kanon}",
             "  rows by AC(e), smallest first: " + ", ".join(f"{a}: {n:,}" for a, n in r.rows_by_ac.items())]
    if r.distcnt is not None:
        lines.append(f"  DistCnt {r.distcnt:.4f}, HamDist {r.hamdist:.4f}")
    _emit(args, r.to_dict(), "\n".join(lines))
    return EXIT_OK


def _taxonomy(args: argparse.Namespace) -> int:
    if args.taxonomy_command == "load":
        r = api.taxonomy_load(args.db, args.name, file=args.file, table=args.from_table, replace=args.replace)
        _emit(args, r.to_dict(), f"taxonomy {r.name!r} {'replaced' if r.replaced else 'stored'} in {r.store}: "
              f"{r.nodes} nodes, {r.leaves} leaves, height {r.height}, root {r.root!r}")
        return EXIT_OK
    rows = api.taxonomy_show(args.db, args.name)
    depth: dict[str, int] = {}
    lines = []
    for value, parent in rows:
        depth[value] = 0 if parent is None else depth[parent] + 1
        lines.append("  " * depth[value] + value)
    _emit(args, {"name": args.name, "rows": [list(r) for r in rows]}, "\n".join(lines))
    return EXIT_OK


_COMMANDS = {"load": _load, "dataset": _dataset, "profile": _profile, "check": _check, "bin": _bin, "kanon": _kanon,
             "evaluate": _evaluate, "nbc": _nbc,
             "protect": _protect, "taxonomy": _taxonomy, "binarize": _binarize, "features": _features, "ac": _ac}


if __name__ == "__main__":
    sys.exit(main())
