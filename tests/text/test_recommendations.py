"""The verdict lead, read from a guideline sentence's fixed language."""

from __future__ import annotations

import pytest

from veriscribe.text.recommendations import (
    asks_for_verdict,
    label_closing,
    label_end,
    read_recommendation,
)
from veriscribe.text.sentences import quote_text

# Sentences copied from the development guidelines (../shared/data/guidelines).
LEADS = [
    (
        "We suggest against initiating opioids (including tramadol) for pain "
        "associated with osteoarthritis of the hip and knee.",
        "Suggests against (weak)",
    ),
    (
        "We recommend offering topical non-steroidal anti-inflammatory drugs for "
        "patients with pain associated with osteoarthritis of the knee.",
        "Recommends for (strong)",
    ),
    (
        "For African American patients, we recommend against using ACEIs or ARBs as "
        "monotherapy",
        "Recommends against (strong)",
    ),
    (
        "We suggest offering acetaminophen and/or oral non-steroidal anti-"
        "inflammatory drugs for pain associated with osteoarthritis of the hip and "
        "knee.",
        "Suggests for (weak)",
    ),
    (
        "There is insufficient evidence to recommend for or against the use of "
        "eosinophilia or suspicion of asthma-COPD overlap syndrome to guide choice "
        "of additional therapy.",
        "Insufficient evidence to recommend for or against",
    ),
    (
        "The USPSTF recommends 1-time screening for abdominal aortic aneurysm (AAA) "
        "with ultrasonography in men aged 65 to 75 years who have ever smoked. "
        "( **B recommendation** )",
        "Recommends for (grade B)",
    ),
    (
        "The USPSTF recommends against the routine use of medications, such as "
        "tamoxifen or raloxifene, for risk reduction of primary breast cancer in "
        "women who are not at increased risk for breast cancer. "
        "( **D recommendation** )",
        "Recommends against (grade D)",
    ),
    (
        "The USPSTF concludes that the current evidence is insufficient to assess "
        "the balance of benefits and harms of screening for obstructive sleep apnea "
        "(OSA) in asymptomatic adults ( **I statement** ).",
        "Insufficient evidence to recommend for or against (grade I)",
    ),
    (
        "The guideline panel suggests not initiating statin therapy for the purpose "
        "of CIN prophylaxis in patients undergoing elective angiography. "
        "( **Weak Against** )",
        "Suggests against (weak)",
    ),
    (
        "The guideline panel recommends against the use of renal replacement "
        "therapy (RRT) for CIN prophylaxis. ( **Strong Against** )",
        "Recommends against (strong)",
    ),
]

LEADS += [
    (
        "25. For patients in SUDs specialty care, the Work Group recommends against "
        "automatic discharge from care for patients who do not respond to treatment "
        "or who relapse.",
        "Recommends against (strong)",
    ),
    (
        "6. For patients with moderate-severe alcohol use disorder for whom "
        "first-line pharmacotherapy is contraindicated or ineffective, the Work Group "
        "suggests offering gabapentin.",
        "Suggests for (weak)",
    ),
    (
        "25. There is insufficient evidence for or against offering internet-based "
        "comprehensive lifestyle intervention for weight loss, as an alternate or "
        "adjunct to face-to-face intervention.",
        "Insufficient evidence to recommend for or against",
    ),
    (
        "The USPSTF recommends screening for syphilis infection in persons who are at "
        "increased risk for infection.",
        "Recommends for",
    ),
    # ngc-10510 and ngc-11379: a C recommendation in so many words, its "( **C
    # recommendation** )" at the end of the paragraph, sentences later.
    (
        "The USPSTF recommends that clinicians selectively offer screening for AAA in "
        "men aged 65 to 75 years who have never smoked rather than routinely screening "
        "all men in this group.",
        "Recommends selectively (grade C)",
    ),
    (
        "The USPSTF recommends that clinicians selectively offer counseling to adults "
        "older than 24 years with fair skin types about minimizing their exposure to UV "
        "radiation to reduce risk of skin cancer.",
        "Recommends selectively (grade C)",
    ),
]

NONE = [
    # The grading scale defined, not a recommendation.
    "Strong for (or “We recommend offering this option …”)",
    "The USPSTF recommends the service. There is high certainty that the net "
    "benefit is substantial.",
    "The USPSTF recommends selectively offering or providing this service to "
    "individual patients based on professional judgment and patient preferences.",
    "The strength of recommendation grading (Strong For, Weak For, Strong Against, "
    'Weak Against) is defined at the end of the "Major Recommendations" field.',
    # Statements of fact.
    "Osteoarthritis is the most common form of arthritis and a leading cause of "
    "disability.",
    "The available evidence is insufficient to assess effects on health outcomes.",
]


@pytest.mark.parametrize(("sentence", "lead"), LEADS)
def test_the_lead_is_read_from_the_sentence(sentence: str, lead: str) -> None:
    found = read_recommendation(sentence)
    assert found is not None and found.lead == lead
    assert found.phrase in " ".join(sentence.split())


@pytest.mark.parametrize("sentence", NONE)
def test_no_lead_where_the_sentence_recommends_nothing(sentence: str) -> None:
    assert read_recommendation(sentence) is None


