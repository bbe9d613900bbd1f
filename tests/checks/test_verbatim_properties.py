"""Property tests of the verbatim matcher on generated and real sections."""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from veriscribe.checks.verbatim import RISKY_WORDS, check_quote, is_compliant

GUIDELINES = Path(__file__).resolve().parents[2].parent / "shared/data/guidelines"

WORDS = (
    "statin therapy adults diabetes blood pressure dose daily tablet clinicians "
    "offer assess measure lipid profile kidney function renal screening annual "
    "visit follow test result evidence benefit harm outcome level target treat "
    "inhaled agent oral weight exercise program"
).split()

_word = st.sampled_from(WORDS).flatmap(
    lambda w: st.sampled_from([w, w.capitalize(), w.upper()])
)
_number = st.one_of(
    st.integers(0, 999).map(str),
    st.tuples(st.integers(1, 99), st.integers(1, 9)).map(lambda t: f"{t[0]}.{t[1]}"),
    st.tuples(st.integers(1, 99), st.integers(100, 999)).map(
        lambda t: f"{t[0]}-{t[1]}"
    ),
    st.integers(1, 100).map(lambda n: f"{n}%"),
)
_marker = st.sampled_from(["[12]", " [3-5]", " (7)", "¹²", " [4,6]"])
_token = st.one_of(
    _word,
    _word,
    _word,
    _number,
    st.tuples(_word, _marker).map("".join),
    st.tuples(_word, st.sampled_from([",", ";"])).map("".join),
    st.tuples(_number, st.sampled_from([" mg", " mmHg", " years"])).map("".join),
)


@st.composite
def _sentence(draw: st.DrawFn) -> str:
    words = draw(st.lists(_token, min_size=3, max_size=12))
    return " ".join(words).capitalize() + draw(st.sampled_from([".", ".", "?"]))


@st.composite
def _list(draw: st.DrawFn) -> str:
    lead = " ".join(draw(st.lists(_word, min_size=2, max_size=6))) + ":"
    style = draw(st.sampled_from(["- ", "* ", "• ", "•\n\n", "number", "\uf0a1 "]))
    items = draw(
        st.lists(st.lists(_token, min_size=1, max_size=8), min_size=2, max_size=5)
    )
    lines = [lead]
    for k, item in enumerate(items, start=1):
        bullet = f"{k}. " if style == "number" else style
        end = draw(st.sampled_from(["", ".", ";"]))
        lines.append(bullet + " ".join(item) + end)
    return "\n".join(lines)


@st.composite
def _section(draw: st.DrawFn) -> str:
    blocks = draw(st.lists(st.one_of(_sentence(), _list()), min_size=1, max_size=6))
    out = blocks[0]
    for block in blocks[1:]:
        out += draw(st.sampled_from([" ", "\n", "\n\n"])) + block
    return out


def _tokens(text: str) -> list[tuple[int, int]]:
    return [m.span() for m in re.finditer(r"\S+", text)]


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z]+|\d+", unicodedata.normalize("NFKC", text).lower())


def _in_order(needles: list[str], haystack: list[str]) -> bool:
    at = 0
    for needle in needles:
        try:
            at = haystack.index(needle, at) + 1
        except ValueError:
            return False
    return True


def _retyped(text: str, upper: bool) -> str:
    """Write a substring the way a model copies it: spaces for line breaks."""
    out = re.sub(r"\s+", " ", text)
    if upper:
        out = re.sub(r"[a-z]+", lambda m: m.group(0).upper(), out)
    return out


@st.composite
def _cut(draw: st.DrawFn, text: str) -> tuple[int, int]:
    tokens = _tokens(text)
    first = draw(st.integers(0, len(tokens) - 1))
    last = draw(st.integers(first, min(len(tokens) - 1, first + 30)))
    return tokens[first][0], tokens[last][1]


PROPERTY = settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)


# An item that is only a number ("•\n\n0.") reads as an item number as well as text;
# the matcher may refuse a quote across it, which is the safe reading.
NUMBER_ONLY_ITEM = re.compile(
    r"(?:^|\n)\s*(?:[-*•\uf0a1]|\d+\.)?\s*\d[\d.,%-]*[.;]?\s*(?:\n|$)"
)

# Two numbers on either side of an item boundary, with no "." or ";" after the first:
# joined by a quote they read as one expression ("10 - 80"), which is refused.
NUMBERS_ACROSS_ITEMS = re.compile(r"\d[,:]?[ \t]*\n\s*(?:\S{1,3}\s+)?\d")


