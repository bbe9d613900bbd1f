"""Tests for the verbatim quote matcher (paper appendix A.6)."""

from __future__ import annotations

import pytest

from veriscribe.checks.verbatim import (
    MIN_FRAGMENT_CHARS,
    QuoteCheck,
    check_quote,
    is_compliant,
    is_risky_word,
    normalize,
    normalize_with_offsets,
)

SECTION = (
    "Statin therapy is recommended for adults aged 40 to 75 years with diabetes "
    "mellitus [12]. In patients with severe chronic kidney disease, high-intensity "
    "statin therapy is not recommended because of an increased risk of myopathy.\n"
    "\n"
    "Recommended doses:\n"
    "- Atorvastatin 10–80 mg once daily.\n"
    "- Rosuvastatin 5 mg once daily in Asian patients.\n"
    "1. Measure a fasting lipid profile before therapy (3-5).\n"
    "\n"
    "| Drug | Intensity |\n"
    "|------|-----------|\n"
    "| Pravastatin | Moderate |\n"
    "\n"
    "Aspirin may be considered for primary prevention only in adults at high "
    "cardiovascular risk who are not at increased bleeding risk.\n"
    "LDL-C¹² should be lowered by “at least 50%” in very high-risk patients. "
    "Blood pressure should be measured with a validated device.\n"
    "Offer a long-acting bronchodilator (for example, tiotropium or salmeterol) as "
    "first-line maintenance therapy. Pulmonary rehabilitation improves exercise "
    "capacity, dyspnea and health-related quality of life."
)

OTHER_SECTION = (
    "Lifestyle counselling should address diet, physical activity and smoking "
    "cessation in all adults."
)


def spanned(result: QuoteCheck, section: str = SECTION) -> str:
    assert result.span is not None
    start, end = result.span
    return section[start:end]


# --- the tiers ------------------------------------------------------------------------


def test_exact_substring() -> None:
    quote = "high-intensity statin therapy is not recommended"
    result = check_quote(quote, SECTION)
    assert result.tier == "exact"
    assert spanned(result) == quote
    assert result.compliant


def test_exact_ignores_wrapping_quotation_marks_and_spaces() -> None:
    result = check_quote('  "Statin therapy is recommended for adults"  ', SECTION)
    assert result.tier == "exact"
    assert spanned(result) == "Statin therapy is recommended for adults"


def test_normalized_case_and_whitespace() -> None:
    quote = "STATIN therapy   is recommended\nfor adults"
    result = check_quote(quote, SECTION)
    assert result.tier == "normalized"
    assert spanned(result) == "Statin therapy is recommended for adults"


def test_normalized_reference_marker_and_closed_punctuation() -> None:
    result = check_quote("with diabetes mellitus.", SECTION)
    assert result.tier == "normalized"
    assert spanned(result) == "with diabetes mellitus [12]."


def test_normalized_dash_variants_fold_to_hyphen() -> None:
    for quote in (
        "Atorvastatin 10-80 mg",
        "Atorvastatin 10—80 mg",
        "atorvastatin 10‒80 mg",
    ):
        result = check_quote(quote, SECTION)
        assert result.tier == "normalized", quote
        assert spanned(result) == "Atorvastatin 10–80 mg"


def test_normalized_curly_quotes_fold_to_straight() -> None:
    result = check_quote('should be lowered by "at least 50%"', SECTION)
    assert result.tier == "normalized"
    assert spanned(result) == "should be lowered by “at least 50%”"


def test_normalized_superscript_reference_digits_dropped() -> None:
    result = check_quote("LDL-C should be lowered by", SECTION)
    assert result.tier == "normalized"
    assert spanned(result) == "LDL-C¹² should be lowered by"


def test_normalized_parenthesized_reference_range_dropped() -> None:
    result = check_quote("a fasting lipid profile before therapy.", SECTION)
    assert result.tier == "normalized"
    assert spanned(result) == "a fasting lipid profile before therapy (3-5)."


def test_normalized_list_bullets_dropped() -> None:
    quote = "Recommended doses: Atorvastatin 10-80 mg once daily. Rosuvastatin 5 mg"
    result = check_quote(quote, SECTION)
    assert result.tier == "normalized"
    assert spanned(result).startswith("Recommended doses:\n- Atorvastatin")
    assert spanned(result).endswith("Rosuvastatin 5 mg")


