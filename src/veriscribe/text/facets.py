"""Facets of an article: first sentences, splits, header labels, grouping and packing.

The divide step assigns every paragraph of an article to one of six facets (BOMRC plus
"other"). Three strategies share these helpers:

- ``fs`` labels each paragraph by its first sentence (:func:`first_sentence`);
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
from functools import cache
from typing import Any, Final, Literal

import pysbd
from pysbd.lang.english import English
from pysbd.utils import TextSpan
from rapidfuzz import fuzz, process

__all__ = [
    "FACETS",
    "THREE_FACETS",
    "Facet",
    "first_sentence",
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

# ------------------------------------------------------------------ first sentence

# pysbd splits after some abbreviations ("Patients aged 65 yr." + "or older ...").
# A first "sentence" shorter than this, or one followed by a piece that starts in
# lower case, is such a mis-split and is merged with what follows.
_MIN_SENTENCE_CHARS: Final = 20
# Only the head of a paragraph is segmented: the first sentence lies there, and pysbd
# slows down on very long inputs.
_HEAD_CHARS: Final = 2000


# pysbd takes milliseconds per paragraph, and a batch labels every paragraph of every
# article. Two shortcuts give pysbd's answer without most of that work. A paragraph whose
# first terminator outside parentheses plainly ends a sentence (after a word, a citation
# or a parenthesis; before a capital or the end) needs no segmenter: that is 83% of the
# development paragraphs, and the answer equals pysbd's on all 9,389 development
# paragraphs, BIORC800 abstracts and sentences. Otherwise pysbd reads a window of the head
# first, and the whole head only when the first sentence does not end well inside the
# window (or the window cuts a quote or a parenthesis).
_FIRST_END: Final = re.compile(r"[.!?]")
_PLAIN_END: Final = re.compile(
    r"(?:^|\s)(?:([a-z][a-z-]{2,})|(?=[A-Za-z0-9-]*[A-Z])([A-Za-z][A-Za-z0-9-]*[A-Za-z0-9])"
    r"|[a-z]{3,}\s?\[[\d,\u2013\- ]+\]|\([^()]*\))$"
)
_ASIDE: Final = re.compile(r"\([^()\[\]]*\)|\[[^()\[\]]*\]")
_ENUMERATOR: Final = re.compile(r"\((?:\d{1,3}|[ivxIVX]{1,4}|[a-zA-Z])\)")
_LIST_MARK: Final = re.compile(r"(?:^|[\s(])(?:\d{1,3}|[ivx]{1,4}|[a-z])\)")
_OPEN_MARK: Final = re.compile(r"[()\[\]\"\u201c\u2018\u00ab]")
_CAPITAL_NEXT: Final = re.compile(r"\s+[A-Z]")
_CLOSES_ALL: Final = re.compile(r"[)\]]*\s*$")
_WINDOWS: Final = (400, 1200)
_WINDOW_MARGIN: Final = 120


@cache
def _abbreviation_patterns(
    abbreviations: tuple[str, ...],
) -> tuple[tuple[str, re.Pattern[str], re.Pattern[str]], ...]:
    """Return pysbd's two patterns of each abbreviation, compiled once, in its order."""
    return tuple(
        (
            stripped,
            re.compile(rf"(?:^|\s|\r|\n){stripped}", re.IGNORECASE),
            re.compile(r"(?<={" + str(re.escape(stripped)) + "} ).{1}"),
        )
        for stripped in (a.strip() for a in abbreviations)
    )


class _AbbreviationReplacer(English.AbbreviationReplacer):  # type: ignore[misc]
    """pysbd's abbreviation replacer, without the work that cannot change its result.

    For each abbreviation in the text, pysbd looks for it after every space and then
    rewrites the whole text once per occurrence ("al" occurs at the start of every
    "also", "all", "although"). The rewrite of an occurrence turns the periods that
    follow it into a placeholder; done again for the same occurrence text it finds no
    period left to turn, so only the first of equal occurrences is done here. pysbd's
    next-word pattern is wrapped in literal braces: it finds nothing in a text without
    a "{", and is not run there. The patterns are compiled once.
    """

    def search_for_abbreviations_in_string(self, text: str) -> str:
        """Protect the periods of abbreviations in one line, as pysbd does."""
        lowered = text.lower()
        patterns = _abbreviation_patterns(tuple(self.lang.Abbreviation.ABBREVIATIONS))
        for stripped, starts, next_word in patterns:
            if stripped not in lowered:
                continue
            found: list[str] = starts.findall(text)
            if not found:
                continue
            char_array: list[str] = next_word.findall(text) if "{" in text else []
            done: set[str] = set()
            for index, match in enumerate(found):
                if index >= len(char_array):
                    # No next character: the rewrite depends on the occurrence only.
                    if match in done:
                        continue
                    done.add(match)
                text = self.scan_for_replacements(text, match, index, char_array)
        return text


class _English(English):  # type: ignore[misc]
    """pysbd's English, with the faster abbreviation replacer."""

    AbbreviationReplacer = _AbbreviationReplacer


