"""A release spec as dbt (`anonsql dbt export`): the schema.yml of the dbt_anonsql package
(integrations/dbt_anonsql) whose tests and model configs correspond to the release's gates and
steps, so a steward keeps both in step.

Each gated table (every published drop, bin, kanon or protect output, and [gates] table) gets the
tests of the gates dbt can check: `k` and `max_risk` (1/|E| <= max_risk is |E| >= ceil(1/max_risk))
as one k_anonymity, `l_diversity` and `t_closeness` per column, and no_direct_identifiers over its
columns outside the quasi-identifiers. A kanon step's output is materialized `anonsql_kanon` with
the step's options, a tables step's `anonsql_safe_table`. The other gates (suppressed share,
classifier error, journalist risk, linkage) compare the table with its source or a population:
no dbt test checks them, and the file says so. Pure: no database is opened.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any, ClassVar

from ..errors import AnonsqlError
from ..report import Report
from .spec import ROW_KINDS, Spec, load, names

#: Gates that compare a table with its source or a population: no dbt_anonsql test checks them.
NOT_IN_DBT = ("max_suppressed", "max_nb_error_loss", "max_journalist_risk", "max_linkage_success")
#: kanon step options that are anonsql_kanon configs of the same name (qi, class, k also come from the release).
KANON_CONFIGS = ("k", "cost", "alpha", "seed", "drop", "pseudonymize", "key_file", "l_diversity", "entropy_l",
                 "t_closeness")
TABLES_CONFIGS = ("dims", "min_count", "margins", "contributor", "dominance", "p_percent", "protection",
                  "zero_unsafe")


@dataclass(kw_only=True)
class DbtExportReport(Report):
    """The schema.yml of a release: which models it configures and tests, and the gates left out."""

    PROVES: ClassVar[bool] = False

    spec: str
    models: list[str] = field(default_factory=list)
    tests: int = 0
    not_in_dbt: list[str] = field(default_factory=list)
    yaml: str = ""

    def lines(self) -> list[str]:
        lines = [f"{self.spec}: {self.tests} dbt_anonsql tests on {len(self.models)} models ({', '.join(self.models)})"
                 + (f" -> {self.out}" if self.out else "")]
        if self.not_in_dbt:
            lines.append(f"  gates no dbt test checks (run `anonsql release verify`): {', '.join(self.not_in_dbt)}")
        return lines


def _flow(value: Any) -> str:
    """A YAML flow value (JSON is YAML): names stay exactly as spelled, quoted."""
    return json.dumps(value, ensure_ascii=False)


def _test(name: str, arguments: dict[str, Any]) -> str:
    return f"      - dbt_anonsql.{name}:\n          arguments: {_flow(arguments)}"


def _gate_tests(spec: Spec, qi: list[str]) -> list[str]:
    """The dbt_anonsql tests of the release's gates on one gated table."""
    g = spec.gates
    least = [g.k or 1] + ([math.ceil(1 / g.max_risk - 1e-9)] if g.max_risk else [])
    tests = [_test("k_anonymity", {"quasi_identifiers": qi, "k": max(least)})] if g.k or g.max_risk else []
    tests += [_test("l_diversity", {"quasi_identifiers": qi, "sensitive": s, "l": n}) for s, n in g.l_diversity.items()]
    tests += [_test("t_closeness", {"quasi_identifiers": qi, "sensitive": s, "t": t})
              for s, t in g.t_closeness.items()]
    return tests


def _columns(qi: list[str], spec: Spec) -> list[str]:
    """The columns' roles, the one place the package reads them from."""
    roles = {**{c: "qi" for c in qi}, **{c: "sensitive" for c in spec.source.sensitive if c not in qi}}
    if spec.source.class_column and spec.source.class_column not in roles:
        roles[spec.source.class_column] = "class"
    return [f"      - name: {_flow(c)}\n        meta: {{anonsql: {{role: {role}}}}}" for c, role in roles.items()]


def dbt_export(spec_path: str) -> DbtExportReport:
    """The schema.yml text of the release `spec_path` (see the module's docstring)."""
    spec = load(spec_path)
    kanon = next((s for s in spec.steps if s.kind == "kanon"), None)
    qi = names(spec.gates.qi) or (names(kanon.options.get("qi")) if kanon else []) or spec.source.qi
    gated = [s.out for s in spec.steps if s.publish and s.kind in ROW_KINDS]
    gated += [spec.gates.table] if spec.gates.table and spec.gates.table not in gated else []
    models: dict[str, list[str]] = {}
    tests = 0
    for step in spec.steps:
        if step.kind == "kanon":
            options = {"qi": names(step.options.get("qi")) or qi, "class": step.options.get("class")
                       or spec.source.class_column, "seed": spec.seed,
                       **{k: step.options[k] for k in KANON_CONFIGS if k in step.options}}
            models[step.out] = ["      materialized: anonsql_kanon"] + [f"      {k}: {_flow(v)}"
                                                                        for k, v in options.items() if v is not None]
        elif step.kind == "tables" and not step.options.get("tables"):
            options = {k: step.options[k] for k in TABLES_CONFIGS if k in step.options}
            models[step.out] = ["      materialized: anonsql_safe_table"] + [f"      {k}: {_flow(v)}"
                                                                             for k, v in options.items()]
    out = [f"# The dbt_anonsql tests and configs of the release {spec.name} ({spec.path.name}), written by",
           f"# `anonsql dbt export {spec.path.name}`; `anonsql release verify` proves every gate.", "version: 2",
           "models:"]
    for name in dict.fromkeys([*gated, *models]):
        out.append(f"  - name: {_flow(name)}")
        if models.get(name):
            out += ["    config:", *models[name]]
        if name in gated:
            gate_tests = _gate_tests(spec, qi)
            gate_tests.append(_test("no_direct_identifiers", {}).replace(":\n          arguments: {}", ""))
            out += ["    columns:", *_columns(qi, spec), "    data_tests:", *gate_tests]
            tests += len(gate_tests)
    if len(out) == 4:
        raise AnonsqlError(f"{spec.at(None, None, None)}: nothing to export to dbt: no published drop, bin, kanon or "
                           "protect step, no kanon or tables step, no [gates] table")
    left = [k for k in NOT_IN_DBT if getattr(spec.gates, k) is not None]
    if left:
        out.insert(3, f"# gates no dbt test checks: {', '.join(left)}")
    return DbtExportReport(table=spec.source.table, spec=str(spec.path), models=list(dict.fromkeys([*gated, *models])),
                           tests=tests, not_in_dbt=left, yaml="\n".join(out) + "\n")
