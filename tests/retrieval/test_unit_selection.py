"""Choosing the sentences that answer a question by their score."""

from __future__ import annotations

import dataclasses

import pytest

from veriscribe.checks.support import self_certifies
from veriscribe.retrieval.bm25 import BM25Index
from veriscribe.retrieval.lay_terms import guideline_words
from veriscribe.retrieval.units import (
    SEMANTIC,
    AnswerModel,
    SectionText,
    Selection,
    SemanticModel,
    answer_odds,
    answer_text,
    choose_units,
    guidance_weight,
    judge_candidates,
    question_terms,
    same_statement,
    score_units,
    semantic_score,
    whole_units,
)

DOSING = SectionText(
    "g:dosing",
    "Dosing",
    "Start opioids at the lowest effective dose. Reassess the benefits and harms "
    "within four weeks of starting. Naloxone should be offered to every patient "
    "on long-term therapy.",
)
TAPER = SectionText(
    "g:taper",
    "Tapering",
    "Consider tapering when the harms outweigh the benefits. Tapering should be "
    "done as follows:\n"
    "- reduce the dose by 10% per month\n"
    "- see the patient at every step\n"
    "- offer support for withdrawal symptoms\n\n"
    "Faster tapers are rarely needed.",
)


def choose(question: str, *sections: SectionText, **kwargs: int) -> list[str]:
    selection = choose_units(score_units(question, sections), **kwargs)  # type: ignore[arg-type]
    return [unit.text for unit in selection.units]


def test_the_best_sentence_comes_first() -> None:
    chosen = choose("What dose should opioids be started at?", DOSING, TAPER)
    assert chosen[0] == "Start opioids at the lowest effective dose."


def test_a_lead_in_brings_its_list_items() -> None:
    chosen = choose("How should tapering be done?", DOSING, TAPER, max_sentences=1)
    assert chosen[0] == "Tapering should be done as follows:"
    assert [c for c in chosen[1:]] == [
        "- reduce the dose by 10% per month",
        "- see the patient at every step",
        "- offer support for withdrawal symptoms",
    ]


def test_a_continuing_sentence_may_follow() -> None:
    section = SectionText(
        "g:x",
        "Screening",
        "Screen adults for depression with the PHQ-9 questionnaire. This should be "
        "repeated every year. Children are screened differently.",
    )
    chosen = choose("How are adults screened for depression?", section)
    assert chosen == [
        "Screen adults for depression with the PHQ-9 questionnaire.",
        "This should be repeated every year.",
    ]


def test_word_forms_the_stemmer_splits_still_match() -> None:
    section = SectionText("g:d", "Diagnosis", "A diagnosis requires two readings.")
    assert choose("How is it diagnosed?", section) == [
        "A diagnosis requires two readings."
    ]


def test_nothing_is_chosen_when_no_sentence_covers_the_question() -> None:
    selection = choose_units(
        score_units("Which vaccine is given to infants at birth?", [DOSING, TAPER])
    )
    assert selection.not_found and selection.best_coverage < 0.4
    assert selection.candidates == 9


def test_a_weak_second_sentence_is_left_out() -> None:
    chosen = choose("When should naloxone be offered?", DOSING, TAPER)
    assert chosen == [
        "Naloxone should be offered to every patient on long-term therapy."
    ]


def test_words_asking_for_a_form_are_not_terms_of_the_question() -> None:
    # "kind" names the form of the answer: no sentence holds it, and counted as a
    # term it would cap every sentence's coverage and drop a plain answer.
    section = SectionText("g:s", "Safety", "No dose of opioids is absolutely safe.")
    selection = choose_units(
        score_units("What kind of dose of opioids is absolutely safe?", [section])
    )
    assert [unit.text for unit in selection.units] == [
        "No dose of opioids is absolutely safe."
    ]
    assert selection.best_coverage == 1.0


def test_a_sentence_with_only_the_corpus_common_words_is_not_an_answer() -> None:
    # Over the units read, "monitor" and "opioid" carry the question; over the
    # corpus, where every section names opioids and monitoring, "pregnancy" does.
    corpus = BM25Index().build(
        [f"s{i}" for i in range(6)],
        [f"Monitor patients on opioid therapy, note {i}." for i in range(5)]
        + ["Pregnancy needs its own plan."],
    )
    section = SectionText(
        "g:m",
        "Monitoring",
        "Monitor every patient on opioid therapy monthly. Review the whole plan "
        "at each visit.",
    )
    question = "How should opioid therapy be monitored in pregnancy?"
    alone = choose_units(score_units(question, [section]))
    weighed = choose_units(score_units(question, [section], corpus.idf))
    assert [unit.text for unit in alone.units] == [
        "Monitor every patient on opioid therapy monthly."
    ]
    assert weighed.not_found
    assert weighed.units == ()


