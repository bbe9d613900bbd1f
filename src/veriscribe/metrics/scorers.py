"""Plug-in scorers for the model-based metrics of the DPR-BAG paper.

AlignScore, MiniCheck and SummaC (factual consistency with the full text) and BERTScore
(semantic similarity to the reference abstract) need model weights that veriscribe does
not ship. Users who have them register a scorer under the metric's name, and
``veriscribe eval abstracts`` reports it beside the built-in metrics; a metric with no
scorer is reported as absent (null and a note), never as 0.

A scorer is a callable ``scorer(generated, sources) -> scores``: the generated abstracts
and, item by item, the text each is scored against (the article body for the factuality
metrics, the reference abstract for BERTScore), returning one float per item (NaN for an
item it cannot score). All items come in one call, so a scorer can batch them on a GPU.
Higher must be better: the paired bootstrap compares these metrics on raw scores.

Three ways to register one:

- in Python, ``register_scorer("alignscore", my_scorer)``;
- on the command line, ``--scorer alignscore=my_module:make_scorer``, where the target
  is a factory called with no arguments that returns the scorer (so the model loads
  only when an evaluation runs);
- from an installed package, an entry point in the group ``veriscribe.scorers`` whose
  name is the metric and whose object is such a factory.

A metric name outside the four known ones is scored against the article unless the
scorer has an attribute ``against = "reference"``.
"""

from __future__ import annotations

import importlib
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib.metadata import entry_points
from typing import Literal, Protocol

from veriscribe.errors import ConfigError

__all__ = [
    "ENTRY_POINT_GROUP",
    "MODEL_METRICS",
    "ModelMetric",
    "Scorer",
    "load_scorer_spec",
    "register_scorer",
    "registered_scorers",
    "run_scorer",
    "unregister_scorer",
]

ENTRY_POINT_GROUP = "veriscribe.scorers"

Against = Literal["article", "reference"]


class Scorer(Protocol):
    """Score generated abstracts against their sources, one float per item."""

    def __call__(
        self, generated: Sequence[str], sources: Sequence[str]
    ) -> Sequence[float]:
        """Return one score per (generated, source) pair; higher is better."""
        ...


@dataclass(frozen=True)
class ModelMetric:
    """A model-based metric of the paper and what it is scored against."""

    name: str
    against: Against
    description: str


MODEL_METRICS: dict[str, ModelMetric] = {
    m.name: m
    for m in (
        ModelMetric(
            "alignscore",
            "article",
            "AlignScore (Zha et al. 2023): factual consistency with the full text",
        ),
        ModelMetric(
            "minicheck",
            "article",
            "MiniCheck (Tang et al. 2024): sentence-level fact checking on the full text",
        ),
        ModelMetric(
            "summac",
            "article",
            "SummaC-Conv (Laban et al. 2022): NLI consistency with the full text",
        ),
        ModelMetric(
            "bertscore",
            "reference",
            "BERTScore F1 (Zhang et al. 2020) against the reference abstract",
        ),
    )
}
"""The paper's model-based metrics, in the order they are reported."""

_registry: dict[str, tuple[Scorer, Against]] = {}
_entry_points_loaded = False
load_errors: dict[str, str] = {}
"""Why an installed entry-point scorer could not be loaded, by metric name."""


def register_scorer(
    name: str, scorer: Scorer, *, against: Against | None = None
) -> None:
    """Register ``scorer`` for the metric ``name`` (lower case, underscores).

    Args:
        name: The metric name, e.g. ``alignscore``; it replaces any earlier scorer.
        scorer: The callable that scores a list of items.
        against: What the scorer compares with; by default the known metric's
            source, else the scorer's ``against`` attribute, else the article.

    Raises:
        ConfigError: If the name is not a lower-case identifier.
    """
    if not name.isidentifier() or name != name.lower():
        raise ConfigError(f"scorer name {name!r} must be lower case with underscores")
    if against is None:
        known = MODEL_METRICS.get(name)
        against = known.against if known else getattr(scorer, "against", "article")
    if against not in ("article", "reference"):
        raise ConfigError(f"scorer {name}: against must be article or reference")
    _registry[name] = (scorer, against)


def unregister_scorer(name: str) -> None:
    """Remove the scorer of ``name``, if any."""
    _registry.pop(name, None)


def _factory(target: str) -> Callable[[], Scorer]:
    module_name, _, attribute = target.partition(":")
    if not module_name or not attribute:
        raise ConfigError(f"scorer target {target!r} must look like module:factory")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ConfigError(f"cannot import scorer module {module_name}: {exc}") from exc
    factory = getattr(module, attribute, None)
    if not callable(factory):
        raise ConfigError(f"{target} is not a callable scorer factory")
    return factory  # type: ignore[no-any-return]


def load_scorer_spec(spec: str) -> str:
    """Register a scorer from ``name=module:factory``; return the metric name.

    Raises:
        ConfigError: If the spec is malformed, the module cannot be imported, or the
            factory fails.
    """
    name, sep, target = spec.partition("=")
    if not sep:
        raise ConfigError(f"--scorer {spec!r} must look like name=module:factory")
    factory = _factory(target.strip())
    try:
        scorer = factory()
    except Exception as exc:  # a plug-in's own failure, reported as a setting error
        raise ConfigError(f"scorer factory {target} failed: {exc}") from exc
    register_scorer(name.strip(), scorer)
    return name.strip()


def _load_entry_points() -> None:
    global _entry_points_loaded
    if _entry_points_loaded:
        return
    _entry_points_loaded = True
    for point in entry_points(group=ENTRY_POINT_GROUP):
        if point.name in _registry:
            continue
        try:
            register_scorer(point.name, point.load()())
        except Exception as exc:  # a broken plug-in makes its metric absent, not 0
            load_errors[point.name] = f"entry point {point.value} failed: {exc}"


def registered_scorers() -> dict[str, tuple[Scorer, Against]]:
    """Return every registered scorer (entry points included) by metric name."""
    _load_entry_points()
    return dict(_registry)


def run_scorer(
    name: str, scorer: Scorer, generated: Sequence[str], sources: Sequence[str]
) -> list[float]:
    """Call a scorer and check that it returned one number per item.

    Raises:
        ValueError: If it returned the wrong number of scores or a non-number.
    """
    scores = list(scorer(generated, sources))
    if len(scores) != len(generated):
        raise ValueError(
            f"scorer {name} returned {len(scores)} scores for {len(generated)} items"
        )
    values = []
    for score in scores:
        value = float(score)
        values.append(value if math.isfinite(value) else float("nan"))
    return values
