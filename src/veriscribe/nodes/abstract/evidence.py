"""Every abstract sentence with its evidence, checked against it before it is shown.

The last of the refine step's checks. Each sentence of the abstract is aligned to the
article sentences it is drawn from (the one sharing most stemmed content words, and a
second one when it holds words the first lacks), then held to them with the checks
an answer's claims meet:

- :func:`veriscribe.checks.faithfulness.claim_conflict`: numbers (units, P values),
  name-like tokens (``IL-6``), direction words (higher/lower, increase/decrease),
  negation, and the share of content words the evidence holds;
- :func:`veriscribe.checks.support.certification_guard`: every number stated, no
  negation, polarity or strength word dropped or added;
- names: a word capitalised mid-sentence (a group, place, species, drug) must be in
  the evidence;
- words: every content word (stemmed) must be in the evidence, the article's title,
  or :data:`FRAMING` ("study", "authors", "found"): a word the evidence lacks is how
  a small model's flipped word shows ("supervised" for "unsupervised", "dense" for
  "sparse", a district renamed).

A sentence that passes is ``certified``. One that fails is ``repaired``: replaced by
its first evidence sentence, shortened only by cutting words (parentheses, brackets,
an opening connective) and held to the verbatim tiers the answers' quotes meet
(:func:`veriscribe.checks.verbatim.check_quote`); or ``dropped`` when
no such sentence fits (too long, already in the abstract, pointing to a table).

Then what a reader looks for: when the article has Results text and the abstract
states none of its numbers, the Results sentence that best states a finding with a
number is added; when it has Discussion or Conclusions text and the abstract draws
on none, the authors' concluding sentence is added (both verbatim, ``certified``,
origin ``article``). An abstract over the asked length then loses first the
sentences about eligibility, approvals and lab procedure, then background, never the
added finding or conclusion.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, TypedDict

from veriscribe.checks.faithfulness import claim_conflict
from veriscribe.checks.support import certification_guard, terms
from veriscribe.checks.verbatim import check_quote
from veriscribe.checks.wording import word_count
from veriscribe.documents.articles import Paragraph
from veriscribe.metrics.abstract_quality import LENGTH_MARGIN
from veriscribe.results import SENTENCE_STATUSES, SentenceStatus
from veriscribe.text.numbers import ArticleNumbers
from veriscribe.text.pointers import points_to_display, strip_pointers
from veriscribe.text.sentences import sentences_of
from veriscribe.text.tokens import support_tokens

__all__ = [
    "FRAMING",
    "Evidence",
    "SentenceRecord",
    "Unit",
    "align",
    "article_units",
    "certify",
    "certify_text",
    "cut_to_sentence",
    "evidence_check",
    "sentence_counts",
    "shown_text",
]


FRAMING = frozenset(
    terms(
        """study studies studied paper article authors author report reports reported
        research researchers investigate investigated investigation examine examined
        aim aimed aims objective purpose goal analysis analyses analyzed analysed
        found find findings finding result results show shows showed shown
        demonstrate demonstrated demonstrates suggest suggests suggested conclude
        concluded conclusion conclusions discuss discussed describe described
        present presents presented provide provides provided use used using
        evaluate evaluated assess assessed explore explored highlight highlights
        overall also including include includes included based well however
        further additionally furthermore moreover thus therefore finally""".replace(
            "\n", " "
        )
    ).words
)
"""Words that frame a statement and add no fact to it: allowed without evidence."""

MAX_WORDS = 60
"""A repair longer than this (after cutting) is not used: the sentence is dropped."""
_PAREN = re.compile(r"\s*[(\[][^()\[\]]*[)\]]")
_OPENER = re.compile(
    r"^(?:However|In addition|Additionally|Moreover|Furthermore|Also|Thus|Hence|"
    r"Overall|Importantly|Interestingly|Notably|Finally|In contrast|First|Second|"
    r"Third|Consequently|Similarly|Likewise|Indeed|Therefore|Accordingly|"
    r"In conclusion|In summary|In sum|Taken together|Together|To conclude),\s+"
)
_CAPITAL = re.compile(r"(?<![.!?:]\s)(?<!^)\b[A-Z][a-z]{2,}\b")
_YEAR = re.compile(r"^(?:1[89]|20)\d\d$")
_NUMBER = re.compile(r"\d+(?:\.\d+)?")
_RESULTS_TITLE = re.compile(r"result|finding|outcome", re.IGNORECASE)
_CONCLUSIONS_TITLE = re.compile(r"discussion|conclu|implication", re.IGNORECASE)
_FINDING = re.compile(
    r"significant|associat|increas|decreas|higher|lower|reduc|improv|odds|risk|"
    r"compared|more likely|less likely|prevalence|differ|correlat|effect|detect|"
    r"positive|negative|observed|identified|found",
    re.IGNORECASE,
)
_CONCLUDING = re.compile(
    r"in conclusion|in summary|conclude|suggest|indicate|demonstrate|our findings|"
    r"these findings|these results|this study|should|recommend|highlight|support",
    re.IGNORECASE,
)
_LOW_PRIORITY = re.compile(
    r"eligib|inclusion|exclusion|excluded|consent|approv|ethic|permit|review board|"
    r"searched|database|incubat|centrifug|buffer|reagent|stain|software|"
    r"registered|funding|IRB|primer|plasmid|amplif|assay|protocol|kit\b",
    re.IGNORECASE,
)


class Evidence(TypedDict):
    """An article sentence an abstract sentence is drawn from."""

    paragraph: int
    """The paragraph's index in the article body (0-based)."""
    section: str
    """The paragraph's section path, headings joined by `` > ``."""
    quote: str
    """The article sentence, verbatim."""


