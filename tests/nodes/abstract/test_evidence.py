"""Every abstract sentence against its evidence: certified, repaired or dropped."""

from __future__ import annotations

from veriscribe.checks.support import terms
from veriscribe.documents.articles import Paragraph
from veriscribe.nodes.abstract.evidence import (
    MAX_METHODS,
    READING_ORDER,
    SentenceRecord,
    _names_unshown,
    align,
    article_units,
    certify,
    certify_text,
    cut_to_sentence,
    evidence_check,
    sentence_counts,
    shown_text,
)

PARAGRAPHS = [
    Paragraph(
        "Introduction",
        "Malaria remains endemic in Nicoadala district, Mozambique. "
        "We used unsupervised clustering of sparse household survey data to map risk.",
        ("Introduction",),
    ),
    Paragraph(
        "Methods",
        "Households were eligible if they had lived in the district for one year. "
        "The study was approved by the national ethics committee.",
        ("Methods",),
    ),
    Paragraph(
        "Results",
        "Monthly dosing reduced parasite prevalence from 42% to 18% "
        "(P < 0.001), whereas bimonthly dosing had no effect. "
        "Bed net use was higher in villages near the clinic.",
        ("Results",),
    ),
    Paragraph(
        "Discussion",
        "Previous surveys reported similar patterns. "
        "In conclusion, these findings suggest that monthly dosing should be "
        "offered in endemic districts.",
        ("Discussion",),
    ),
]
LABELS = ["background", "methods", "results", "conclusions"]
TITLE = "Mapping malaria risk in Nicoadala"


def check(sentence: str) -> str:
    units = article_units(PARAGRAPHS, LABELS)
    return evidence_check(
        sentence, [u.text for u in align(sentence, units)], frozenset()
    )


def test_a_sentence_in_the_articles_words_is_certified() -> None:
    assert check("Malaria remains endemic in Nicoadala district.") == ""


def test_a_flipped_word_the_evidence_lacks_fails() -> None:
    assert check("We used supervised clustering of sparse household data.").startswith(
        "words"
    )
    assert check("Malaria remains exotic in Nicoadala district.").startswith("words")


def test_a_renamed_place_fails() -> None:
    assert check("Malaria remains endemic in Senegal district.").startswith("name")


def test_a_changed_number_fails() -> None:
    reason = check("Monthly dosing reduced parasite prevalence from 42% to 28%.")
    assert reason.startswith("number")


def test_a_dropped_negation_fails() -> None:
    reason = check("Bimonthly dosing had an effect on parasite prevalence.")
    assert reason


def test_a_swapped_direction_fails() -> None:
    assert check("Bed net use was lower in villages near the clinic.").startswith(
        "direction"
    )


def test_evidence_names_section_paragraph_and_quote() -> None:
    units = align(
        "Bed net use was higher in villages near the clinic.",
        article_units(PARAGRAPHS, LABELS),
    )
    assert units[0].paragraph == 2
    assert units[0].section == "Results"
    assert units[0].text == "Bed net use was higher in villages near the clinic."


def test_cutting_keeps_only_the_articles_words() -> None:
    paragraph = PARAGRAPHS[3].text
    quote = (
        "In conclusion, these findings suggest that monthly dosing should be "
        "offered in endemic districts."
    )
    assert cut_to_sentence(quote, paragraph) == (
        "These findings suggest that monthly dosing should be offered in endemic "
        "districts."
    )


def test_a_failing_sentence_is_repaired_from_its_evidence() -> None:
    records = certify(
        ["Malaria remains exotic in Nicoadala district, Mozambique."],
        PARAGRAPHS,
        LABELS,
        TITLE,
        0,
    )
    first = records[0]
    assert first["status"] == "repaired"
    assert first["text"] == "Malaria remains endemic in Nicoadala district, Mozambique."
    assert first["evidence"][0]["quote"] == first["text"]
    assert "exotic" in first["reason"]


def test_a_text_is_certified_as_its_sentences_are() -> None:
    # What a batch's worker process runs: the splitting and the checks in one step.
    text = (
        "Malaria remains exotic in Nicoadala district, Mozambique. Monthly dosing "
        "reduced parasite prevalence from 42% to 18% (P < 0.001)."
    )
    sentences = [
        "Malaria remains exotic in Nicoadala district, Mozambique.",
        "Monthly dosing reduced parasite prevalence from 42% to 18% (P < 0.001).",
    ]
    records = certify_text(text, PARAGRAPHS, LABELS, TITLE, 0)
    assert records == certify(sentences, PARAGRAPHS, LABELS, TITLE, 0)
    assert [r["status"] for r in records[:2]] == ["repaired", "certified"]


