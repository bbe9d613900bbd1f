"""Which sentences of the sections read answer the question: scored, not sampled.

Every quotable unit (sentence or list item) of the sections read is scored against the
question with BM25 over those units (term weights from the units themselves, so a word
every unit shares weighs nothing), and its *coverage*: the share of the question's term
weight that the unit holds. The answer is the best units, best first, each kept only
while it scores at least ``RELATIVE_CUT`` of the best and covers that share of what the
best covers; a lead-in that ends in a colon brings its list items, and a sentence that
plainly continues a chosen one ("This ...", "These ...") may follow it.

The sections read do not answer the question, and the answer says so, when no unit
covers ``NOT_FOUND_COVERAGE`` of the question's terms weighted over the units read, or
``NOT_FOUND_CORPUS_COVERAGE`` of them weighted over the whole corpus (a unit that holds
only the corpus's common words of the question, "opioid", "dose", is about the topic, not
an answer). Words that ask for the form of an answer ("what kind", "how much", "what
happens", "how long does it take") are not terms of the question: no sentence of the
answer holds them, and two terms joined by "or" count once, held when either is.

No model is asked: a unit's text is the guideline's own sentence, so the verifier and
the lexical lane of the judge certify it word for word, and nothing is made up. With
``judged`` probabilities (a model's scored yes/no "does this sentence answer the
question?" for the best units by score), the order, the cut and "not found" follow
`answer_odds`, which weighs the model's "yes" with the coverages; the model still
only chooses among the certified sentences.

The constants were set on the cpgQA development questions with BM25 retrieval (k = 3)
and are few on purpose. On the first 100 questions: gold answer recall 0.84, whole gold
answer in 80% of answers; on ten seeded hold-out sets (40 questions each asked without
their gold passage), "not found" for 70.8% of the unanswerable questions and for 3.9%
of the answerable ones. On questions in a user's own words about other guidelines
(``bench/questions/``) the cut says "not found" more often, rightly and wrongly alike.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache

from veriscribe.checks.faithfulness import claim_conflict
from veriscribe.checks.support import certification_guard
from veriscribe.text.recommendations import read_recommendation
from veriscribe.text.sentences import Unit, quotable_units, quote_text
from veriscribe.text.tokens import bm25_tokens

K1 = 1.5
B = 0.75
RELATIVE_CUT = 0.5
"""A unit after the first is kept only while its score is at least this share of the best."""
NOT_FOUND_COVERAGE = 0.5
"""Below this coverage of the question's terms by the best unit: not in the sections."""
NOT_FOUND_CORPUS_COVERAGE = 0.6
"""The same, with the question's terms weighted by their IDF over the whole corpus."""
MAX_SENTENCES = 3
"""Units chosen by score (list items a chosen lead-in brings come on top)."""
MAX_LIST_ITEMS = 6
"""List items a chosen lead-in brings with it."""
PREFIX_CHARS = 5
"""Stems that share a start of this many letters are one word (see `_same_word`)."""

QUESTION_FORM_WORDS = frozenset(
    "kind kinds type types sort sorts much many happen happens happened stance "
    "regard regarding way ways mean means meant".split()
)
"""Words that ask for the form of an answer, not its content."""


@dataclass(frozen=True)
class AnswerModel:
    """How a model's "yes" and the lexical coverage combine (see `answer_odds`)."""

    bias: float
    yes: float
    """Weight of the model's log-odds of "yes"."""
    coverage: float
    corpus_coverage: float
    cut: float
    """Combined probability below which a unit is not an answer."""


ANSWER_MODEL = AnswerModel(
    bias=-10.5, yes=1.0, coverage=10.0, corpus_coverage=10.0, cut=0.5
)
"""The judged selection's weights: a model with no opinion (P(yes) = 0.5) answers
when a unit's two coverages sum to 1.05, about where the lexical cuts (0.5 and 0.6)
lie; each unit of the model's log-odds of "yes" counts as 0.1 of coverage. On the
bundled 0.5B model the "yes" does not separate answerable from unanswerable
questions (see the README), so no larger weight could be fitted; a stronger model
earns one by the same measurement (``bench/qa_quality.py --configs
constrained/quote/source/judged`` with hold-out and ``bench/questions`` sets)."""

