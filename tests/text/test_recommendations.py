"""The verdict lead, read from a guideline sentence's fixed language."""

from __future__ import annotations

import pytest

from veriscribe.text.recommendations import asks_for_verdict, read_recommendation

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
