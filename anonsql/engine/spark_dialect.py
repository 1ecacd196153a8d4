"""anonsql's Spark SQL dialect: sqlglot's Spark with the AST rewrites that make Spark compute what
the DuckDB text of a template computes (anonsql.engine.dialects looks it up; imported only when
a Spark engine generates SQL, as sqlglot's Spark and Hive dialects cost a start ~40 ms)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sqlglot import exp
from sqlglot.dialects.spark import Spark

_INTEGER_TYPES = (exp.DType.TINYINT, exp.DType.SMALLINT, exp.DType.INT, exp.DType.BIGINT)
#: Operands whose value is integral already: a cast of them to an integer type needs no rounding.
_INTEGRAL = (exp.Floor, exp.Ceil, exp.Round, exp.IntDiv, exp.Count)


def round_before_integer_cast(cast: exp.Expr) -> exp.Expr:
    """A cast of a fraction to an integer type rounds in DuckDB (a DECIMAL literal half away from
    zero, a DOUBLE half to even) and truncates in Spark: the operand is rounded first (ROUND for
    a literal, BROUND otherwise), unless it is integral already."""
    if not isinstance(cast, exp.Cast) or not cast.to.is_type(*_INTEGER_TYPES):
        return cast
    operand = cast.this
    if isinstance(operand, _INTEGRAL) or (isinstance(operand, exp.Literal) and (operand.is_string or operand.is_int)):
        return cast
    if isinstance(operand.this if isinstance(operand, exp.Neg) else operand, exp.Literal):
        operand.replace(exp.Round(this=operand.copy()))  # a fraction literal, maybe negated: DECIMAL in DuckDB
    else:
        operand.replace(exp.func("BROUND", operand.copy()))
    return cast


def grouping_mask(grouping: exp.Expr) -> exp.Expr:
    """GROUPING over several columns (DuckDB's bit mask, the first column the highest bit) is
    Spark's GROUPING_ID, the same mask (Spark's GROUPING takes one column)."""
    if isinstance(grouping, exp.Grouping) and len(grouping.expressions) > 1:
        return exp.func("GROUPING_ID", *(e.copy() for e in grouping.expressions))
    return grouping


def bignum_as_decimal(datatype: exp.Expr) -> exp.Expr:
    """DuckDB's arbitrary-precision BIGNUM is DECIMAL(38, 0), Spark's widest exact integer (an
    engine whose integers may not fit refuses first: Engine.exact_digits)."""
    if isinstance(datatype, exp.DataType) and datatype.is_type(exp.DType.BIGNUM):
        return exp.DataType.build("DECIMAL(38, 0)")
    return datatype


def cte_without_hint(cte: exp.Expr) -> exp.Expr:
    """`WITH x AS MATERIALIZED (...)`: Spark SQL has no such hint (it plans a CTE used twice itself)."""
    cte.set("materialized", None)
    return cte


class AnonsqlSpark(Spark):
    """Spark SQL computing what the DuckDB text computes: sqlglot's Spark, whose own rewrites stay
    (a temporary table created AS SELECT becomes a temporary view, which anonsql.engine.spark
    computes once, as a table would be), and the `REWRITES` below.

    sqlglot's compiled build (sqlglot[c], a dependency for its parsing speed) takes no Python
    subclass of its generators, so these rewrites cannot sit in a `Generator.TRANSFORMS` of our
    own: `generate` applies them to a copy of the tree, node type by node type, then hands it to
    Spark's generator, the effect `transforms.preprocess` would have.

    >>> import sqlglot
    >>> def spark(text): return sqlglot.parse_one(text, read="duckdb").sql(dialect=AnonsqlSpark())
    >>> spark("SELECT CAST(2.5 AS INTEGER), CAST(x / 2 AS BIGINT)")
    'SELECT CAST(ROUND(2.5) AS INT), CAST(BROUND(x / 2) AS BIGINT)'
    >>> spark("CREATE TEMPORARY TABLE d AS SELECT 1 AS a")
    'CREATE TEMPORARY VIEW d AS SELECT 1 AS a'
    >>> spark("SELECT SUM(CAST(n AS BIGNUM))")
    'SELECT SUM(CAST(n AS DECIMAL(38, 0)))'
    >>> spark("SELECT GROUPING(a, b), GROUPING(a)")
    'SELECT GROUPING_ID(a, b), GROUPING(a)'
    >>> spark("WITH x AS MATERIALIZED (SELECT 1 AS a) SELECT a FROM x")
    'WITH x AS (SELECT 1 AS a) SELECT a FROM x'
    """

    #: node type -> the rewrite of such a node (it returns the node, changed or not, or its replacement)
    REWRITES: dict[type[exp.Expr], Callable[[exp.Expr], exp.Expr]] = {
        exp.Cast: round_before_integer_cast,
        exp.Grouping: grouping_mask,
        exp.CTE: cte_without_hint,
        exp.DataType: bignum_as_decimal,
    }

    def generate(self, expression: exp.Expr, copy: bool = True, **opts: Any) -> str:
        tree = expression.transform(self._rewrite, copy=copy)
        return super().generate(tree, copy=False, **opts)

    def _rewrite(self, node: exp.Expr) -> exp.Expr:
        rewrite = self.REWRITES.get(type(node))
        return node if rewrite is None else rewrite(node)