MIN_WORDS = 4
"""Units with fewer words (table headings, labels) are not answers."""


@dataclass(frozen=True)
class SemanticModel:
    """How a unit's similarity to the question and its coverages make one score.

    ``similarity + coverage * (coverage + corpus_coverage) / 2``, plus ``guidance``
    for a sentence that gives guidance (it states a recommendation, or says what to do:
    "Offer ...", "... should ...", "... is not recommended"), less ``report`` for one
    that reports a study ("Linde et al. (2016) evaluated ...", "One trial found ...").
    A question about what to do is answered by the guideline's guidance; the studies
    behind it are about the same topic, in the same words, and answer it less.
    "Not found" when no unit reaches ``cut``; the answer is the units within ``spread``
    of the best and above the cut, best first.
    """

    coverage: float
    cut: float
    spread: float
    guidance: float = 0.0
    report: float = 0.0


SEMANTIC = SemanticModel(coverage=1.0, cut=1.0, spread=0.25, guidance=0.2, report=0.1)
"""Coverage weight and spread set on the cpgQA development questions (gold answer
recall on the first 100); the cut, ``guidance`` and ``report`` on questions in users'
words (``bench/questions/tune``: 139 answerable and 28 unanswerable questions over ten
guidelines, read with the lay terms). Without the guidance terms the right sentence was
among the three best in 57% of the answerable questions there (a study of the topic
often outscores the recommendation), with them in 65%; the cut is then the lowest
that says "not found" for at least 70% of the unanswerable ones (71%; answerable
refused: 23%, was 43% at the cut of 0.95 without them). The cut was 1.15 on cpgQA
alone, whose questions copy their passage's words (``bench/users_words.py``)."""

GUIDANCE_RECOMMENDS = 0.1
"""Added to ``guidance`` for a sentence that states a recommendation in the
guidelines' fixed language (see `veriscribe.text.recommendations`)."""

_GUIDANCE = re.compile(
    r"^\s*(?:\d{1,3}[.)]\s+)?(?:offer|screen|use|consider|avoid|do not|prescribe|"
    r"provide|refer|assess|evaluate|recommend|discuss|engage|encourage|counsel|treat|"
    r"monitor|review|perform|obtain|start|begin|initiate|taper|limit|reduce|ensure)\b"
    r"|\b(?:should|must|(?:is|are) (?:not )?(?:recommended|advised|suggested|"
    r"indicated|contraindicated|necessary))\b",
    re.IGNORECASE,
)
"""A sentence that says what to do: an imperative opening, "should", "is recommended"."""
_STUDY_REPORT = re.compile(
    r"\bet al\b|\(\s*(?:19|20)\d\d[a-z]?\s*\)"
    r"|\b(?:one|a|two|three|several|the|this|these|another|single)\s+"
    r"(?:(?:small|large|fair-quality|good-quality)\s+)?(?:study|studies|trials?|RCTs?|"
    r"SRs?|meta-analys[ie]s|systematic reviews?|reviews?|cohort)\b"
    r"|\b(?:found|demonstrated|reported|showed|evaluated|compared|enrolled|randomized)\b"
    r"|\b(?:additional|further|future|more)\s+(?:[\w-]+\s+){0,2}(?:research|studies|trials)\b",
    re.IGNORECASE,
)
"""A sentence that reports a study (authors and a year, "one trial", "found") or asks
for more of them ("Future high quality trials are recommended ...")."""


def guidance_weight(text: str, model: SemanticModel) -> float:
    """Return what a unit's kind adds to its semantic score (see `SemanticModel`)."""
    if not (model.guidance or model.report):
        return 0.0
    if read_recommendation(text) is not None:
        # The guideline's own recommendation, whatever evidence it names beside it.
        return model.guidance + GUIDANCE_RECOMMENDS
    if _STUDY_REPORT.search(text):
        return -model.report
    return model.guidance if _GUIDANCE.search(text) else 0.0


