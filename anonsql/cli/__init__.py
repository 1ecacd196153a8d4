"""The `anonsql` command: click commands, one module per method, thin over anonsql.api."""

from . import data, evaluate, features, kanon, nbc, protect, release, tables
from .app import cli, main

for _module in (data, kanon, evaluate, nbc, protect, features, tables, release):
    for _command in _module.COMMANDS:
        cli.add_command(_command)

__all__ = ["cli", "main"]
