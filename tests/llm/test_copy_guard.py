"""The copy guard: which next pieces of text extend a word-for-word run too far."""

from __future__ import annotations

import numpy as np
import pytest

from veriscribe.llm.embedded.copy_guard import (
    CopyGuard,
    Verdict,
    common_words,
    copy_guard_processor,
)

SOURCE = (
    "The input DNA ranged from 100 to 600 ng as determined by A260. "
    "No sample was positive for XMRV and MLV in the nested PCR."
)


def test_a_run_is_stopped_at_a_function_word_never_at_a_content_word() -> None:
    guard = CopyGuard(SOURCE, 3)
    assert not guard.forbids("In short, the input", " DNA")
    # Kept off the source's word, a small model writes another, often the opposite.
    assert not guard.forbids("In short, the input DNA", " ranged")
    assert guard.forbids("positive for XMRV and MLV in", " the")


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
    assert guard.forbids("POSITIVE   for  xmrv AND   mlv in", " the")


def test_gluing_a_word_to_a_finished_source_word_counts_as_a_new_word() -> None:
    guard = CopyGuard(SOURCE, 3)
    assert guard.forbids("sample was positive for", "xmrv")  # "forxmrv"


def test_the_rest_of_a_begun_word_is_allowed() -> None:
    guard = CopyGuard(SOURCE, 3)
    assert not guard.forbids("positive for XMRV and MLV in the nes", "ted")


def test_names_and_content_words_are_never_stopped_but_count_toward_the_run() -> None:
    guard = CopyGuard(SOURCE, 3)
    assert not guard.forbids("sample was positive for", " XMRV")
    assert not guard.forbids("No sample was positive for", " XMRV")
    assert not guard.forbids("positive for XMRV and MLV in the", " nested")
    assert guard.forbids("sample was positive for XMRV and MLV in", " the")


def test_the_text_may_not_loop_on_its_own_words() -> None:
    guard = CopyGuard("unrelated source text", 3)
    text = "Cells grew fast in dark rooms. Then cells grew fast in dark"
    assert guard.forbids(text, " rooms")
    assert not guard.forbids(
        "Cells grew fast in dark rooms. Then cells grew", " slowly"
    )


def test_the_limit_is_at_least_one_word() -> None:
    with pytest.raises(ValueError):
        CopyGuard(SOURCE, 0)


def test_the_processor_masks_only_copying_tokens_among_the_best() -> None:
    vocab = {0: " the", 1: " widely", 2: " 600", 3: " between"}
    guard = CopyGuard(SOURCE, 3)
    process = copy_guard_processor(guard, vocab.__getitem__, candidates=3)
    prompt = [7, 7, 7]
    # What was generated so far: "for XMRV and MLV in" as one token per word.
    words = {10: "for", 11: " XMRV", 12: " and", 13: " MLV", 14: " in"}
    vocab.update(words)
    scores = np.array([5.0, 4.0, 3.0, -9.0] + [-20.0] * 12, dtype=np.float32)
    process(prompt, scores.copy())  # the first call marks where the prompt ends
    out = process([*prompt, 10, 11, 12, 13, 14], scores.copy())
    assert out[0] == -np.inf  # " the" continues the copy
    assert out[1] == 4.0 and out[2] == 3.0
    assert out[3] == -9.0  # not among the 3 best: left alone


# ------------------------------------------------- no garbling where a copy is stopped

MALARIA = (
    "Children with cerebral malaria were treated with artesunate in Malawi. "
    "We treated rats with metformin at 5 mg per kg. We treated rats with methods "
    "of the study. Plasmodium falciparum causes the disease, and α waves were seen."
)
COMMON = common_words(
    f" {w}"
    for w in """the and of with were in we at per children cerebral malaria treated rats
    methods method study causes cause disease waves seen how much identical highly
    relevant results show patients several one switch state drug drugs was Africa
    art article""".split()
)


def malaria_guard(limit: int = 3) -> CopyGuard:
    return CopyGuard(MALARIA, limit, common=COMMON)


def verdict(guard: CopyGuard, text: str, piece: str) -> Verdict:
    return guard.judge(guard.step(text), piece)


def test_a_blocked_word_has_no_stand_in_in_another_script() -> None:
    guard = malaria_guard()
    assert verdict(guard, "cerebral malaria", " и") == Verdict.FOREIGN
    assert verdict(guard, "cerebral malaria", "。") == Verdict.FOREIGN
    # The source's own Greek letters and common symbols are fine.
    assert verdict(guard, "the", " α") == Verdict.ALLOW
    assert verdict(guard, "5", " ±") == Verdict.ALLOW
    assert verdict(CopyGuard("plain text", 3), "the", " α") == Verdict.FOREIGN


