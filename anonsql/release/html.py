"""The release report for people: one self-contained HTML page (no external files), the plots as
base64 PNG drawn by matplotlib when it is installed (the page says so when it is not)."""

from __future__ import annotations

import base64
import io
from collections.abc import Sequence
from html import escape
from typing import TYPE_CHECKING, Any

from . import publication
from .spec import PRIVATE_DIR, PRIVATE_FILES, Spec, artefact_path

if TYPE_CHECKING:
    from .report import ReleaseReport
    from .stats import Distribution
    from .verify import Proof

#: Every figure the page shows, with its definition (shown next to it and in the glossary).
DEFINITIONS = {
    "rows": "N, the number of rows of the table.",
    "k": "the size of the smallest equivalence class |E|: rows sharing one combination of quasi-identifier "
         "values, NULL (suppressed) counting as a value of its own.",
    "prosecutor risk": "the highest re-identification risk over the records, max 1/|E|: an attacker who knows "
                       "a person is in the table picks one record of that person's class.",
    "mean risk": "the mean over the records of 1/|E| (= classes / N).",
    "records at risk": "records whose risk 1/|E| exceeds the threshold (the risk gate, else 0.2).",
    "sample uniques": "records alone in their equivalence class (|E| = 1).",
    "class size histogram": "for each range of class sizes |E|, how many rows sit in equivalence classes of "
                            "that size (a row in a class of size 1 is unique on the quasi-identifiers).",
    "suppressed cells": "quasi-identifier cells that are NULL after the release but were not before it, per "
                        "column; the share divides their sum by N x (number of quasi-identifiers).",
    "l-diversity": "distinct l-diversity: the fewest distinct sensitive values in any equivalence class.",
    "t-closeness": "the largest distance between a class's sensitive-value distribution and the table's.",
    "error": "misclassified / N in stratified cross-validation, tested on the baseline rows: 'before' trains "
             "on the baseline, 'after' on the published table (Kameya & Hayashi 2016, Sec. 4).",
    "value distribution": "rows per value of a quasi-identifier or sensitive column in the baseline (before) and the "
                          "published table (after): the values with the most rows, the rest as 'other'; ⊥ is NULL. "
                          "Suppressed: the column's NULL cells the release added, as a share of the rows. Set side by "
                          "side, the two tell the original values of changed cells, so they sit in the private "
                          "folder, not on this page.",
    "risk by class size": "an attacker who knows a person is in the table and their quasi-identifiers picks one "
                          "row of their class E: right with probability 1/|E|; the plot shows, per range of class "
                          "sizes, the highest such risk and how many rows carry it.",
    "fingerprint": "the row count and an MD5 over the sorted MD5s of the rows (sql/release/fingerprint.sql).",
}

_STYLE = """body{font-family:system-ui,sans-serif;margin:2em auto;max-width:70em;color:#222}
table{border-collapse:collapse;margin:.5em 0 1.5em}td,th{border:1px solid #bbb;padding:.25em .6em;text-align:left}
th{background:#eee}.pass{color:#070;font-weight:bold}.fail{color:#b00;font-weight:bold}.def{color:#555;font-size:.9em}
code{font-size:.9em}img{max-width:100%;border:1px solid #ddd}.note{background:#fff4d0;padding:.5em}
.warnings{background:#fde2e2;border:2px solid #b00;padding:.5em 1em;margin:1em 0}.private{color:#b00}"""


#: Ranges of class sizes |E| for the histogram: (label, lowest, highest).
BUCKETS = [("1", 1, 1), ("2", 2, 2), ("3-4", 3, 4), ("5-9", 5, 9), ("10-19", 10, 19), ("20-49", 20, 49),
           ("50-99", 50, 99), ("100-999", 100, 999), ("1000+", 1000, 1 << 62)]