def test_normalized_numbered_bullet_dropped() -> None:
    result = check_quote("1. Measure a fasting lipid profile", SECTION)
    assert result.tier == "exact"
    result = check_quote("Asian patients. Measure a fasting lipid profile", SECTION)
    assert result.tier == "normalized"


def test_normalized_table_markup_dropped() -> None:
    result = check_quote("Pravastatin Moderate", SECTION)
    assert result.tier == "normalized"
    assert spanned(result) == "Pravastatin | Moderate"


def test_normalized_non_breaking_and_thin_spaces() -> None:
    result = check_quote("Rosuvastatin\u00a05\u2009mg once daily", SECTION)
    assert result.tier == "normalized"
    assert spanned(result) == "Rosuvastatin 5 mg once daily"


def test_normalized_full_width_digits_and_letters() -> None:
    result = check_quote("Rosuvastatin ５ mg", SECTION)
    assert result.tier == "normalized"
    result = check_quote("ＬＤＬ-Ｃ should be lowered", SECTION)
    assert result.tier == "normalized"


def test_normalized_composed_and_decomposed_accents() -> None:
    section = "The café protocol applies."
    result = check_quote("The cafe\u0301 protocol", section)
    assert result.tier == "normalized"
    assert spanned(result, section) == "The café protocol"


def test_elided_two_fragments_in_order() -> None:
    quote = "Offer a long-acting bronchodilator ... as first-line maintenance therapy"
    result = check_quote(quote, SECTION)
    assert result.tier == "elided"
    assert result.compliant
    assert spanned(result) == (
        "Offer a long-acting bronchodilator (for example, tiotropium or salmeterol) "
        "as first-line maintenance therapy"
    )


@pytest.mark.parametrize("ellipsis", ["...", "…", "[...]", "[…]", ". . .", "(...)"])
def test_elided_accepts_every_ellipsis_form(ellipsis: str) -> None:
    quote = f"Offer a long-acting bronchodilator {ellipsis} maintenance therapy"
    assert check_quote(quote, SECTION).tier == "elided"


def test_elided_three_fragments() -> None:
    quote = (
        "Pulmonary rehabilitation improves … exercise capacity … "
        "health-related quality of life"
    )
    result = check_quote(quote, SECTION)
    assert result.tier == "elided"
    assert spanned(result) == (
        "Pulmonary rehabilitation improves exercise capacity, dyspnea and "
        "health-related quality of life"
    )


def test_elided_across_list_lines_is_risky() -> None:
    # The skipped item could carry anything; joining items is not one statement.
    quote = "Atorvastatin 10–80 mg once daily … a fasting lipid profile"
    result = check_quote(quote, SECTION)
    assert result.tier == "elided_risky"
    assert "list item" in result.note
    assert "\n- Rosuvastatin" in spanned(result)


def test_elided_fragments_are_normalized_too() -> None:
    quote = "OFFER A LONG-ACTING bronchodilator … As First-Line Maintenance Therapy."
    assert check_quote(quote, SECTION).tier == "elided"


def test_elided_ignores_short_fragment_found_in_gap() -> None:
    quote = (
        "Offer a long-acting bronchodilator ... example ... "
        "first-line maintenance therapy"
    )
    assert check_quote(quote, SECTION).tier == "elided"


def test_elided_risky_when_ellipsis_skips_not() -> None:
    quote = (
        "high-intensity statin therapy is ... recommended because of an increased risk"
    )
    result = check_quote(quote, SECTION)
    assert result.tier == "elided_risky"
    assert "'not'" in result.note
    assert not result.compliant
    assert spanned(result).startswith("high-intensity statin therapy is not")


def test_unresolved_when_section_missing() -> None:
    result = check_quote("anything at all", None)
    assert result == QuoteCheck("unresolved", None, result.note)
    assert not result.compliant


def test_fail_when_absent() -> None:
    result = check_quote("Statins cure diabetes mellitus", SECTION)
    assert result.tier == "fail"
    assert result.span is None