def test_the_first_bytes_of_a_foreign_character_are_refused() -> None:
    guard = malaria_guard()
    step = guard.step("cerebral malaria")
    assert guard.bytes_of(step, b"", "и".encode()[:1]) == Verdict.FOREIGN
    assert guard.bytes_of(step, b"", "α".encode()[:1]) == Verdict.ALLOW
    after = guard.step("cerebral malaria ")
    assert guard.bytes_of(after, "α".encode()[:1], "α".encode()[1:]) == Verdict.ALLOW
    # Glued onto "malaria", the alpha would coin a word.
    assert guard.bytes_of(step, "α".encode()[:1], "α".encode()[1:]) == Verdict.GARBLE
    assert guard.bytes_of(step, b"", b"\xff") == Verdict.FOREIGN


def test_a_blocked_word_is_not_let_through_recased() -> None:
    guard = malaria_guard()
    # The source's word itself is never refused; only its garbled stand-ins are.
    assert verdict(guard, "Children with cerebral", " malaria") == Verdict.ALLOW
    assert verdict(guard, "Children with cerebral", " Malaria") == Verdict.GARBLE
    assert verdict(guard, "Children with cerebral", " MALARIA") == Verdict.GARBLE
    assert verdict(guard, "These results may be", " Highly") == Verdict.GARBLE
    assert verdict(guard, "a disease-", "Causing") == Verdict.GARBLE


def test_capitals_stay_where_sentences_start_and_on_names() -> None:
    guard = malaria_guard()
    assert verdict(guard, "It was seen. ", "Highly") == Verdict.ALLOW
    assert verdict(guard, '{"abstract": "', "Highly") == Verdict.ALLOW
    assert verdict(guard, "seen in", " Malawi") == Verdict.ALLOW
    assert verdict(guard, "caused by", " Plas") == Verdict.ALLOW
    # A name of the word list that the source does not spell; a word of neither is
    # coined.
    assert verdict(guard, "seen in", " Africa") == Verdict.ALLOW
    assert verdict(guard, "seen in", " Zambia") == Verdict.GARBLE


def test_words_are_not_fused_split_or_coined() -> None:
    guard = malaria_guard()
    assert verdict(guard, "with cerebral", "al") == Verdict.GARBLE  # cerebralal...
    assert verdict(guard, "How", "much") == Verdict.GARBLE
    assert verdict(guard, "were identical", "ity") == Verdict.GARBLE
    assert verdict(guard, "were identical", "ly") == Verdict.ALLOW
    assert verdict(guard, "it", " caus") == Verdict.ALLOW
    assert verdict(guard, "it caus", "ing") == Verdict.ALLOW  # cause -> causing
    assert verdict(guard, "the stud", "ies") == Verdict.ALLOW  # study -> studies
    assert verdict(guard, "were", " qzx") == Verdict.GARBLE
    # A word left half-built ("identica") may not be ended.
    assert verdict(guard, "were identica", " and") == Verdict.GARBLE
    assert verdict(guard, "were identica", ",") == Verdict.GARBLE
    assert verdict(guard, "were identical", ",") == Verdict.ALLOW


def test_function_words_units_and_terms_pass_whatever_the_run() -> None:
    guard = malaria_guard()
    assert verdict(guard, "rats with metformin at", " 5") == Verdict.ALLOW
    assert verdict(guard, "metformin at 5", " mg") == Verdict.ALLOW
    assert verdict(guard, "at 5 mg per", " kg") == Verdict.ALLOW
    assert verdict(guard, "were treated with", " artesunate") == Verdict.ALLOW
    assert verdict(guard, "rats with methods", " of") == Verdict.ALLOW
    assert verdict(guard, "rats with methods of", " the") == Verdict.ALLOW
    # They still count toward the run, but a content word is never stopped.
    assert verdict(guard, "with methods of the", " study") == Verdict.ALLOW
    # And they extend a run by two words past the limit at most.
    assert verdict(guard, "treated rats with methods of", " the") == Verdict.COPY
    assert verdict(guard, "We treated rats with methods", " of") == Verdict.COPY


def test_a_source_word_is_never_refused_whichever_token_starts_it() -> None:
    guard = malaria_guard()
    assert verdict(guard, "We treated rats with", " met") == Verdict.ALLOW
    assert verdict(guard, "We treated rats with met", "formin") == Verdict.ALLOW
    assert verdict(guard, "We treated rats with met", "hods") == Verdict.ALLOW


