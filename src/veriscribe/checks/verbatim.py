"""Check that a cited quote really occurs in the section it cites.

The tiers follow the verbatim matcher of the cited-QA design (paper appendix A.6):

* ``exact``: the quote is a character-for-character substring of the section.
* ``normalized``: the quote matches once both texts are normalized (see
  :func:`normalize_with_offsets` and `Matching`_ below).
* ``elided``: the quote contains an ellipsis; the fragments it separates, ignoring
  those under ten characters, number at least two, occur in the section in order
  without overlapping, and the text each ellipsis skips is safe to leave out (see
  `Elisions`_ below).
* ``elided_risky``: an elided match that cannot be trusted: the text an ellipsis skips
  could reverse, weaken or narrow what the fragments say, or a short fragment the
  matcher ignored is absent from the text it should sit in. Never compliant.
* ``fail``: none of the above; ``unresolved``: the cited section does not exist.

Every match is reported as a span of character offsets in the *original* section
text, so a reader can be shown the exact source passage, and with the span of the
whole sentences around it (:func:`sentence_span`), so that a word just before the
quote ("Avoid aspirin in ...") is never hidden from the judge or the reader.

Matching
--------
Normalization may only remove from a text what cannot change what it says, and it
removes nothing from the quote that the section does not have at the same place:

* Removed from the section when the quote leaves it out, and required in the section
  when the quote has it: reference markers (``[12]``, ``(3-5)``, superscript numbers
  after a word), inline HTML tags and Markdown ``**`` / ``__`` emphasis. A bracketed
  number right after a digit or a sign, or right before a digit or a unit, is a
  quantity, not a reference: ``5 (10) mg`` keeps its ``(10)``.
* Dropped on both sides because they are invisible: soft hyphens, zero-width
  characters.
* Folded on both sides: Unicode NFKC, case, curly quotes, dash variants, whitespace
  runs, the space before closing punctuation.
* Structure: a list bullet or item label at a line start ("- ", "• ", "2.", "b)",
  "(iv)"; a number or letter only after a blank line, a line ending a sentence or a
  lead-in, or another item, since wrapped prose can start a line with a number),
  a bullet glyph between spaces, a blank line, or a table cell boundary (``|``, a
  table rule, an HTML block tag) is an *item boundary*. A quote may run across one
  with only a space, with a bullet, with the item's own label (never another
  number), or with one of ``. ; , :`` where the section has ``; , :`` or nothing.
  A sentence end ``.`` of the section may be quoted as ``.`` or ``;`` but not
  dropped (that would join two statements into one); between two digits only the
  section's own ``.`` or ``;`` may stand at the boundary, so ``10 - 80`` never
  matches an item ending in 10 followed by one starting with 80. Words are never
  skipped: a quote that merges two items so as to drop a word fails.

Elisions
--------
An ellipsis hides text, and the hidden text is where a quote can be turned against
its source ("Avoid aspirin in children under 16 years; in adults with coronary
disease, aspirin is recommended" quoted as "aspirin in children under 16 years ...
aspirin is recommended"). The skipped text is safe only when it holds none of:

* a word of :data:`RISKY_WORDS` or starting with one of :data:`RISKY_STEMS`:
  negations, exceptions and conditions, contrasts, hedges, words that set the
  strength of a recommendation or turn it against, words of direction (reduce,
  lower, less) and words naming who a statement is about (adults, patients,
  pregnant, who ...), or any ``n't`` form;
* a number: skipped thresholds, doses, ages and durations narrow a statement;
* a clause or sentence boundary: a semicolon, a colon (not between digits), a
  sentence end, a question or exclamation mark, or an item boundary. Two fragments
  on either side of one come from different statements, and joining them lends the
  first the scope or polarity of the second.

A false "risky" only costs a compliant quote; a false "safe" could certify a reversed
recommendation, so the lists err on the side of flagging. Skipping an adjective, a
list of examples or a parenthetical aside within one clause remains ``elided``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from veriscribe.checks.quote_forms import (
    JUNCTION_MARK,
    NormalizedText,
    SectionForms,
    has_units,
    normalize_quote,
    quote_pattern,
    readable,
    section_forms,
    visible,
)
from veriscribe.results import COMPLIANT_TIERS, Tier
from veriscribe.text.sentences import has_sentence_end, sentence_span

__all__ = [
    "COMPLIANT_TIERS",
    "EXCEPTIONS",
    "HEDGES",
    "MIN_FRAGMENT_CHARS",
    "NEGATIONS",
    "OBLIGATIONS",
    "POLARITY",
    "RISKY_STEMS",
    "RISKY_WORDS",
    "SCOPE",
    "NormalizedText",
    "QuoteCheck",
    "Tier",
    "check_quote",
    "is_compliant",
    "is_risky_word",
    "normalize",
    "normalize_with_offsets",
]
MIN_FRAGMENT_CHARS = 10
"""Elided fragments shorter than this (after normalization) are not matched."""

# --- what an ellipsis may not skip ----------------------------------------------------

NEGATIONS: frozenset[str] = frozenset(
    {
        "not", "no", "never", "none", "neither", "nor", "nothing", "nobody",
        "nowhere", "without", "cannot", "non", "lack", "lacks", "lacking", "lacked",
        "absent", "absence", "fail", "fails", "failed",
    }
)  # fmt: skip
"""Words that negate what follows them."""

EXCEPTIONS: frozenset[str] = frozenset(
    {
        "except", "excepting", "exception", "exceptions", "excluding", "exclude",
        "excludes", "excluded", "unless", "only", "solely", "if", "when", "whenever",
        "until", "provided", "providing", "although", "though", "however", "but",
        "whereas", "while", "whilst", "despite", "instead", "rather", "otherwise",
        "alternatively", "contrast", "opposed", "versus", "vs",
    }
)  # fmt: skip
"""Words that introduce an exception, a condition or a contrast."""

HEDGES: frozenset[str] = frozenset(
    {
        "may", "might", "could", "possibly", "possible", "perhaps", "probably",
        "likely", "unlikely", "uncertain", "uncertainty", "unclear", "unknown",
        "insufficient", "inconclusive", "inconsistent", "limited", "weak", "weakly",
        "low", "rarely", "rare", "seldom", "occasionally", "sometimes",
        "conditional", "conditionally", "potential", "potentially",
    }
)  # fmt: skip
"""Words that weaken the certainty of a statement."""

OBLIGATIONS: frozenset[str] = frozenset(
    {
        "should", "must", "shall", "ought", "need", "needs", "require", "requires",
        "required", "reasonable", "optional", "option", "options",
    }
)  # fmt: skip
"""Words that set the strength of a recommendation."""

POLARITY: frozenset[str] = frozenset(
    {
        "against", "unsafe", "dangerous", "inferior", "ineffective", "inadequate",
        "less", "fewer", "least", "worse", "worst",
    }
)  # fmt: skip
"""Words that turn a recommendation against something or reverse its direction."""

SCOPE: frozenset[str] = frozenset(
    {
        "adult", "adults", "aged", "age", "ages", "old", "older", "elderly", "young",
        "younger", "youth", "women", "woman", "men", "man", "boys", "girls",
        "people", "persons", "person", "individual", "individuals", "those", "who",
        "whom", "whose", "some",
        "most", "few", "certain", "selected", "subset", "subgroup", "subgroups",
    }
)  # fmt: skip
"""Words naming who a statement is about, or narrowing how many."""

RISKY_WORDS: frozenset[str] = (
    NEGATIONS | EXCEPTIONS | HEDGES | OBLIGATIONS | POLARITY | SCOPE
)
"""Words whose omission by an ellipsis can reverse, weaken or narrow a quote."""

RISKY_STEMS: tuple[str, ...] = (
    # strength of a recommendation
    "recommend", "suggest", "consider", "advis", "cautio", "precautio", "warn",
    # turning a recommendation against something, or changing its direction
    "avoid", "contraindicat", "discontinu", "withh", "stop", "ceas", "refrain",
    "prohibit", "forbid", "inappropriat", "harm", "deprescrib", "taper", "delay",
    "defer", "postpon", "reduc", "decreas", "increas", "lower", "minimi", "wors",
    # who a statement is about
    "child", "pediatric", "paediatric", "infant", "neonat", "newborn", "adolescen",
    "teen", "pregnan", "lactat", "breastfe", "postpartum", "veteran", "patient",
    "population", "elder", "male", "female",
)  # fmt: skip
"""Word beginnings that make a skipped word risky (``recommend`` covers
``recommended`` and ``recommendation``)."""

# Occurrences of one fragment considered when searching for an in-order placement;
# a fragment of ten or more characters repeating more often than this is pathological.
_MAX_OCCURRENCES = 500

_ELLIPSIS = re.compile(
    r"\[\s*(?:…|\.(?:\s?\.){2,})\s*\]"
    r"|\(\s*(?:…|\.(?:\s?\.){2,})\s*\)"
    r"|…"
    r"|\.(?:\s?\.){2,}"
)
_WORD = re.compile(r"[a-z]+(?:'[a-z]+)?")
_DIGITS = re.compile(r"\d+(?:[.,]\d+)*")
_WRAPPING_QUOTES = (('"', '"'), ("“", "”"), ("'", "'"), ("‘", "’"), ("«", "»"))


@dataclass(frozen=True, slots=True)
class QuoteCheck:
    """The outcome of checking one quote against the section it cites.

    Attributes:
        tier: The best tier the quote reached.
        span: ``(start, end)`` character offsets of the match in the original section
            text; for normalized and elided matches, from the start of the first
            matched fragment to the end of the last. ``None`` when nothing matched.
        note: A short human-readable explanation of the outcome.
        context_span: ``(start, end)`` of the whole sentence or sentences of the
            section around ``span`` (see :func:`sentence_span`), so that words just
            before or after the quote can be shown with it. ``None`` when nothing
            matched.
    """

    tier: Tier
    span: tuple[int, int] | None
    note: str
    context_span: tuple[int, int] | None = None

    @property
    def compliant(self) -> bool:
        """Whether the quote counts as verbatim compliant."""
        return is_compliant(self.tier)


def is_compliant(tier: Tier | str) -> bool:
    """Tell whether a tier counts as verbatim compliant (exact, normalized, elided)."""
    return tier in COMPLIANT_TIERS


def normalize(text: str) -> str:
    """Normalize a text the way sections are read for comparison."""
    return normalize_with_offsets(text).text


def normalize_with_offsets(text: str) -> NormalizedText:
    """Normalize a text and keep the map from normalized to original offsets.

    This is the readable form of what the matcher compares: superscript reference
    numbers dropped (superscripts that follow a digit are kept as an exponent,
    ``10⁶`` becoming ``10^6``); Unicode NFKC; lower case; curly quotes and dash
    variants folded to ASCII; soft hyphens and zero-width characters removed;
    reference markers such as ``[12]``, ``[3-5]`` or ``(12)`` (but not a bracketed
    quantity such as the ``(10)`` of ``5 (10) mg``), inline HTML tags and ``**``
    emphasis removed; list bullets and item labels at line starts, bullet glyphs
    between spaces, blank lines, table pipes and rules and HTML block tags turned
    into a space; whitespace runs collapsed to one space; and the space left before
    closing punctuation (or after opening brackets) closed up. The matcher keeps
    more than this shows: which markers were removed where, and where items meet.
    """
    return readable(section_forms(text).full)


def check_quote(quote: str, section_text: str | None) -> QuoteCheck:
    """Check a quote against the text of the section it cites."""
    if section_text is None:
        return QuoteCheck("unresolved", None, "the cited section does not exist")
    body = _unwrap(quote)
    if not body:
        return QuoteCheck("fail", None, "the quote is empty")
    query = normalize_quote(body)
    if not any(ch.isalnum() for ch in query.text):
        return QuoteCheck("fail", None, "the quote has no letters or digits")

    at = section_text.find(body)
    if at >= 0:
        return _found(section_text, "exact", (at, at + len(body)), "exact substring")

    forms = section_forms(section_text)
    units = has_units(query.text)
    section = forms.full if units else forms.bare
    # Most quotes match without any item boundary: a plain search finds them
    # without compiling a pattern.
    at = -1 if units else section.text.find(query.text)
    if at >= 0:
        span = _original_span(section_text, section, at, at + len(query.text))
        return _found(section_text, "normalized", span, "substring after normalization")
    match = quote_pattern(query.text, units=units).search(section.text)
    if match:
        span = _original_span(section_text, section, match.start(), match.end())
        return _found(section_text, "normalized", span, "substring after normalization")

    if _ELLIPSIS.search(body):
        return _check_elided(body, section_text, forms)
    return QuoteCheck("fail", None, "the quote does not occur in the section")


# --- results --------------------------------------------------------------------------


def _found(
    section_text: str, tier: Tier, span: tuple[int, int], note: str
) -> QuoteCheck:
    return QuoteCheck(tier, span, note, sentence_span(section_text, span))


def _original_span(
    section_text: str, section: NormalizedText, start: int, end: int
) -> tuple[int, int]:
    """Map a normalized match to original offsets, without edge whitespace."""
    first, last = section.original_span(start, end)
    while first < last and section_text[first].isspace():
        first += 1
    while last > first and section_text[last - 1].isspace():
        last -= 1
    return first, last


def _unwrap(quote: str) -> str:
    """Strip surrounding whitespace and one pair of wrapping quotation marks."""
    body = quote.strip()
    for left, right in _WRAPPING_QUOTES:
        if len(body) >= 2 and body[0] == left and body[-1] == right:
            return body[1:-1].strip()
    return body


# --- elided quotes --------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Fragment:
    query: str
    # Fragments too short to match, quoted between this fragment and the previous
    # matched one (or the start of the quote for the first).
    short_before: tuple[str, ...]


def _split_fragments(quote: str) -> tuple[list[_Fragment], tuple[str, ...]]:
    """Split a quote at its ellipses; return matchable fragments and trailing shorts."""
    fragments: list[_Fragment] = []
    shorts: list[str] = []
    for piece in _ELLIPSIS.split(quote):
        query = normalize_quote(piece).text
        if not any(ch.isalnum() for ch in query):
            continue
        if len(visible(query)) < MIN_FRAGMENT_CHARS:
            shorts.append(query)
            continue
        fragments.append(_Fragment(query, tuple(shorts)))
        shorts = []
    return fragments, tuple(shorts)


def _occurrences(pattern: re.Pattern[str], text: str) -> dict[int, int]:
    """Map the start of each match (overlapping ones too) to its end."""
    found: dict[int, int] = {}
    match = pattern.search(text)
    while match and len(found) < _MAX_OCCURRENCES:
        found[match.start()] = match.end()
        match = pattern.search(text, match.start() + 1)
    return found


def _contains_in_order(
    text: str, start: int, end: int, patterns: tuple[re.Pattern[str], ...]
) -> bool:
    at = start
    for pattern in patterns:
        match = pattern.search(text, at, end)
        if match is None:
            return False
        at = match.end()
    return True


def is_risky_word(word: str) -> bool:
    """Tell whether an ellipsis may not skip this (lower-case) word."""
    return word in RISKY_WORDS or word.endswith("n't") or word.startswith(RISKY_STEMS)


def _gap_risk(
    section_text: str, section: NormalizedText, start: int, end: int
) -> str | None:
    """Say what makes the skipped normalized range ``[start, end)`` unsafe, if anything."""
    gap = section.text[start:end]
    if JUNCTION_MARK in gap:
        return "a list item, table cell or paragraph boundary"
    if ";" in gap:
        return "a semicolon (a clause boundary)"
    if "?" in gap or "!" in gap:
        return "a sentence boundary"
    for match in re.finditer(":", gap):
        k = match.start()
        if not (0 < k < len(gap) - 1 and gap[k - 1].isdigit() and gap[k + 1].isdigit()):
            return "a colon (a clause boundary)"
    # Sentence ends are read in the original text, where case tells a new sentence
    # from an abbreviation; one character either side catches a period that ends
    # the fragment before and a capital that starts the one after.
    first = section.ends[start - 1] if start > 0 else 0
    last = section.starts[end] if end < len(section.text) else len(section_text)
    window_start = max(0, first - 1)
    window_end = min(len(section_text), last + 1)
    if has_sentence_end(section_text, window_start, window_end):
        return "a sentence boundary"
    for word in _WORD.findall(gap):
        if is_risky_word(word):
            return repr(word)
    number = _DIGITS.search(gap)
    if number:
        return f"the number {number.group(0)!r}"
    return None


def _check_elided(quote: str, section_text: str, forms: SectionForms) -> QuoteCheck:
    """Check a quote with ellipses: its fragments in order, and the text they skip."""
    fragments, trailing_queries = _split_fragments(quote)
    if len(fragments) < 2:
        return QuoteCheck(
            "fail",
            None,
            f"an elided quote needs at least two fragments of {MIN_FRAGMENT_CHARS}+ "
            f"characters; it has {len(fragments)}",
        )
    units = any(
        has_units(query)
        for fragment in fragments
        for query in (fragment.query, *fragment.short_before)
    ) or any(has_units(query) for query in trailing_queries)
    section = forms.full if units else forms.bare
    text = section.text

    def patterns(queries: tuple[str, ...]) -> tuple[re.Pattern[str], ...]:
        return tuple(quote_pattern(query, units=units) for query in queries)

    shorts = [patterns(fragment.short_before) for fragment in fragments]
    trailing = patterns(trailing_queries)
    occurrences = [
        _occurrences(quote_pattern(fragment.query, units=units), text)
        for fragment in fragments
    ]
    for number, found in enumerate(occurrences, start=1):
        if not found:
            return QuoteCheck(
                "fail", None, f"fragment {number} does not occur in the section"
            )
    placed = _placements(section_text, section, occurrences, shorts)
    if placed is None:
        return QuoteCheck(
            "fail",
            None,
            "the fragments do not occur in the section in order without overlap",
        )
    safe_paths, reasons = placed.safe_paths, placed.reasons

    last_ends = occurrences[-1]
    if trailing:
        safe_last = {
            at: prev
            for at, prev in safe_paths[-1].items()
            if _contains_in_order(text, last_ends[at], len(text), trailing)
        }
        if safe_paths[-1] and not safe_last:
            reasons.append(
                "a short fragment after the last fragment is not in the section"
            )
        safe_paths[-1] = safe_last

    if safe_paths[-1]:
        span = _path_span(safe_paths, section_text, section, last_ends)
        return _found(
            section_text, "elided", span, f"{len(fragments)} fragments occur in order"
        )
    span = _path_span(placed.any_paths, section_text, section, last_ends)
    reason = reasons[0] if reasons else "the elision is unsafe"
    return _found(section_text, "elided_risky", span, reason)


@dataclass(slots=True)
class _Placements:
    """Where each fragment can sit after the one before it.

    Each path maps the start of an occurrence of its fragment to the start of its
    predecessor (or -1 for the first fragment).
    """

    any_paths: list[dict[int, int]]
    """Placements in order, whatever the text skipped."""
    safe_paths: list[dict[int, int]]
    """Placements in order whose skipped text is safe."""
    reasons: list[str]
    """Why placements were found unsafe, first found first."""


def _placements(
    section_text: str,
    section: NormalizedText,
    occurrences: list[dict[int, int]],
    shorts: list[tuple[re.Pattern[str], ...]],
) -> _Placements | None:
    """Place each fragment's occurrences after the previous fragment's, in order.

    Returns:
        The placements, or None when the fragments cannot occur in order without
        overlap.
    """
    text = section.text
    any_paths: list[dict[int, int]] = [dict.fromkeys(occurrences[0], -1)]
    safe_first = [
        at for at in occurrences[0] if _contains_in_order(text, 0, at, shorts[0])
    ]
    safe_paths: list[dict[int, int]] = [dict.fromkeys(safe_first, -1)]
    reasons: list[str] = []
    if shorts[0] and not safe_first:
        reasons.append("a short fragment before fragment 1 is not in the section")

    for index in range(1, len(occurrences)):
        prev_ends = occurrences[index - 1]
        reach_any: dict[int, int] = {}
        reach_safe: dict[int, int] = {}
        for at in occurrences[index]:
            for prev in any_paths[index - 1]:
                if prev_ends[prev] <= at:
                    reach_any.setdefault(at, prev)
                    break
            # Tightest placement first: a wider gap contains every word of a
            # narrower one, so once a gap is unsafe all wider ones are too.
            candidates = [p for p in safe_paths[index - 1] if prev_ends[p] <= at]
            for prev in reversed(candidates):
                gap_start = prev_ends[prev]
                risk = _gap_risk(section_text, section, gap_start, at)
                if risk:
                    reasons.append(
                        f"the text skipped between fragments {index} and {index + 1} "
                        f"contains {risk}"
                    )
                    break
                if _contains_in_order(text, gap_start, at, shorts[index]):
                    reach_safe[at] = prev
                    break
                reasons.append(
                    f"a short fragment between fragments {index} and {index + 1} "
                    "is not in the skipped text"
                )
        if not reach_any:
            return None
        any_paths.append(reach_any)
        safe_paths.append(reach_safe)
    return _Placements(any_paths, safe_paths, reasons)


def _path_span(
    paths: list[dict[int, int]],
    section_text: str,
    section: NormalizedText,
    last_ends: dict[int, int],
) -> tuple[int, int]:
    """Return the original span of the first complete placement in ``paths``."""
    last = min(paths[-1])
    at = last
    for index in range(len(paths) - 1, 0, -1):
        at = paths[index][at]
    return _original_span(section_text, section, at, last_ends[last])
