"""How much of the reference abstract's key content a generated abstract keeps.

The DPR-BAG paper reports UMLS recall (appendix I.3): the share of the distinct UMLS
concepts of the human abstract that the generated abstract also mentions, with concepts
found by scispaCy's entity linker. Two variants are computed here.

``keyphrase_recall`` needs no model and no knowledge base, so it is always available.
The "entities" of the reference are its top TextRank key phrases (the same extractor as
the ``--entities`` guidance: runs of content words between stop words, abbreviations
defined in the text expanded with scispaCy's abbreviation detector). A phrase counts as
recalled when every one of its words occurs in the generated abstract, in any order, so
that "domains of H3K27 modification" recalls "H3K27 modification domains". Words are
compared lower-cased, on letters and digits only (so "long-term" matches "long term"),
with plurals folded ("cells" = "cell"); short forms that either text defines are
expanded in the generated abstract first, so "ZIKV" recalls "Zika virus". Without a
part-of-speech tagger (no trained pipeline is installed) the phrases are content-word
runs rather than true noun phrases; the metric is not the paper's UMLS recall and is
named for what it measures.

``concept_recall`` is the paper's formula over concepts of a knowledge base (alias ->
concept id, e.g. a UMLS export in scispaCy's format). Mentions are found by greedy
longest match of word sequences against the aliases, left to right, after the same
normalisation as :func:`veriscribe.text.entities.link_concepts` (lower case,
punctuation as spaces); it has no trained NER model in front of it.

Both return NaN when the reference yields nothing to recall.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass

from veriscribe.text.entities import abbreviations, fold_plural, key_phrases
from veriscribe.text.tokens import alias_words, alnum_words

__all__ = [
    "KEYPHRASES",
    "KeyphraseRecall",
    "concept_recall",
    "find_concepts",
    "keyphrase_recall",
]

KEYPHRASES = 10
"""How many key phrases of the reference are looked for by default."""

MAX_ALIAS_WORDS = 6
"""Longest alias, in words, that concept matching tries."""


def _words(text: str) -> list[str]:
    normal = unicodedata.normalize("NFKC", text)
    return [fold_plural(word) for word in alnum_words(normal)]


def _expand(text: str, expansions: Mapping[str, str]) -> str:
    """Follow each whole-word short form by its long form in parentheses."""
    if not expansions:
        return text
    shorts = sorted(expansions, key=len, reverse=True)
    pattern = re.compile(
        r"(?<![\w-])(" + "|".join(map(re.escape, shorts)) + r")(?![\w-])"
    )
    # Keeping the short form too lets a phrase that contains it still match.
    return pattern.sub(lambda m: f"{m.group(1)} ({expansions[m.group(1)]})", text)


@dataclass(frozen=True)
class KeyphraseRecall:
    """The key phrases of a reference and which of them a generated text recalls."""

    phrases: tuple[str, ...]
    """The reference's key phrases, best first."""
    recalled: tuple[str, ...]
    """Those found in the generated text, in the same order."""

    @property
    def value(self) -> float:
        """Return the share of phrases recalled; NaN when there is none."""
        return len(self.recalled) / len(self.phrases) if self.phrases else float("nan")


def keyphrase_recall(
    reference: str, generated: str, *, n: int = KEYPHRASES
) -> KeyphraseRecall:
    """Find the reference's top key phrases and which ones the generated text keeps.

    Args:
        reference: The human abstract.
        generated: The generated abstract.
        n: How many key phrases of the reference to look for.

    Returns:
        The phrases and the recalled ones; ``.value`` is the recall.
    """
    phrases = key_phrases(reference, n)
    expansions = {**abbreviations(reference), **abbreviations(generated)}
    present = set(_words(_expand(generated, expansions)))
    recalled = []
    for phrase in phrases:
        words = set(_words(phrase))
        if words and words <= present:
            recalled.append(phrase)
    return KeyphraseRecall(tuple(phrases), tuple(recalled))


def find_concepts(
    text: str, aliases: Mapping[str, str], *, max_words: int = MAX_ALIAS_WORDS
) -> set[str]:
    """Return the concept ids mentioned in ``text``, by greedy longest alias match.

    Args:
        text: Any text.
        aliases: Normalised alias (lower case, punctuation as spaces, single spaces)
            -> concept id.
        max_words: The longest alias tried, in words.

    Returns:
        The distinct concept ids found.
    """
    words = alias_words(text)
    found: set[str] = set()
    i = 0
    while i < len(words):
        for length in range(min(max_words, len(words) - i), 0, -1):
            concept = aliases.get(" ".join(words[i : i + length]))
            if concept is not None:
                found.add(concept)
                i += length
                break
        else:
            i += 1
    return found


def concept_recall(
    reference: str,
    generated: str,
    aliases: Mapping[str, str],
    *,
    max_words: int = MAX_ALIAS_WORDS,
) -> float:
    """Compute |C_gen & C_ref| / |C_ref| over knowledge-base concepts (paper eq. 1).

    Args:
        reference: The human abstract.
        generated: The generated abstract.
        aliases: Normalised alias -> concept id.
        max_words: The longest alias tried, in words.

    Returns:
        The recall in [0, 1]; NaN when the reference mentions no concept.
    """
    ref = find_concepts(reference, aliases, max_words=max_words)
    if not ref:
        return float("nan")
    gen = find_concepts(generated, aliases, max_words=max_words)
    return len(ref & gen) / len(ref)
