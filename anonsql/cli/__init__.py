"""The `anonsql` command: click commands, one module per method, thin over anonsql.api.
Each module's commands load when used (anonsql.cli.app.Root)."""

from .app import cli, main, run

__all__ = ["cli", "main", "run"]