class SentenceRecord(TypedDict):
    """One abstract sentence, its evidence and what the check made of it."""

    text: str
    """The sentence as shown (for ``dropped``: as the model wrote it)."""
    status: SentenceStatus
    original: str
    """The model's sentence ("" for one taken from the article)."""
    reason: str
    """Why the model's sentence failed its check ("" when certified)."""
    origin: Literal["model", "article"]
    """``article``: added as the article states it, for a finding or conclusion."""
    role: str
    """``results``, ``conclusions``, ``methods``, ``background``, ... : the facet of
    its first evidence paragraph."""
    evidence: list[Evidence]


@dataclass(frozen=True)
class Unit:
    """One article sentence, where it is, and its content words."""

    paragraph: int
    section: str
    text: str
    role: str
    words: frozenset[str]


def _role(label: str, paragraph: Paragraph) -> str:
    title = " ".join(paragraph.path) or paragraph.section
    results, conclusions = (
        _RESULTS_TITLE.search(title),
        _CONCLUSIONS_TITLE.search(title),
    )
    if results and conclusions:
        # "Results and Discussion": the divide step's label tells them apart.
        return "conclusions" if label == "conclusions" else "results"
    if results:
        return "results"
    if conclusions:
        return "conclusions"
    return label or "other"


def article_units(paragraphs: Sequence[Paragraph], labels: Sequence[str]) -> list[Unit]:
    """Return every body sentence with its place, facet and content words."""
    units = []
    for i, paragraph in enumerate(paragraphs):
        role = _role(labels[i] if i < len(labels) else "", paragraph)
        section = " > ".join(paragraph.path) or paragraph.section
        # Whole sentences only: a piece after "et al." or a citation joins the one
        # before it, so a repair never opens mid-sentence.
        for sentence in sentences_of(paragraph.text):
            units.append(Unit(i, section, sentence, role, terms(sentence).words))
    return units


def align(sentence: str, units: Sequence[Unit]) -> list[Unit]:
    """Return the article sentences a sentence is drawn from (at most two).

    The one sharing most content words with it (at least two, or all of a shorter
    sentence's), then the one holding most of the words the first lacks.
    """
    said = terms(sentence).words
    need = min(2, len(said))
    if not need:
        return []
    best = max(units, key=lambda u: (len(u.words & said), -len(u.words)), default=None)
    if best is None or len(best.words & said) < need:
        return []
    rest = said - best.words
    second = max(units, key=lambda u: len(u.words & rest), default=None)
    if rest and second is not None and len(second.words & rest) >= 1:
        return [best, second]
    return [best]


