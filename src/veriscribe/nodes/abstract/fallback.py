"""Fan-in and the fallbacks of the paper's section 3.4: regroup, then Lead-300."""

from __future__ import annotations

from collections.abc import Sequence

from langgraph.runtime import Runtime

from veriscribe.nodes.abstract.state import (
    AbstractDeps,
    AbstractState,
    FacetResult,
    usage_record,
)
from veriscribe.results import Usage
from veriscribe.text.facets import THREE_FACETS, lead_chars, regroup_three

LEAD_CHARS = 300


def latest(results: Sequence[FacetResult], stage: str) -> dict[str, FacetResult]:
    """Return the last result per facet name of one stage."""
    found: dict[str, FacetResult] = {}
    for result in results:
        if result["stage"] == stage:
            found[result["name"]] = result
    return found


def attempted(state: AbstractState) -> list[FacetResult]:
    """Return the current stage's results for facets that had text."""
    current = latest(state.get("results", []), state["stage"])
    return [r for r in current.values() if r["status"] != "empty"]


async def join(state: AbstractState) -> AbstractState:
    """Collect the facet branches and record the facets that failed."""
    failed = [r["name"] for r in attempted(state) if r["status"] == "failed"]
    prefix = "facet_failed" if state["stage"] == "facets" else "regroup_failed"
    return {"fallbacks": [f"{prefix}:{name}" for name in failed]}


def regroup_names(groups: dict[str, list[int]]) -> dict[str, list[int]]:
    """Return the three fallback groups (naive parts are merged pairwise)."""
    if any(name.startswith("part") for name in groups):
        merged: dict[str, list[int]] = {name: [] for name in THREE_FACETS}
        for i, name in enumerate(sorted(groups, key=lambda n: int(n[4:]))):
            merged[THREE_FACETS[min(i // 2, 2)]].extend(groups[name])
        return {k: sorted(v) for k, v in merged.items()}
    return regroup_three(groups)


async def regroup(state: AbstractState) -> AbstractState:
    """Regroup six facets into Intro, Main Idea, Results & Conclusions."""
    groups = regroup_names(state["groups"])
    return {
        "stage": "regroup",
        "groups": {k: v for k, v in groups.items() if v},
        "fallbacks": ["regroup"],
    }


async def lead(state: AbstractState, runtime: Runtime[AbstractDeps]) -> AbstractState:
    """Use the first 300 characters of each regrouped facet that still failed."""
    article = await runtime.context.article(state["doc_key"])
    results: list[FacetResult] = []
    for failed in attempted(state):
        if failed["status"] != "failed":
            continue
        text = " ".join(article.paragraphs[i].text for i in failed["paragraphs"])
        results.append(
            FacetResult(
                name=failed["name"],
                stage="regroup",
                paragraphs=failed["paragraphs"],
                summary=lead_chars(text, LEAD_CHARS),
                status="lead300",
                error=failed["error"],
                chunks=0,
                prompt_id="",
                usage=usage_record("lead300", Usage(), 0.0),
            )
        )
    return {"results": results, "fallbacks": [f"lead300:{r['name']}" for r in results]}
