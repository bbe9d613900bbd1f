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

Then what a reader looks for (:mod:`veriscribe.text.findings`): when the article has
Results text and the abstract states fewer than :data:`MAIN_FINDINGS` of its findings
with a number, the Results sentences that best state one are added (a comparison, an
effect size or a P value, about what the title names, early in the Results; not a
description of samples or another study's result); when it has Discussion or
Conclusions text and no sentence states the authors' conclusion (a limitation or
earlier work is none), the authors' concluding sentence is added (a Conclusions
section's opening, a cue such as "In conclusion" or "Our findings suggest", the
closing paragraph). Both are verbatim, ``certified``, origin ``article``, and never
restate a sentence already shown. An abstract over the asked length then loses
first the sentences about eligibility, approvals, searches and lab procedure, then
background, then methods (the design, the first of them, last), keeping the
objective, the conclusion and the findings with their numbers longest, and never
an added finding or conclusion.
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
from veriscribe.text.findings import (
    conclusion_score,
    finding_score,
    is_aside,
    is_procedure,
    is_setting,
    states_objective,
)
from veriscribe.text.numbers import ArticleNumbers
from veriscribe.text.pointers import (
    numbered_citations,
    points_to_display,
    strip_numbered_citations,
    strip_pointers,
)
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
    "in_reading_order",
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
_NUMBER = re.compile(r"(?<![A-Za-z\d])(?<![A-Za-z]-)\d+(?:\.\d+)?")
_RESULTS_TITLE = re.compile(r"result|finding|outcome", re.IGNORECASE)
_CONCLUSIONS_TITLE = re.compile(r"discussion|conclu|implication", re.IGNORECASE)
_FRAGMENT = re.compile(r"^(?:\d+\.\s|\(?\d+\)|\(?[a-z]\)\s|[a-z])")
"""An opening no whole sentence has: lower case, or an item's number ("1) whether")."""
_ENDED = re.compile(r"[.!?][\"'”’)\]]*$")
_CONCLUSIONS_SECTION = re.compile(r"conclu|summary", re.IGNORECASE)
_METHODS_TITLE = re.compile(r"method|materials|patients and|participants and", re.I)
_ASIDE_SECTION = re.compile(
    r"limitation|strength|disclosure|acknowledg|funding|competing|conflict|"
    r"contribution|availab|declaration",
    re.IGNORECASE,
)
MAIN_FINDINGS = 2
"""An abstract that states fewer findings with their numbers gains them from the
Results, best first."""
REDUNDANT = 0.5
"""A sentence added from the article may share at most this much of its content
words with one already shown."""
MAX_METHODS = 3
"""Methods sentences an abstract shows at most: the design and the few a reader
needs to weigh the findings; more go before anything else."""
OBJECTIVE_WORDS = (8, 50)
"""The length in words of an article sentence added as the objective."""
EXTRA_FINDINGS = 2
"""Results findings added beyond :data:`MAIN_FINDINGS` when an abstract is short."""
TITLE_WEIGHT = 5.0
"""A finding's score for holding all of the title's content words (in proportion)."""
RESTATED_WEIGHT = 4.0
"""A finding's score for having all its words again in the Discussion's opening."""
FINDING_WORDS = (10, 45)
"""The length in words of a Results sentence added as the finding."""
CONCLUSION_WORDS = (8, 45)
"""The length in words of a closing sentence added as the conclusion."""


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
    top = paragraph.path[0] if paragraph.path else paragraph.section
    if _METHODS_TITLE.search(top) and not _RESULTS_TITLE.search(top):
        # "Materials and methods > Outcomes": the methods, whatever the label says.
        return "methods"
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