def test_is_compliant_per_tier() -> None:
    assert [
        is_compliant(t)
        for t in ("exact", "normalized", "elided", "elided_risky", "fail", "unresolved")
    ] == [True, True, True, False, False, False]


def test_normalize_maps_back_to_original_offsets() -> None:
    text = "A  “Quote” [3]\n- item"
    norm = normalize_with_offsets(text)
    assert norm.text == 'a "quote" item'
    assert len(norm.starts) == len(norm.text) == len(norm.ends)
    at = norm.text.index("quote")
    start, end = norm.original_span(at, at + len("quote"))
    assert text[start:end] == "Quote"
    at = norm.text.index("item")
    start, end = norm.original_span(at, at + 4)
    assert text[start:end] == "item"


def test_normalize_keeps_exponents_apart_from_plain_digits() -> None:
    assert normalize("10⁶ cells") == "10^6 cells"
    assert normalize("10⁻³ mol") == "10^-3 mol"
    assert normalize("risk¹,² rises") == "risk rises"


def test_wrapped_number_at_line_start_is_not_a_bullet() -> None:
    section = "The systolic target is below\n130. Patients should be reassessed."
    assert check_quote("The systolic target is below Patients", section).tier == "fail"
    assert (
        check_quote("The systolic target is below 130. Patients", section).tier
        == "normalized"
    )


def test_min_fragment_constant_matches_paper() -> None:
    assert MIN_FRAGMENT_CHARS == 10


def test_long_section_is_handled() -> None:
    section = ("Filler sentence about nothing in particular. " * 5000) + SECTION
    result = check_quote(
        "Offer a long-acting bronchodilator ... first-line maintenance therapy",
        section,
    )
    assert result.tier == "elided"
    assert spanned(result, section).startswith("Offer a long-acting bronchodilator")


# --- adversarial cases: none of these may be accepted ---------------------------------

ADVERSARIAL: list[tuple[str, str, str | None]] = [
    # (name, quote, section; None means SECTION)
    ("ellipsis skips not", "statin therapy is ... recommended because of", None),
    (
        "ellipsis skips only",
        "Aspirin may be considered for primary prevention ... in adults at high "
        "cardiovascular risk",
        None,
    ),
    (
        "ellipsis skips may",
        "Aspirin for adults ... be considered for primary prevention",
        "Aspirin for adults may be considered for primary prevention.",
    ),
    (
        "ellipsis skips unless",
        "Start the drug at full dose ... in all adult patients",
        "Start the drug at full dose unless renal function is impaired in all adult "
        "patients.",
    ),
    (
        "ellipsis skips contraction",
        "Patients with gout ... receive thiazide diuretics",
        "Patients with gout shouldn't receive thiazide diuretics.",
    ),
    (
        "ellipsis skips without",
        "Beta-blockers are effective ... in reducing mortality",
        "Beta-blockers are effective without any benefit in reducing mortality.",
    ),
    (
        "ellipsis skips insufficient",
        "The evidence for screening ... to recommend it for adults",
        "The evidence for screening is insufficient to recommend it for adults.",
    ),
    (
        "fragments in the wrong order",
        "with diabetes mellitus ... Statin therapy is recommended",
        None,
    ),
    (
        "overlapping fragments",
        "Statin therapy is recommended ... is recommended for adults aged",
        None,
    ),
    (
        "fragment from another section",
        "Lifestyle counselling should address diet",
        None,
    ),
    ("whole quote from another section", OTHER_SECTION, None),
    (
        "one fragment from another section",
        "Statin therapy is recommended ... physical activity and smoking",
        None,
    ),
    ("dose 5 mg vs 50 mg", "Rosuvastatin 50 mg once daily", None),
    ("dose 10-80 vs 10-40", "Atorvastatin 10-40 mg once daily", None),
    ("age 40 vs 45", "adults aged 45 to 75 years", None),
    ("percent 50 vs 30", 'lowered by "at least 30%"', None),
    (
        "should vs should not",
        "should be measured with",
        "Blood pressure should not be measured with a cuff.",
    ),
    ("is recommended vs is not", "high-intensity statin therapy is recommended", None),
    ("one word swapped", "Statin therapy is required for adults", None),
    ("may vs should", "Aspirin should be considered for primary prevention", None),
    ("dropped negation inside quote", "who are at increased bleeding risk", None),
    ("cyrillic a look-alike", "Stаtin therapy is recommended", None),
    ("greek omicron look-alike", "Statin therapy is recοmmended", None),
    ("cyrillic e in a dose", "Rosuvastatin 5 mg once daily in Asian patiеnts", None),
    ("full-width digit changes value", "Rosuvastatin ５0 mg", None),
    ("superscript turned into a dose digit", "LDL-C12 should be lowered", None),
    (
        "exponent vs plain number",
        "concentration of 106 cells",
        "A concentration of 10⁶ cells.",
    ),
    ("reference marker hides no digit change", "adults aged 40 to 7 years", None),
    ("all fragments under ten characters", "Statin ... therapy ... adults", None),
    (
        "single fragment plus trailing ellipsis",
        "Statin therapy is recommended ...",
        None,
    ),
    (
        "single fragment plus leading ellipsis",
        "... Statin therapy is recommended",
        None,
    ),
    (
        "single long fragment and a short one",
        "Statin therapy is recommended ... for kids",
        None,
    ),
    (
        "short fragment absent from skipped text",
        "Statin therapy is recommended ... children ... with diabetes mellitus",
        None,
    ),
    ("empty quote", "", None),
    ("whitespace-only quote", "   \n\t ", None),
    ("only an ellipsis", "...", None),
    ("only punctuation", ".,;", None),
    (
        "quote longer than the section",
        SECTION + " And more text that is not there.",
        None,
    ),
    ("quote against empty section", "Statin therapy is recommended", ""),
    (
        "elided fragment slightly changed",
        "Statin therapy is recommended ... with diabetes mellitus type 2",
        None,
    ),
    ("numbers spliced across a hyphen", "Atorvastatin 1080 mg", None),
    ("unit changed", "Rosuvastatin 5 mcg once daily", None),
]


