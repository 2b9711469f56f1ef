"""A click group that imports a command's module only when that command runs.

Importing every command module at start-up made ``toolscore --help`` take 0.3 s instead of
0.1 s, and every command pay for the imports of all the others. The group therefore knows
each command by its name, a ``"module:attribute"`` target and the first sentence of its help,
which is all that the command list of ``--help`` (and the shell completion of a command name)
shows. The summaries are copies of the commands' own first sentences;
``tests/cli/test_lazy.py`` compares the two (and the whole ``--help`` page with the one the
real commands give) so they cannot drift apart.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import click


class LazyGroup(click.Group):
    """``lazy`` maps a command name to ``(target, summary)``; ``target`` is
    ``"package.module:attribute"`` and ``summary`` the first sentence of the command's help,
    shown in the command list instead of importing the module to ask it."""

    def __init__(self, *args: Any, lazy: Mapping[str, tuple[str, str]], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.lazy = dict(lazy)
        self._listing = False

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*self.commands, *self.lazy})

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name in self.commands or name not in self.lazy:
            return self.commands.get(name)
        target, summary = self.lazy[name]
        if self._listing:  # a name and a line of help: no need to import the command
            return click.Command(name, help=summary)
        command = self.load(name)
        self.commands[name] = command  # loaded once, then an ordinary subcommand
        return command

    def load(self, name: str) -> click.Command:
        """Import the command ``name`` stands for (checked to be the command of that name)."""
        target = self.lazy[name][0]
        module, _, attribute = target.partition(":")
        command = getattr(importlib.import_module(module), attribute)
        if not isinstance(command, click.Command) or command.name != name:
            raise TypeError(f"toolscore command {name!r}: {target} is not a click command "
                            f"named {name!r}")
        return command

    @contextmanager
    def listing(self) -> Iterator[None]:
        """While listing commands (``--help``, shell completion of a command name), a lazy
        command is represented by a stand-in that carries only its summary."""
        self._listing, before = True, self._listing
        try:
            yield
        finally:
            self._listing = before

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        with self.listing():
            super().format_commands(ctx, formatter)

    def shell_complete(self, ctx: click.Context, incomplete: str) -> list[Any]:
        with self.listing():
            return super().shell_complete(ctx, incomplete)