def _roles(paragraphs: Sequence[Paragraph], labels: Sequence[str]) -> list[str]:
    """Return each paragraph's facet, by its section title first, then its label.

    An article whose text runs without Results or Discussion headings ("Main
    text" of a short report, then "Materials and methods") and whose labels name
    neither is read by position: its closing paragraph before the methods is the
    conclusion. (Its results are not told apart from its background so: see
    :func:`_finding`.)
    """
    roles = [
        _role(labels[i] if i < len(labels) else "", paragraph)
        for i, paragraph in enumerate(paragraphs)
    ]
    if {"results", "conclusions"} & set(roles):
        return roles
    main = [
        i
        for i, paragraph in enumerate(paragraphs)
        if roles[i] != "methods" or not _METHODS_TITLE.search(_top(paragraph))
    ]
    main = [i for i in main if not _ASIDE_SECTION.search(_top(paragraphs[i]))]
    if len(main) < 3:
        return roles
    roles[main[-1]] = "conclusions"
    return roles


def _top(paragraph: Paragraph) -> str:
    return paragraph.path[0] if paragraph.path else paragraph.section


def article_units(paragraphs: Sequence[Paragraph], labels: Sequence[str]) -> list[Unit]:
    """Return every body sentence with its place, facet and content words."""
    units = []
    roles = _roles(paragraphs, labels)
    for i, paragraph in enumerate(paragraphs):
        role = roles[i]
        section = " > ".join(paragraph.path) or paragraph.section
        # Whole sentences only: a piece after "et al." or a citation joins the one
        # before it, so a repair never opens mid-sentence.
        for sentence in _items_joined(sentences_of(paragraph.text)):
            units.append(Unit(i, section, sentence, role, terms(sentence).words))
    return units


_ITEM = re.compile(r"^\(?\d{1,2}\)\s")


def _items_joined(sentences: Sequence[str]) -> list[str]:
    """Join a numbered list split into pieces back into its sentence.

    "The objectives of this study were to" / "1) examine ...;" / "2) compare
    ...": one sentence, as the article wrote it.
    """
    joined: list[str] = []
    for sentence in sentences:
        if joined and (_ITEM.match(sentence) or not _ENDED.search(joined[-1])):
            joined[-1] = f"{joined[-1]} {sentence}"
        else:
            joined.append(sentence)
    return joined


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


_RANGE = re.compile(
    r"\bfrom\s+(?P<low>[-−]?\d+(?:\.\d+)?)(?P<between>(?:\s+(?!from\b|to\b)\S+){0,3}?)"
    r"\s+to\s+(?P<high>[-−]?\d+(?:\.\d+)?)",
    re.IGNORECASE,
)


def _ranges(text: str) -> set[tuple[str, str]]:
    return {
        (m.group("low").replace("−", "-"), m.group("high").replace("−", "-"))
        for m in _RANGE.finditer(text)
    }


def _unpaired_range(sentence: str, source: str) -> str:
    """Return a range "from X to Y" of the sentence that its source never gives.

    "intercepts ranging from 5.88 to −21.54" built from "intercept, 5.88 vs. a
    range from −14.79 to −21.54": both numbers are the article's, the range is not.
    """
    given = _ranges(source)
    for low, high in _ranges(sentence) - given:
        return f"from {low} to {high}"
    return ""


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
    unpaired = _unpaired_range(sentence, source)
    if unpaired:
        return f"numbers: the article gives no range {unpaired}"
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
    return _attribution(sentence, evidence)


_REPORTED = re.compile(
    r"^(?P<who>.{3,80}?)\s+(?:found|find|finds|showed|shows|reported|reports|"
    r"demonstrated|demonstrates|estimated|estimates|concluded|concludes|revealed)\b"
)
_NAMING = re.compile(r"\b(?:[A-Z][\w-]*|\d[\w.-]*)")
_OPENING = frozenset(
    "The This These Those That Our Their Its A An In Both Such Each Several Many".split()
)


def _attribution(sentence: str, evidence: Sequence[str]) -> str:
    """Return why a finding is credited to a source its evidence does not credit.

    "The GBD 2010 Study found that the burden was ..." drawn from "Early efforts
    ... found that the burden was ..." and, beside it, the sentence that names the
    GBD 2010 study: each part is in the article, the credit is not. The names and
    numbers of who reports a finding must be in the sentence holding the finding
    (the first evidence sentence).
    """
    reported = _REPORTED.match(sentence)
    if reported is None or len(evidence) < 2:
        return ""
    first = evidence[0].lower()
    names = [n for n in _NAMING.findall(reported.group("who")) if n not in _OPENING]
    lacking = [n for n in names if n.lower() not in first]
    if lacking:
        return (
            f"attribution: the sentence holding the finding does not credit "
            f"{' '.join(lacking)}"
        )
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
        # A space before a decimal point ("P < .001") is the article's: it stays.
        cut = re.sub(r"\s+([,.;:])(?!\d)", r"\1", cut).strip()
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


