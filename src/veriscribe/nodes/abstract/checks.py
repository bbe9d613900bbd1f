"""Deterministic checks of a refined abstract: guidance, numbers, patterns, length, case.

The refine step's model writes the abstract; these plain functions then hold it to
what a reader checks first, in this order:

1. **Pointers and guidance**: citation markers ("[1]–[5]", "(Smith et al., 2019)")
   and parenthesised display references ("(Table 2)") are removed, and a sentence
   that still names a table or figure ("Baseline data are shown in Table 1.") is
   dropped. A leading facet label ("Methods:") is removed and a sentence that
   restates the facet guidance instead of the article is dropped; a sentence that
   ends on a dangling word ("... to ZIKV, and.") ends before it.
2. **Numbers**: a sentence with a number, unit or P value the article does not give
   is replaced by the closest facet-summary sentence whose numbers the article gives,
   or dropped.
3. **Patterns**: a sentence that repeats an earlier one's pattern (it opens with the
   same three words, as in three sentences starting "This is justified by", or half
   its word trigrams are already in earlier sentences) is replaced by the closest
   facet-summary sentence that repeats nothing, or dropped.
4. **Length**: an abstract over the asked length by more than 20% loses whole
   sentences until it fits: those that repeat another first, then those about
   eligibility, approvals, searches or lab protocol, then those without a number
   (data is what a reader looks for), then those of the facet said most about;
   one under it by more than 20%, of an article with enough text, gains
   facet-summary sentences it lacks, each placed beside its facet.
5. **Bent words**: a word the article never uses, in a place where the article
   writes a near form of it between the same words, becomes the article's word
   ("worker productive" -> "worker productivity", "systematic glucocorticoids" ->
   "systemic glucocorticoids"; see `veriscribe.checks.wording.WordContexts`).
6. **Case**: a word capitalised mid-sentence that the article writes only in lower
   case is lower-cased.

Every change is recorded in a :class:`CheckRecord` and, when it changed the text,
in the result's fallbacks.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import TypedDict

from veriscribe.checks.wording import (
    CaseIndex,
    WordContexts,
    read_words,
    repair_case,
    repair_words,
    word_count,
)
from veriscribe.metrics.abstract_quality import LENGTH_MARGIN
from veriscribe.text.findings import is_procedure
from veriscribe.text.guidance import echoes_guidance, strip_facet_label
from veriscribe.text.numbers import ArticleNumbers, number_precision
from veriscribe.text.pointers import points_to_display, strip_pointers
from veriscribe.text.sentences import sentences_of
from veriscribe.text.tokens import CONTENT_STOP_WORDS, content_words

__all__ = [
    "CHECK_FALLBACKS",
    "LENGTH_MARGIN",
    "ArticleView",
    "CheckRecord",
    "check_abstract",
    "hold_length",
    "refuse_patterns",
    "screen_sentences",
    "sentences_of",
    "word_count",
]

ENOUGH_TEXT = 2
"""An article has enough text for the asked length when it has this many times as
many words: only then is a short abstract made longer."""
REDUNDANT = 0.5
"""A sentence is redundant when this share of its content words is in another."""
REPLACEMENT_OVERLAP = 0.3
"""A facet-summary sentence replaces a dropped one only when it shares this much."""
PATTERN_WORDS = 3
"""Sentences that open with the same this many words repeat a pattern."""
REPEATED_TRIGRAMS = 0.5
"""A sentence this share of whose word trigrams are in earlier ones repeats them."""
_DANGLING = re.compile(
    r",?\s+(?:and|or|but|nor|of|the|an|a)"
    r"([.!?])$"
)
CHECK_FALLBACKS = (
    "endings_mended:",
    "pointers_removed:",
    "pointers_dropped:",
    "guidance_dropped:",
    "numbers_dropped:",
    "patterns_dropped:",
    "length_",
    "words_mended:",
    "evidence_checked:",
)
"""How the fallbacks the checks report begin (the others report failures)."""


class CheckRecord(TypedDict):
    """What the checks found and changed in one abstract."""

    words_asked: int
    """The asked length (0: not held)."""
    words: int
    """The abstract's length after the checks."""
    length: str
    """``ok``, ``trimmed``, ``padded``, ``short`` (under, with no more facet text to
    add), ``long`` (over, with no sentence to drop), ``brief_article`` (under, but
    the article is too short for the asked length) or ``off``."""
    trimmed: list[str]
    added: list[str]
    labels_stripped: int
    endings_mended: int
    """Sentences that ended on a dangling word ("..., and."), ended before it."""
    pointers_removed: int
    """Citation markers and parenthesised display references removed."""
    pointers_dropped: list[str]
    """Sentences that named a table or figure of the article."""
    guidance_dropped: list[str]
    number_precision: float | None
    """The share of the model's numbers that the article gives (None: it had none)."""
    numbers_dropped: list[str]
    numbers_replaced: list[str]
    """Facet-summary sentences used in place of dropped ones."""
    patterns_dropped: list[str]
    patterns_replaced: list[str]
    """Facet-summary sentences used in place of those that repeated a pattern."""
    word_repairs: list[str]
    """Bent words put back as the article writes them, as ``bent -> article's``."""
    case_repairs: list[str]