def test_the_processor_prefers_copying_to_garbling_and_never_a_foreign_script() -> None:
    guard = malaria_guard()
    vocab = {
        0: " the",
        1: " The",
        2: " и",
        3: " qzy",
        4: " disease",
        5: " qzx",
        10: "We",
        11: " treated",
        12: " rats",
        13: " with",
        14: " methods",
        15: " of",
    }
    process = copy_guard_processor(guard, vocab.__getitem__, candidates=5)
    prompt = [7, 7]
    generated = [*prompt, 10, 11, 12, 13, 14, 15]
    scores = np.array([9.0, 8.0, 7.0, 6.0, 5.0, -20.0], dtype=np.float32)
    process(prompt, scores.copy())
    out = process(generated, scores.copy())
    assert out[:5].tolist() == [-np.inf, -np.inf, -np.inf, -np.inf, 5.0]
    # Without " disease" among the best, the copy is let through, nothing else.
    scores[4], scores[5] = -30.0, 4.0
    out = process(generated, scores.copy())
    assert out.tolist() == [9.0, -np.inf, -np.inf, -np.inf, -30.0, -np.inf]


def test_the_processor_reads_a_character_split_over_two_tokens() -> None:
    guard = malaria_guard()
    alpha = "α".encode()
    vocab = {0: alpha[:1], 1: alpha[1:], 2: b"A", 3: b" waves", 10: b" the"}
    process = copy_guard_processor(guard, vocab.__getitem__, candidates=4)
    prompt = [7]
    scores = np.array([4.0, 3.0, 2.0, 1.0] + [-20.0] * 10, dtype=np.float32)
    process(prompt, scores.copy())
    out = process([*prompt, 10, 0], scores.copy())  # " the" and half an alpha
    assert out[1] == 3.0  # completes the alpha
    assert out[2] == -np.inf  # would make no character at all
    assert out[3] == -np.inf  # " waves" cannot follow half a character


def test_the_processor_reads_only_the_candidates_tokens() -> None:
    guard = malaria_guard()
    asked: list[int] = []

    def token_text(token: int) -> str:
        asked.append(token)
        return f" w{token}"

    process = copy_guard_processor(guard, token_text, candidates=3)
    scores = np.arange(1000, dtype=np.float32)
    process([1], scores.copy())
    process([1, 999], scores.copy())
    assert set(asked) <= {997, 998, 999}


def test_words_are_not_fused_with_an_underscore() -> None:
    guard = malaria_guard()
    assert verdict(guard, "in all trade", "_") == Verdict.GARBLE
    assert verdict(guard, "in all trade", "_channels") == Verdict.GARBLE
    assert verdict(CopyGuard("see trade_channels", 3), "in all trade", "_") == (
        Verdict.ALLOW
    )


def test_a_bracket_is_not_glued_onto_a_word_unless_the_source_does_so() -> None:
    guard = malaria_guard()
    assert verdict(guard, "children with cerebral", "(") == Verdict.GARBLE
    assert verdict(guard, "children with cerebral", " (") == Verdict.ALLOW
    assert verdict(CopyGuard("see Cu(II) ions", 3), "the Cu", "(") == Verdict.ALLOW


def test_words_are_not_glued_by_a_stop() -> None:
    guard = malaria_guard()
    assert verdict(guard, "children with cerebral.", "malaria") == Verdict.GARBLE
    assert verdict(guard, "children with cerebral,", "malaria") == Verdict.GARBLE
    assert verdict(guard, "children with cerebral. ", "Malaria") == Verdict.ALLOW
    abbreviations = CopyGuard("seen, e.g. in the U.S. trials", 3)
    assert verdict(abbreviations, "as seen, e.", "g") == Verdict.ALLOW
    assert verdict(abbreviations, "in the U.", "S") == Verdict.ALLOW
    assert verdict(abbreviations, "in the U.", "K") == Verdict.GARBLE


def test_unknown_words_are_those_the_guard_would_refuse() -> None:
    guard = malaria_guard()
    text = (
        "Cerebral malaria and chemicalproperties were seen in trade_channels, "
        "identicality aside; IL6 and Malawi's 5mg were not."
    )
    assert guard.unknown_words(text) == [
        "chemicalproperties",
        "trade_channels",
        "identicality",
        "aside",
    ]


def test_an_escaped_line_break_in_the_json_ends_a_sentence_and_no_word() -> None:
    guard = malaria_guard()
    assert verdict(guard, "It was seen.\\n", "The") == Verdict.ALLOW  # not "nThe"
    assert verdict(guard, "It was seen.\\", "nThe") == Verdict.ALLOW
    assert verdict(guard, "It was seen.\\n\\n", "Highly") == Verdict.ALLOW
    assert verdict(guard, "It was", "\\n") == Verdict.ALLOW
    # A character written as an escape would hide its script.
    assert verdict(guard, "It was seen.\\", "u0438") == Verdict.GARBLE
    assert verdict(guard, "It was", " \\u0438") == Verdict.GARBLE
