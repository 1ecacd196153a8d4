"""docs/cli.md, generated from the commands' own --help (a test fails when the file is stale).

Regenerate with: python -m anonsql.cli.reference > docs/cli.md
"""

from __future__ import annotations

import click

from . import cli

HEADER = """# anonsql command reference

Generated from `--help` by `python -m anonsql.cli.reference > docs/cli.md`; a test fails when
this file and the commands disagree. Exit codes: 0 success, 1 a check that ran and failed,
2 bad input or a refused run (one line on stderr; nothing changed).
"""


def _walk(command: click.Command, parent: click.Context | None, name: str) -> list[str]:
    settings = {**command.context_settings, "max_content_width": 100, "terminal_width": 100}
    ctx = click.Context(command, info_name=name, parent=parent, **settings)
    out = [f"\n## `{ctx.command_path}`\n", "```", command.get_help(ctx).rstrip(), "```"]
    if isinstance(command, click.Group):
        for sub in command.list_commands(ctx):
            child = command.get_command(ctx, sub)
            if child is not None:
                out += _walk(child, ctx, sub)
    return out


def reference() -> str:
    """The whole reference as Markdown: every command's help, depth first, in listing order."""
    return HEADER + "\n".join(_walk(cli, None, "anonsql")) + "\n"


if __name__ == "__main__":
    print(reference(), end="")
