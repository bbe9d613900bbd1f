"""The package's layers: a module imports only from its own package and lower layers.

From the bottom: the redaction of secrets; shared definitions; text algorithms
(sentence splitting, tokens, numbers, facets); reading input; the database and the
checks; the model clients; the labellers and the indexes; measures; the graphs' nodes;
the graphs; the product's services; the research harness and the HTTP API; the command
line.
So every layer above splits sentences and tokens with the same functions, the checks,
documents and metrics never reach the nodes, the services or the CLI, and no two
packages import each other.
"""

from __future__ import annotations

import ast
from pathlib import Path

import veriscribe

ROOT = Path(veriscribe.__file__).parent

LAYERS: list[set[str]] = [
    {"redaction"},  # below the errors, whose messages it cleans
    {"errors", "settings", "results", "options", "prompts", "release", "offload"},
    {"events"},  # the stage events, made of the results' vocabulary
    {"text"},
    {"documents"},
    {"store", "checks"},
    {"llm"},
    {"labeller", "retrieval"},
    {"metrics"},
    {"nodes"},
    {"graphs"},
    {"service"},
    {"eval", "serve"},
    {"cli"},
]
LAYER = {name: index for index, names in enumerate(LAYERS) for name in names}


def unit_of(path: Path) -> str:
    """Return the package (or top-level module) a source file belongs to."""
    parts = path.relative_to(ROOT).with_suffix("").parts
    return parts[0]


def imported_units(path: Path) -> set[str]:
    """Return the veriscribe packages and modules a file imports, anywhere in it."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
            if node.module == "veriscribe":
                names = [f"veriscribe.{alias.name}" for alias in node.names]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        else:
            continue
        for name in names:
            parts = name.split(".")
            if parts[0] == "veriscribe" and len(parts) > 1:
                found.add(parts[1])
    return found


def test_every_package_has_a_layer() -> None:
    units = {unit_of(p) for p in ROOT.rglob("*.py") if p.name != "__init__.py"}
    assert units - {"__main__"} <= set(LAYER), sorted(units - set(LAYER))


def test_no_module_imports_its_own_layer_or_above() -> None:
    wrong = []
    for path in sorted(ROOT.rglob("*.py")):
        if path.parent == ROOT and path.name == "__init__.py":
            continue  # the package's front door names a service lazily
        unit = unit_of(path)
        for other in imported_units(path) - {unit, "__version__"}:
            if LAYER.get(other, -1) >= LAYER[unit]:
                wrong.append(f"{path.relative_to(ROOT)} imports {other}")
    assert wrong == []
