"""Digests of the installed code, so that a changed release recomputes its results.

A thread's result depends on the code that made it as much as on its input: a
changed check, sampler or copy guard gives another abstract for the same article.
Thread keys and the model-call cache hold a digest of the code they depend on, so
an upgrade never serves a result its own code would not give.
"""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path

__all__ = ["code_digest"]

ROOT = Path(__file__).resolve().parent


@functools.cache
def code_digest(*packages: str, skip: tuple[str, ...] = ()) -> str:
    """Return a digest of the source and data files of some of the package's parts.

    ``packages`` names the subpackages to read (none: all of them, and the top-level
    modules); ``skip`` names subpackages to leave out. Each file is read once per
    process.
    """
    digest = hashlib.sha256()
    for path in sorted(ROOT.rglob("*")):
        relative = path.relative_to(ROOT)
        part = relative.parts[0]
        if (
            not path.is_file()
            or (packages and part not in packages)
            or part in skip
            or "__pycache__" in relative.parts
            or path.suffix == ".pyc"
        ):
            continue
        digest.update(relative.as_posix().encode("utf-8") + b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()[:16]