@pytest.mark.parametrize(
    ("name", "quote", "section"), ADVERSARIAL, ids=[case[0] for case in ADVERSARIAL]
)
def test_adversarial_quotes_are_never_accepted(
    name: str, quote: str, section: str | None
) -> None:
    result = check_quote(quote, SECTION if section is None else section)
    assert not is_compliant(result.tier), (name, result)


def test_there_are_at_least_thirty_adversarial_cases() -> None:
    assert len(ADVERSARIAL) >= 30


def test_risky_elision_is_detected_even_when_another_placement_exists() -> None:
    section = (
        "Drug A is effective in adults. Drug A is not effective in adults with "
        "renal failure."
    )
    quote = "Drug A is ... effective in adults with renal failure"
    result = check_quote(quote, section)
    assert result.tier == "fail"  # "drug a is" is under ten characters
    quote = "Drug A is not ... in adults with renal failure"
    assert check_quote(quote, section).tier == "elided"
    quote = "Drug A is effective ... with renal failure"
    # The only way to reach "with renal failure" skips "not".
    assert check_quote(quote, section).tier == "elided_risky"


def test_tightest_placement_is_preferred_for_risk() -> None:
    section = (
        "Treatment with drug B is advised. Never start drug B without monitoring. "
        "Treatment with drug B is advised for adults over 60."
    )
    quote = "Treatment with drug B is advised ... for adults over 60"
    result = check_quote(quote, section)
    assert result.tier == "elided"
    assert spanned(result, section) == (
        "Treatment with drug B is advised for adults over 60"
    )
    quote = "Treatment with drug B ... is advised for adults over 60"
    assert check_quote(quote, section).tier == "elided"


# --- elisions that skip polarity, obligation, scope or a clause boundary --------------

ASPIRIN = (
    "Avoid aspirin in children under 16 years; in adults with coronary disease, "
    "aspirin is recommended for secondary prevention."
)


