"""The compiled graphs under the names ``langgraph.json`` gives them.

LangGraph's server and studio load a graph from a module-level variable or factory;
these are the product's graphs compiled without a checkpointer (the server brings its
own). Their nodes take their dependencies (the store, the model client, the options)
from the run's context, which veriscribe's services supply.
"""

from __future__ import annotations

from typing import Any

from langgraph.graph.state import CompiledStateGraph

from veriscribe.graphs.abstract import build_abstract_graph
from veriscribe.graphs.cited_qa import build_cited_qa_graph
from veriscribe.graphs.questions import build_questions_graph

Compiled = CompiledStateGraph[Any, Any, Any, Any]


def make_cited_qa() -> Compiled:
    """Return the cited-QA graph: retrieve, answer, check every claim, recover."""
    return build_cited_qa_graph().compile(name="cited_qa")


def make_abstract() -> Compiled:
    """Return the abstract graph: divide an article, summarise its facets, refine."""
    return build_abstract_graph().compile(name="abstract")


def make_questions() -> Compiled:
    """Return the question-set graph: sample sections, write questions about them."""
    return build_questions_graph().compile(name="questions")


cited_qa = make_cited_qa()
abstract = make_abstract()
questions = make_questions()