def test_corpus_idf_weighs_a_term_no_text_holds_most() -> None:
    index = BM25Index().build(["a", "b", "c"], ["pain dose", "pain taper", "pain"])
    assert index.idf("pain") < index.idf("dose") < index.idf("pregnanc")


def test_an_answer_sentence_drops_the_reference_numbers_that_close_it() -> None:
    assert (
        answer_text("Five studies (two trials).[59,61,66]")
        == "Five studies (two trials)."
    )
    assert answer_text("The risk rises.[12] [13-15]") == "The risk rises."
    # Numbers in brackets inside the sentence, or with no sentence end before
    # them, are the guideline's text.
    assert answer_text("See table [2] for doses.") == "See table [2] for doses."
    assert answer_text("Doses [12-14]") == "Doses [12-14]"


def test_a_question_between_alternatives_is_answered_by_either() -> None:
    # The answer says "lowest" and never "highest": the pair counts once, held.
    selection = choose_units(
        score_units("Should opioids start at the highest or lowest dose?", [DOSING])
    )
    assert [unit.text for unit in selection.units][:1] == [
        "Start opioids at the lowest effective dose."
    ]
    assert selection.best_coverage == 1.0


def test_how_long_asks_for_a_duration_not_for_the_words_long_and_take() -> None:
    section = SectionText(
        "g:t",
        "Tapering",
        "The faster taper is completed over several weeks. The slower taper is "
        "completed over months or years.",
    )
    assert question_terms("How long does the faster taper take?") == {
        "faster",
        "taper",
    }
    assert choose("How long does the faster taper take?", section, max_sentences=1) == [
        "The faster taper is completed over several weeks."
    ]
    # Elsewhere "long" and "take" are words of the question.
    assert {"long", "take"} <= question_terms(
        "Should long-acting opioids take priority?"
    )


# Judged selection: a model's "yes" for the best units joins their lexical scores.

EVEN = AnswerModel(bias=-2.0, yes=1.0, coverage=2.0, corpus_coverage=0.0, cut=0.5)
"""Weights for the tests: the model's log-odds and the coverage in plain view."""


def judged_choice(
    question: str, p_yes: dict[str, float], *sections: SectionText, **kwargs: int
) -> tuple[list[str], float | None]:
    scored = score_units(question, sections)
    candidates = judge_candidates(scored, 8)
    judged = {(u.key, u.position): p_yes.get(u.text, 0.01) for u in candidates}
    selection = choose_units(
        scored,
        judged=judged,
        combine=EVEN,
        **kwargs,  # type: ignore[arg-type]
    )
    return [unit.text for unit in selection.units], selection.best_odds


def test_judge_candidates_are_the_best_by_score_that_are_admitted() -> None:
    scored = score_units("What dose should opioids be started at?", [DOSING, TAPER])
    best = sorted(scored, key=lambda u: -u.score)[0]
    assert judge_candidates(scored, 1)[0] == best
    others = judge_candidates(scored, 8, admit=lambda u: u != best)
    assert best not in others
    assert all(unit.score > 0 for unit in others)


def test_a_sentence_the_model_rejects_is_dropped_though_its_words_match() -> None:
    question = "What dose should opioids be started at and when are they reassessed?"
    plain, _ = judged_choice(
        question,
        {
            "Start opioids at the lowest effective dose.": 0.9,
            "Reassess the benefits and harms within four weeks of starting.": 0.9,
        },
        DOSING,
    )
    assert "Reassess the benefits and harms within four weeks of starting." in plain
    dropped, _ = judged_choice(
        question,
        {
            "Start opioids at the lowest effective dose.": 0.9,
            "Reassess the benefits and harms within four weeks of starting.": 0.01,
        },
        DOSING,
    )
    assert dropped == ["Start opioids at the lowest effective dose."]


def test_judged_units_come_best_first_by_their_combined_odds() -> None:
    question = "What dose should opioids be started at and when are they reassessed?"
    chosen, _ = judged_choice(
        question,
        {
            "Start opioids at the lowest effective dose.": 0.6,
            "Reassess the benefits and harms within four weeks of starting.": 0.99,
        },
        DOSING,
    )
    assert chosen[0] == "Reassess the benefits and harms within four weeks of starting."


