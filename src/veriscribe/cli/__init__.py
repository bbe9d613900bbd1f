"""The command line: one Typer sub-app per module, rendering in ``render``."""