def test_questions_that_ask_for_a_verdict() -> None:
    assert asks_for_verdict("Can I give my patient with back pain paracetamol?")
    assert asks_for_verdict("Is Tylenol OK for hip arthritis pain?")
    assert asks_for_verdict("Does Botox help with chronic migraines?")
    assert not asks_for_verdict("What are the symptoms of COPD?")
    assert not asks_for_verdict("How is obesity defined in adults?")
    # A comparison of two treatments asks which to use.
    assert asks_for_verdict("Is starting combination BP therapy better than one drug?")


# A strength that stands after the sentence in its section: the sentence, the section
# text that follows it (copied from the guideline), and the lead.
LABELLED = [
    (
        # ngc-10359: the USPSTF grade on the same line, after the sentence.
        "The USPSTF recommends that primary care clinicians apply fluoride varnish to "
        "the primary teeth of all infants and children starting at the age of primary "
        "tooth eruption.",
        " ( **B recommendation** ) \n\n\nSee the Clinical Considerations",
        "Recommends for (grade B)",
    ),
    (
        # ngc-10511: an imperative, graded on the USPSTF scale by "[A]".
        "37. Offer bariatric surgery, as an adjunct to comprehensive lifestyle "
        "intervention, for weight loss in adult patients with a BMI >40 kg/m 2 or those "
        "with BMI 35.0-39.9 kg/m 2 with one or more obesity-associated conditions.",
        " **[A]**\n  38. Offer bariatric surgery, as an adjunct",
        "Recommends for (grade A)",
    ),
    (
        "5. Consider providing normal weight patients with information and behavioral "
        "counseling regarding healthy diet and physical activity behaviors, in order to "
        "maintain a healthy weight.",
        " **[C]**\n\n\n\n\n###  Overweight Patients",
        "Recommends selectively (grade C)",
    ),
    (
        "2. Screen for overweight and obesity at least annually.",
        " **[EO]**\n  3. Assess for the presence",
        "Recommends for (expert opinion)",
    ),
    (
        "13. Current evidence is insufficient to support weight loss through "
        "comprehensive lifestyle intervention for reducing harms of non-alcoholic fatty "
        "liver disease.",
        " **[I]**\n",
        "Insufficient evidence to recommend for or against (grade I)",
    ),
    (
        # ngc-10531 (NHLBI): GRADE strength in a bracket, an imperative for and against.
        "5. In adults and children with SCD and a VOC associated with severe pain, "
        "rapidly initiate treatment with parenteral opioids.",
        " ( **Strong Recommendation, High-Quality Evidence** ) \n  6. In adults",
        "Recommends for (strong)",
    ),
    (
        "2. Do not use transfusion therapy for immediate treatment of priapism "
        "associated with SCD.",
        " ( **Moderate Recommendation, Low-Quality Evidence** ) \n",
        "Recommends against (moderate)",
    ),
]


@pytest.mark.parametrize(("sentence", "after", "lead"), LABELLED)
def test_a_label_after_the_sentence_gives_its_strength(
    sentence: str, after: str, lead: str
) -> None:
    section = f"Recommendations\n\n  {sentence}{after}"
    end = section.index(sentence) + len(sentence)
    source = quote_text(section, section.index(sentence), label_end(section, end))
    label = label_closing(source)
    assert label and label in source
    found = read_recommendation(sentence, label)
    assert found is not None and found.lead == lead
    assert found.phrase in " ".join(f"{sentence} {label}".split())


def test_no_label_reads_past_other_words() -> None:
    # ngc-10531: the quote ends before the parenthesis that precedes the label.
    section = (
        "  16. In adults and children with SCD and a VOC, do not administer a blood "
        "transfusion unless there are other indications for transfusion (see the NGC "
        "summary of the NHLBI guideline [ Blood transfusion in the management of sickle "
        'cell disease ](/content.aspx?id=48528 "Guideline #10534") ). '
        "( **Moderate Recommendation, Low-Quality Evidence** ) "
    )
    quote = "In adults and children with SCD and a VOC, do not administer a blood"
    end = section.index(quote) + len(quote)
    assert label_end(section, end) == end
    assert label_closing(quote) == ""


def test_a_grade_or_label_alone_states_no_recommendation() -> None:
    # Units the sentence splitter cuts from the sentence they grade (ngc-10359,
    # ngc-10531): how strongly, but not what.
    for label in (
        "( **B recommendation** )",
        "( **Moderate Recommendation, Low-Quality Evidence** )",
        "( **Moderate Recommendation, Low-",
        "**[A]**",
        "Weak For",
    ):
        assert read_recommendation(label) is None, label


def test_without_its_label_an_imperative_states_none() -> None:
    # The same sentences as they stand in the guidelines, their label not read:
    # "Offer ...", "should" may be any sentence (VADoDOACPG background).
    assert (
        read_recommendation("Screen for overweight and obesity at least annually.")
        is None
    )
    assert (
        read_recommendation(
            "The Work Group recognizes this can pose difficult clinical scenarios; "
            "however, providers should feel comfortable educating patients on the lack "
            "of superiority of MRI over radiographs from a diagnostic standpoint."
        )
        is None
    )