def test_a_finding_with_its_number_and_a_conclusion_are_added() -> None:
    records = certify(
        ["Malaria remains endemic in Nicoadala district, Mozambique."],
        PARAGRAPHS,
        LABELS,
        TITLE,
        0,
    )
    added = [r for r in records if r["origin"] == "article"]
    assert [r["role"] for r in added] == ["results", "conclusions"]
    assert "42%" in added[0]["text"]
    assert "suggest" in added[1]["text"]
    assert sentence_counts(records) == {"certified": 3, "repaired": 0, "dropped": 0}


def test_procedure_goes_first_when_over_length() -> None:
    records = certify(
        [
            "Malaria remains endemic in Nicoadala district, Mozambique.",
            "The study was approved by the national ethics committee.",
            "Bed net use was higher in villages near the clinic.",
        ],
        PARAGRAPHS,
        LABELS,
        TITLE,
        45,
    )
    dropped = [r["text"] for r in records if r["status"] == "dropped"]
    assert dropped == ["The study was approved by the national ethics committee."]
    assert "approved" not in shown_text(records)
    assert "42%" in shown_text(records)


LAB = [
    Paragraph(
        "Introduction",
        "A novel retrovirus was reported in patients with chronic fatigue syndrome.",
        ("Introduction",),
    ),
    Paragraph(
        "Methods",
        "The study was approved by the local ethics committee. "
        "Patients were eligible if they met the 1994 case definition.",
        ("Materials and methods",),
    ),
    Paragraph(
        "Outcomes",
        "The primary outcome was the detection of proviral DNA in 186 samples.",
        ("Materials and methods", "Outcomes"),
    ),
    Paragraph(
        "Results",
        "Input DNA ranged from 10 to 600 ng as determined by absorbance. "
        "None of the 186 samples yielded a specific product with the retrovirus "
        "primers, whereas all 186 yielded the control product.",
        ("Results",),
    ),
    Paragraph(
        "Discussion",
        "Based on our data, the retrovirus is unlikely to be a cause of chronic "
        "fatigue syndrome in this population. "
        "A limitation is that our results may have been susceptible to bias.",
        ("Discussion",),
    ),
    Paragraph(
        "Conclusions",
        "Earlier surveys reported the retrovirus in 67% of patients [4]. "
        "The retrovirus was not detected in any patient with chronic fatigue syndrome.",
        ("Conclusions",),
    ),
    Paragraph(
        "Competing interests",
        "The authors declare that they have no competing interests.",
        ("Competing interests",),
    ),
]
LAB_LABELS = ["background", "methods", "results", "results", "conclusions"] + [
    "conclusions"
] * 2
LAB_TITLE = "No retrovirus in chronic fatigue syndrome"


def lab(sentences: list[str], words: int = 0) -> list[SentenceRecord]:
    return certify(sentences, LAB, LAB_LABELS, LAB_TITLE, words)


def test_the_finding_is_the_comparison_not_the_description_of_samples() -> None:
    records = lab(["A novel retrovirus was reported in patients with chronic fatigue."])
    added = [r for r in records if r["origin"] == "article"]
    assert added[0]["role"] == "results"
    # Primers are a lab study's words: the finding is not passed over for them.
    assert added[0]["text"].startswith("None of the 186 samples")


def test_a_methods_section_is_methods_whatever_its_label() -> None:
    units = article_units(LAB, LAB_LABELS)
    assert {u.role for u in units if u.paragraph == 2} == {"methods"}


def test_the_conclusion_is_the_authors_own_not_earlier_work() -> None:
    # The Discussion's opening sentence on the authors' own data outranks both the
    # Conclusions section's report of earlier surveys and its restated finding.
    records = lab(["A novel retrovirus was reported in patients with chronic fatigue."])
    added = [r for r in records if r["origin"] == "article"]
    assert added[-1]["role"] == "conclusions"
    assert added[-1]["text"] == (
        "Based on our data, the retrovirus is unlikely to be a cause of chronic "
        "fatigue syndrome in this population."
    )
    assert not any("Earlier surveys" in r["text"] for r in records)