class _Segmenter(pysbd.Segmenter):  # type: ignore[misc]  # pysbd is untyped
    r"""pysbd's segmenter, locating its sentences in the text by plain search.

    pysbd finds each sentence's span with a regex built from the sentence (its text
    escaped, then ``\s*``), compiled anew for every sentence: most of the time of a
    short paragraph. A plain search gives the same spans.
    """

    def __init__(self) -> None:
        super().__init__(language="en", clean=False, char_span=True)
        self.language_module = _English

    def sentences_with_char_spans(self, sentences: list[str]) -> list[TextSpan]:
        """Return each sentence's span: its first occurrence after the previous one."""
        text: str = self.original_text
        if not all(sentences):
            # An empty sentence matches whitespace only: pysbd's own rule decides.
            spans: list[TextSpan] = super().sentences_with_char_spans(sentences)
            return spans
        spans = []
        prior_end = 0
        for sentence in sentences:
            # The regex's matches, in order and not overlapping: each search starts
            # where the last match (trailing whitespace included) ended.
            start = text.find(sentence)
            while start != -1:
                end = start + len(sentence)
                while end < len(text) and text[end].isspace():
                    end += 1
                if end > prior_end:
                    spans.append(TextSpan(text[start:end], start, end))
                    prior_end = end
                    break
                start = text.find(sentence, end)
        return spans


# pysbd passes its patterns to ``re`` as strings, one or more per abbreviation in the
# text: about a thousand on the development articles, beyond the 512 that ``re`` keeps
# compiled, so it compiled most of them again on every paragraph.
_RE_CACHE: Final = 4096


@cache
def _segmenter() -> pysbd.Segmenter:
    if getattr(re, "_MAXCACHE", _RE_CACHE) < _RE_CACHE:
        setattr(re, "_MAXCACHE", _RE_CACHE)  # noqa: B010  (a private constant)
    return _Segmenter()


@cache
def _abbreviations() -> frozenset[str]:
    from pysbd.lang.english import English

    return frozenset(a.lower() for a in English.Abbreviation.ABBREVIATIONS)


def _plain_first_sentence(head: str) -> str | None:
    """Return the first sentence when it plainly ends at the first terminator."""
    # pysbd never ends a sentence inside a parenthesis or brackets ("et al." in a
    # citation): look at the first terminator outside them.
    asides = [m.span() for m in _ASIDE.finditer(head)]
    end = next(
        (
            m
            for m in _FIRST_END.finditer(head)
            if not any(start < m.start() < stop for start, stop in asides)
        ),
        None,
    )
    if end is None or end.end() < _MIN_SENTENCE_CHARS:
        return None
    before = _PLAIN_END.search(head, 0, end.start())
    word = before.group(1) or before.group(2) if before else None
    if before is None or (word is not None and word.lower() in _abbreviations()):
        return None
    bare = _ASIDE.sub(" ", head[: end.start()])
    if (
        _OPEN_MARK.search(bare)  # an open quote or bracket: pysbd reads further
        or _ENUMERATOR.search(head, 0, end.end())
        or _LIST_MARK.search(bare + head[end.start() : end.end()])
    ):
        return None
    if _CAPITAL_NEXT.match(head, end.end()):
        return head[: end.end()].strip()
    if _CLOSES_ALL.match(head, end.end()):
        return head.strip()  # the paragraph is one sentence
    return None


def _balanced(text: str) -> bool:
    return (
        text.count("(") == text.count(")")
        and text.count("[") == text.count("]")
        and text.count("\u201c") == text.count("\u201d")
        and text.count('"') % 2 == 0
    )


def _segmented_first_sentence(head: str) -> tuple[str, int]:
    """Return pysbd's first sentence of ``head`` (short pieces merged) and its end."""
    spans = _segmenter().segment(head)
    if not spans:
        return head, len(head)
    index = 0
    while index + 1 < len(spans) and (
        len(head[: spans[index].end].strip()) < _MIN_SENTENCE_CHARS
        or head[spans[index + 1].start :].lstrip()[:1].islower()
    ):
        index += 1
    return head[: spans[index].end].strip(), spans[index].end


def first_sentence(text: str) -> str:
    """Return the first sentence of a paragraph, merging implausibly short pieces."""
    stripped = text.strip()
    if not stripped:
        return ""
    head = stripped[:_HEAD_CHARS]
    plain = _plain_first_sentence(head)
    if plain is not None:
        return plain
    for size in _WINDOWS:
        if len(head) > size and _balanced(head[:size]):
            sentence, end = _segmented_first_sentence(head[:size])
            if end <= size - _WINDOW_MARGIN:
                return sentence
    return _segmented_first_sentence(head)[0]


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


def split_sentences(text: str) -> list[str]:
    """Split a paragraph into sentences; a sentence with no end is cut by words."""
    sentences = []
    rest = text
    while rest.strip():
        head = first_sentence(rest)
        if not head or len(head) >= len(rest):
            break
        sentences.append(head)
        rest = rest[rest.find(head) + len(head) :]
    if rest.strip():
        sentences.append(rest.strip())
    if len(sentences) == 1:
        words = text.split()
        return [" ".join(words[i : i + 150]) for i in range(0, len(words), 150)]
    return sentences


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
