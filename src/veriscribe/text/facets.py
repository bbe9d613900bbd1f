"""Facets of an article: first sentences, splits, header labels, grouping and packing.

The divide step assigns every paragraph of an article to one of six facets (BOMRC plus
"other"). Three strategies share these helpers:

- ``fs`` labels each paragraph by its first sentence
  (:func:`veriscribe.text.sentences.first_sentence`);
- ``ns`` cuts the paragraphs into six groups of about equal length (:func:`naive_split`);
- ``sh`` maps section titles to facets (:func:`header_label`, :func:`path_label`).

:func:`group_paragraphs`, :func:`regroup_three` and :func:`lead_chars` serve the
fan-out and the fallback of section 3.4 / appendix B of the DPR-BAG paper;
:func:`pack` fits a facet's paragraphs into chunks that fit the model's context, and
:func:`order_key` puts facets in rhetorical order.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, Final, Literal

from rapidfuzz import fuzz, process

from veriscribe.text.sentences import split_sentences

__all__ = [
    "FACETS",
    "THREE_FACETS",
    "Facet",
    "group_paragraphs",
    "header_label",
    "lead_chars",
    "naive_split",
    "path_label",
    "regroup_three",
]

Facet = Literal["background", "objective", "methods", "results", "conclusions", "other"]
FACETS: Final[tuple[Facet, ...]] = (
    "background",
    "objective",
    "methods",
    "results",
    "conclusions",
    "other",
)
THREE_FACETS: Final[tuple[str, ...]] = ("intro", "main_idea", "results_conclusions")

# The fallback's regrouping (appendix B): Background + Objective form the context,
# Results + Conclusions the findings, and Other joins Methods by elimination.
_REGROUPING: Final[dict[str, tuple[Facet, ...]]] = {
    "intro": ("background", "objective"),
    "main_idea": ("methods", "other"),
    "results_conclusions": ("results", "conclusions"),
}

# ------------------------------------------------------------------- naive split


def naive_split(paragraph_lengths: Sequence[int], groups: int = 6) -> list[list[int]]:
    """Split paragraphs into contiguous groups of about equal total length.

    Paragraphs are never cut and keep document order. The k-th cut is placed at the
    paragraph boundary whose cumulative length is closest to k/groups of the total,
    while leaving room for every later group to get at least one paragraph. With fewer
    paragraphs than groups, each paragraph is its own group.

    Args:
        paragraph_lengths: Length of each paragraph (characters or tokens), in order.
        groups: How many groups to make; the paper's NS uses six.

    Returns:
        Lists of paragraph indices, one per non-empty group, in document order.

    Raises:
        ValueError: ``groups`` below 1 or a negative length.
    """
    if groups < 1:
        raise ValueError("groups must be at least 1")
    if any(length < 0 for length in paragraph_lengths):
        raise ValueError("paragraph lengths must not be negative")
    n = len(paragraph_lengths)
    if n == 0:
        return []
    k = min(groups, n)
    # Zero-length paragraphs still count a little, so all-empty input splits by count.
    weights = [max(length, 0) + 1e-9 for length in paragraph_lengths]
    cumulative = [0.0]
    for weight in weights:
        cumulative.append(cumulative[-1] + weight)
    total = cumulative[-1]
    cuts = [0]
    for part in range(1, k):
        target = total * part / k
        low = cuts[-1] + 1
        high = n - (k - part)
        best = min(range(low, high + 1), key=lambda b: (abs(cumulative[b] - target), b))
        cuts.append(best)
    cuts.append(n)
    return [list(range(cuts[i], cuts[i + 1])) for i in range(k)]


# ----------------------------------------------------------------- header labels

# Header variants per facet, lower case, "&" written "and". Exact matches win; then a
# title that starts with a variant ("results and discussion"); then a short title whose
# last word is a facet head word ("statistical methods"); then fuzzy matching for
# spelling variants. Discussion maps to conclusions: it carries the implications.
# Case presentations map to methods, as the clinical detail of a case report is its
# material; the fallback's Main Idea group joins methods and other anyway.
_HEADER_VARIANTS: Final[dict[Facet, tuple[str, ...]]] = {
    "background": (
        "introduction",
        "background",
        "literature review",
        "review of the literature",
        "related work",
        "overview",
        "rationale",
        "context",
        "state of the art",
        "historical background",
        "history",
        "motivation",
        "problem statement",
        "significance",
        "preface",
        "prologue",
    ),
    "objective": (
        "objective",
        "objectives",
        "aim",
        "aims",
        "aims and objectives",
        "purpose",
        "purpose of the study",
        "goal",
        "goals",
        "study objectives",
        "research objectives",
        "research questions",
        "research question",
        "hypothesis",
        "hypotheses",
        "the present study",
        "this study",
        "scope",
    ),
    "methods": (
        "methods",
        "method",
        "methodology",
        "materials and methods",
        "material and methods",
        "methods and materials",
        "patients and methods",
        "subjects and methods",
        "participants and methods",
        "experimental procedures",
        "experimental section",
        "experimental design",
        "experimental",
        "study design",
        "design",
        "study population",
        "participants",
        "patients",
        "subjects",
        "setting",
        "data sources",
        "data source",
        "data collection",
        "data analysis",
        "statistical analysis",
        "statistical analyses",
        "statistics",
        "measures",
        "measurements",
        "procedures",
        "procedure",
        "intervention",
        "interventions",
        "model",
        "the model",
        "models",
        "simulations",
        "analysis",
        "case presentation",
        "case report",
        "case reports",
        "case description",
        "case history",
        "case summary",
        "case",
        "cases",
        "clinical presentation",
        "presentation of case",
    ),
    "results": (
        "results",
        "result",
        "findings",
        "main results",
        "key findings",
        "principal findings",
        "outcomes",
        "observations",
        "experimental results",
        "evaluation",
    ),
    "conclusions": (
        "discussion",
        "conclusions",
        "conclusion",
        "concluding remarks",
        "concluding statement",
        "summary",
        "summary and conclusions",
        "implications",
        "clinical implications",
        "implications for practice",
        "limitations",
        "strengths and limitations",
        "future directions",
        "future work",
        "future research",
        "perspectives",
        "outlook",
        "recommendations",
        "comment",
        "comments",
        "closing remarks",
        "final remarks",
        "final considerations",
        "take home message",
        "lessons learned",
    ),
}
_VARIANT_TO_FACET: Final[dict[str, Facet]] = {
    variant: facet
    for facet, variants in _HEADER_VARIANTS.items()
    for variant in variants
}
# Everyday words that are headings only on their own: "Design of a trial" or
# "Patients first" in an editorial say nothing about the facet.
_EXACT_ONLY: Final = frozenset(
    {
        "analysis",
        "case",
        "cases",
        "comment",
        "comments",
        "context",
        "design",
        "evaluation",
        "history",
        "model",
        "models",
        "observations",
        "outcomes",
        "overview",
        "participants",
        "patients",
        "procedure",
        "procedures",
        "scope",
        "setting",
        "significance",
        "statistics",
        "subjects",
        "the model",
        "this study",
    }
)
# Longest first, so "materials and methods" is tried before "material and methods".
_PREFIXES: Final[tuple[str, ...]] = tuple(
    sorted(
        (v for v in _VARIANT_TO_FACET if v not in _EXACT_ONLY),
        key=lambda v: (-len(v), v),
    )
)
_HEAD_WORDS: Final[dict[str, Facet]] = {
    "introduction": "background",
    "background": "background",
    "objective": "objective",
    "objectives": "objective",
    "aims": "objective",
    "methods": "methods",
    "method": "methods",
    "methodology": "methods",
    "procedures": "methods",
    "analysis": "methods",
    "analyses": "methods",
    "results": "results",
    "findings": "results",
    "discussion": "conclusions",
    "conclusion": "conclusions",
    "conclusions": "conclusions",
    "remarks": "conclusions",
    "implications": "conclusions",
}
_FUZZY_CUTOFF: Final = 88.0
_FUZZY_MIN_CHARS: Final = 6
_MAX_SHORT_WORDS: Final = 4

_NUMBERING = re.compile(
    r"^(?:(?:section|chapter|part)\s+)?(?:\d+(?:\.\d+)*|[ivxlc]+|[a-h])[.):]?\s+",
    re.IGNORECASE,
)
_NON_WORD = re.compile(r"[^\w\s]+")


def _normalise_title(title: str) -> str:
    text = title.strip().lower().replace("&", " and ")
    text = text.replace("\u2019", "'").replace("'s ", " ")
    text = _NUMBERING.sub("", text)
    text = _NON_WORD.sub(" ", text)
    return " ".join(text.split())


def header_label(title: str) -> Facet:
    """Map a section title to its facet; an unmatched title gives ``"other"``."""
    key = _normalise_title(title)
    if not key:
        return "other"
    exact = _VARIANT_TO_FACET.get(key)
    if exact is not None:
        return exact
    for variant in _PREFIXES:
        if key.startswith(variant + " "):
            return _VARIANT_TO_FACET[variant]
    words = key.split()
    if len(words) <= _MAX_SHORT_WORDS and words[-1] in _HEAD_WORDS:
        return _HEAD_WORDS[words[-1]]
    if len(words) <= _MAX_SHORT_WORDS and len(key) >= _FUZZY_MIN_CHARS:
        match = process.extractOne(
            key, _VARIANT_TO_FACET.keys(), scorer=fuzz.ratio, score_cutoff=_FUZZY_CUTOFF
        )
        if match is not None:
            return _VARIANT_TO_FACET[match[0]]
    return "other"


def path_label(path: Sequence[str]) -> Facet:
    """Map a heading path to a facet: the top-level title first, then deeper ones.

    "Results / Patient characteristics" is results because of its top level; a paper
    whose top level is not a standard heading ("Study 1 / Methods") falls back on the
    first deeper title that matches.
    """
    for title in path:
        label = header_label(title)
        if label != "other":
            return label
    return "other"


# ------------------------------------------------------------ grouping, fallback


def group_paragraphs(labels: Sequence[str]) -> dict[Facet, list[int]]:
    """Collect paragraph indices per facet, in document order; every facet is a key.

    Raises:
        ValueError: A label that is not one of :data:`FACETS`.
    """
    groups: dict[Facet, list[int]] = {facet: [] for facet in FACETS}
    for index, label in enumerate(labels):
        if label not in groups:
            raise ValueError(f"unknown facet label {label!r} at paragraph {index}")
        groups[label].append(index)
    return groups


def regroup_three(
    groups: Mapping[Facet, Sequence[int]] | Mapping[str, Sequence[int]],
) -> dict[str, list[int]]:
    """Merge six facet groups into the fallback's three, in document order.

    ``intro`` = background + objective, ``main_idea`` = methods + other,
    ``results_conclusions`` = results + conclusions (appendix B of the paper).
    """
    merged: dict[str, list[int]] = {}
    for name, members in _REGROUPING.items():
        indices = {i for facet in members for i in groups.get(facet, ())}
        merged[name] = sorted(indices)
    return merged


def lead_chars(text: str, n: int = 300) -> str:
    """Return the first ``n`` characters of ``text``, cut back to a word boundary."""
    collapsed = " ".join(text.split())
    if len(collapsed) <= n:
        return collapsed
    cut = collapsed[: n + 1]
    space = cut.rfind(" ")
    if space <= 0:
        return collapsed[:n]
    return cut[:space].rstrip()


def pack(texts: Sequence[str], budget: int, count: Any) -> list[str]:
    """Pack texts into chunks of at most ``budget`` tokens, never cutting a text.

    A text that alone exceeds the budget is cut into sentence runs instead.
    """
    chunks: list[str] = []
    current: list[str] = []
    used = 0
    for text in texts:
        size = count(text)
        if size > budget:
            if current:
                chunks.append("\n\n".join(current))
                current, used = [], 0
            chunks.extend(pack(split_sentences(text), budget, count))
            continue
        if used + size > budget and current:
            chunks.append("\n\n".join(current))
            current, used = [], 0
        current.append(text)
        used += size
    if current:
        chunks.append("\n\n".join(current))
    return chunks


def order_key(name: str) -> tuple[int, int]:
    """Sort facets in rhetorical order, naive parts by number."""
    if name in FACETS:
        return (0, FACETS.index(name))
    if name in THREE_FACETS:
        return (1, THREE_FACETS.index(name))
    return (2, int(name[4:]) if name[4:].isdigit() else 0)


def naive_groups(lengths: Sequence[int]) -> tuple[list[str], dict[str, list[int]]]:
    """Return per-paragraph part names and the six naive groups."""
    groups = {f"part{i + 1}": g for i, g in enumerate(naive_split(lengths)) if g}
    labels = [""] * len(lengths)
    for name, members in groups.items():
        for i in members:
            labels[i] = name
    return labels, groups
