"""JSON-lines files read record by record, with errors that name the file and line."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from veriscribe.errors import InputError


def json_lines(path: Path) -> Iterator[tuple[int, Any]]:
    """Yield (line number, parsed value) for every non-blank line of a JSON-lines file."""
    try:
        lines = path.read_text("utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read {path}: {exc}") from exc
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            yield number, json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(f"{path}:{number}: not JSON ({exc.msg})") from exc
        except RecursionError:
            raise InputError(f"{path}:{number}: JSON nested too deeply") from None
