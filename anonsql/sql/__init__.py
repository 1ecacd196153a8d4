"""The SQL layer: every query anonsql runs is a file sql/<job>/<name>.sql, bound through sqlglot.

* `templates`: loads sql/<job>/<name>.sql and renders it per dialect (`render`, `readable`,
  `fragment`), the text memoized per (template, dialect, names) in the process;
* `binding`: how a `$name` placeholder is filled (a name, a list of names, a value) and the tree
  generated for an engine's dialect (`bind`, `text`, `plain`);
* `names`: user-supplied names as quoted identifiers (`ident`, `column`, `TableName`, ...);
* `wide`: statements over thousands of columns, generated once and bound many times
  (`render_columns`, `group_key`, stand-in columns spliced as text).

Callers use the package's names (`from .. import sql`; `sql.render(...)`, `sql.TableName`).
"""

import sqlglot
from sqlglot import exp

from .binding import bind, plain, text
from .names import TableName, column, columns, ident, unused_ident
from .templates import SOURCE_DIALECT, fragment, readable, render, subquery, template
from .wide import CONCAT_ARGS, group_key, quoted, render_columns, splice, stand_in

__all__ = [
    "CONCAT_ARGS", "SOURCE_DIALECT", "TableName", "bind", "column", "columns", "exp", "fragment", "group_key", "ident",
    "plain", "quoted", "readable", "render", "render_columns", "splice", "sqlglot", "stand_in", "subquery", "template",
    "text",
    "unused_ident",
]
