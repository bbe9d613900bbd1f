"""The command line as one click command, for the generated command reference."""

from __future__ import annotations

import typer

from veriscribe.cli.app import app

command = typer.main.get_command(app)
"""Every command, option and default of ``veriscribe``, as the documentation renders it.

Typer carries a click of its own; this is its command, the tree that ``--help`` reads."""
