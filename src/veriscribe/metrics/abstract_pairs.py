"""Labelled abstract-sentence/article-passage pairs for measuring a faithfulness judge.

The authors' own abstract sentences are paraphrases of their article: each, with the
article sentences BM25 ranks highest for it (:func:`evidence_for`, the passage
``eval abstracts --support`` judges a sentence against), is a ``supported`` pair when
that passage holds at least :data:`MIN_SUPPORT_COVERAGE` of the sentence's content
words and the article states all its numbers. Each such sentence also gives one
perturbed pair, judged against the same passage:

* ``number`` (``contradicted``): one number changed to a value the article never
  states (``42%`` -> ``63%``, ``0.82`` -> ``0.41``);
* ``direction`` (``contradicted``): one word of direction swapped for its opposite
  (``increased`` -> ``decreased``, ``more`` -> ``less``, ``effective`` ->
  ``ineffective``), or, with none, the negation of a verb flipped;
* ``entity`` (``not_supported``): one name-like token (``IL-6``, ``HIV``) replaced by
  another name of the same article that the sentence does not hold.

The kind is the least used so far among those the sentence allows, so the kinds stay
balanced; every choice is drawn from a seeded generator. Half the articles (by a hash
of their id, :func:`split_of`) are ``tune`` articles, on which any cut-off may be set,
the rest ``test``: accuracy on ``test`` pairs is the held-out figure.
"""

from __future__ import annotations

import hashlib
import random
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from veriscribe.checks.faithfulness import coverage, entity_tokens
from veriscribe.checks.support import terms
from veriscribe.metrics.judge_pairs import JudgePair, Label, flip
from veriscribe.retrieval.bm25 import BM25Index
from veriscribe.text.numbers import ArticleNumbers, number_mentions
from veriscribe.text.sentences import claim_sentences

__all__ = [
    "EVIDENCE",
    "EVIDENCE_CHARS",
    "KINDS",
    "AbstractSource",
    "build_abstract_pairs",
    "change_direction",
    "change_entity",
    "change_number",
    "evidence_for",
    "sentence_numbers",
    "split_of",
]

EVIDENCE = 4
"""Article sentences given to a judge as the passage for one abstract sentence."""
EVIDENCE_CHARS = 1600
"""At most this many characters of evidence (the best-ranked sentences first)."""
MIN_SUPPORT_COVERAGE = 0.7
"""An author sentence is a supported pair only if its passage holds this share of it."""
NUMBER_SENTENCES = 2
"""Article sentences :func:`evidence_for` adds for numbers the ranked ones lack."""
MIN_CLAIM_CHARS = 60
MIN_CLAIM_WORDS = 6
KINDS = ("number", "direction", "entity")

_SWAPS: tuple[tuple[str, str], ...] = tuple(
    (a, b)
    for one, other in (
        ("increase", "decrease"),
        ("increased", "decreased"),
        ("increases", "decreases"),
        ("increasing", "decreasing"),
        ("higher", "lower"),
        ("more", "less"),
        ("greater", "smaller"),
        ("larger", "smaller"),
        ("elevated", "reduced"),
        ("upregulated", "downregulated"),
        ("up-regulated", "down-regulated"),
        ("improved", "worsened"),
        ("improves", "worsens"),
        ("effective", "ineffective"),
        ("efficient", "inefficient"),
        ("positive", "negative"),
        ("positively", "negatively"),
        ("gain", "loss"),
        ("enhanced", "reduced"),
        ("promotes", "inhibits"),
        ("promoted", "inhibited"),
        ("activates", "represses"),
        ("activated", "repressed"),
        ("rise", "fall"),
        ("reduction", "increase"),
        ("reduces", "increases"),
    )
    for a, b in ((one, other), (other, one))
)
"""Words of direction and their opposites (each way; the first listed wins)."""
_NUMBER_SPAN = re.compile(r"(?<![\w.,-])(\d+(?:\.\d+)?)(?![\w.]*\d)(?!-)")
_FACTORS = (1.5, 2.0, 0.5, 3.0, 0.25)


@dataclass(frozen=True, slots=True)
class AbstractSource:
    """An article with its author abstract, the material of the pairs."""

    id: str
    body: str
    abstract: str


def split_of(article_id: str) -> str:
    """Return ``tune`` or ``test``: a fixed half of articles for each, by id hash."""
    digest = hashlib.sha256(article_id.encode("utf-8")).digest()
    return "tune" if digest[0] % 2 == 0 else "test"


def evidence_for(
    index: BM25Index,
    article: Sequence[str],
    claim: str,
    *,
    k: int = EVIDENCE,
    max_chars: int = EVIDENCE_CHARS,
    numbers: Sequence[ArticleNumbers] | None = None,
) -> list[str]:
    """Return the best-ranked article sentences for a claim, in article order.

    With ``numbers`` (each article sentence's, in order), a number of the claim that
    the ranked sentences do not state brings in the first article sentence that does
    (:data:`NUMBER_SENTENCES` at most): a result is often stated once, far from the
    words an abstract uses for it.
    """
    chosen: list[int] = []
    size = 0
    for sentence_id, _ in index.search(claim, k):
        text = article[int(sentence_id)]
        if chosen and size + len(text) > max_chars:
            break
        chosen.append(int(sentence_id))
        size += len(text)
    if numbers is not None:
        added = 0
        for mention in number_mentions(claim):
            if added == NUMBER_SENTENCES:
                break
            if any(numbers[i].supports(mention) for i in chosen):
                continue
            at = next(
                (i for i, found in enumerate(numbers) if found.supports(mention)), None
            )
            if at is not None:
                chosen.append(at)
                added += 1
    return [article[i] for i in sorted(chosen)]


