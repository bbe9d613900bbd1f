"""Key phrases of a facet for entity guidance (``tr_entities``): TextRank, no model.

The paper's TR-UMLS extension ranks key phrases of a facet with TextRank, links them to
UMLS with scispaCy and injects the top n as anchor terms. No trained spaCy pipeline can
be downloaded here, so candidates are found without part-of-speech tags: maximal runs
of content words between stop words, punctuation and numbers, tokenised by
``spacy.blank("en")``. Words are ranked by weighted PageRank over a co-occurrence graph
(Mihalcea and Tarau 2004); a phrase scores the sum of its distinct words' ranks.
scispaCy's ``AbbreviationDetector`` (which needs only a tokenizer and sentence
boundaries) rewrites short forms to their long forms ("ZIKV" -> "Zika virus").

Concept linking needs a knowledge base; :func:`link_concepts` is the hook for it.
"""

from __future__ import annotations

import json
import math
import re
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Final

import numpy as np
import spacy
from rapidfuzz import fuzz, process
from scispacy.abbreviation import AbbreviationDetector  # noqa: F401  (registers the pipe)
from spacy.lang.en.stop_words import STOP_WORDS
from spacy.language import Language
from spacy.tokens import Doc

from veriscribe.errors import ConfigError

__all__ = ["abbreviations", "key_phrases", "link_concepts", "textrank_scores"]

# Words that carry no topic in biomedical prose: reporting verbs, hedges, pointers to
# figures and tables, and generic nouns of scientific writing.
_DOMAIN_STOP_WORDS: Final = frozenset(
    {
        "al",
        "also",
        "approximately",
        "based",
        "compared",
        "conclusion",
        "conclusions",
        "data",
        "demonstrate",
        "demonstrated",
        "demonstrates",
        "described",
        "determine",
        "determined",
        "et",
        "fig",
        "figs",
        "figure",
        "figures",
        "find",
        "finding",
        "findings",
        "finds",
        "found",
        "however",
        "identified",
        "include",
        "included",
        "includes",
        "including",
        "indicate",
        "indicated",
        "indicates",
        "investigated",
        "known",
        "likely",
        "occur",
        "occurred",
        "occurring",
        "occurs",
        "possibly",
        "probably",
        "provide",
        "provided",
        "provides",
        "serve",
        "served",
        "serves",
        "termed",
        "method",
        "methods",
        "observed",
        "paper",
        "performed",
        "present",
        "previously",
        "reported",
        "respectively",
        "result",
        "results",
        "reveal",
        "revealed",
        "reveals",
        "show",
        "showed",
        "shown",
        "shows",
        "studied",
        "studies",
        "study",
        "suggest",
        "suggested",
        "suggests",
        "supplementary",
        "table",
        "tables",
        "therefore",
        "thus",
        "use",
        "used",
        "uses",
        "using",
        "whereas",
    }
)
STOP: Final = frozenset(w.lower() for w in STOP_WORDS) | _DOMAIN_STOP_WORDS
# Adverbs ("clinically", "widely") end in -ly; these nouns and adjectives do too.
_LY_WORDS: Final = frozenset(
    {
        "assembly",
        "anomaly",
        "butterfly",
        "elderly",
        "family",
        "firefly",
        "italy",
        "supply",
    }
)
_MIN_ADVERB_CHARS: Final = 6

_HAS_LETTER = re.compile(r"[^\W\d_]")
_JOINERS: Final = frozenset({"-", "/", "\u2010", "\u2011"})
_MAX_PHRASE_WORDS: Final = 4
_MAX_SHORT_FORM_CHARS: Final = 12
_MAX_LONG_FORM_WORDS: Final = 8
_BAD_LONG_FORM = re.compile(r"[()\[\],;:=\u00b1]")
_WINDOW: Final = 3
_DAMPING: Final = 0.85
_MAX_ITERATIONS: Final = 100
_TOLERANCE: Final = 1e-8


@cache
def _pipeline() -> Language:
    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    nlp.add_pipe("abbreviation_detector")
    return nlp


@dataclass(frozen=True)
class _Word:
    """A word of the text: one token, or tokens glued by an inner hyphen or slash."""

    start: int
    end: int
    keys: tuple[str, ...]
    content: bool


def _is_adverb(word: str) -> bool:
    return (
        word.endswith("ly") and len(word) >= _MIN_ADVERB_CHARS and word not in _LY_WORDS
    )