def test_a_limitation_is_no_conclusion_and_the_authors_one_is_added() -> None:
    records = lab(
        [
            "A novel retrovirus was reported in patients with chronic fatigue.",
            "A limitation is that our results may have been susceptible to bias.",
        ]
    )
    limitation = next(r for r in records if r["text"].startswith("A limitation"))
    assert limitation["role"] == "conclusions"
    assert limitation["status"] == "certified"
    assert records[-1]["origin"] == "article"
    assert records[-1]["text"].startswith("Based on our data")


def test_the_models_finding_and_conclusion_outlast_procedure_when_too_long() -> None:
    records = lab(
        [
            "A novel retrovirus was reported in patients with chronic fatigue syndrome.",
            "The study was approved by the local ethics committee.",
            "Patients were eligible if they met the 1994 case definition.",
            "None of the 186 samples yielded a specific product with the retrovirus "
            "primers, whereas all 186 yielded the control product.",
            "Based on our data, the retrovirus is unlikely to be a cause of chronic "
            "fatigue syndrome in this population.",
        ],
        words=45,
    )
    assert not [r for r in records if r["origin"] == "article"]
    kept = [r["text"] for r in records if r["status"] != "dropped"]
    assert kept[0].startswith("A novel retrovirus")
    assert any(t.startswith("None of the 186") for t in kept)
    assert any(t.startswith("Based on our data") for t in kept)
    assert not any("approved" in t or "eligible" in t for t in kept)


def test_a_cut_keeps_the_space_of_a_p_value() -> None:
    paragraph = "However, mortality was lower with early therapy (P < .001)."
    assert cut_to_sentence(paragraph, paragraph) == (
        "Mortality was lower with early therapy (P < .001)."
    )


def test_the_digit_of_a_name_is_no_finding_number() -> None:
    paragraphs = [
        Paragraph(
            "Results",
            "G6PD deficiency was linked to anaemia in the cohort. "
            "Anaemia was more frequent with the deficiency than without it (41% vs 12%; "
            "P < .001).",
            ("Results",),
        )
    ]
    records = certify(
        ["G6PD deficiency was linked to anaemia in the cohort."],
        paragraphs,
        ["results"],
        "G6PD deficiency and anaemia",
        0,
    )
    assert records[0]["status"] == "certified"
    added = [r for r in records if r["origin"] == "article"]
    assert [r["text"] for r in added] == [
        "Anaemia was more frequent with the deficiency than without it (41% vs 12%; "
        "P < .001)."
    ]


STUDY = [
    Paragraph(
        "Introduction",
        "Flavored tobacco draws young people to smoking. "
        "The objectives of this study were to "
        "1) examine whether a campaign could drive jurisdictions to act and "
        "2) identify what else predicted an ordinance.",
        ("Introduction",),
    ),
    Paragraph(
        "Methods",
        "We compared 20 jurisdictions with a campaign and 66 without one. "
        "Data came from the ordinance tracking database. "
        "We used Fisher exact tests for counts. "
        "We used Poisson regression for risk ratios. "
        "Analyses were run in SAS version 9.4.",
        ("Methods",),
    ),
    Paragraph(
        "Results",
        "Jurisdictions with a campaign were 2 times more likely to adopt an "
        "ordinance than those without one (P < .001). "
        "Adoption rose by 6% for each neighbor with a license ordinance (P < .001).",
        ("Results",),
    ),
    Paragraph(
        "Discussion",
        "Our findings suggest that community engagement drives local tobacco "
        "control ordinances.",
        ("Discussion",),
    ),
]
STUDY_LABELS = ["background", "methods", "results", "conclusions"]


def study(sentences: list[str], words: int = 0) -> list[SentenceRecord]:
    return certify(sentences, STUDY, STUDY_LABELS, "Campaigns and ordinances", words)


def test_a_numbered_list_is_one_sentence_and_never_shown_in_pieces() -> None:
    units = article_units(STUDY, STUDY_LABELS)
    assert [u.text for u in units if u.paragraph == 0][1].startswith(
        "The objectives of this study were to 1) examine"
    )
    records = study(["The objectives were 1) to examine a campaign that drove acts."])
    assert not any(r["text"].startswith(("1)", "2)")) for r in records)