def evidence_check(
    sentence: str, evidence: Sequence[str], allowed: frozenset[str]
) -> str:
    """Return why a sentence is not certified by its evidence, or "" when it is."""
    if not evidence:
        return "no article sentence shares its words"
    source = " ".join(evidence)
    conflict = claim_conflict(sentence, source)
    if conflict is not None:
        return f"{conflict.kind}: {conflict.reason}"
    guard = certification_guard(sentence, source)
    if guard is not None:
        return f"polarity: {guard}"
    lower = source.lower()
    for match in _CAPITAL.finditer(sentence):
        if match.group(0).lower() not in lower:
            return f"name: the article passage does not name {match.group(0)!r}"
    missing = terms(sentence).words - terms(source).words - allowed
    if missing:
        # Shown as written, not as stems.
        said = [w for w in support_tokens(sentence) if terms(w).words & missing]
        shown = ", ".join(dict.fromkeys(said[:3])) or ", ".join(sorted(missing)[:3])
        return f"words: the article passage does not hold {shown}"
    return ""


def cut_to_sentence(quote: str, paragraph: str) -> str:
    """Return an article sentence shortened only by cutting words, or the sentence.

    Citation markers, an opening connective ("However,", "In conclusion,") and
    parentheses and brackets are cut. A cut form is used only when it still holds
    to the verbatim tiers against the paragraph (as an answer's quote must) and
    drops no number, negation, polarity or strength word of the sentence.
    """
    # Citation markers carry no fact: cut first, the cuts then checked against the
    # paragraph without its markers.
    bare = strip_pointers(quote)[0].strip() or quote
    paragraph = strip_pointers(paragraph)[0]
    opener = _OPENER.sub("", bare)
    for cut in (_PAREN.sub("", opener), opener, _PAREN.sub("", bare)):
        cut = re.sub(r"\s+([,.;:])", r"\1", cut).strip()
        if (
            cut
            and cut != bare
            and check_quote(cut, paragraph).compliant
            and certification_guard(cut, quote) is None
        ):
            return cut[0].upper() + cut[1:]
    return bare


def _stated_number(sentence: str, numbers: ArticleNumbers) -> bool:
    return any(
        not _YEAR.match(n) and not numbers.unsupported(n)
        for n in _NUMBER.findall(sentence)
    )


def _repair(
    units: list[Unit], paragraphs: Sequence[Paragraph], shown: set[str]
) -> str | None:
    for unit in units[:1]:
        text = cut_to_sentence(unit.text, paragraphs[unit.paragraph].text)
        if (
            text not in shown
            and word_count(text) <= MAX_WORDS
            and not points_to_display(text)
        ):
            return text
    return None


def _record(
    text: str,
    status: SentenceStatus,
    units: list[Unit],
    *,
    original: str = "",
    reason: str = "",
    origin: Literal["model", "article"] = "model",
) -> SentenceRecord:
    return SentenceRecord(
        text=text,
        status=status,
        original=original,
        reason=reason,
        origin=origin,
        role=units[0].role if units else "other",
        evidence=[
            Evidence(paragraph=u.paragraph, section=u.section, quote=u.text)
            for u in units
        ],
    )


def _pick(units: Sequence[Unit], score: dict[int, float]) -> Unit | None:
    ranked = sorted(
        (u for u in units if score.get(id(u), 0) > 0),
        key=lambda u: -score[id(u)],
    )
    return ranked[0] if ranked else None


def _finding(units: Sequence[Unit], numbers: ArticleNumbers) -> Unit | None:
    """Return the Results sentence that best states a finding with a number."""
    score: dict[int, float] = {}
    for position, unit in enumerate(u for u in units if u.role == "results"):
        size = word_count(unit.text)
        if not 10 <= size <= 45 or points_to_display(unit.text):
            continue
        if not _stated_number(unit.text, numbers) or _LOW_PRIORITY.search(unit.text):
            continue
        score[id(unit)] = 1.0 + len(_FINDING.findall(unit.text)) - position / 1000
    return _pick(units, score)


def _conclusion(units: Sequence[Unit]) -> Unit | None:
    """Return the authors' concluding sentence of the Discussion or Conclusions."""
    closing = [u for u in units if u.role == "conclusions"]
    if not closing:
        return None
    paragraphs = sorted({u.paragraph for u in closing})
    edges = set(paragraphs[:1] + paragraphs[-2:])
    score: dict[int, float] = {}
    for unit in closing:
        size = word_count(unit.text)
        if not 8 <= size <= 45 or points_to_display(unit.text):
            continue
        cues = len(_CONCLUDING.findall(unit.text))
        if cues:
            score[id(unit)] = cues + (1.0 if unit.paragraph in edges else 0.0)
            # The last paragraph's cue sentences are the authors' conclusion.
            score[id(unit)] += 0.5 * (unit.paragraph == paragraphs[-1])
    return _pick(closing, score)