def test_no_judged_unit_above_the_cut_is_not_found() -> None:
    # The lexical rule alone answers this question ...
    assert choose("What dose should opioids be started at?", DOSING, TAPER)
    # ... but a model that says no to every candidate makes it "not found".
    chosen, odds = judged_choice("What dose should opioids be started at?", {}, DOSING)
    assert chosen == []
    assert odds is not None and odds < EVEN.cut


def test_a_model_yes_answers_below_the_lexical_coverage_cut() -> None:
    question = "Which dose and which laboratory monitoring schedule apply at the start?"
    assert choose(question, DOSING) == []  # too little of the question's words held
    chosen, odds = judged_choice(
        question, {"Start opioids at the lowest effective dose.": 0.99}, DOSING
    )
    assert chosen == ["Start opioids at the lowest effective dose."]
    assert odds is not None and odds >= EVEN.cut


def test_the_combined_odds_rise_with_the_model_and_the_coverage() -> None:
    unit = score_units("What dose should opioids be started at?", [DOSING])[0]
    low, high = answer_odds(unit, 0.1, EVEN), answer_odds(unit, 0.9, EVEN)
    assert 0 < low < high < 1
    wider = dataclasses.replace(unit, coverage=unit.coverage + 0.3)
    assert answer_odds(wider, 0.1, EVEN) > low


# --- semantic selection -----------------------------------------------------------------

MIXING = SectionText(
    "g:mixing",
    "Concurrent sedatives",
    "Avoid prescribing opioid and benzodiazepines concurrently when possible. "
    "Opioids should be stored in a locked cabinet at home. "
    "Should benzodiazepines be prescribed with opioids?",
)


def semantic(question: str, *sections: SectionText, **kwargs: object) -> Selection:
    from veriscribe.nodes.qa.answer import similarities
    from veriscribe.retrieval.minilm import minilm

    scored = score_units(question, sections)
    return choose_units(
        scored,
        similarity=similarities(minilm(), question, scored),
        **kwargs,  # type: ignore[arg-type]
    )


def test_a_paraphrased_question_is_answered_by_meaning_not_only_words() -> None:
    # "together" is nowhere in the section, so the words alone cover too little of it.
    question = "Can benzodiazepines be prescribed together with opioids?"
    assert choose_units(score_units(question, [MIXING])).not_found
    selection = semantic(question, MIXING)
    assert [u.text for u in selection.units] == [
        "Avoid prescribing opioid and benzodiazepines concurrently when possible."
    ]
    assert selection.best_semantic is not None
    assert selection.best_semantic >= SEMANTIC.cut


def test_a_question_in_the_text_is_never_the_answer() -> None:
    scored = score_units("Should benzodiazepines be prescribed with opioids?", [MIXING])
    # Give the section's own question the highest similarity: it still is not chosen.
    similarity = {(u.key, u.position): 0.6 for u in scored}
    similarity[("g:mixing", 2)] = 1.0
    chosen = choose_units(scored, similarity=similarity).units
    assert chosen and all(not u.text.endswith("?") for u in chosen)


def test_the_same_sentence_in_two_sections_is_said_once() -> None:
    copy = dataclasses.replace(MIXING, key="g:appendix")
    scored = score_units(
        "Can benzodiazepines be prescribed with opioids?", [MIXING, copy]
    )
    similarity = {(u.key, u.position): 0.8 for u in scored}
    texts = [u.text for u in choose_units(scored, similarity=similarity).units]
    assert len(texts) == len(set(texts))


def test_below_the_semantic_cut_is_not_found() -> None:
    scored = score_units("How should opioids be stored at home?", [MIXING])
    # Every word of the question is in the sentence: only a meaning far from it
    # (a cosine below the cut less the coverage and the sentence's kind) makes it no
    # answer.
    low = {
        (u.key, u.position): SEMANTIC.cut - semantic_score(u, 0.0) - 0.05
        for u in scored
    }
    selection = choose_units(scored, similarity=low)
    assert selection.not_found
    assert (
        selection.best_semantic is not None and selection.best_semantic < SEMANTIC.cut
    )
    high = {(u.key, u.position): 0.9 for u in scored}
    assert not choose_units(scored, similarity=high).not_found


GUIDANCE = SectionText(
    "h:exercise",
    "Exercise",
    "Linde et al. (2016) evaluated aerobic exercise in 120 adults with migraine. "
    "We suggest aerobic exercise for the management of headache. "
    "Aerobic exercise is offered in many clinics across the country.",
)