def _whole(quote: str, text: str) -> bool:
    """Tell whether an article sentence, as cut, reads as a whole sentence.

    The splitter can leave a list item standing alone ("1) whether a campaign
    ... could drive jurisdictions to act and") or split after a reference number
    ("29. This might be ..."): no repair or addition shows such a piece.
    """
    return not _FRAGMENT.match(quote.lstrip()) and bool(_ENDED.search(text))


def _repair(
    units: list[Unit], paragraphs: Sequence[Paragraph], shown: set[str]
) -> str | None:
    for unit in units[:1]:
        text = cut_to_sentence(unit.text, paragraphs[unit.paragraph].text)
        if (
            text not in shown
            and word_count(text) <= MAX_WORDS
            and not points_to_display(text)
            and _whole(unit.text, text)
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


def _fits(text: str, size: tuple[int, int]) -> bool:
    return size[0] <= word_count(text) <= size[1] and not points_to_display(text)


def _best(
    scored: list[tuple[float, int, Unit]],
    paragraphs: Sequence[Paragraph],
    size: tuple[int, int],
    shown: set[str],
    title: frozenset[str],
) -> SentenceRecord | None:
    """Return the best-scored unit, as the article states it, that fits and is new.

    New: not shown yet, and not half made of the content words of a shown sentence
    (the title's words aside: every sentence may name the subject). Read alone: it
    neither opens by pointing back nor names "these ..." that nothing shown says.
    """
    said = [terms(text).words - title for text in shown]
    known = title.union(*said)
    for _, _, unit in sorted(scored, key=lambda item: (-item[0], item[1])):
        record = _article_record(unit, paragraphs)
        if (
            record["text"] in shown
            or not _fits(record["text"], size)
            or not _whole(unit.text, record["text"])
            or _leans_back(record["text"], unit.role)
            or _names_unshown(record["text"], known)
        ):
            continue
        own = unit.words - title
        if not any(len(own & words) > REDUNDANT * len(own) for words in said):
            return record
    return None


def _finding(
    units: Sequence[Unit],
    paragraphs: Sequence[Paragraph],
    numbers: ArticleNumbers,
    title: frozenset[str],
    shown: set[str],
) -> SentenceRecord | None:
    """Return the Results sentence that best states a finding with a number.

    Ranked by :func:`veriscribe.text.findings.finding_score`, then by what it is
    about: the share of the title's content words it holds (the main finding is
    about what the article is about) and the share of its own words that the
    Discussion's opening paragraph repeats (where authors restate their main
    result), and by how early its paragraph comes in the Results (the main finding
    is reported first).
    """
    results = [u for u in units if u.role == "results"] or _middle(units)
    order = {p: rank for rank, p in enumerate(sorted({u.paragraph for u in results}))}
    closing = sorted({u.paragraph for u in units if u.role == "conclusions"})
    restated = frozenset[str]().union(
        *(u.words for u in units if closing and u.paragraph == closing[0])
    )
    scored = []
    for position, unit in enumerate(results):
        text = strip_pointers(unit.text)[0]
        if not _stated_number(text, numbers):
            continue
        score = finding_score(text)
        if score <= 0:
            continue
        own = unit.words - title
        score += TITLE_WEIGHT * len(unit.words & title) / max(1, len(title))
        score += RESTATED_WEIGHT * len(own & restated) / max(1, len(own))
        score -= 0.25 * min(4, order[unit.paragraph])
        scored.append((score, position, unit))
    found = _best(scored, paragraphs, FINDING_WORDS, shown, title)
    if found is not None:
        found["role"] = "results"
    return found


_RESTATES = re.compile(
    r"^(?:(?:In|Here,?) (?:this|the present|our|the current) (?:[\w-]+ )?"
    r"(?:study|work|analysis|trial|report),?\s+)?(?:we (?:have )?(?:found|showed|show|"
    r"observed|demonstrated?|identified)|(?:this|the present|our|the current) "
    r"(?:[\w-]+ )?(?:study|work|analysis|trial|results|findings|data) "
    r"(?:has |have )?(?:showed|shown|shows|show|demonstrated?|revealed?|indicated?))"
    r" that\b",
    re.IGNORECASE,
)


def _restatement(
    units: Sequence[Unit],
    paragraphs: Sequence[Paragraph],
    title: frozenset[str],
    shown: set[str],
) -> SentenceRecord | None:
    """Return the Discussion's opening restatement of the main finding, if new.

    "This study showed that leukocyte mtDNA copy number was positively correlated
    with ...": where authors say in one sentence what they found, most often
    without the numbers a Results sentence carries. From the first paragraph of
    the Discussion (or Conclusions) only, and only when no shown sentence says it.
    """
    closing = sorted({u.paragraph for u in units if u.role == "conclusions"})
    opening = [
        unit
        for unit in units
        if closing
        and unit.paragraph == closing[0]
        and _RESTATES.match(unit.text)
        and not is_aside(unit.text)
    ]
    found = _best(
        [(1.0, position, unit) for position, unit in enumerate(opening[:1])],
        paragraphs,
        CONCLUSION_WORDS,
        shown,
        title,
    )
    if found is not None:
        found["role"] = "results"
    return found


def _covered(record: SentenceRecord, shown: set[str], title: frozenset[str]) -> bool:
    """Tell whether a shown sentence already states what ``record`` states."""
    own = terms(record["text"]).words - title
    return record["text"] in shown or any(
        len(own & (terms(text).words - title)) > REDUNDANT * len(own) for text in shown
    )


def _middle(units: Sequence[Unit]) -> list[Unit]:
    """Return the sentences between an article's opening and closing paragraphs.

    Where no heading or label names the Results: the body outside the methods,
    without its first paragraph (the background) and its conclusion.
    """
    main = sorted(
        {u.paragraph for u in units if u.role not in ("methods", "conclusions")}
    )
    inner = set(main[1:])
    return [u for u in units if u.paragraph in inner]


def _conclusion(
    units: Sequence[Unit],
    paragraphs: Sequence[Paragraph],
    title: frozenset[str],
    shown: set[str],
) -> SentenceRecord | None:
    """Return the authors' concluding sentence of the Discussion or Conclusions.

    Ranked by :func:`veriscribe.text.findings.conclusion_score`, then by where it
    stands: a Conclusions section, the closing paragraph, the opening one.
    """
    closing = [
        u
        for u in units
        if u.role == "conclusions" and not _ASIDE_SECTION.search(u.section)
    ]
    order = sorted({u.paragraph for u in closing})
    opening: dict[str, Unit] = {}
    for unit in closing:
        opening.setdefault(unit.section, unit)
    scored = []
    for position, unit in enumerate(closing):
        text = strip_pointers(unit.text)[0]
        score = conclusion_score(text)
        if _CONCLUSIONS_SECTION.search(unit.section) and not is_aside(unit.text):
            # A Conclusions section is the authors' conclusion, cue or not; its
            # opening sentence most of all.
            score += 2.0 + 1.0 * (opening[unit.section] is unit)
        if score <= 0:
            continue
        # The closing paragraph concludes; the opening one restates what was found.
        score += 1.5 * (unit.paragraph in (order[-1], order[0]))
        score += 0.5 * (unit.paragraph in order[-2:-1])
        scored.append((score, position, unit))
    return _best(scored, paragraphs, CONCLUSION_WORDS, shown, title)


def _objective(
    units: Sequence[Unit],
    paragraphs: Sequence[Paragraph],
    title: frozenset[str],
    shown: set[str],
) -> SentenceRecord | None:
    """Return the article's sentence that states what the work set out to do.

    From the introduction (the background and objective paragraphs), the last
    one that says so ("The aim of this study was ...", "We sought to ...") first:
    the aim closes an introduction.
    """
    opening = [u for u in units if u.role in ("background", "objective")]
    scored = [
        (float(position), -position, unit)
        for position, unit in enumerate(opening)
        if states_objective(strip_pointers(unit.text)[0]) and not is_aside(unit.text)
    ]
    found = _best(scored, paragraphs, OBJECTIVE_WORDS, shown, title)
    if found is not None:
        found["role"] = "objective"
    return found


def states_objective_record(record: SentenceRecord) -> bool:
    """Tell whether a shown sentence states the work's objective."""
    return record["role"] == "objective" or (
        record["role"] in ("background", "other") and states_objective(record["text"])
    )


def states_finding(record: SentenceRecord, numbers: ArticleNumbers) -> bool:
    """Tell whether a shown sentence states a Results finding with a number."""
    return record["role"] == "results" and _stated_number(record["text"], numbers)


def states_conclusion(record: SentenceRecord) -> bool:
    """Tell whether a shown sentence states the authors' conclusion."""
    return record["role"] == "conclusions" and (
        record["origin"] == "article"
        or (conclusion_score(record["text"]) > 0 and not is_aside(record["text"]))
    )


def _priority(
    record: SentenceRecord, numbers: ArticleNumbers, design: SentenceRecord | None
) -> int:
    """Return how soon a sentence goes when the abstract is too long (lower first).

    Procedure (eligibility, approvals, searches, lab protocol) first, then
    background, then methods (but the design, the first of them), the rest, the
    objective, the conclusion and the findings with their numbers last; a sentence
    added from the article never.
    """
    if record["origin"] == "article":
        return 9
    if not is_setting(record["text"]):
        # A lab study's finding names its primers and assays: it is still a finding.
        if states_finding(record, numbers):
            return 8
        if states_conclusion(record):
            return 7
    if is_procedure(record["text"]):
        return 0
    if record["role"] == "objective":
        return 5
    if record["role"] == "methods":
        return 4 if record is design else 2
    return {"background": 1, "other": 1}.get(record["role"], 3)


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
    body = "\n\n".join(p.text for p in paragraphs)
    numbers = ArticleNumbers.of(body)
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
    # What a sentence left pointing back at nothing said stands for is no finding
    # or conclusion of this abstract: the article's own is added in its place.
    records = _without_dangling(in_reading_order(records), title)
    kept = [r for r in records if r["status"] != "dropped"]
    for _ in range(MAIN_FINDINGS - sum(states_finding(r, numbers) for r in kept)):
        added = _finding(units, paragraphs, numbers, terms(title).words, shown)
        if added is None:
            break
        _insert(records, added)
        shown.add(added["text"])
    main = _finding(units, paragraphs, numbers, terms(title).words, set())
    if main is not None and not _covered(main, shown, terms(title).words):
        # The model's findings are secondary ones: the article's main one leads
        # the results.
        _insert(records, main, before="results")
        shown.add(main["text"])
    restated = _restatement(units, paragraphs, terms(title).words, shown)
    if restated is not None:
        _insert(records, restated)
        shown.add(restated["text"])
    if not any(states_conclusion(r) for r in kept):
        added = _conclusion(units, paragraphs, terms(title).words, shown)
        if added is not None:
            records.append(added)
            shown.add(added["text"])
    if not any(states_objective_record(r) for r in kept):
        added = _objective(units, paragraphs, terms(title).words, shown)
        if added is not None:
            records.append(added)
            shown.add(added["text"])
    held = _limit_methods(records, numbers)
    if words:
        low, high = (round(words * (1 + m)) for m in (-LENGTH_MARGIN, LENGTH_MARGIN))
        _fill(records, low, high, units, paragraphs, numbers, title, shown, held)
        _trim(records, high, numbers)
    records = _without_dangling(in_reading_order(records), title)
    if numbered_citations(body):
        # "... program reach (12).": no reference list goes with an abstract.
        for record in records:
            if record["status"] != "dropped":
                record["text"] = strip_numbered_citations(record["text"])
    return records


_POINTS_BACK = re.compile(
    r"^(?:This|These|Those|Such|Both these|Both|It|They|The same|Of these|Of those)"
    r"\b(?!\s+(?:[\w-]+\s+)?(?:study|studies|work|paper|article|investigation|"
    r"report|review|(?:re-?|meta-)?analysis|simulation|trial|survey|cohort)\b)"
)
_OWN_RESULTS = re.compile(
    r"^(?:This|These) (?:findings?|results?|data|observations?)\b"
)


def _leans_back(text: str, role: str) -> bool:
    """Tell whether a sentence opens by pointing back to the one before it."""
    return bool(_POINTS_BACK.match(text)) and not (
        role == "conclusions" and _OWN_RESULTS.match(text)
    )


_THESE = re.compile(
    r"(?<!^)\b(?:these|such(?:\s+an?)?)\s+(?!as\b|that\b)([\w-]+)(?:\s+([\w-]+))?"
)
_OWN_WORK_NOUNS = frozenset(terms("findings results data observations study").words)


def _names_unshown(text: str, said: frozenset[str]) -> str:
    """Return the "these ..." of a sentence that names what no earlier sentence says.

    "The consequence of these case definitions is ...": read after sentences that
    never define a case, it points at nothing. ``said`` holds the content words of
    the sentences shown before it; "these findings" (the work's own) always reads.
    """
    for match in _THESE.finditer(text):
        named = terms(" ".join(w for w in match.groups() if w)).words
        if named and not named & (said | _OWN_WORK_NOUNS):
            return match.group(0)
    return ""


def _without_dangling(
    records: list[SentenceRecord], title: str = ""
) -> list[SentenceRecord]:
    """Drop a sentence that points back to one the abstract does not show.

    "These mechanisms include ...", "Both these published analyses ...", "This
    process ..." read as garbled when the sentence before them in the abstract is
    not the one they point back to: kept only when that sentence is drawn from the
    same paragraph of the article or the one before it. "This study" names the
    article itself, and a conclusion's "These findings" its results: both stay. So
    does a sentence naming "these ..." in its course (see :func:`_names_unshown`).
    """
    previous: SentenceRecord | None = None
    said = terms(title).words
    for i, record in enumerate(records):
        if record["status"] == "dropped":
            continue
        unshown = _names_unshown(record["text"], said)
        if _leans_back(record["text"], record["role"]) or unshown:
            here = record["evidence"][0]["paragraph"] if record["evidence"] else -9
            before = (
                previous["evidence"][0]["paragraph"]
                if previous is not None and previous["evidence"]
                else -9
            )
            if previous is None or not 0 <= here - before <= 1:
                opener = unshown or " ".join(record["text"].split()[:2])
                records[i] = record | {
                    "status": "dropped",
                    "reason": record["reason"]
                    or f"context: {opener!r} points back to a sentence not shown",
                }
                continue
        previous = record
        said |= terms(record["text"]).words
    return records


def _shown_words(records: Sequence[SentenceRecord]) -> int:
    return sum(word_count(r["text"]) for r in records if r["status"] != "dropped")


def _fill(
    records: list[SentenceRecord],
    low: int,
    high: int,
    units: Sequence[Unit],
    paragraphs: Sequence[Paragraph],
    numbers: ArticleNumbers,
    title: str,
    shown: set[str],
    held: Sequence[tuple[SentenceRecord, SentenceRecord]],
) -> None:
    """Bring an abstract short of the asked length up to it, findings first.

    Up to :data:`EXTRA_FINDINGS` more Results findings, then the methods sentences
    :func:`_limit_methods` held back, in their order, while they fit.
    """
    for _ in range(EXTRA_FINDINGS):
        if _shown_words(records) >= low:
            return
        added = _finding(units, paragraphs, numbers, terms(title).words, shown)
        if added is None:
            break
        _insert(records, added)
        shown.add(added["text"])
    for before, dropped in held:
        if _shown_words(records) >= low:
            return
        if _shown_words(records) + word_count(before["text"]) <= high:
            records[next(i for i, r in enumerate(records) if r is dropped)] = before


READING_ORDER = {
    "background": 0,
    "objective": 1,
    "methods": 2,
    "results": 3,
    "conclusions": 4,
}
"""The order a reader expects an abstract's parts in."""


def in_reading_order(records: Sequence[SentenceRecord]) -> list[SentenceRecord]:
    """Return the sentences ordered background, objective, methods, results, conclusions.

    Stable: sentences of one part keep their order, and a sentence of no part
    (``other``) stays after the one before it. A model's refined draft can put its
    methods after its findings, and a finding added from the article goes in among
    the results rather than after the model's closing sentence.
    """
    ranked = []
    rank = 0
    for position, record in enumerate(records):
        rank = READING_ORDER.get(record["role"], rank)
        ranked.append((rank, position, record))
    return [record for _, _, record in sorted(ranked, key=lambda r: r[:2])]


def _article_record(unit: Unit, paragraphs: Sequence[Paragraph]) -> SentenceRecord:
    text = cut_to_sentence(unit.text, paragraphs[unit.paragraph].text)
    return _record(text, "certified", [unit], origin="article")


def _insert(
    records: list[SentenceRecord], record: SentenceRecord, before: str = "conclusions"
) -> None:
    """Place a sentence before the first shown one of the role ``before``, else last."""
    for i, other in enumerate(records):
        if other["status"] != "dropped" and other["role"] == before:
            records.insert(i, record)
            return
    if before != "conclusions":
        _insert(records, record)
        return
    records.append(record)


def _drop(records: list[SentenceRecord], i: int, reason: str) -> SentenceRecord:
    dropped = records[i].copy()
    dropped["status"] = "dropped"
    dropped["reason"] = dropped["reason"] or reason
    records[i] = dropped
    return dropped


def _limit_methods(
    records: list[SentenceRecord], numbers: ArticleNumbers
) -> list[tuple[SentenceRecord, SentenceRecord]]:
    """Keep at most :data:`MAX_METHODS` methods sentences: the design and the most needed.

    A small model's draft can give most of an abstract to lab conditions and
    questionnaires; a reader wants the design, then the findings. Returns each
    sentence held back with its dropped record, in abstract order.
    """
    methods = [
        i
        for i, r in enumerate(records)
        if r["status"] != "dropped" and r["role"] == "methods"
    ]
    if len(methods) <= MAX_METHODS:
        return []
    design = records[methods[0]]
    # Procedure first, then the latest; the design last of all.
    order = sorted(methods, key=lambda i: (_priority(records[i], numbers, design), -i))
    held = sorted(order[: len(methods) - MAX_METHODS])
    return [
        (records[i], _drop(records, i, "balance: more methods than an abstract gives"))
        for i in held
    ]


def _trim(records: list[SentenceRecord], most: int, numbers: ArticleNumbers) -> None:
    """Drop the least needed shown sentences until the abstract fits ``most`` words."""

    def total() -> int:
        return sum(word_count(r["text"]) for r in records if r["status"] != "dropped")

    design = next(
        (r for r in records if r["status"] != "dropped" and r["role"] == "methods"),
        None,
    )
    while total() > most:
        shown = [i for i, r in enumerate(records) if r["status"] != "dropped"]
        # The first sentence states what the article is about: it goes last.
        candidates = [
            (priority, -i)
            for i in shown[1:]
            if (priority := _priority(records[i], numbers, design)) < 9
        ]
        if not candidates:
            return
        _drop(records, -min(candidates)[1], "length: over the asked length")


def sentence_counts(records: Sequence[SentenceRecord]) -> dict[str, int]:
    """Return how many sentences were certified, repaired and dropped."""
    return {s: sum(r["status"] == s for r in records) for s in SENTENCE_STATUSES}


def shown_text(records: Sequence[SentenceRecord]) -> str:
    """Return the abstract as shown: its certified and repaired sentences."""
    return " ".join(r["text"] for r in records if r["status"] != "dropped")