def _priority(record: SentenceRecord) -> int:
    """Return how soon a sentence goes when the abstract is too long (lower first)."""
    if record["origin"] == "article":
        return 9
    if _LOW_PRIORITY.search(record["text"]):
        return 0
    return {"background": 1, "other": 1, "methods": 2}.get(record["role"], 3)


def certify_text(
    text: str,
    paragraphs: Sequence[Paragraph],
    labels: Sequence[str],
    title: str,
    words: int,
) -> list[SentenceRecord]:
    """Split a text into its sentences and certify them (see ``certify``).

    One step, so that a worker process does the splitting too: done on the event
    loop, it took 3-4 ms of its CPU per article of a batch.
    """
    return certify(sentences_of(text), paragraphs, labels, title, words)


def certify(
    sentences: Sequence[str],
    paragraphs: Sequence[Paragraph],
    labels: Sequence[str],
    title: str,
    words: int,
) -> list[SentenceRecord]:
    """Check every sentence against its evidence; repair, drop, complete, trim.

    Returns every sentence in abstract order, the dropped ones included (not shown).
    """
    units = article_units(paragraphs, labels)
    numbers = ArticleNumbers.of("\n\n".join(p.text for p in paragraphs))
    allowed = FRAMING | terms(title).words
    records: list[SentenceRecord] = []
    shown: set[str] = set()
    for sentence in sentences:
        found = align(sentence, units)
        reason = evidence_check(sentence, [u.text for u in found], allowed)
        if not reason:
            records.append(_record(sentence, "certified", found, original=sentence))
            shown.add(sentence)
            continue
        repaired = _repair(found, paragraphs, shown)
        if repaired is None:
            records.append(
                _record(sentence, "dropped", found, original=sentence, reason=reason)
            )
            continue
        records.append(
            _record(repaired, "repaired", found[:1], original=sentence, reason=reason)
        )
        shown.add(repaired)
    kept = [r for r in records if r["status"] != "dropped"]
    if not any(
        r["role"] == "results" and _stated_number(r["text"], numbers) for r in kept
    ):
        unit = _finding(units, numbers)
        if unit is not None and unit.text not in shown:
            _insert(records, _article_record(unit, paragraphs))
    if not any(r["role"] == "conclusions" for r in kept):
        unit = _conclusion(units)
        if unit is not None and unit.text not in shown:
            records.append(_article_record(unit, paragraphs))
    if words:
        _trim(records, round(words * (1 + LENGTH_MARGIN)))
    return records


def _article_record(unit: Unit, paragraphs: Sequence[Paragraph]) -> SentenceRecord:
    text = cut_to_sentence(unit.text, paragraphs[unit.paragraph].text)
    return _record(text, "certified", [unit], origin="article")


def _insert(records: list[SentenceRecord], record: SentenceRecord) -> None:
    """Place a sentence before the first shown one about the conclusions, else last."""
    for i, other in enumerate(records):
        if other["status"] != "dropped" and other["role"] == "conclusions":
            records.insert(i, record)
            return
    records.append(record)


def _trim(records: list[SentenceRecord], most: int) -> None:
    """Drop the least needed shown sentences until the abstract fits ``most`` words."""

    def total() -> int:
        return sum(word_count(r["text"]) for r in records if r["status"] != "dropped")

    while total() > most:
        shown = [
            (i, r)
            for i, r in enumerate(records)
            if r["status"] != "dropped" and _priority(r) < 9
        ]
        if len(shown) <= 1:
            return
        # The first sentence states what the article is about: it goes last.
        i, record = min(shown[1:], key=lambda item: (_priority(item[1]), -item[0]))
        dropped = record.copy()
        dropped["status"] = "dropped"
        dropped["reason"] = record["reason"] or "length: over the asked length"
        records[i] = dropped


def sentence_counts(records: Sequence[SentenceRecord]) -> dict[str, int]:
    """Return how many sentences were certified, repaired and dropped."""
    return {s: sum(r["status"] == s for r in records) for s in SENTENCE_STATUSES}


def shown_text(records: Sequence[SentenceRecord]) -> str:
    """Return the abstract as shown: its certified and repaired sentences."""
    return " ".join(r["text"] for r in records if r["status"] != "dropped")