@dataclass(frozen=True)
class ArticleView:
    """What the checks need of an article: its words, numbers, spellings, length."""

    words: frozenset[str]
    numbers: ArticleNumbers
    case: CaseIndex
    contexts: WordContexts
    length: int
    """Its words."""

    @classmethod
    def of(cls, body: str) -> ArticleView:
        """Index an article's body."""
        case, contexts = read_words(body)
        # The body's content words are those of its vocabulary: no second reading.
        words = frozenset(
            w for w in contexts.words if len(w) > 2 and w not in CONTENT_STOP_WORDS
        )
        return cls(
            words,
            ArticleNumbers.of(body),
            case,
            contexts,
            word_count(body),
        )


def _overlap(sentence: str, other: str) -> float:
    words = set(content_words(sentence))
    if not words:
        return 0.0
    return len(words & set(content_words(other))) / len(words)


@dataclass
class Screened:
    """Sentences that passed the guidance and number checks, and what did not."""

    kept: list[str]
    labels_stripped: int
    endings_mended: int
    pointers_removed: int
    pointers_dropped: list[str]
    guidance_dropped: list[str]
    numbers_dropped: list[str]
    numbers_replaced: list[str]


def _passes(sentence: str, article: ArticleView) -> bool:
    return not (
        points_to_display(sentence)
        or echoes_guidance(sentence, article.words)
        or article.numbers.unsupported(sentence)
    )


def screen_sentences(
    sentences: list[str], article: ArticleView, spares: list[str]
) -> Screened:
    """Strip pointers and labels; drop echoes and display sentences; mend numbers.

    Guidance echoes and sentences that name a table or figure are dropped; a
    sentence with a number the article does not give is replaced or dropped.
    ``spares`` are the facet-summary sentences (pointers already stripped) a
    sentence with a wrong number may be replaced by: the one sharing most content
    words with it (at least 30%) that passes every check, and not already used.
    """
    result = Screened([], 0, 0, 0, [], [], [], [])
    for raw in sentences:
        sentence, removed = strip_pointers(raw)
        result.pointers_removed += removed
        sentence, dangling = _DANGLING.subn(r"\1", sentence)
        result.endings_mended += dangling
        sentence, stripped = strip_facet_label(sentence)
        result.labels_stripped += stripped
        if echoes_guidance(sentence, article.words):
            result.guidance_dropped.append(raw)
            continue
        if points_to_display(sentence):
            # It says where something is, not what: the length check may add a
            # facet-summary sentence in its place.
            result.pointers_dropped.append(raw)
            continue
        if not article.numbers.unsupported(sentence):
            result.kept.append(sentence)
            continue
        result.numbers_dropped.append(raw)
        used = set(result.kept)
        candidates = [
            (_overlap(sentence, spare), -i, spare)
            for i, spare in enumerate(spares)
            if spare not in used and _passes(spare, article)
        ]
        best = max(candidates, default=None)
        if best is not None and best[0] >= REPLACEMENT_OVERLAP:
            result.kept.append(best[2])
            result.numbers_replaced.append(best[2])
    return result


def _opening(sentence: str) -> tuple[str, ...]:
    words = re.findall(r"\w+", sentence.lower())
    return tuple(words[:PATTERN_WORDS]) if len(words) > PATTERN_WORDS else ()


def _trigrams(sentence: str) -> list[tuple[str, ...]]:
    words = re.findall(r"\w+", sentence.lower())
    return [tuple(words[i : i + 3]) for i in range(len(words) - 2)]