def test_guidance_outranks_a_study_of_the_same_topic() -> None:
    scored = score_units("Does exercise help headaches?", [GUIDANCE])
    by_text = {u.text.split()[0]: u for u in scored}
    model = SemanticModel(coverage=0.0, cut=0.5, spread=0.0, guidance=0.2, report=0.1)
    # The same similarity to the question for all three sentences: the kind decides.
    same = {(u.key, u.position): 0.7 for u in scored}
    chosen = choose_units(scored, similarity=same, semantic=model).units
    assert [u.text.split()[0] for u in chosen] == ["We"]
    assert semantic_score(by_text["We"], 0.7, model) == pytest.approx(1.0)
    assert semantic_score(by_text["Linde"], 0.7, model) == pytest.approx(0.6)
    assert semantic_score(by_text["Aerobic"], 0.7, model) == pytest.approx(0.7)


def test_an_imperative_or_should_is_guidance_without_a_recommendation() -> None:
    model = SemanticModel(coverage=0.0, cut=0.5, spread=0.0, guidance=0.2, report=0.1)
    assert (
        guidance_weight("2. Screen for overweight and obesity annually.", model) == 0.2
    )
    assert guidance_weight("Naloxone should be offered to such patients.", model) == 0.2
    assert guidance_weight("Routine testing is not necessary.", model) == 0.2
    assert guidance_weight("One trial found fewer falls with exercise.", model) == -0.1
    assert guidance_weight("Falls are common in older adults.", model) == 0.0
    research = "Future high quality trials are recommended to elucidate the effects."
    assert guidance_weight(research, model) == -0.1
    compared = "We suggest drug A compared with drug B (Smith et al., 2019)."
    assert guidance_weight(compared, model) == pytest.approx(0.3)
    assert guidance_weight("We suggest exercise.", SemanticModel(1.0, 1.0, 0.2)) == 0.0


def test_the_semantic_score_adds_similarity_and_mean_coverage() -> None:
    scored = score_units("How should opioids be stored at home?", [MIXING])
    unit = scored[1]
    model = SemanticModel(coverage=2.0, cut=1.0, spread=0.1)
    expected = 0.5 + 2.0 * (unit.coverage + unit.corpus_coverage) / 2
    assert semantic_score(unit, 0.5, model) == pytest.approx(expected)


# A recommendations table flattened from a PDF: a cell's lines are blocks of their own,
# and a column's label may fall between them.
TABLE = SectionText(
    "lbp:table",
    "Recommendations",
    "For patients with acute low back pain, there is insufficient\n\n"
    "evidence to recommend for or against opioids.\n\n"
    "For patients with chronic low back pain, there is insufficient\n\n"
    "Weak against\n\n"
    "evidence to recommend for or against the use of yoga.\n\n"
    "We suggest against opioids for chronic low back pain.",
)
BODY = SectionText(
    "lbp:opioids",
    "Opioids",
    "We suggest against the use of opioids for chronic low back pain. "
    "Opioids carry a risk of overdose.",
)


def test_a_cut_cell_is_completed_or_left_out() -> None:
    texts = [u.text for u in whole_units(TABLE.text)]
    assert (
        "For patients with acute low back pain, there is insufficient evidence to "
        "recommend for or against opioids." in texts
    )
    # The label between the lines is not read into the sentence: the cell is left out.
    assert not any(t.startswith("For patients with chronic") for t in texts)
    assert not any(t.startswith("evidence to") for t in texts)


def test_a_statement_made_twice_is_one_sentence_with_its_echo() -> None:
    selection = choose_units(
        score_units("Should opioids be used for chronic low back pain?", [TABLE, BODY])
    )
    texts = [u.text for u in selection.units]
    said = [t for t in texts if "against" in t and "chronic" in t]
    assert len(said) == 1
    first = next(u for u in selection.units if u.text == said[0])
    echoes = selection.echoes[(first.key, first.position)]
    assert [e.key for e in echoes] != [first.key] or echoes[0].text != first.text
    assert same_statement(said[0], echoes[0].text)