def test_the_objective_is_added_from_the_introduction() -> None:
    records = study(["Flavored tobacco draws young people to smoking."])
    objective = next(r for r in records if r["role"] == "objective")
    assert objective["origin"] == "article"
    assert objective["text"].startswith("The objectives of this study were to")


def test_sentences_are_shown_in_reading_order() -> None:
    records = study(
        [
            "Our findings suggest that community engagement drives local tobacco "
            "control ordinances.",
            "Jurisdictions with a campaign were 2 times more likely to adopt an "
            "ordinance than those without one (P < .001).",
            "We compared 20 jurisdictions with a campaign and 66 without one.",
            "Flavored tobacco draws young people to smoking.",
        ]
    )
    roles = [r["role"] for r in records if r["status"] != "dropped"]
    assert roles == sorted(roles, key=READING_ORDER.__getitem__)
    assert roles[0] == "background" and roles[-1] == "conclusions"


def test_methods_beyond_three_are_held_back_unless_the_abstract_is_short() -> None:
    methods = [
        "We compared 20 jurisdictions with a campaign and 66 without one.",
        "Data came from the ordinance tracking database.",
        "We used Fisher exact tests for counts.",
        "We used Poisson regression for risk ratios.",
        "Analyses were run in SAS version 9.4.",
    ]
    records = study(methods)
    shown = [r for r in records if r["status"] != "dropped" and r["role"] == "methods"]
    assert len(shown) == MAX_METHODS
    assert shown[0]["text"] == methods[0]  # the design stays
    held = [r["text"] for r in records if r["reason"].startswith("balance")]
    # Procedure (a database) first, then the latest.
    assert held == [methods[1], methods[4]]
    # Asked for more words than the rest holds: held-back methods come back.
    assert all(r["status"] != "dropped" for r in study(methods, words=150))


def test_a_text_without_results_headings_closes_on_its_last_paragraph() -> None:
    paragraphs = [
        Paragraph("Main text", "Angioblasts migrate to the midline in embryos.", ()),
        Paragraph(
            "Main text",
            "Ela-expressing cells attracted 52% of angioblasts, whereas control cells "
            "attracted 20% of them.",
            (),
        ),
        Paragraph(
            "Main text",
            "Our studies identified Ela signaling as a guide for angioblasts to the "
            "midline.",
            (),
        ),
        Paragraph(
            "Methods", "Embryos were injected at the one-cell stage.", ("Methods",)
        ),
    ]
    labels = ["background", "background", "methods", "methods"]
    records = certify(
        ["Angioblasts migrate to the midline in embryos."],
        paragraphs,
        labels,
        "Ela guides angioblasts",
        0,
    )
    added = {r["role"]: r["text"] for r in records if r["origin"] == "article"}
    assert added["conclusions"].startswith("Our studies identified Ela signaling")
    assert "52%" in added["results"]


def test_a_finding_credited_to_a_source_its_evidence_does_not_credit_fails() -> None:
    paragraphs = [
        Paragraph(
            "Background",
            "Early efforts to quantify the burden of the major NTDs found that it was "
            "roughly equivalent to that of malaria. "
            "The results of the GBD 2010 Study were published in December 2012.",
            ("Background",),
        )
    ]
    records = certify(
        [
            "The GBD 2010 Study found that the burden of the major NTDs was roughly "
            "equivalent to that of malaria."
        ],
        paragraphs,
        ["background"],
        "Neglected tropical diseases",
        0,
    )
    assert records[0]["status"] == "repaired"
    assert records[0]["reason"].startswith("attribution:")
    assert records[0]["text"].startswith("Early efforts to quantify")


def test_a_sentence_pointing_back_to_one_not_shown_is_dropped() -> None:
    paragraphs = [
        Paragraph(
            "Introduction",
            "Sickle cell trait protects against severe malaria. "
            "These mechanisms include reduced invasion of red cells.",
            ("Introduction",),
        ),
        Paragraph(
            "Methods",
            "We enrolled 300 children with severe malaria in Kenya.",
            ("Methods",),
        ),
        Paragraph(
            "Methods",
            "This cohort was followed for two years.",
            ("Methods",),
        ),
    ]
    records = certify(
        [
            "These mechanisms include reduced invasion of red cells.",
            "We enrolled 300 children with severe malaria in Kenya.",
            "This cohort was followed for two years.",
        ],
        paragraphs,
        ["background", "methods", "methods"],
        "Malaria in children",
        0,
    )
    by_text = {r["text"].split()[1]: r for r in records}
    # Nothing before it says which mechanisms: dropped, and why.
    assert by_text["mechanisms"]["status"] == "dropped"
    assert by_text["mechanisms"]["reason"].startswith("context: 'These mechanisms'")
    # "This cohort" follows the sentence it points back to: it stays.
    assert by_text["cohort"]["status"] == "certified"