def _bucketed(sizes: Sequence[tuple[int, int]]) -> list[int]:
    """Rows per range of BUCKETS, from (|E|, classes) pairs.

    >>> _bucketed([(1, 3), (4, 2), (12, 1)])
    [3, 0, 8, 0, 12, 0, 0, 0, 0]
    """
    return [sum(s * c for s, c in sizes if lo <= s <= hi) for _, lo, hi in BUCKETS]


def _table(head: Sequence[str], rows: Sequence[Sequence[Any]], cls: str = "") -> str:
    th = "".join(f"<th>{escape(h)}</th>" for h in head)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    return f'<table class="{cls}"><thead><tr>{th}</tr></thead><tbody>{body}</tbody></table>'


def _num(v: float) -> str:
    return f"{v:,}" if isinstance(v, int) else f"{v:.4g}"


def _plots(proof: Proof) -> list[tuple[str, str]]:
    """(title, base64 PNG) of the class size histogram, suppressed cells and errors; [] without matplotlib."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return []
    out = []

    def png(fig: Any) -> str:
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=80, bbox_inches="tight", metadata={"Software": None})
        plt.close(fig)
        return base64.b64encode(buf.getvalue()).decode("ascii")

    fig, ax = plt.subplots(figsize=(7, 3.2))
    labels = [label for label, _, _ in BUCKETS]
    for shift, side, name in ((-0.2, proof.before, "before"), (0.2, proof.after, "after")):
        ax.bar([i + shift for i in range(len(labels))], _bucketed(side.class_sizes), 0.4,
               label=f"{name} ({side.table})")
    ax.set_xticks(range(len(labels)), labels)
    ax.set_xlabel("equivalence class size |E|")
    ax.set_ylabel("rows in classes of that size")
    ax.legend()
    out.append(("Equivalence class sizes before and after", png(fig)))
    fig, ax = plt.subplots(figsize=(7, 3.2))
    cols = list(proof.suppressed_cells)
    ax.barh(cols, [proof.suppressed_cells[c] for c in cols])
    ax.set_xlabel("suppressed cells")
    out.append(("Suppressed cells per quasi-identifier", png(fig)))
    if proof.errors:
        fig, ax = plt.subplots(figsize=(5, 3))
        names = list(proof.errors)
        xs = range(len(names))
        ax.bar([x - 0.2 for x in xs], [proof.errors[n]["before"] for n in names], 0.4, label="before")
        ax.bar([x + 0.2 for x in xs], [proof.errors[n]["after"] for n in names], 0.4, label="after")
        ax.set_xticks(list(xs), names)
        ax.set_ylabel("error")
        ax.legend()
        out.append(("Classifier error before and after", png(fig)))
    return out


def _def(name: str) -> str:
    return f'<span class="def">{escape(DEFINITIONS[name])}</span>'


def page(report: ReleaseReport, spec: Spec) -> str:
    """The whole page as text."""
    from ..version import version


    plan, proof = report.plan, report.proof
    h = [f"<!DOCTYPE html><html lang=en><head><meta charset=utf-8><title>anonsql release {escape(report.name)}"
         f"</title><style>{_STYLE}</style></head><body>",
         f"<h1>Release {escape(report.name)}</h1>",
         f"<p>anonsql {escape(version())} on {escape(report.dialect)}; spec <code>{escape(spec.path.name)}</code> "
         f"(sha256 <code>{escape(spec.sha256)}</code>); input <code>{escape(report.table)}</code>: "
         f"{report.input['rows']:,} rows, fingerprint <code>{escape(report.input['digest'])}</code>.</p>",
         _public_note(spec), *_warnings(report.warnings), "<h2>Gates</h2>"]
    gates = [c for c in report.checks if c.name.startswith("gate:")]
    h.append(_table(["gate", "result", "measured", "proved by"], [
        [escape(c.name.removeprefix("gate: ")), '<span class="pass">pass</span>' if c.passed else
         '<span class="fail">FAIL</span>', escape(c.detail), f"<code>sql/{escape(c.query)}.sql</code>"]
        for c in gates], "gates") if gates else "<p>No gates in the spec.</p>")
    published, private = publication.split(plan)
    h.append("<h2>What was published</h2>")
    h.append(_listed(report, published, "published"))
    h.append(f"<p>{_def('fingerprint')}</p>")
    if private:
        h.append('<h2 class="private">Private tables: never publish</h2><p>They stay in the database and hold '
                 "ORIGINAL values (protect's changes, the safe tables' audit); their fingerprints prove they are "
                 "unchanged.</p>")
        h.append(_listed(report, private, "private"))
    h.append("<h2>Step checks</h2>")
    h.append(_table(["check", "result", "proved by"], [
        [escape(c.name), '<span class="pass">holds</span>' if c.passed else '<span class="fail">FAILS</span>',
         f"<code>sql/{escape(c.query)}.sql</code>"] for c in report.checks if not c.name.startswith("gate:")]))
    if proof is not None:
        h += _figures(proof, plan.qi)
        h += _attacks(report)
        h.append(f"<h2>Value distributions before and after</h2><p>In <code>{PRIVATE_DIR}/"
                 f"{escape(spec.files['utility'])}</code>, as private as the source. {_def('value distribution')}</p>")
    h.append("<h2>Definitions</h2><dl>" + "".join(f"<dt>{escape(k)}</dt><dd>{escape(v)}</dd>"
                                                  for k, v in DEFINITIONS.items()) + "</dl>")
    h.append(f"<p>The manifest (JSON) sits next to this page and records every file's sha256; the whole release "
             f"as one SQL script and the row-level change lists sit in <code>{PRIVATE_DIR}/</code>.</p></body></html>")
    return "\n".join(h) + "\n"


def _public_note(spec: Spec) -> str:
    private = ", ".join(f"<code>{escape(artefact_path(w, n))}</code>" for w, n in spec.files.items()
                        if w in PRIVATE_FILES)
    return (f'<p class="note">Everything in this release folder is public <b>except the <code>{PRIVATE_DIR}/'
            f"</code> subfolder</b> ({private}): it spells out original values; keep it as private as the "
            "source.</p>")


def _warnings(warnings: Sequence[str]) -> list[str]:
    if not warnings:
        return ["<p>No privacy warnings.</p>"]
    items = "".join(f"<li>{escape(w)}</li>" for w in warnings)
    return [f'<div class="warnings"><h2>Privacy warnings ({len(warnings)})</h2><ul>{items}</ul></div>']


def _listed(report: ReleaseReport, tables: Sequence[str], cls: str) -> str:
    """One row per table: the step that wrote it, its input, rows and fingerprint."""
    step = {t: s for s in report.plan.steps for t in s.outputs}
    return _table(["table", "step", "input", "rows", "fingerprint"], [
        [escape(t), f"{step[t].number}. {escape(step[t].kind)}", escape(step[t].input),
         f"{report.outputs[t]['rows']:,}", f"<code>{report.outputs[t]['digest'][:12]}</code>"] for t in tables], cls)


def _figures(proof: Proof, qi: Sequence[str]) -> list[str]:
    b, a = proof.before, proof.after
    h = [f"<h2>Risk before and after</h2><p>Over the quasi-identifiers {escape(', '.join(qi))}; before: "
         f"<code>{escape(b.table)}</code>, after: <code>{escape(a.table)}</code>.</p>"]
    k = (b.class_sizes[0][0] if b.class_sizes else 0, a.class_sizes[0][0] if a.class_sizes else 0)
    rows = [("rows", b.rows, a.rows), ("k", *k), ("prosecutor risk", b.risk.max_risk, a.risk.max_risk),
            ("mean risk", b.risk.mean_risk, a.risk.mean_risk),
            ("records at risk", b.risk.records_above_threshold, a.risk.records_above_threshold),
            ("sample uniques", b.risk.sample_uniques, a.risk.sample_uniques)]
    h.append(_table(["figure", "before", "after", "definition"],
                    [[escape(n), _num(x), _num(y), _def(n)] for n, x, y in rows], "risk"))
    for d in a.sensitive:
        h.append(f"<p>Sensitive <code>{escape(d.column)}</code> after: distinct l-diversity {d.distinct_l}, "
                 f"t-closeness {d.t:.4g}. {_def('l-diversity')} {_def('t-closeness')}</p>")
    plots = _plots(proof)
    if not plots:
        h.append('<p class="note">Plots need matplotlib (pip install \'anonsql[plots]\'); it is not installed, '
                 "so this page shows the figures as tables only.</p>")
    images = {title: f'<figure><img alt="{escape(title)}" src="data:image/png;base64,{data}">'
              f"<figcaption>{escape(title)}</figcaption></figure>" for title, data in plots}
    h.append(f"<h2>Equivalence class sizes</h2><p>{_def('class size histogram')}</p>")
    h.append(images.get("Equivalence class sizes before and after", ""))
    h.append(_table(["|E|", "rows before", "rows after"],
                    [[label, f"{x:,}", f"{y:,}"] for (label, _, _), x, y in
                     zip(BUCKETS, _bucketed(b.class_sizes), _bucketed(a.class_sizes))], "classes"))
    h.append(f"<h2>Suppressed cells per column</h2><p>{_def('suppressed cells')} Share: "
             f"{proof.suppressed_share:.2%}.</p>")
    h.append(images.get("Suppressed cells per quasi-identifier", ""))
    h.append(_table(["column", "NULL before", "NULL after", "suppressed"],
                    [[escape(c), f"{b.null_cells[c]:,}", f"{a.null_cells[c]:,}", f"{n:,}"]
                     for c, n in proof.suppressed_cells.items()], "suppressed"))
    if proof.errors:
        h.append(f"<h2>Classifier error before and after</h2><p>{_def('error')}</p>")
        h.append(images.get("Classifier error before and after", ""))
        h.append(_table(["classifier", "error before", "error after", "loss"],
                        [[escape(n), f"{e['before']:.4f}", f"{e['after']:.4f}", f"{e['after'] - e['before']:+.4f}"]
                         for n, e in proof.errors.items()], "errors"))
    return h


def _attacks(report: ReleaseReport) -> list[str]:
    """The attacks the gates ran on every gated table, each in plain words, and the plot (and
    table) of re-identification risk by class size of the primary gated table."""
    proof = report.proof
    said = [s for p in report.proofs.values() for s in p.attacks]
    h = ["<h2>Attacks on what is published</h2>"]
    h += [f'<p class="attack">{escape(s)}</p>' for s in said] or \
        ["<p>No attack gate in the spec (max_journalist_risk, max_linkage_success, min_candidates).</p>"]
    if proof is None:
        return h
    sizes = proof.after.class_sizes
    rows = _bucketed(sizes)
    h.append(f"<h3>Risk by class size</h3><p>{_def('risk by class size')}</p>")
    plot = _risk_plot(proof)
    h.append(f'<figure><img alt="Risk by class size" src="data:image/png;base64,{plot}"><figcaption>Risk by class '
             f"size ({escape(proof.after.table)})</figcaption></figure>" if plot else "")
    h.append(_table(["|E|", "highest risk 1/|E|", "rows"],
                    [[label, f"{1 / lo:.4g}", f"{n:,}"] for (label, lo, _), n in zip(BUCKETS, rows) if n],
                    "risk-by-size"))
    return h


def _risk_plot(proof: Proof) -> str:
    """Base64 PNG: per range of class sizes, the highest risk 1/|E| (bars) and its rows (labels); ''
    without matplotlib."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return ""
    rows = _bucketed(proof.after.class_sizes)
    shown = [(label, 1 / lo, n) for (label, lo, _), n in zip(BUCKETS, rows) if n]
    fig, ax = plt.subplots(figsize=(7, 3.2))
    bars = ax.bar([label for label, _, _ in shown], [r for _, r, _ in shown])
    ax.bar_label(bars, labels=[f"{n:,} rows" for _, _, n in shown], fontsize=8)
    ax.set_xlabel("equivalence class size |E|")
    ax.set_ylabel("highest risk 1/|E|")
    ax.set_ylim(0, 1.15)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=80, bbox_inches="tight", metadata={"Software": None})
    plt.close(fig)
    return base64.b64encode(buf.getvalue()).decode("ascii")


