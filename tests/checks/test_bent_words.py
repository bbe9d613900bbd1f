"""Words bent out of the article's shape, put back as the article writes them."""

from __future__ import annotations

import pytest

from veriscribe.checks.wording import (
    CaseIndex,
    WordContexts,
    bent_words,
    read_words,
    repair_words,
)

# Phrases of the bench articles where the 0.5B model, kept from copying, bent a word.
ARTICLE = (
    "The diseases reduce child development, worker productivity, and school "
    "attendance. Patients on systemic glucocorticoids were excluded. Zika virus is "
    "related to yellow fever, dengue, West Nile and Japanese encephalitis viruses, "
    "and is kept in a cycle of primates and mosquitoes, with epizootics in monkeys. "
    "Telomere dysfunction and mitochondrial compromise were studied. "
    "Our data suggests that mortality increased in 2010. The finding suggests it. "
    "It was made by commercial software."
)
INDEX = WordContexts.of(ARTICLE)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "It lowers worker productive, and attendance.",
            "It lowers worker productivity, and attendance.",
        ),
        (
            "Those on systematic glucocorticoids were excluded.",
            "Those on systemic glucocorticoids were excluded.",
        ),
        (
            "It is akin to West Nile and Tokyo encephalitis viruses.",
            "It is akin to West Nile and Japanese encephalitis viruses.",
        ),
        (
            "Primates and mosques, with outbreaks.",
            "Primates and mosquitoes, with outbreaks.",
        ),
        ("Mitochondri compromise was seen.", "Mitochondrial compromise was seen."),
    ],
)
def test_a_bent_word_becomes_the_article_word_in_that_place(
    text: str, expected: str
) -> None:
    mended, changes = repair_words(text, INDEX)
    assert mended == expected
    assert len(changes) == 1 and changes == bent_words(text, INDEX)


@pytest.mark.parametrize(
    "text",
    [
        # Another inflection of the article's word is grammar, not a bent word, and
        # an adverb may be right where its adjective is in the article.
        "Our results suggest that mortality increased.",
        "The findings suggest that mortality increased.",
        "It was made by commercially available software.",
        # A word the article uses is the article's word.
        "Mortality increased in 2010.",
        # A new word with no article word near it in form, or none in that place.
        "Mortality decreased in 2010.",
        "Worker output fell, and attendance too.",
        "The productive workers stayed.",
        # A name where the article has no name between the same words.
        "Telomere dysfunction and Tokyo compromise were studied.",
    ],
)
def test_what_is_not_bent_is_left_alone(text: str) -> None:
    assert repair_words(text, INDEX) == (text, [])
    assert bent_words(text, INDEX) == []


def test_neighbours_are_counted_within_paragraphs() -> None:
    index = WordContexts.of("The red cat and the red dog.\n\nRed cat, red fox.")
    assert index.after("red") == {"cat": 2, "dog": 1, "fox": 1}
    assert index.before("red") == {"the": 2, "cat": 1}  # not "dog" across the break
    assert index.between("the", "dog") == {"red": 1}
    assert index.between("dog", "cat") == {}  # the paragraph ends between them
    assert index.spelling["red"] == "red" and index.spelling["cat"] == "cat"
    assert index.after("unknown") == {}


def test_one_reading_indexes_as_the_two_indexes_do() -> None:
    text = ARTICLE + "\n\nWest Nile Virus. In Japanese Encephalitis, the Virus is Mild."
    case, contexts = read_words(text)
    alone = CaseIndex.of(text)
    assert (case.lower, case.capitalised) == (alone.lower, alone.capitalised)
    assert "virus" in case.capitalised and "japanese" in case.capitalised
    other = WordContexts.of(text)
    assert contexts.words == other.words and contexts.spelling == other.spelling
    assert all(contexts.after(w) == other.after(w) for w in other.words)


ECHOING = WordContexts.of(
    "A positive (or negative) test result raises the probability of disease. "
    "Positive or negative, the ratio holds. Doses were low versus high.\n\n"
    "More or more came. More and fewer joined. Patient to nurse ratios vary."
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # The model, kept from copying "(or negative) test", echoed the word before.
        (
            "A positive (or positive) test result changes the odds.",
            "A positive (or negative) test result changes the odds.",
        ),
        ("Positive or positive, it holds.", "Positive or negative, it holds."),
        ("Doses were low versus low.", "Doses were low versus high."),
    ],
)
def test_a_word_echoing_the_one_before_becomes_the_article_word_there(
    text: str, expected: str
) -> None:
    mended, changes = repair_words(text, ECHOING)
    assert mended == expected
    assert len(changes) == 1


@pytest.mark.parametrize(
    "text",
    [
        "It is either more or more.",  # the article repeats it too ("more or more")
        "It drew more and more.",  # "and" repeats on purpose
        "It varies from patient to patient.",  # so does "to"
        "The dose was high or high.",  # the article has nothing else after "high or"
        "A positive, positive test.",  # no joining word between the two
    ],
)
def test_an_echo_the_article_makes_or_cannot_replace_is_left_alone(text: str) -> None:
    assert repair_words(text, ECHOING) == (text, [])
