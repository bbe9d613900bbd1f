"""The copy guard: which next pieces of text extend a word-for-word run too far."""

from __future__ import annotations

import numpy as np
import pytest

from veriscribe.llm.copy_guard import CopyGuard, copy_guard_processor

SOURCE = (
    "The input DNA ranged from 100 to 600 ng as determined by A260. "
    "No sample was positive for XMRV and MLV in the nested PCR."
)


def test_a_run_may_reach_the_limit_but_not_pass_it() -> None:
    guard = CopyGuard(SOURCE, 3)
    assert not guard.forbids("In short, the input", " DNA")
    assert guard.forbids("In short, the input DNA", " ranged")


def test_a_word_is_stopped_at_its_first_token() -> None:
    guard = CopyGuard(SOURCE, 3)
    assert guard.forbids("the input DNA ranged", " fr")


def test_other_words_pass() -> None:
    guard = CopyGuard(SOURCE, 3)
    assert not guard.forbids("the input DNA ranged", " widely")
    assert not guard.forbids("Samples were", " negative")


def test_numbers_and_punctuation_are_never_forbidden() -> None:
    guard = CopyGuard(SOURCE, 2)
    assert not guard.forbids("ranged from 100 to", " 600")
    assert not guard.forbids("ranged from 100 to 600", ",")


def test_case_and_spacing_do_not_hide_a_copy() -> None:
    guard = CopyGuard(SOURCE, 3)
    assert guard.forbids("POSITIVE   for  xmrv and", " m")


def test_gluing_a_word_to_a_finished_source_word_counts_as_a_new_word() -> None:
    guard = CopyGuard(SOURCE, 3)
    assert guard.forbids("sample was positive for", "xmrv")  # "forxmrv"


def test_the_rest_of_a_begun_word_is_allowed() -> None:
    guard = CopyGuard(SOURCE, 3)
    assert not guard.forbids("positive for XMRV and MLV in the nes", "ted")


def test_capitalised_words_are_allowed_but_count_toward_the_run() -> None:
    guard = CopyGuard(SOURCE, 3)
    assert not guard.forbids("No sample was positive for", " XMRV")
    assert guard.forbids("No sample was positive for XMRV", " and")


def test_the_text_may_not_loop_on_its_own_words() -> None:
    guard = CopyGuard("unrelated source text", 3)
    text = "Cells grew fast in the dark. Then cells grew fast in"
    assert guard.forbids(text, " the")
    assert not guard.forbids("Cells grew fast in the dark. Then cells grew", " slowly")


def test_the_limit_is_at_least_one_word() -> None:
    with pytest.raises(ValueError):
        CopyGuard(SOURCE, 0)


def test_the_processor_masks_only_copying_tokens_among_the_best() -> None:
    vocab = {0: " from", 1: " widely", 2: " 600", 3: " between"}
    guard = CopyGuard(SOURCE, 3)
    process = copy_guard_processor(guard, vocab.__getitem__, candidates=3)
    prompt = [7, 7, 7]
    # What was generated so far: "the input DNA ranged" as one token per word.
    words = {10: "the", 11: " input", 12: " DNA", 13: " ranged"}
    vocab.update(words)
    scores = np.array([5.0, 4.0, 3.0, -9.0] + [-20.0] * 10, dtype=np.float32)
    process(prompt, scores.copy())  # the first call marks where the prompt ends
    out = process([*prompt, 10, 11, 12, 13], scores.copy())
    assert out[0] == -np.inf  # " from" continues the copy
    assert out[1] == 4.0 and out[2] == 3.0
    assert out[3] == -9.0  # not among the 3 best: left alone