_WORD = re.compile(r"[^\W\d_]{2,}")
_TAG = re.compile(r"</?[a-zA-Z][^>]*>")
_BULLET = re.compile(r"^\s*(?:[-*+•·▪◦‣●○■□►➢]|\d{1,3}[.)]|[a-z][.)])\s")
_LIST_NUMBER = re.compile(r"^\s*\(?\d{1,3}[.)]\s+(?=[A-Z])")
_REFERENCE_TAIL = re.compile(r"(?<=[.!?)])\s*(?:\[\d+(?:\s*[,\u2013-]\s*\d+)*\]\s*)+$")
_FORM_PHRASE = re.compile(r"\bhow (?:long|often|soon)\b", re.IGNORECASE)
_HOW_LONG = re.compile(r"\bhow long\b", re.IGNORECASE)
_TAKE = re.compile(r"\btakes?\b", re.IGNORECASE)
_EITHER_OR = re.compile(r"\b([^\W\d_]+) or ([^\W\d_]+)\b", re.IGNORECASE)
_OR_CLASS = re.compile(r"([^\W\d_][\w-]*) \(or ([^()]+)\)")
Alternatives = tuple[tuple[str, ...], tuple[str, ...]]
"""Two sides of an "or" in a question, each its terms: the answer holds either."""
_NON_WORD = re.compile(r"\W+")
_SENTENCE_END = re.compile(r"[.!?:;)\]|”\"']$")
_OPEN_END = re.compile(
    r"\b(?:a|an|the|of|to|for|in|on|with|by|and|or|but|is|are|was|were|be|that|"
    r"which|than|as|at|from|there|insufficient|evidence|not|no)$",
    re.IGNORECASE,
)
SAME_MIN_TERMS = 5
"""Terms the shorter of two units needs before they can be one statement in other words."""
SAME_SHARE = 0.85
"""The share of the shorter unit's terms the longer must hold to say the same."""
SAME_LENGTH_RATIO = 1.5
"""The longer unit holds at most this many times the shorter's terms: more is more said."""
MAX_JOINED_CHARS = 600
EARLIER_EDITION = re.compile(
    r"\b(?:19|20)\d\d\s+recommendation\s+categori[sz]ation\s+table\b", re.IGNORECASE
)
"""The title of a section that lists an earlier edition's recommendations (a VA/DoD
guideline's "Appendix D: 2014 Recommendation Categorization Table"): their text as it
was then, many amended, replaced or deleted since. No answer is quoted from it."""
_ANNOUNCES_LIST = re.compile(r"\b(?:the following|as follows)\b", re.IGNORECASE)
"""A lead-in that names its list without a colon ("offering one of the following
medications considering patient preferences")."""
_NUMBER_LINE = re.compile(r"\n[ \t]*\d{1,4}\.?[ \t]*$")
"""A unit's last line is a bare number: a page or row number read into its sentence."""
"""A unit completed with the units after it is at most this long."""
_CONTINUES = re.compile(
    r"^(?:this|these|those|such|it|they|however|in addition|additionally|also)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class UnitScore:
    """A quotable unit of a section read, and how well it answers the question."""

    key: str
    """The section's key (``doc_id:section_id``)."""
    position: int
    """The unit's place in its section (0 for the first)."""
    text: str
    score: float
    """BM25 of the unit against the question, over the units of the sections read."""
    coverage: float
    """The share of the question's term weight the unit (with its section title) holds."""
    list_item: bool
    corpus_coverage: float = 1.0
    """``coverage`` with the terms weighted by their IDF over the whole corpus (1.0
    when no corpus weights were given)."""


@dataclass(frozen=True)
class SectionText:
    """A section read: its key, title and the text it offers to quote."""

    key: str
    title: str
    text: str


@dataclass(frozen=True)
class Selection:
    """The units chosen to answer a question, best first, or none when not found."""

    units: tuple[UnitScore, ...]
    best_coverage: float
    candidates: int
    """Units that were scored."""
    best_odds: float | None = None
    """The best combined probability of answering, when a model judged the units."""
    best_semantic: float | None = None
    """The best semantic score (see `SemanticModel`), when similarities were given."""
    echoes: Mapping[tuple[str, int], tuple[UnitScore, ...]] = field(
        default_factory=dict
    )
    """Other units that say what a chosen unit says (the summary table's copy of a
    recommendation), by the chosen unit's place: one claim, cited by each."""
    given_before: tuple[UnitScore, ...] = ()
    """With nothing chosen: the units that would answer but the answer before gave."""

    @property
    def not_found(self) -> bool:
        """Tell whether no unit answers the question."""
        return not self.units


def question_terms(question: str) -> set[str]:
    """Return the question's terms: its stems, less the words that ask for a form."""
    form = _form_stems()
    asked = _FORM_PHRASE.sub(" ", question)
    if _HOW_LONG.search(question):
        asked = _TAKE.sub(" ", asked)  # "how long does it take": a duration is asked
    return {term for term in bm25_tokens(asked) if term not in form}


@lru_cache(maxsize=1)
def _form_stems() -> frozenset[str]:
    return frozenset(bm25_tokens(" ".join(sorted(QUESTION_FORM_WORDS))))


def answer_text(unit_text: str) -> str:
    """Return a unit as an answer sentence: without the numbers that open or close it.

    "... one case cohort study).[59,61,66]" reads, and splits into claims, as two
    sentences, the second a bare "[59,61,66]" that no judge can certify; "2. We
    recommend ..." is the guideline's list number, not part of what it says. The
    unit stays the quote, so the citation still holds both.
    """
    return _LIST_NUMBER.sub("", _REFERENCE_TAIL.sub("", unit_text))


def score_units(
    question: str,
    sections: Sequence[SectionText],
    corpus_idf: Callable[[str], float] | None = None,
) -> list[UnitScore]:
    """Score every quotable unit of the sections read against the question.

    ``corpus_idf`` weighs a term over the whole corpus (``BM25Index.idf``) for each
    unit's ``corpus_coverage``. A section of an earlier edition's recommendations
    (`EARLIER_EDITION`) gives none.
    """
    found: list[tuple[SectionText, int, str, bool, list[str]]] = []
    for section in sections:
        if EARLIER_EDITION.search(section.title):
            continue  # an earlier edition's words, amended or deleted since
        for position, unit in enumerate(whole_units(section.text)):
            if len(_WORD.findall(_TAG.sub(" ", unit.text))) < MIN_WORDS:
                continue  # a label or table debris ("Grade Definitions </th> <th>")
            opening = section.text[unit.start : unit.end]
            found.append(
                (
                    section,
                    position,
                    unit.text,
                    bool(_BULLET.match(opening)),
                    bm25_tokens(unit.text),
                )
            )
    if not found:
        return []
    asked = question_terms(question)
    # Each unit's terms as the question's terms they match (see `_same_word`).
    matched = [[_asked_form(term, asked) for term in terms] for *_, terms in found]
    df: Counter[str] = Counter()
    for terms in matched:
        df.update(set(terms))
    count = len(found)

    def idf(term: str) -> float:
        return math.log(1 + (count - df[term] + 0.5) / (df[term] + 0.5))

    groups = alternatives(question, asked)
    local = {t: idf(t) for t in asked}
    weights = None if corpus_idf is None else {t: corpus_idf(t) for t in asked}
    mean_len = sum(len(terms) for terms in matched) / count or 1.0
    scored = []
    for (section, position, text, item, _), terms in zip(found, matched, strict=True):
        tf = Counter(terms)
        norm = K1 * (1 - B + B * len(terms) / mean_len)
        score = sum(
            idf(t) * tf[t] * (K1 + 1) / (tf[t] + norm) for t in asked if t in tf
        )
        title = {_asked_form(term, asked) for term in bm25_tokens(section.title)}
        held = set(terms) | title
        coverage = _covered(local, held, groups)
        corpus_coverage = 1.0 if weights is None else _covered(weights, held, groups)
        scored.append(
            UnitScore(
                section.key,
                position,
                text,
                round(score, 4),
                round(coverage, 4),
                item,
                round(corpus_coverage, 4),
            )
        )
    return scored


def whole_units(section_text: str) -> list[Unit]:
    """Return the section's quotable units, none stopping before its point.

    A unit that does not end as a sentence ends ("For patients with acute low back
    pain, there is insufficient", a table cell cut at its line) is joined with the
    units after it while they go on in lower case, up to a sentence's end; one that
    cannot be completed so is left out, and so is a unit that starts in lower case
    (the rest of a sentence whose start is elsewhere). A list item, a lead-in ending
    in a colon and a table row are whole as they are. A unit that a page or row number
    on a line of its own cut ("... who have a cardiovascular", a line "17.", its
    sentence going on in lower case after it) is left out: its point is after the cut.
    A lead-in that names a list without a colon ("... one of the following medications
    considering patient preferences") is one unit with the list items that follow it.
    """
    units = list(quotable_units(section_text))
    out: list[Unit] = []
    index = 0
    while index < len(units):
        unit = units[index]
        index += 1
        opening = section_text[unit.start : unit.end]
        if unit.text[:1].islower() and not _BULLET.match(opening):
            continue  # the rest of a sentence whose start is elsewhere
        if (
            _NUMBER_LINE.search(opening)
            and index < len(units)
            and units[index].text[:1].islower()
        ):
            continue  # cut by a number line; what follows ends the sentence
        announced = _ANNOUNCES_LIST.search(unit.text)
        if (
            announced
            and ":" not in unit.text[announced.end() :]
            and not _SENTENCE_END.search(answer_text(unit.text).rstrip())
        ):
            end = unit.end
            items = 0
            while (
                index < len(units)
                and items < MAX_LIST_ITEMS
                and _BULLET.match(section_text[units[index].start : units[index].end])
                and not section_text[end : units[index].start].strip()
                # only the lead-in's own items, set in deeper than it
                and _indent(section_text, units[index].start)
                > _indent(section_text, unit.start)
            ):
                end = units[index].end
                index += 1
                items += 1
            if items:  # the lead-in is said with the list it names
                out.append(
                    Unit(unit.start, end, quote_text(section_text, unit.start, end))
                )
                continue
        if _is_whole(section_text, unit):
            out.append(unit)
            continue
        end = unit.end
        # Only what follows straight on in lower case completes it: a label between
        # ("Weak for" from a table's next column) would be read into the sentence.
        while (
            index < len(units)
            and units[index].text[:1].islower()
            and not section_text[end : units[index].start].strip()
        ):
            end = units[index].end
            index += 1
            if end - unit.start > MAX_JOINED_CHARS:
                break
            joined = Unit(unit.start, end, quote_text(section_text, unit.start, end))
            if _is_whole(section_text, joined):
                out.append(joined)
                break
    return out


def _indent(text: str, start: int) -> int:
    """Return how far in from its line's start a unit starts."""
    return start - (text.rfind("\n", 0, start) + 1)


def _is_whole(section_text: str, unit: Unit) -> bool:
    """Tell whether a unit ends where a sentence, a list item or a table row may."""
    text = answer_text(unit.text).rstrip()
    if _SENTENCE_END.search(text) or _BULLET.match(section_text[unit.start : unit.end]):
        return True
    # A unit of one line of its own (a heading, a label) is no fragment of a sentence.
    return "\n" not in section_text[unit.start : unit.end] and not _OPEN_END.search(
        text
    )


def alternatives(question: str, asked: set[str]) -> list[Alternatives]:
    """Return the question's terms joined by "or": the answer holds one of each pair.

    "Should you prescribe the highest or lowest dose?" is answered by a sentence that
    says "lowest" and never "highest". A drug named with its class in the question as
    searched, "losartan (or angiotensin receptor blocker)" (see
    `veriscribe.retrieval.lay_terms`), is answered by a sentence that names either.
    """
    found: list[Alternatives] = []
    for first, second in _EITHER_OR.findall(question):
        words, others = bm25_tokens(first), bm25_tokens(second)
        if words and others and words[0] in asked and others[0] in asked:
            if words[0] != others[0]:
                found.append(((words[0],), (others[0],)))
    for drug, kind in _OR_CLASS.findall(question):
        one = tuple(t for t in bm25_tokens(drug) if t in asked)
        other = tuple(t for t in bm25_tokens(kind) if t in asked and t not in one)
        if one and other:
            found.append((one, other))
    # A term weighs once: a group that shares a term with one before is left out.
    kept: list[Alternatives] = []
    seen: set[str] = set()
    for group in found:
        terms = {t for side in group for t in side}
        if not terms & seen:
            kept.append(group)
            seen |= terms
    return kept


def _covered(
    weights: dict[str, float], held: set[str], groups: Sequence[Alternatives]
) -> float:
    """Return the share of the question's term weight that ``held`` holds.

    A group of alternatives weighs as its heavier side, and holds the share of that
    weight that its better-held side holds.
    """
    grouped = {t for group in groups for side in group for t in side}
    total = sum(w for t, w in weights.items() if t not in grouped)
    got = sum(w for t, w in weights.items() if t not in grouped and t in held)
    for group in groups:
        sides = [sum(weights[t] for t in side) for side in group]
        heavier = max(sides)
        total += heavier
        got += (
            max(
                (heavier * sum(weights[t] for t in side if t in held) / weight)
                for side, weight in zip(group, sides, strict=True)
                if weight > 0
            )
            if heavier > 0
            else 0.0
        )
    return got / total if total > 0 else 0.0


def _same_word(one: str, other: str) -> bool:
    """Tell whether two stems are one word: equal, or one a long prefix of the other.

    The stemmer leaves "diagnosed" as "diagnos" and "diagnosis" as "diagnosi"; a
    shared start of five letters or more makes them one.
    """
    if one == other:
        return True
    short, long = sorted((one, other), key=len)
    return len(short) >= PREFIX_CHARS and long.startswith(short)


def _asked_form(term: str, asked: set[str]) -> str:
    """Return the question's form of a term it shares with the question, else the term."""
    if term in asked:
        return term
    for wanted in asked:
        if _same_word(term, wanted):
            return wanted
    return term


def choose_units(
    scored: Sequence[UnitScore],
    *,
    max_sentences: int = MAX_SENTENCES,
    not_found_coverage: float = NOT_FOUND_COVERAGE,
    not_found_corpus_coverage: float = NOT_FOUND_CORPUS_COVERAGE,
    admit: Callable[[UnitScore], bool] | None = None,
    judged: Mapping[tuple[str, int], float] | None = None,
    combine: AnswerModel | None = None,
    similarity: Mapping[tuple[str, int], float] | None = None,
    semantic: SemanticModel = SEMANTIC,
) -> Selection:
    """Choose the units that answer, best first, with the list items and follow-ons they need.

    ``admit`` may refuse a unit (one the checker would not certify): it is passed
    over as if it were not there. ``judged`` holds a model's probability that a unit
    answers the question, for the best units by score (see `judge_candidates`): the
    choice and the not-found cut are then made by ``combine`` (see `answer_odds`)
    and only judged units are chosen; list items and follow-ons come as before.
    ``similarity`` holds each unit's cosine with the question (sentence embeddings):
    the choice and the cut are then made by ``semantic`` (see `SemanticModel`).
    """
    if admit is not None:
        scored = [unit for unit in scored if admit(unit)]
    if not scored:
        return Selection((), 0.0, 0)
    best_coverage = max(unit.coverage for unit in scored)
    best_corpus = max(unit.corpus_coverage for unit in scored)
    ranked = sorted(scored, key=lambda u: (-u.score, -u.coverage))
    if ranked[0].score <= 0:
        return Selection((), best_coverage, len(scored))
    if judged:
        return _choose_judged(
            scored, ranked, judged, combine or ANSWER_MODEL, max_sentences
        )
    if similarity is not None:
        return _choose_semantic(scored, similarity, semantic, max_sentences)
    if best_coverage < not_found_coverage or best_corpus < not_found_corpus_coverage:
        return Selection((), best_coverage, len(scored))
    cut = ranked[0].score * RELATIVE_CUT
    # A sentence after the first must also hold a fair share of what the best holds.
    least = ranked[0].coverage * RELATIVE_CUT
    eligible, echoes = distinct(
        [u for u in ranked if u.score >= cut and u.coverage >= least]
    )
    chosen = _with_companions(scored, eligible, max_sentences)
    return Selection(tuple(chosen), best_coverage, len(scored), echoes=echoes)


def _choose_judged(
    scored: Sequence[UnitScore],
    ranked: Sequence[UnitScore],
    judged: Mapping[tuple[str, int], float],
    combine: AnswerModel,
    max_sentences: int,
) -> Selection:
    """Choose among the judged units by their combined odds of answering."""
    best_coverage = max(unit.coverage for unit in scored)
    odds = {
        (u.key, u.position): answer_odds(u, judged[(u.key, u.position)], combine)
        for u in ranked
        if (u.key, u.position) in judged
    }
    if not odds or max(odds.values()) < combine.cut:
        return Selection((), best_coverage, len(scored), max(odds.values(), default=0))
    # Best first by the combined odds; a unit below the cut is not an answer, however
    # well it scores by its words (an off-topic extra sentence is dropped).
    eligible, echoes = distinct(
        sorted(
            (u for u in ranked if odds.get((u.key, u.position), -1.0) >= combine.cut),
            key=lambda u: -odds[(u.key, u.position)],
        )
    )
    chosen = _with_companions(scored, eligible, max_sentences)
    return Selection(
        tuple(chosen), best_coverage, len(scored), max(odds.values()), echoes=echoes
    )


def semantic_score(
    unit: UnitScore, similarity: float, model: SemanticModel = SEMANTIC
) -> float:
    """Return a unit's similarity to the question, its weighted mean coverage and kind."""
    return (
        similarity
        + model.coverage * (unit.coverage + unit.corpus_coverage) / 2
        + guidance_weight(answer_text(unit.text), model)
    )


def _choose_semantic(
    scored: Sequence[UnitScore],
    similarity: Mapping[tuple[str, int], float],
    model: SemanticModel,
    max_sentences: int,
) -> Selection:
    """Choose the units by similarity and coverage; a question is never an answer."""
    best_coverage = max(unit.coverage for unit in scored)
    value = {
        (u.key, u.position): semantic_score(u, similarity[(u.key, u.position)], model)
        for u in scored
        if (u.key, u.position) in similarity and not u.text.rstrip().endswith("?")
    }
    best = max(value.values(), default=0.0)
    if best < model.cut:
        return Selection((), best_coverage, len(scored), best_semantic=best)
    floor = max(model.cut, best - model.spread)
    eligible, echoes = distinct(
        sorted(
            (u for u in scored if value.get((u.key, u.position), -1.0) >= floor),
            key=lambda u: -value[(u.key, u.position)],
        )
    )
    chosen = _with_companions(scored, eligible, max_sentences)
    return Selection(
        tuple(chosen), best_coverage, len(scored), best_semantic=best, echoes=echoes
    )


def same_statement(one: str, other: str) -> bool:
    """Tell whether two units say the same thing: nearly all of one's terms in the other.

    A summary table repeats a recommendation in its own layout (its line breaks, its
    strength label, a number before it); the words stay. The shorter unit must hold
    at least ``SAME_MIN_TERMS`` terms, so that two short labels are not one claim. A
    list's number or bullet before a unit ("20. We suggest ...") is no word of it.
    """
    one, other = _BULLET.sub("", one, count=1), _BULLET.sub("", other, count=1)
    first, second = set(bm25_tokens(one)), set(bm25_tokens(other))
    shorter, longer = sorted((first, second), key=len)
    if len(shorter) < SAME_MIN_TERMS:
        return _NON_WORD.sub(" ", one.lower()).strip() == (
            _NON_WORD.sub(" ", other.lower()).strip()
        )
    return (
        len(shorter & longer) >= SAME_SHARE * len(shorter)
        and len(longer) <= len(shorter) * SAME_LENGTH_RATIO
        and _agree(one, other)
    )


def _agree(one: str, other: str) -> bool:
    """Tell whether each of two near-identical units holds to the other as a quote.

    One word is all that parts "recommended" from "not recommended", "10 mg" from
    "100 mg", or "suggest" from "recommend": an echo cited beside a claim must say
    what the claim says, by the checks a certified claim meets.
    """
    return all(
        claim_conflict(claim, source) is None
        and certification_guard(claim, source) is None
        for claim, source in ((one, other), (other, one))
    )


def distinct(
    ranked: Sequence[UnitScore],
) -> tuple[list[UnitScore], dict[tuple[str, int], tuple[UnitScore, ...]]]:
    """Return the units best first with each statement once, and each one's echoes."""
    kept: list[UnitScore] = []
    echoes: dict[tuple[str, int], tuple[UnitScore, ...]] = {}
    for unit in ranked:
        first = next((k for k in kept if same_statement(k.text, unit.text)), None)
        if first is None:
            kept.append(unit)
            continue
        place = (first.key, first.position)
        echoes[place] = (*echoes.get(place, ()), unit)
    return kept, echoes


def _with_companions(
    scored: Sequence[UnitScore], eligible: Sequence[UnitScore], max_sentences: int
) -> list[UnitScore]:
    """Take eligible units in order, each with the list items or follow-on it needs."""
    by_place = {(u.key, u.position): u for u in scored}
    chosen: list[UnitScore] = []
    taken: set[tuple[str, int]] = set()

    def take(unit: UnitScore) -> None:
        taken.add((unit.key, unit.position))
        chosen.append(unit)

    picked = 0
    for unit in eligible:
        if picked >= max_sentences:
            break
        if (unit.key, unit.position) in taken:
            continue
        take(unit)
        picked += 1
        following = by_place.get((unit.key, unit.position + 1))
        if unit.text.rstrip().endswith(":"):
            for offset in range(1, MAX_LIST_ITEMS + 1):
                item = by_place.get((unit.key, unit.position + offset))
                if item is None or not item.list_item:
                    break
                if (item.key, item.position) not in taken:
                    take(item)
        elif (
            following is not None
            and picked < max_sentences
            and (following.key, following.position) not in taken
            and _CONTINUES.match(following.text)
        ):
            take(following)
            picked += 1
    return chosen


def judge_candidates(
    scored: Sequence[UnitScore],
    count: int,
    admit: Callable[[UnitScore], bool] | None = None,
) -> list[UnitScore]:
    """Return the units worth asking a model about: the ``count`` best by score."""
    if admit is not None:
        scored = [unit for unit in scored if admit(unit)]
    ranked = sorted(scored, key=lambda u: (-u.score, -u.coverage))
    return [unit for unit in ranked[:count] if unit.score > 0]


def answer_odds(unit: UnitScore, p_yes: float, model: AnswerModel) -> float:
    """Return the combined probability that a unit answers the question.

    A logistic model of the model's log-odds of "yes" and the unit's lexical
    coverage (over the sections read and over the corpus): few parameters, set on
    development questions (see `ANSWER_MODEL`).
    """
    p = min(max(p_yes, 1e-4), 1 - 1e-4)
    z = (
        model.bias
        + model.yes * math.log(p / (1 - p))
        + model.coverage * unit.coverage
        + model.corpus_coverage * unit.corpus_coverage
    )
    return 1 / (1 + math.exp(-z))
