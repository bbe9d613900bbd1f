"""What a reader looks for: findings, conclusions and procedure told apart by words."""

from __future__ import annotations

from veriscribe.text.findings import (
    conclusion_score,
    finding_score,
    is_procedure,
    is_setting,
)


def test_procedure_is_eligibility_approval_searches_and_protocol() -> None:
    assert is_procedure("The study was approved by the national ethics committee.")
    assert is_procedure("Households were eligible if they had lived there a year.")
    assert is_procedure("We searched PubMed and Embase from 2000 to 2019.")
    assert is_procedure("DNA was amplified with primers from a commercial kit.")
    assert not is_procedure("Monthly dosing reduced prevalence from 42% to 18%.")


def test_a_lab_finding_is_no_setting() -> None:
    # A lab study's finding names its primers; it never names its approval.
    assert not is_setting("None of the 186 samples yielded a product with the primers.")
    assert is_setting("The protocol was approved by the review board.")


def test_a_comparison_with_a_p_value_outranks_a_description_of_samples() -> None:
    comparison = finding_score(
        "Weight loss was greater in the intervention group than in the comparison "
        "group (11.2 lb vs 7.2 lb; P < .001)."
    )
    samples = finding_score("Input DNA ranged from 10 to 600 ng as determined by A260.")
    assert comparison > samples
    assert samples == 0


def test_a_finding_quoted_from_other_work_counts_less() -> None:
    own = finding_score("The odds ratio for anaemia was 1.71 (95% CI 1.34-2.18).")
    other = finding_score(
        "Smith et al. reported an odds ratio for anaemia of 1.71 (95% CI 1.34-2.18)."
    )
    assert own > other


def test_the_authors_conclusion_outranks_earlier_work_and_limitations() -> None:
    conclusion = conclusion_score(
        "In conclusion, our findings suggest that monthly dosing should be offered."
    )
    earlier = conclusion_score("Previous studies reported similar patterns [3].")
    limitation = conclusion_score(
        "A limitation is that our results may have been susceptible to bias."
    )
    assert conclusion > limitation
    assert conclusion > earlier
    assert earlier == 0


def test_a_parenthesised_citation_does_not_hide_the_authors_conclusion() -> None:
    assert conclusion_score(
        "This re-analysis of recent reports (Clarke et al., 2017) suggests that the "
        "observations could have resulted entirely from collider bias."
    ) == conclusion_score(
        "This re-analysis of recent reports suggests that the observations could "
        "have resulted entirely from collider bias."
    )


def test_a_sentence_with_no_cue_is_no_conclusion() -> None:
    assert conclusion_score("Bed nets were distributed in 2015.") == 0


def test_a_finding_that_points_back_counts_less() -> None:
    alone = finding_score(
        "The crude risk ratio of adoption with a campaign was 3.6 (95% CI, "
        "1.8-7.3; P < .001)."
    )
    pointing = finding_score(
        "The corresponding crude risk ratio for this finding was 3.6 (95% CI, "
        "1.8-7.3; P < .001)."
    )
    assert alone > pointing


def test_an_example_of_a_finding_counts_less_than_the_finding() -> None:
    finding = "8 of 20 jurisdictions (40.0%) with a campaign had adopted an ordinance."
    assert finding_score(f"For example, {finding}") < finding_score(finding)


def test_a_result_given_also_counts_less_than_the_main_one() -> None:
    # pone.0058242: the stage misclassification is the result; severe renal failure
    # "was also improved" beside it. "..., and was also associated" goes on with the
    # main one and is not marked down.
    main = (
        "The six-variable GABP network improved the CKD stage misclassification rate "
        "(32.4% vs. a range from 47.3% to 53.3%, P<0.001 for all)."
    )
    beside = (
        "The misclassification rate for the diagnosis of severe renal failure "
        "(GFR <15 ml/min/1.73 m2) was also improved (11.3% vs. a range from 16.7% to "
        "17.1%, P<0.01 for all) with the six-variable GABP network."
    )
    assert finding_score(main) > finding_score(beside)
    going_on = (
        "Rs8065345 was significantly associated with a 0.25 SD (95%CI 0.10, 0.41) "
        "increase in BMD and was also associated with increased cortical area."
    )
    assert finding_score(going_on) == finding_score(going_on.replace(" also", ""))