TELOMERE = [
    Paragraph(
        "Introduction",
        "Mitochondria and telomeres are essential for maintaining cell functions. "
        "The purpose of the present study was to determine the relationship between "
        "mtDNA copy number and telomere length in elderly women.",
        ("Introduction",),
    ),
    Paragraph(
        "Methods",
        "In this cross-sectional study, we included 129 women over the age of 60 years.",
        ("Methods",),
    ),
    Paragraph(
        "Results",
        "Leukocyte mtDNA copy number was positively associated with MMSE score "
        "(r=0.06, p=0.02). Leukocyte mtDNA copy number was negatively correlated "
        "with depression score (r=-0.17, p=0.04).",
        ("Results",),
    ),
    Paragraph(
        "Results",
        "Telomere length was independently associated with mtDNA copy number in the "
        "multivariate model (beta=0.253, p<0.001).",
        ("Results",),
    ),
    Paragraph(
        "Discussion",
        "In this study, telomere length was associated with mtDNA copy number "
        "independently of other factors. Our findings suggest that telomere function "
        "may influence mitochondrial function in humans.",
        ("Discussion",),
    ),
]
TELOMERE_TITLE = "Mitochondrial DNA copy number and telomere length in elderly women"


def test_the_main_finding_leads_when_the_models_findings_are_secondary() -> None:
    # The model gave two side results with their numbers; the article's main one
    # (about the title's subject, restated where the Discussion opens) is added
    # before them, though it comes later in the Results.
    records = certify(
        [
            "Leukocyte mtDNA copy number was positively associated with MMSE score "
            "(r=0.06, p=0.02).",
            "Leukocyte mtDNA copy number was negatively correlated with depression "
            "score (r=-0.17, p=0.04).",
        ],
        TELOMERE,
        ["background", "methods", "results", "results", "conclusions"],
        TELOMERE_TITLE,
        0,
    )
    results = [r for r in records if r["role"] == "results"]
    assert results[0]["origin"] == "article"
    assert results[0]["text"].startswith("Telomere length was independently")
    assert [r["status"] for r in results] == ["certified"] * 3


def test_a_sentence_naming_these_things_nothing_shown_says_is_dropped() -> None:
    records = certify(
        [
            "The purpose of the present study was to determine the relationship "
            "between mtDNA copy number and telomere length in elderly women.",
            "Mitochondria and telomeres are essential for maintaining cell functions.",
        ],
        TELOMERE,
        ["background", "methods", "results", "results", "conclusions"],
        TELOMERE_TITLE,
        0,
    )
    assert all(r["status"] != "dropped" for r in records)
    text = "The consequence of these case definitions is a biased estimate."
    assert _names_unshown(text, frozenset()) == "these case definitions"
    assert not _names_unshown(text, terms("Two case definitions were used.").words)
    assert not _names_unshown("Our results support these findings.", frozenset())
    assert not _names_unshown("Drugs such as aspirin were excluded.", frozenset())


def test_a_range_made_of_two_of_the_articles_numbers_is_not_certified() -> None:
    # pone.0058242 on the 1.5B model: each number is the article's, the range is not.
    evidence = (
        "Both the slope and the intercept of the regression line were improved "
        "(slope, −0.15 vs. a range from 0.34 to 0.53; intercept, 5.88 vs. a range "
        "from −14.79 to −21.54)."
    )
    reason = evidence_check(
        "The intercepts ranged from 5.88 to −21.54.", [evidence], frozenset()
    )
    assert reason == "numbers: the article gives no range from 5.88 to -21.54"
    assert not evidence_check(
        "The slope was improved (−0.15 vs. a range from 0.34 to 0.53).",
        [evidence],
        frozenset(),
    )