def refuse_patterns(
    sentences: list[str], spares: list[str]
) -> tuple[list[str], list[str], list[str]]:
    """Replace or drop the sentences that repeat an earlier sentence's pattern.

    A sentence repeats one when it opens with the same :data:`PATTERN_WORDS` words as
    a sentence kept before it, or when :data:`REPEATED_TRIGRAMS` of its word trigrams
    are in those. It is replaced by the ``spares`` sentence sharing most content
    words with it (at least 30%) that repeats nothing and is not used yet, else
    dropped; the first of a pattern stays.

    Returns:
        The sentences kept, those dropped and the spares used in their place.
    """
    kept: list[str] = []
    dropped: list[str] = []
    replaced: list[str] = []
    openings: set[tuple[str, ...]] = set()
    seen: set[tuple[str, ...]] = set()

    def repeats(sentence: str) -> bool:
        opening = _opening(sentence)
        if opening and opening in openings:
            return True
        grams = _trigrams(sentence)
        return bool(grams) and (
            sum(g in seen for g in grams) >= REPEATED_TRIGRAMS * len(grams)
        )

    def keep(sentence: str) -> None:
        kept.append(sentence)
        openings.add(_opening(sentence))
        seen.update(_trigrams(sentence))

    for sentence in sentences:
        if not repeats(sentence):
            keep(sentence)
            continue
        dropped.append(sentence)
        candidates = [
            (_overlap(sentence, spare), -i, spare)
            for i, spare in enumerate(spares)
            if spare not in kept and not repeats(spare)
        ]
        best = max(candidates, default=None)
        if best is not None and best[0] >= REPLACEMENT_OVERLAP:
            keep(best[2])
            replaced.append(best[2])
    return kept, dropped, replaced


def _facet_positions(sentences: list[str], facets: list[str]) -> list[int]:
    """Return, per sentence, the draft facet (by order) it shares most words with."""
    positions = []
    last = 0
    for sentence in sentences:
        scores = [_overlap(sentence, facet) for facet in facets]
        if scores and max(scores) > 0:
            last = scores.index(max(scores))
        positions.append(last)
    return positions


def _states_data(sentence: str) -> bool:
    """Tell whether a sentence gives a number (a citation marker is not one)."""
    return any(c.isdigit() for c in strip_pointers(sentence)[0])


def _redundancy(sentences: list[str], index: int) -> float:
    return max(
        (
            _overlap(sentences[index], other)
            for j, other in enumerate(sentences)
            if j != index
        ),
        default=0.0,
    )


def _trim(
    sentences: list[str], facets: list[str], upper: int, lower: int
) -> tuple[list[str], list[str]]:
    kept = list(sentences)
    trimmed: list[str] = []
    while word_count(" ".join(kept)) > upper and len(kept) > 1:
        total = word_count(" ".join(kept))
        positions = _facet_positions(kept, facets)
        counts = {p: positions.count(p) for p in positions}
        # The opening and the closing sentence frame the abstract: they go last.
        droppable = range(1, len(kept) - 1) if len(kept) > 2 else range(1, len(kept))
        ranked = sorted(
            droppable,
            key=lambda i: (
                _redundancy(kept, i) >= REDUNDANT,
                is_procedure(kept[i]),
                not _states_data(kept[i]),
                counts[positions[i]],
                i,
            ),
            reverse=True,
        )
        fitting = [i for i in ranked if total - word_count(kept[i]) >= lower]
        drop = fitting[0] if fitting else min(ranked, key=lambda i: word_count(kept[i]))
        trimmed.append(kept.pop(drop))
    return kept, trimmed


def _pad(
    sentences: list[str],
    facets: list[str],
    spares: list[tuple[int, str]],
    upper: int,
    lower: int,
) -> tuple[list[str], list[str]]:
    kept = list(sentences)
    added: list[str] = []
    positions = _facet_positions(kept, facets)
    missing = [
        (facet, spare)
        for facet, spare in spares
        if spare not in kept and all(_overlap(spare, s) < REDUNDANT for s in kept)
    ]
    # The facets the abstract says least about first, each in draft order.
    missing.sort(key=lambda item: (positions.count(item[0]), item[0]))
    for facet, spare in missing:
        total = word_count(" ".join(kept))
        if total >= lower:
            break
        if total + word_count(spare) > upper:
            continue
        if _opening(spare) and _opening(spare) in {_opening(s) for s in kept}:
            continue  # a pattern already there
        at = sum(1 for p in positions if p <= facet)
        kept.insert(at, spare)
        positions.insert(at, facet)
        added.append(spare)
    return kept, added


def hold_length(
    sentences: list[str],
    facets: list[str],
    spares: list[tuple[int, str]],
    words: int,
    article_words: int,
) -> tuple[list[str], str, list[str], list[str]]:
    """Bring the sentences within 20% of ``words``, never cutting a sentence.

    Args:
        sentences: The abstract's sentences.
        facets: The draft's facet summaries, in rhetorical order.
        spares: Facet-summary sentences that passed the checks, each with the index
            of its facet in ``facets``.
        words: The asked length (0: leave the length alone).
        article_words: The article's length: only an article of at least twice the
            asked length makes a short abstract longer.

    Returns:
        The sentences, the outcome (see :class:`CheckRecord`), the sentences
        trimmed and those added.
    """
    if not words:
        return sentences, "off", [], []
    upper = math.floor(words * (1 + LENGTH_MARGIN))
    lower = math.ceil(words * (1 - LENGTH_MARGIN))
    total = word_count(" ".join(sentences))
    if total > upper:
        kept, trimmed = _trim(sentences, facets, upper, lower)
        fits = word_count(" ".join(kept)) <= upper
        return kept, "trimmed" if fits else "long", trimmed, []
    if total >= lower:
        return sentences, "ok", [], []
    if article_words < ENOUGH_TEXT * words:
        return sentences, "brief_article", [], []
    kept, added = _pad(sentences, facets, spares, upper, lower)
    if word_count(" ".join(kept)) >= lower:
        return kept, "padded", [], added
    return kept, "short", [], added


