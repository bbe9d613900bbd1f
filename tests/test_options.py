import pytest
from pydantic import ValidationError

from veriscribe.options import MIN_WORDS, AbstractOptions, QAOptions


def test_options_are_frozen_and_refuse_unknown_names() -> None:
    options = QAOptions()
    with pytest.raises(ValidationError):
        options.k = 5  # type: ignore[misc]
    with pytest.raises(ValidationError):
        QAOptions(top_k=5)  # type: ignore[call-arg]
    with pytest.raises(ValidationError):
        AbstractOptions(length=100)  # type: ignore[call-arg]


@pytest.mark.parametrize(
    "changes",
    [{"k": 0}, {"k": 51}, {"window": -1}, {"window": 21}, {"candidates": -1}]
    + [{"samples": 0}, {"max_sentences": 0}, {"max_sentences": 11}],
)
def test_answer_options_out_of_bounds_are_refused(changes: dict[str, int]) -> None:
    with pytest.raises(ValidationError):
        QAOptions(**changes)  # type: ignore[arg-type]


def test_answer_options_at_their_bounds_are_taken() -> None:
    options = QAOptions(k=1, window=0, candidates=0, samples=1, max_sentences=10)
    assert (options.k, options.max_sentences) == (1, 10)
    widest = QAOptions(k=50, window=20)
    assert (widest.k, widest.window) == (50, 20)


@pytest.mark.parametrize(
    "changes",
    [{"entities": -1}, {"copy_limit": -1}, {"words": -1}, {"words": MIN_WORDS - 1}],
)
def test_abstract_options_out_of_bounds_are_refused(changes: dict[str, int]) -> None:
    with pytest.raises(ValidationError):
        AbstractOptions(**changes)  # type: ignore[arg-type]


@pytest.mark.parametrize("words", [0, MIN_WORDS, 2000])
def test_abstract_length_is_off_or_a_sentence_or_more(words: int) -> None:
    assert AbstractOptions(words=words).words == words


def test_fields_are_described_by_their_docstrings() -> None:
    assert "Attribution window" in (QAOptions.model_fields["window"].description or "")