@pytest.mark.parametrize(
    "other",
    [
        "Opioids are not recommended for acute low back pain in adults.",
        "Opioids are recommended against for acute low back pain in adults.",
        "Opioids are suggested for acute low back pain in adults.",
        "Opioids at 100 mg are recommended for acute low back pain in adults.",
    ],
)
def test_a_statement_one_word_apart_is_no_echo(other: str) -> None:
    """A negation, a polarity, a strength or a number keeps two statements apart."""
    said = "Opioids are recommended for acute low back pain in adults."
    if "100 mg" in other:
        said = said.replace("Opioids", "Opioids at 10 mg")
    assert not same_statement(said, other)
    assert not same_statement(other, said)
    assert same_statement(said, said.replace("adults.", "adults"))


def test_a_numbered_copy_of_a_recommendation_is_the_same_statement() -> None:
    body = "We suggest onabotulinumtoxinA injection for the prevention of chronic migraine."
    assert same_statement(f"20. {body}", body)
    assert same_statement(body, f"• {body}")
    # The number of a dose is still a word of the statement.
    assert not same_statement(
        "Give 20 mg of the drug to adults with migraine at onset.",
        "Give 40 mg of the drug to adults with migraine at onset.",
    )


def test_a_sentence_cut_by_a_number_line_is_left_out() -> None:
    # A PDF's table: the recommendation's row number sits on a line inside it.
    section = (
        "In patients with COPD, we suggest starting or continuing cardioselective "
        "beta-blockers only in those who have a cardiovascular\n17.\nindication for "
        "beta-blockers (e.g., heart failure).\nWe recommend pulmonary rehabilitation."
    )
    texts = [answer_text(unit.text) for unit in whole_units(section)]
    assert not any("cardiovascular" in text for text in texts)
    assert "We recommend pulmonary rehabilitation." in texts
    # A sentence that ends in a number, the next one in capitals, is whole.
    ended = "The dose is taken once a day, for at most\n14.\nThen it is stopped."
    assert [answer_text(u.text) for u in whole_units(ended)][0].endswith("at most 14.")


def test_a_drug_or_its_class_answers_a_question_naming_the_drug() -> None:
    searched = guideline_words("My patient takes Xanax and Percocet together. Safe?")
    by_class = "We recommend against the concurrent use of benzodiazepines and opioids."
    by_drug = "We recommend against the concurrent use of alprazolam and oxycodone."
    both = (
        "We recommend against the concurrent use of alprazolam, benzodiazepines, "
        "oxycodone or opioids."
    )
    neither = "We recommend offering naloxone to patients at risk of overdose."
    section = SectionText(
        "g:r", "Recommendations", f"{by_class} {by_drug} {both} {neither}"
    )
    scored = {u.text: u.coverage for u in score_units(searched, [section])}
    # The drug or its class holds that part of the question: a sentence in the
    # class's words holds as much as one naming the drugs, and naming both holds
    # no more (each pair counts once) ...
    assert scored[by_class] == scored[by_drug] == scored[both] > 0
    # ... and one that names neither holds less.
    assert scored[neither] < scored[by_class]


def test_a_lead_in_naming_its_list_without_a_colon_is_said_with_the_list() -> None:
    section = (
        "  8. For patients with opioid use disorder, the Work Group recommends offering "
        "one of the following medications considering patient preferences \n"
        "    * Buprenorphine/naloxone \n"
        "    * Methadone in an opioid treatment program \n\n"
        "  9. In pregnant women, the Work Group suggests offering buprenorphine alone.\n"
        "  * Patients with any of the following: asthma, atopy \n"
        "  * Patients with eosinophils over 300 cells \n"
    )
    texts = [answer_text(unit.text) for unit in whole_units(section)]
    assert texts[0].endswith(
        "considering patient preferences * Buprenorphine/naloxone * Methadone in an "
        "opioid treatment program"
    )
    assert self_certifies(texts[0], section)
    # A list's items of one depth are each their own unit.
    assert "* Patients with eosinophils over 300 cells" in texts


def test_an_earlier_editions_recommendations_give_no_answer() -> None:
    # A VA/DoD appendix lists the 2014 edition's text, amended since.
    old = SectionText(
        "htn:appendix-d",
        "Appendix D: 2014 Recommendation Categorization Table",
        "For patients with diabetes, we recommend treating to a systolic blood "
        "pressure goal of <150 mmHg.",
    )
    current = SectionText(
        "htn:recommendations",
        "Recommendations",
        "For patients with diabetes, we suggest treating to a systolic blood "
        "pressure goal of <140 mmHg.",
    )
    question = "What systolic blood pressure goal for patients with diabetes?"
    assert {u.key for u in score_units(question, [old, current])} == {
        "htn:recommendations"
    }