def utility_page(report: ReleaseReport) -> str:
    """private/utility.html: per-attribute utility (ARX's utility views), for each gated table and
    each QI and sensitive column, its value distribution before and after as a plot (with
    matplotlib) and its numbers beside it. PRIVATE: the baseline's counts beside the published
    ones tell the values of the changed cells."""
    h = [f"<!DOCTYPE html><html lang=en><head><meta charset=utf-8><title>anonsql release {escape(report.name)}: "
         f"value distributions (PRIVATE)</title><style>{_STYLE}</style></head><body>",
         f"<h1>Release {escape(report.name)}: value distributions before and after</h1>",
         '<p class="warnings"><b>PRIVATE</b>: the counts of the source beside the published ones tell the original '
         "values of changed cells; keep this page as private as the source.</p>",
         f"<p>{_def('value distribution')}</p>"]
    for table, proof in report.proofs.items():
        h.append(f"<h2>{escape(table)} against {escape(proof.before.table)}</h2>")
        h += _utility(proof)
    if not report.proofs:
        h.append("<p>No gated table: nothing to compare.</p>")
    return "\n".join([*h, "</body></html>"]) + "\n"


def _utility(proof: Proof) -> list[str]:
    """Each column's section: the plot and the table of its numbers."""
    h = []
    plots = _distribution_plots(proof.utility)
    for d in proof.utility:
        rows = [[escape(_label(v)), f"{b:,}", f"{a:,}"] for v, b, a in d.values]
        if d.other_before or d.other_after:
            rows.append(["<i>other</i>", f"{d.other_before:,}", f"{d.other_after:,}"])
        share = d.nulls_added / max(1, proof.after.rows)
        h.append(f'<section class="utility"><h3><code>{escape(d.column)}</code></h3>'
                 f"<p>Suppressed: {d.nulls_added:,} cells ({share:.2%} of the rows).</p>")
        if d.column in plots:
            h.append(f'<figure><img alt="{escape(d.column)} before and after" '
                     f'src="data:image/png;base64,{plots[d.column]}"></figure>')
        h.append(_table(["value", "rows before", "rows after"], rows, "distribution") + "</section>")
    return h

def _label(value: str | None) -> str:
    return "⊥ (NULL)" if value is None else value


def _distribution_plots(distributions: Sequence[Distribution]) -> dict[str, str]:
    """column -> base64 PNG of its values' rows before and after, side by side; {} without matplotlib."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return {}
    out = {}
    for d in distributions:
        labels = [_label(v) for v, _, _ in d.values] + ["other"]
        before = [b for _, b, _ in d.values] + [d.other_before]
        after = [a for _, _, a in d.values] + [d.other_after]
        fig, ax = plt.subplots(figsize=(7, 0.8 + 0.28 * len(labels)))
        ys = range(len(labels))
        ax.barh([y - 0.2 for y in ys], before, 0.4, label="before")
        ax.barh([y + 0.2 for y in ys], after, 0.4, label="after")
        ax.set_yticks(list(ys), labels)
        ax.invert_yaxis()
        ax.set_xlabel("rows")
        ax.legend()
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=80, bbox_inches="tight", metadata={"Software": None})
        plt.close(fig)
        out[d.column] = base64.b64encode(buf.getvalue()).decode("ascii")
    return out