def check_abstract(
    abstract: str, draft: str, body: str, words: int
) -> tuple[str, CheckRecord, list[str]]:
    """Run the checks on a refined abstract.

    Args:
        abstract: The model's abstract.
        draft: The facet summaries it was refined from, one paragraph per facet in
            rhetorical order.
        body: The article's body.
        words: The asked length (0: not held).

    Returns:
        The checked abstract, the record, and the fallbacks to report.
    """
    article = ArticleView.of(body)
    facets = [p.strip() for p in draft.split("\n\n") if p.strip()]
    spare_pairs = [
        (i, strip_facet_label(strip_pointers(sentence)[0])[0])
        for i, facet in enumerate(facets)
        for sentence in sentences_of(facet)
    ]
    spares = [s for _, s in spare_pairs]
    screened = screen_sentences(sentences_of(abstract), article, spares)
    usable = [(i, s) for i, s in spare_pairs if _passes(s, article)]
    varied, patterns_dropped, patterns_replaced = refuse_patterns(
        screened.kept, [s for _, s in usable]
    )
    kept, length, trimmed, added = hold_length(
        varied, facets, usable, words, article.length
    )
    if not kept:
        # Nothing of the model's abstract survived and nothing could be added: a
        # flawed abstract still says more than none.
        kept = [abstract.strip()]
    mended, word_repairs = repair_words(" ".join(kept), article.contexts)
    text, repairs = repair_case(mended, article.case)
    record = CheckRecord(
        words_asked=words,
        words=word_count(text),
        length=length,
        trimmed=trimmed,
        added=added,
        labels_stripped=screened.labels_stripped,
        endings_mended=screened.endings_mended,
        pointers_removed=screened.pointers_removed,
        pointers_dropped=screened.pointers_dropped,
        guidance_dropped=screened.guidance_dropped,
        number_precision=number_precision(abstract, article.numbers),
        numbers_dropped=screened.numbers_dropped,
        numbers_replaced=screened.numbers_replaced,
        patterns_dropped=patterns_dropped,
        patterns_replaced=patterns_replaced,
        word_repairs=word_repairs,
        case_repairs=repairs,
    )
    return text, record, fallbacks_of(record)


def fallbacks_of(record: CheckRecord) -> list[str]:
    """Return the fallbacks a check record reports: every check that changed text."""
    notes = []
    if record["endings_mended"]:
        notes.append(
            f"endings_mended: {record['endings_mended']} sentences ended on a "
            "dangling word"
        )
    if record["pointers_removed"]:
        notes.append(
            f"pointers_removed: {record['pointers_removed']} citation markers or "
            "table and figure references removed"
        )
    if record["pointers_dropped"]:
        notes.append(
            f"pointers_dropped: {len(record['pointers_dropped'])} sentences named a "
            "table or figure of the article"
        )
    if record["guidance_dropped"]:
        notes.append(
            f"guidance_dropped: {len(record['guidance_dropped'])} sentences restated "
            "the facet guidance"
        )
    if record["numbers_dropped"]:
        notes.append(
            f"numbers_dropped: {len(record['numbers_dropped'])} sentences had numbers "
            f"the article does not give ({len(record['numbers_replaced'])} replaced "
            "by facet-summary sentences)"
        )
    if record["patterns_dropped"]:
        notes.append(
            f"patterns_dropped: {len(record['patterns_dropped'])} sentences repeated "
            f"an earlier sentence's opening or wording "
            f"({len(record['patterns_replaced'])} replaced by facet-summary sentences)"
        )
    if record["length"] == "trimmed":
        notes.append(
            f"length_trimmed: {len(record['trimmed'])} sentences dropped to "
            f"{record['words']} words"
        )
    elif record["length"] == "padded":
        notes.append(
            f"length_padded: {len(record['added'])} facet-summary sentences added, "
            f"{record['words']} words"
        )
    elif record["length"] in ("short", "long"):
        notes.append(
            f"length_{record['length']}: {record['words']} words of the "
            f"{record['words_asked']} asked"
        )
    if record["word_repairs"]:
        notes.append(
            f"words_mended: {len(record['word_repairs'])} words put back as the "
            f"article writes them ({', '.join(record['word_repairs'])})"
        )
    return notes
