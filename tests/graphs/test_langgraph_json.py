"""Every graph ``langgraph.json`` names loads the way LangGraph's server loads it."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest
from langgraph.graph.state import CompiledStateGraph

ROOT = Path(__file__).resolve().parents[2]
CONFIG = json.loads((ROOT / "langgraph.json").read_text("utf-8"))


def load(entry: str) -> Any:
    """Import ``./path/to/file.py:name`` from the file, as the LangGraph server does."""
    path, _, name = entry.partition(":")
    spec = importlib.util.spec_from_file_location(
        f"served_{Path(path).stem}", ROOT / path
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, name)


def test_the_config_names_the_graphs() -> None:
    assert CONFIG["dependencies"] == ["."]
    assert set(CONFIG["graphs"]) == {"cited_qa", "abstract", "questions"}


@pytest.mark.parametrize("name", sorted(CONFIG["graphs"]))
def test_every_entry_is_a_compiled_graph_or_a_factory(name: str) -> None:
    found = load(CONFIG["graphs"][name])
    graph = found if isinstance(found, CompiledStateGraph) else found()
    assert isinstance(graph, CompiledStateGraph)
    assert graph.name == name
    nodes = set(graph.get_graph().nodes)
    assert len(nodes - {"__start__", "__end__"}) >= 2


def test_the_cited_qa_graph_has_its_checking_steps() -> None:
    graph = load(CONFIG["graphs"]["cited_qa"])
    assert {"retrieve", "answer", "verify", "judge", "present"} <= set(
        graph.get_graph().nodes
    )


def test_every_factory_makes_a_fresh_graph() -> None:
    from veriscribe.graphs import served

    for make in (served.make_cited_qa, served.make_abstract, served.make_questions):
        first, second = make(), make()
        assert isinstance(first, CompiledStateGraph) and first is not second