def test_elision_joining_two_clauses_of_opposite_polarity_is_risky() -> None:
    quote = (
        "aspirin in children under 16 years ... aspirin is recommended for "
        "secondary prevention"
    )
    result = check_quote(quote, ASPIRIN)
    assert result.tier == "elided_risky"
    assert not result.compliant
    assert "semicolon" in result.note
    assert spanned(result, ASPIRIN).startswith("aspirin in children")
    # The word that reverses the first clause sits before the quote: the context
    # span shows it.
    assert result.context_span is not None
    assert ASPIRIN[slice(*result.context_span)] == ASPIRIN


@pytest.mark.parametrize(
    "skipped",
    [
        "avoid",
        "avoided",
        "is contraindicated and",
        "contraindication to",
        "discontinue",
        "discontinued",
        "withhold",
        "withheld",
        "stop",
        "stopped",
        "cease",
        "refrain from",
        "against",
        "should",
        "must",
        "shall",
        "recommended",
        "recommends",
        "suggest",
        "suggested",
        "consider",
        "with caution",
        "except",
        "unless",
        "only",
        "although",
        "however",
        "but",
        "if",
        "when",
        "reduce",
        "decrease",
        "increase",
        "lower",
        "less",
        "for adults",
        "in patients",
        "in pregnant women",
        "in children",
        "who",
        "some",
        "may",
        "not",
        "never",
        "rarely",
        "won't",
    ],
)
def test_elision_skipping_a_polarity_obligation_or_scope_word_is_risky(
    skipped: str,
) -> None:
    section = f"Clinicians give the study drug {skipped} during the first clinic visit."
    quote = "Clinicians give the study drug ... during the first clinic visit"
    result = check_quote(quote, section)
    assert result.tier == "elided_risky", (skipped, result)
    assert not result.compliant


def test_elision_skipping_a_harmless_word_stays_elided() -> None:
    section = "Clinicians give the study drug promptly during the first clinic visit."
    quote = "Clinicians give the study drug ... during the first clinic visit"
    assert check_quote(quote, section).tier == "elided"


@pytest.mark.parametrize(
    ("section", "what"),
    [
        (
            "Clinicians give the study drug. Patients rest during the first visit.",
            "sentence boundary",
        ),
        ("Clinicians give the study drug; rest during the first visit.", "semicolon"),
        ("Clinicians give the study drug as follows: during the first visit.", "colon"),
        ("Clinicians give the study drug\n- during the first visit.", "list item"),
        ("Clinicians give the study drug\n\nduring the first visit.", "paragraph"),
        ("Clinicians give the study drug | during the first visit.", "table cell"),
        ("Clinicians give the study drug 25 mg during the first visit.", "number"),
    ],
)
def test_elision_across_a_boundary_or_a_number_is_risky(
    section: str, what: str
) -> None:
    quote = "Clinicians give the study drug ... during the first visit"
    result = check_quote(quote, section)
    assert result.tier == "elided_risky", (what, result)
    assert what in result.note


def test_elision_skipping_an_age_range_is_risky() -> None:
    # Skipping "aged 40 to 75 years" widens who the recommendation is for.
    quote = "Statin therapy is recommended for adults ... with diabetes mellitus"
    result = check_quote(quote, SECTION)
    assert result.tier == "elided_risky"
    assert "'aged'" in result.note


def test_elision_skipping_a_parenthetical_example_with_an_abbreviation() -> None:
    section = "Offer a bronchodilator (e.g. Tiotropium or Salmeterol) as maintenance."
    quote = "Offer a bronchodilator ... as maintenance"
    assert check_quote(quote, section).tier == "elided"


def test_elision_skipping_an_adjective_list() -> None:
    section = "Provide structured, supervised and individualized exercise training."
    quote = "Provide structured ... exercise training"
    assert check_quote(quote, section).tier == "elided"


def test_risky_words_keep_the_negations_and_hedges() -> None:
    assert all(
        is_risky_word(word)
        for word in {
            "not",
            "no",
            "never",
            "without",
            "except",
            "unless",
            "only",
            "may",
            "might",
            "insufficient",
            "avoid",
            "against",
            "should",
            "must",
            "however",
            "if",
            "contraindicated",
            "recommended",
            "patients",
            "doesn't",
        }
    )
    assert not any(is_risky_word(word) for word in ("the", "individualized", "offer"))


# --- normalization removes nothing the section does not remove at the same place -------