@PROPERTY
@given(data=st.data(), section=_section(), upper=st.booleans())
def test_any_retyped_substring_is_compliant(
    data: st.DataObject, section: str, upper: bool
) -> None:
    start, end = data.draw(_cut(section))
    quote = _retyped(section[start:end], upper)
    assume(len(re.findall(r"[A-Za-z]{2,}", quote)) >= 2)
    assume(not NUMBERS_ACROSS_ITEMS.search(section[start:end]))
    assume(not NUMBER_ONLY_ITEM.search(section[start:end]))
    result = check_quote(quote, section)
    assert is_compliant(result.tier), (quote, result)
    assert result.span is not None
    assert _in_order(_words(quote), _words(section[slice(*result.span)]))


def _digit_changed(quote: str, at: int, digit: str) -> str:
    return quote[:at] + digit + quote[at + 1 :]


@PROPERTY
@given(data=st.data(), section=_section(), upper=st.booleans())
def test_a_changed_digit_is_never_compliant(
    data: st.DataObject, section: str, upper: bool
) -> None:
    start, end = data.draw(_cut(section))
    quote = _retyped(section[start:end], upper)
    assume(len(re.findall(r"[A-Za-z]{2,}", quote)) >= 2)
    digits = [m.start() for m in re.finditer(r"[0-9]", quote)]
    assume(digits)
    at = data.draw(st.sampled_from(digits))
    new = data.draw(st.sampled_from([d for d in "0123456789" if d != quote[at]]))
    corrupted = _digit_changed(quote, at, new)
    result = check_quote(corrupted, section)
    number = next(
        m.group(0) for m in re.finditer(r"\d+", corrupted) if m.start() <= at < m.end()
    )
    if not any(number in run for run in re.findall(r"\d+", section)):
        # The changed number is nowhere in the section: nothing can vouch for it.
        assert not is_compliant(result.tier), (corrupted, result)
    elif is_compliant(result.tier):
        # Where the number does occur, the cited span must say it.
        assert result.span is not None
        assert _in_order(_words(corrupted), _words(section[slice(*result.span)]))


# Forms that the word beginnings of RISKY_STEMS cover.
STEMMED = [
    "avoid",
    "avoided",
    "contraindicated",
    "discontinue",
    "withheld",
    "stopped",
    "recommended",
    "suggests",
    "considered",
    "cautiously",
    "reduced",
    "increases",
    "patients",
    "children",
    "pregnant",
    "veterans",
]


@PROPERTY
@given(
    before=st.lists(_word, min_size=3, max_size=8),
    after=st.lists(_word, min_size=3, max_size=8),
    hidden=st.sampled_from(sorted(RISKY_WORDS) + STEMMED),
)
def test_an_ellipsis_never_hides_a_risky_word(
    before: list[str], after: list[str], hidden: str
) -> None:
    section = " ".join([*before, hidden, *after]) + "."
    quote = " ".join(before) + " ... " + " ".join(after)
    assume(len(" ".join(before)) >= 10 and len(" ".join(after)) >= 10)
    assert not is_compliant(check_quote(quote, section).tier)


def _real_sections() -> list[str]:
    from veriscribe.documents.guidelines import read_guideline_path

    if not GUIDELINES.is_dir():
        return []
    texts = [
        section.text
        for doc in read_guideline_path(GUIDELINES)
        for section in doc.sections
        if len(section.text) > 200 and "<" not in section.text
    ]
    return texts[::7]


REAL_SECTIONS = _real_sections()


@pytest.mark.skipif(not REAL_SECTIONS, reason="shared/data/guidelines not present")
@PROPERTY
@given(data=st.data(), upper=st.booleans())
def test_any_retyped_substring_of_a_real_section_is_compliant(
    data: st.DataObject, upper: bool
) -> None:
    section = data.draw(st.sampled_from(REAL_SECTIONS))
    start, end = data.draw(_cut(section))
    quote = _retyped(section[start:end], upper)
    assume(len(re.findall(r"[A-Za-z]{2,}", quote)) >= 2)
    assume(not NUMBERS_ACROSS_ITEMS.search(section[start:end]))
    assume(not NUMBER_ONLY_ITEM.search(section[start:end]))
    result = check_quote(quote, section)
    assert is_compliant(result.tier), (quote, result)
    assert result.span is not None
    assert _in_order(_words(quote), _words(section[slice(*result.span)]))