def fold_plural(word: str) -> str:
    """Fold a plural onto its singular, so "domain" and "domains" are one node."""
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def _words(doc: Doc, expansions: Mapping[str, str]) -> list[list[_Word]]:
    """Split each sentence into words, marking the content words.

    A defined abbreviation stands for the words of its long form in the graph, so that
    "ZIKV" and "Zika virus" add up to one set of nodes.
    """
    sentences: list[list[_Word]] = []
    full_text = doc.text  # Doc.text is rebuilt on every access
    for sentence in doc.sents:
        words: list[_Word] = []
        tokens = list(sentence)
        index = 0
        while index < len(tokens):
            first = tokens[index]
            last = first
            while (
                index + 2 < len(tokens)
                and not last.whitespace_
                and tokens[index + 1].text in _JOINERS
                and not tokens[index + 1].whitespace_
                and _HAS_LETTER.search(tokens[index + 2].text)
            ):
                index += 2
                last = tokens[index]
            text = full_text[first.idx : last.idx + len(last.text)]
            lower = text.lower()
            content = (
                len(text) > 1
                and bool(_HAS_LETTER.search(text))
                and lower not in STOP
                and not _is_adverb(lower)
                and not first.like_url
                and not first.like_email
            )
            if text in expansions:
                long_words = expansions[text].lower().split()
                keys = tuple(fold_plural(w) for w in long_words if w not in STOP)
            else:
                keys = (fold_plural(lower),)
            end = last.idx + len(last.text)
            words.append(_Word(first.idx, end, keys or (fold_plural(lower),), content))
            index += 1
        sentences.append(words)
    return sentences


def _runs(
    sentences: Sequence[Sequence[_Word]], keep: Callable[[_Word], bool]
) -> list[list[_Word]]:
    """Return the maximal runs of adjacent words that ``keep`` accepts."""
    runs: list[list[_Word]] = []
    for words in sentences:
        current: list[_Word] = []
        for word in words:
            if keep(word):
                current.append(word)
            elif current:
                runs.append(current)
                current = []
        if current:
            runs.append(current)
    return runs


def textrank_scores(
    runs: Sequence[Sequence[str]], window: int = _WINDOW
) -> dict[str, float]:
    """Rank words by weighted PageRank over their co-occurrence graph.

    Args:
        runs: Word sequences (already filtered to content words); words within
            ``window`` positions of each other in one sequence are linked, the edge
            weight counting how often.
        window: Co-occurrence window, in words.

    Returns:
        A score per word; the scores sum to 1 (empty when there is no word).
    """
    vocabulary: dict[str, int] = {}
    for run in runs:
        for word in run:
            vocabulary.setdefault(word, len(vocabulary))
    size = len(vocabulary)
    if size == 0:
        return {}
    # Edge lists rather than a dense matrix: a long facet has thousands of words.
    pairs: dict[tuple[int, int], float] = {}
    for run in runs:
        ids = [vocabulary[word] for word in run]
        for i, a in enumerate(ids):
            for b in ids[i + 1 : i + window]:
                if a != b:
                    pairs[(a, b)] = pairs.get((a, b), 0.0) + 1.0
                    pairs[(b, a)] = pairs.get((b, a), 0.0) + 1.0
    source = np.fromiter((a for a, _ in pairs), dtype=np.int64, count=len(pairs))
    target = np.fromiter((b for _, b in pairs), dtype=np.int64, count=len(pairs))
    weight = np.fromiter(pairs.values(), dtype=np.float64, count=len(pairs))
    out_weight = np.bincount(source, weights=weight, minlength=size)
    share = weight / out_weight[source] if len(pairs) else weight
    scores = np.full(size, 1.0 / size)
    for _ in range(_MAX_ITERATIONS):
        incoming = np.bincount(target, weights=scores[source] * share, minlength=size)
        # A word that co-occurs with nothing keeps the teleport share only.
        updated = (1 - _DAMPING) / size + _DAMPING * incoming
        updated /= updated.sum()
        converged = float(np.abs(updated - scores).sum()) < _TOLERANCE
        scores = updated
        if converged:
            break
    return {word: float(scores[index]) for word, index in vocabulary.items()}


def _defined_abbreviations(doc: Doc) -> dict[str, str]:
    found: dict[str, str] = {}
    for span in doc._.abbreviations:
        short, long = span.text, span._.long_form.text
        # scispaCy occasionally pairs a parenthesised phrase or a measurement with a
        # "short form"; keep only word-like short forms and clean long forms.
        if (
            " " in short
            or len(short) > _MAX_SHORT_FORM_CHARS
            or not _HAS_LETTER.search(short)
            or _BAD_LONG_FORM.search(long)
            or len(long.split()) > _MAX_LONG_FORM_WORDS
        ):
            continue
        found.setdefault(short, long)
    return found


def _analyse(text: str) -> Doc:
    with warnings.catch_warnings():
        # The detector's matcher has no global patterns; spaCy warns on every call.
        warnings.filterwarnings("ignore", message=r"\[W036\]")
        return _pipeline()(text)


def abbreviations(text: str) -> dict[str, str]:
    """Return the abbreviations that ``text`` defines, short form -> long form."""
    return _defined_abbreviations(_analyse(text))


def _expand(phrase: str, expansions: dict[str, str]) -> str:
    if not expansions:
        return phrase
    shorts = sorted(expansions, key=len, reverse=True)
    pattern = re.compile(
        r"(?<![\w-])(" + "|".join(map(re.escape, shorts)) + r")(?![\w-])"
    )
    return pattern.sub(lambda m: expansions[m.group(1)], phrase)