@pytest.mark.parametrize(
    ("section", "quote"),
    [
        ("Give 5 mg daily.", "Give 5(0) mg daily"),
        ("Give 5 mg daily.", "Give 5[0] mg daily"),
        ("Give 5 mg daily.", "Give 5 [0] mg daily"),
        ("Give 5 mg daily.", "Give 5 (0) mg daily"),
        ("Give 5 mg daily.", "Give⁵ 5 mg daily"),
        ("The target is a dose of 5 (10) mg daily.", "a dose of 5 mg daily"),
        ("Grade 3(4) toxicity occurred.", "Grade 3 toxicity occurred"),
        ("Grade 3 [4] toxicity occurred.", "Grade 3 toxicity occurred"),
        ("Use 2 (5) tablets.", "Use 2 tablets"),
        ("Statins lower LDL in adults.", "Statins lower LDL [12] in adults"),
        ("Statins lower LDL in adults.", "Statins lower LDL¹ in adults"),
        ("Statins lower LDL in adults.", "Statins lower | LDL in adults"),
        ("Statins lower LDL in adults.", "Statins lower - LDL in adults"),
        ("Statins lower LDL in adults.", "Statins **lower** LDL in adults"),
        ("Statins lower LDL [12] in adults.", "Statins lower LDL [13] in adults"),
        ("Statins lower LDL [12] in adults.", "Statins lower [12] LDL in adults"),
    ],
)
def test_quote_pieces_the_section_lacks_are_not_removed(
    section: str, quote: str
) -> None:
    result = check_quote(quote, section)
    assert result.tier == "fail", result


@pytest.mark.parametrize(
    ("section", "quote", "tier"),
    [
        # The quote copies the section's marker, with other spacing or case.
        (
            "Statins lower LDL [12] in adults.",
            "statins lower LDL [12] in adults",
            "normalized",
        ),
        (
            "Statins lower LDL [12] in adults.",
            "Statins lower LDL[12] in adults",
            "normalized",
        ),
        ("Statins lower LDL [12]. Next.", "Statins lower LDL [12].", "exact"),
        ("Statins lower LDL [12]. Next.", "statins lower LDL[12].", "normalized"),
        ("LDL-C¹² should be lowered.", "LDL-C¹² SHOULD be lowered", "normalized"),
        ("Statins (3-5) lower LDL.", "STATINS (3-5) lower LDL", "normalized"),
        # The quote leaves the section's marker out.
        (
            "Statins lower LDL [12] in adults.",
            "Statins lower LDL in adults",
            "normalized",
        ),
        ("LDL-C¹² should be lowered.", "LDL-C should be lowered", "normalized"),
        ("Statins **lower** LDL.", "Statins lower LDL", "normalized"),
        ("Statins <b>lower</b> LDL.", "Statins lower LDL", "normalized"),
        # A bracketed quantity is text, and a quote copying it matches.
        (
            "The target is a dose of 5 (10) mg daily.",
            "a DOSE of 5 (10) mg",
            "normalized",
        ),
        # Invisible characters are dropped on both sides.
        ("Give 50 mg daily.", "Give 5\u00ad0 mg daily", "normalized"),
    ],
)
def test_markers_the_quote_copies_or_drops(section: str, quote: str, tier: str) -> None:
    assert check_quote(quote, section).tier == tier


def test_copied_reference_marker_must_sit_where_the_section_has_it() -> None:
    section = "Statins lower LDL [12] in adults and [13] in children."
    assert check_quote("lower LDL [12] in adults", section).tier == "exact"
    assert check_quote("lower LDL [13] in adults", section).tier == "fail"
    assert check_quote("LOWER LDL [12] in adults", section).tier == "normalized"


# --- the context of a quote ------------------------------------------------------------


def test_context_span_is_set_for_matches_only() -> None:
    result = check_quote("lower LDL", "Statins lower LDL. Next one.")
    assert result.context_span == (0, len("Statins lower LDL."))
    assert check_quote("absent words", "Statins lower LDL.").context_span is None
    risky = check_quote(
        "aspirin in children under 16 years ... aspirin is recommended", ASPIRIN
    )
    assert risky.context_span == (0, len(ASPIRIN))
