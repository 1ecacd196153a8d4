"""docs/cli.md, generated from the commands' own declarations (a test fails when the file is stale).

Regenerate with: python -m anonsql.cli.reference > docs/cli.md

The page is rendered here, from click's data model (each command's help text, its parameters'
names, metavars, help, defaults, required flags and choices), not by click's help formatter:
how click lays out `--help` (usage metavars, wrapping, column widths) changes between click
releases, and a fresh install resolves the newest click. What the page says is decided by
anonsql's own declarations only, so the freshness test can fail only when a command changed.
"""

from __future__ import annotations

import inspect

import click

from . import cli

HEADER = """# anonsql command reference

Generated from the commands' declarations by `python -m anonsql.cli.reference > docs/cli.md`
(the same texts `--help` shows); a test fails when this file and the commands disagree.
Exit codes: 0 success, 1 a check that ran and failed, 2 bad input or a refused run (one line on
stderr; nothing changed).
"""


def _paragraphs(text: str) -> str:
    """A help text as Markdown: dedented, click's `\\b` (no-rewrap) markers dropped, lines kept."""
    lines = [line for line in inspect.cleandoc(text).splitlines() if line.strip() != "\b"]
    return "\n".join(lines).strip()


def _metavar(param: click.Parameter) -> str:
    """The value placeholder of an option or argument, from its declaration."""
    if isinstance(param, click.Option) and param.is_flag:
        return ""
    if param.metavar:
        return param.metavar
    if isinstance(param.type, click.Choice):
        return "[" + "|".join(str(c) for c in param.type.choices) + "]"
    if isinstance(param, click.Argument):
        return (param.name or "").upper()
    return param.type.name.upper()


def _usage(command: click.Command, path: str) -> str:
    pieces = [path, "[OPTIONS]"]
    for param in command.params:
        if isinstance(param, click.Argument):
            name = _metavar(param) + ("..." if param.nargs != 1 else "")
            pieces.append(name if param.required else f"[{name}]")
    if isinstance(command, click.Group):
        pieces.append("[COMMAND] [ARGS]..." if command.invoke_without_command else "COMMAND [ARGS]...")
    return " ".join(pieces)


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _option_row(param: click.Option) -> str:
    names = ", ".join(param.opts) + (" / " + ", ".join(param.secondary_opts) if param.secondary_opts else "")
    metavar = _metavar(param)
    extra = []
    if isinstance(param.type, click.Choice) and param.metavar:
        extra.append("one of " + ", ".join(str(c) for c in param.type.choices))
    if param.show_default and param.default is not None and not param.is_flag:
        extra.append(f"default: {param.default}")
    if param.required:
        extra.append("required")
    meaning = _cell(param.help or "") + (f" ({'; '.join(extra)})" if extra else "")
    return f"| `{_cell(names + (' ' + metavar if metavar else ''))}` | {meaning} |"


def _short(command: click.Command) -> str:
    """A command's summary: its short_help, else the first paragraph of its help."""
    return command.short_help or _paragraphs(command.help or "").split("\n\n")[0]


def _walk(command: click.Command, parent: click.Context | None, name: str) -> list[str]:
    ctx = click.Context(command, info_name=name, parent=parent, **command.context_settings)
    out = [f"\n## `{ctx.command_path}`\n", f"Usage: `{_usage(command, ctx.command_path)}`\n"]
    if command.help:
        out.append(_paragraphs(command.help) + "\n")
    options = [p for p in command.params if isinstance(p, click.Option) and not p.hidden]
    help_names = ctx.help_option_names
    rows = [_option_row(p) for p in options]
    rows.append(f"| `{', '.join(help_names)}` | Show the command's help and exit. |")
    out += ["| option | meaning |", "|---|---|", *rows]
    if isinstance(command, click.Group):
        subs = [(sub, command.get_command(ctx, sub)) for sub in command.list_commands(ctx)]
        out += ["", "| command | what it does |", "|---|---|"]
        out += [f"| `{sub}` | {_cell(_short(child))} |" for sub, child in subs if child is not None]
        for sub, child in subs:
            if child is not None:
                out += _walk(child, ctx, sub)
    return out


def reference() -> str:
    """The whole reference as Markdown: every command's help, depth first, in listing order."""
    return HEADER + "\n".join(_walk(cli, None, "anonsql")) + "\n"


if __name__ == "__main__":
    print(reference(), end="")