def test_double_negatives_and_clauses() -> None:
    # VADoDCOPDCPGFinal508: graded "Weak For" by the guideline.
    found = read_recommendation(
        "We suggest not withholding cardio-selective beta-blockers in patients with "
        "confirmed COPD who have a cardiovascular indication for beta-blockers."
    )
    assert found is not None and found.lead == "Suggests for (weak)"
    # ngc-10628, graded "( **Strong For** )" for the avoiding: the lead is against
    # the medications it names, what a reader asking about them needs to see.
    found = read_recommendation(
        "18. The guideline panel recommends that clinicians avoid or limit the use of "
        "nephrotoxic medications for patients with CKD."
    )
    assert found is not None and found.lead == "Recommends against (strong)"
    found = read_recommendation(
        "The guideline panel recommends that clinicians avoid the use of "
        "nephrotoxic medications. ( **Strong For** )"
    )
    assert found is not None and found.lead == "Recommends against (strong)"
    # VADoDHeadacheCPGFinal508: "should not withhold", a recommendation to treat.
    found = read_recommendation(
        "The Work Group suggests that providers should not withhold therapy when "
        "patients do not meet all criteria listed for TTH, migraine, or cluster "
        "headache (i.e., are diagnosed with probable TTH, probable migraine, or "
        "probable cluster headache)."
    )
    assert found is not None and found.lead == "Suggests for (weak)"
    # cpgQA p037 area (VA/DoD opioids): a plain "suggest not".
    found = read_recommendation(
        "While the evidence for harm associated with the combination of opioids and "
        "Z-drugs (e.g., zolpidem, eszopiclone) is not as strong as the evidence for "
        "harm associated with the combination of opioids and benzodiazepines, we "
        "suggest not prescribing Z-drugs to patients who are on LOT"
    )
    assert found is not None and found.lead == "Suggests against (weak)"


def test_insufficient_evidence_in_other_words() -> None:
    # ngc-10511 and VADoDHypertensionCPG508Corrected792020.
    for sentence in (
        "9. Current evidence is insufficient to recommend for or against offering "
        "comprehensive lifestyle intervention for weight loss to overweight patients "
        "with degenerative joint disease, non-alcoholic fatty liver disease and/or "
        "obstructive sleep apnea to reduce harms of these conditions.",
        "For the treatment of hypertension, there is insufficient evidence to recommend "
        "for or against initiating combination therapy over initiating monotherapy "
        "with the sequential addition of another medication.",
    ):
        found = read_recommendation(sentence)
        assert found is not None and found.direction == "neither", sentence


def test_do_not_recommend() -> None:
    # cpgQA p166, ngc-10628, VADoDHeadacheCPGFinal508: neither way.
    for sentence in (
        "We do not recommend for or against abuse deterrent formulations for LOT.",
        "5. Given inconsistent evidence, the guideline panel does not recommend for or "
        "against the routine administration of N-acetylcysteine (NAC) for CIN "
        "prophylaxis.",
        "Thus, with limited evidence comparing either IV metoclopramide or IV "
        "prochlorperazine directly to placebo and concern for dystonic side effects, "
        "the Work Group cannot recommend for or against the use of these agents for "
        "headache in ER or inpatient-based settings.",
    ):
        found = read_recommendation(sentence)
        assert found is not None and found.direction == "neither", sentence
    # VADoDHypertensionCPG508Corrected792020 (its 2014 table grades it "Weak against").
    found = read_recommendation(
        "We do not suggest switching from hydrochlorothiazide to chlorthalidone or "
        "indapamide if the patient is adequately controlled on and tolerating "
        "hydrochlorothiazide."
    )
    assert found is not None and found.lead == "Suggests against (weak)"
    # ngc (ovarian cancer screening): the USPSTF's "does not recommend", no grade.
    found = read_recommendation(
        "The USPSTF does not recommend routine screening for ovarian cancer using any "
        "method."
    )
    assert found is not None and found.lead == "Recommends against"


# The label after the sentence read where the sentence tells what to do, and only there.
LABELLED_NONE = [
    # ngc-10531: a caveat after the recommendation, the item's label after it.
    (
        "If baseline hemoglobin is 9 g/dL or higher, simple blood transfusion may not "
        "be required.",
        " ( **Weak Recommendation, Low-Quality Evidence** ) \n",
    ),
    # VADoDCOPDCPGFinal508: an evidence table's reference cell, the next row's label.
    ("(69)\nAdditional References:\n(68)", "\n\nStrong against\n"),
    # ngc-10628: an aside and a label, cut from the sentence they grade.
    ("( _Carryover modified from the 2008 CPG_ ) ( **Weak For** )", " \n"),
]


@pytest.mark.parametrize(("sentence", "after"), LABELLED_NONE)
def test_no_lead_from_a_label_beside_no_recommendation(
    sentence: str, after: str
) -> None:
    section = f"{sentence}{after}"
    source = quote_text(section, 0, label_end(section, len(sentence)))
    assert read_recommendation(sentence, label_closing(source)) is None