def sentence_numbers(article: Sequence[str]) -> list[ArticleNumbers]:
    """Return the numbers each article sentence states, for :func:`evidence_for`."""
    return [ArticleNumbers.of(sentence) for sentence in article]


def _case_like(word: str, model: str) -> str:
    if model.isupper() and len(model) > 1:
        return word.upper()
    if model[:1].isupper():
        return word[:1].upper() + word[1:]
    return word


def change_direction(sentence: str) -> str | None:
    """Return the sentence with its first word of direction reversed (else a negation)."""
    best: tuple[int, str, str] | None = None
    for word, opposite in _SWAPS:
        match = re.search(rf"\b{re.escape(word)}\b", sentence, flags=re.IGNORECASE)
        if match and (best is None or match.start() < best[0]):
            best = (match.start(), match.group(0), opposite)
    if best is not None:
        start, found, opposite = best
        end = start + len(found)
        return sentence[:start] + _case_like(opposite, found) + sentence[end:]
    flipped = flip(sentence)
    if flipped is not None and flipped[1] == "negation":
        return flipped[0]
    return None


def _spell(value: float, like: str) -> str:
    decimals = len(like.partition(".")[2])
    if decimals:
        return f"{value:.{decimals}f}"
    return str(round(value))


def change_number(
    sentence: str, stated: ArticleNumbers, rng: random.Random
) -> str | None:
    """Return the sentence with one number changed to a value the article never states.

    Years (1900-2099) and digits inside names (``IL-6``) are left alone.
    """
    spans = [
        m
        for m in _NUMBER_SPAN.finditer(sentence)
        if not (len(m.group(1)) == 4 and m.group(1)[:2] in ("19", "20"))
    ]
    if not spans:
        return None
    match = rng.choice(spans)
    written = match.group(1)
    value = float(written)
    for factor in rng.sample(_FACTORS, len(_FACTORS)):
        changed = value * factor if value else factor * 2
        text = _spell(changed, written)
        if text == written or text in ("0", "0.0"):
            continue
        candidate = sentence[: match.start(1)] + text + sentence[match.end(1) :]
        mentions = [m for m in number_mentions(text) if m.value]
        if mentions and not any(stated.supports(m) for m in mentions):
            return candidate
    return None


def change_entity(
    sentence: str, names: Sequence[str], rng: random.Random
) -> str | None:
    """Return the sentence with one name-like token replaced by another of the article."""
    mine = entity_tokens(sentence)
    if not mine:
        return None
    held = {t.lower() for t in mine}
    others = sorted({n for n in names if n.lower() not in held})
    if not others:
        return None
    target = rng.choice(mine)
    replacement = rng.choice(others)
    return re.sub(rf"(?<![\w-]){re.escape(target)}(?![\w-])", replacement, sentence)


def _candidates(source: AbstractSource) -> list[tuple[str, str]]:
    """Return (author sentence, evidence) pairs that make supported pairs."""
    article = [s.text for s in claim_sentences(source.body)]
    if not article:
        return []
    index = BM25Index().build([str(i) for i in range(len(article))], article)
    stated = ArticleNumbers.of(source.body)
    numbers = sentence_numbers(article)
    out = []
    for sentence in (s.text for s in claim_sentences(source.abstract)):
        if len(sentence) < MIN_CLAIM_CHARS or len(terms(sentence).content) < (
            MIN_CLAIM_WORDS
        ):
            continue
        evidence = " ".join(evidence_for(index, article, sentence, numbers=numbers))
        if coverage(sentence, evidence) < MIN_SUPPORT_COVERAGE:
            continue
        if stated.unsupported(sentence):
            continue
        out.append((sentence, evidence))
    return out


def build_abstract_pairs(
    sources: Sequence[AbstractSource], *, per_article: int = 4, seed: int = 0
) -> list[JudgePair]:
    """Build labelled pairs: per article, up to ``per_article`` sentences, two pairs each.

    ``JudgePair.section`` holds the article id; ``how`` says ``author sentence`` or the
    perturbation's kind.
    """
    rng = random.Random(seed)
    used: Counter[str] = Counter()
    pairs: list[JudgePair] = []
    for source in sources:
        found = _candidates(source)
        if not found:
            continue
        stated = ArticleNumbers.of(source.body)
        # Sentences with a number first, for half the places at most: few author
        # sentences hold one, and a changed number is the error a reader trusts least.
        order = rng.sample(range(len(found)), len(found))
        numeric = [i for i in order if _NUMBER_SPAN.search(found[i][0])]
        first = numeric[: max(1, per_article // 2)]
        chosen = sorted(
            first + [i for i in order if i not in first][: per_article - len(first)]
        )
        names = entity_tokens(source.body)
        for number, at in enumerate(chosen):
            claim, evidence = found[at]
            key = f"{source.id}#{number}"
            made = {
                "number": change_number(claim, stated, rng),
                "direction": change_direction(claim),
                "entity": change_entity(claim, names, rng),
            }
            kinds = [k for k in KINDS if made[k] not in (None, claim)]
            if not kinds:
                continue
            least = min(used[k] for k in kinds)
            kind = rng.choice([k for k in kinds if used[k] == least])
            used[kind] += 1
            changed = made[kind]
            assert changed is not None
            pairs.append(
                JudgePair(
                    f"{key}:s",
                    claim,
                    evidence,
                    "supported",
                    source.id,
                    "author sentence",
                )
            )
            label: Label = "not_supported" if kind == "entity" else "contradicted"
            pairs.append(
                JudgePair(f"{key}:{kind}", changed, evidence, label, source.id, kind)
            )
    return pairs