def key_phrases(text: str, n: int) -> list[str]:
    """Return the ``n`` top TextRank key phrases of ``text``, abbreviations expanded.

    As in the original TextRank, the top third of the ranked words (at least ``n``)
    are keywords, and adjacent keywords in the text merge into phrases of up to four
    words, scored by the sum of their distinct words' ranks. Words are compared in
    lower case with plurals folded. For variety, a phrase is skipped when half or more
    of its words already occur in better phrases.
    """
    if n <= 0 or not text.strip():
        return []
    doc = _analyse(text)
    expansions = _defined_abbreviations(doc)
    sentences = _words(doc, expansions)
    candidate_runs = _runs(sentences, lambda w: w.content)
    scores = textrank_scores(
        [[k for w in run for k in w.keys] for run in candidate_runs]
    )
    if not scores:
        return []
    ranked_words = sorted(scores, key=lambda w: -scores[w])
    keywords = set(ranked_words[: max(math.ceil(len(ranked_words) / 3), n)])

    full_text = doc.text
    phrases: dict[str, tuple[float, int, str]] = {}
    order = 0
    for run in _runs(sentences, lambda w: w.content and keywords.issuperset(w.keys)):
        for start in range(0, len(run), _MAX_PHRASE_WORDS):
            chunk = run[start : start + _MAX_PHRASE_WORDS]
            surface = full_text[chunk[0].start : chunk[-1].end]
            score = sum(scores[key] for key in {k for w in chunk for k in w.keys})
            phrases.setdefault(surface.lower(), (score, order, surface))
            order += 1

    ranked = sorted(phrases.values(), key=lambda item: (-item[0], item[1]))
    chosen: list[str] = []
    covered: set[str] = set()
    for _, _, surface in ranked:
        phrase = _expand(surface, expansions)
        words = {fold_plural(w) for w in phrase.lower().split()}
        if len(words & covered) * 2 >= len(words):
            continue
        chosen.append(phrase)
        covered |= words
        if len(chosen) == n:
            break
    return chosen


# ----------------------------------------------------------------- concept linking


def _normalise_alias(text: str) -> str:
    return " ".join(re.sub(r"[^\w\s]", " ", text.lower()).split())


@cache
def alias_index(kb_path: Path) -> dict[str, str]:
    """Map normalised aliases to one concept id, from a scispaCy KB file."""
    if not kb_path.is_file():
        raise ConfigError(f"{kb_path}: knowledge base file not found")
    index: dict[str, str] = {}
    for entity in _read_kb(kb_path):
        concept = str(entity["concept_id"])
        names: Iterable[Any] = [
            entity.get("canonical_name", ""),
            *entity.get("aliases", []),
        ]
        for name in names:
            alias = _normalise_alias(str(name))
            if alias:
                index.setdefault(alias, concept)
    return index


def _read_kb(kb_path: Path) -> list[dict[str, Any]]:
    text = kb_path.read_text(encoding="utf-8")
    try:
        if kb_path.suffix == ".jsonl":
            records = [json.loads(line) for line in text.splitlines() if line.strip()]
        else:
            loaded = json.loads(text)
            records = loaded if isinstance(loaded, list) else []
    except json.JSONDecodeError as exc:
        raise ConfigError(
            f"{kb_path}: not a JSON/JSON-lines knowledge base ({exc.msg})"
        ) from None
    if not all(isinstance(r, dict) and "concept_id" in r for r in records):
        raise ConfigError(f"{kb_path}: every record needs a concept_id")
    return records


_LINK_CUTOFF: Final = 90.0


def link_concepts(phrases: Sequence[str], kb_path: Path | None) -> list[str]:
    """Keep the phrases that name a knowledge-base concept, one phrase per concept.

    This is the hook for the paper's UMLS linking. With ``kb_path`` None (no knowledge
    base configured) the phrases come back unchanged. Otherwise ``kb_path`` is a local
    knowledge base in scispaCy's format (JSON lines of ``concept_id``,
    ``canonical_name``, ``aliases``; a UMLS export made by scispaCy works, and so does a
    small hand-made file). A phrase links when its normalised text is an alias, or is
    within a fuzzy ratio of 90 of one; phrases without a concept are dropped, and of
    several phrases naming one concept only the first (best ranked) is kept, so the
    order of ``phrases`` is preserved.

    Raises:
        ConfigError: The knowledge base file is missing or malformed.
    """
    if kb_path is None:
        return list(phrases)
    index = alias_index(kb_path)
    aliases = list(index)
    kept: list[str] = []
    seen: set[str] = set()
    for phrase in phrases:
        key = _normalise_alias(phrase)
        concept = index.get(key)
        if concept is None and key:
            match = process.extractOne(
                key, aliases, scorer=fuzz.ratio, score_cutoff=_LINK_CUTOFF
            )
            concept = index[match[0]] if match is not None else None
        if concept is None or concept in seen:
            continue
        seen.add(concept)
        kept.append(phrase)
    return kept
