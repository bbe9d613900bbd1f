"""Tests for reading guideline files into section trees."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from veriscribe.documents.guidelines import (
    GuidelineDoc,
    Section,
    read_guideline_path,
    slugify,
    split_heading_number,
)
from veriscribe.errors import InputError

GUIDELINES = Path(__file__).resolve().parents[3] / "shared" / "data" / "guidelines"

needs_data = pytest.mark.skipif(
    not GUIDELINES.is_dir(), reason="shared guideline data not available"
)


def check_tree(doc: GuidelineDoc) -> None:
    """Assert the invariants every section tree must hold."""
    by_id = {s.section_id: s for s in doc.sections}
    assert len(by_id) == len(doc.sections), "section ids must be unique"
    seen: set[str] = set()
    for section in doc.sections:
        assert section.doc_id == doc.doc_id
        assert section.chars == len(section.text)
        if section.parent is None:
            assert section.level == 1
        else:
            assert section.parent in seen, "parents come before their children"
            parent = by_id[section.parent]
            assert section.section_id in parent.children
            assert section.level == parent.level + 1
        for child in section.children:
            assert by_id[child].parent == section.section_id
        seen.add(section.section_id)


def write(tmp_path: Path, name: str, content: str) -> Path:
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content, encoding="utf-8")
    return path


def ids(doc: GuidelineDoc) -> list[str]:
    return [s.section_id for s in doc.sections]


def get(doc: GuidelineDoc, section_id: str) -> Section:
    section = doc.section(section_id)
    assert section is not None, section_id
    return section


# --- helpers --------------------------------------------------------------------------


def test_slugify() -> None:
    assert slugify("Introduction & Scope") == "introduction-scope"
    assert slugify("Évaluation du risque — adultes") == "evaluation-du-risque-adultes"
    assert slugify("???") == "section"
    assert slugify("???", fallback="document") == "document"
    long = slugify("word " * 40)
    assert len(long) <= 60 and not long.endswith("-")


@pytest.mark.parametrize(
    ("heading", "expected"),
    [
        ("2.3.1 Statin therapy", ("2.3.1", "Statin therapy")),
        ("2.3. Statin therapy", ("2.3", "Statin therapy")),
        ("4 Methods", ("4", "Methods")),
        ("II. Background", ("II", "Background")),
        ("A. Description of COPD", ("A", "Description of COPD")),
        ("a) Rates of reproduction", ("a", "Rates of reproduction")),
        ("Section 5 Dosing", ("5", "Dosing")),
        ("Introduction", ("", "Introduction")),
        ("2019 Update", ("", "2019 Update")),
        ("A Guide to Dosing", ("", "A Guide to Dosing")),
        ("I  ", ("", "I")),
    ],
)
def test_split_heading_number(heading: str, expected: tuple[str, str]) -> None:
    assert split_heading_number(heading) == expected


# --- Markdown -------------------------------------------------------------------------

MARKDOWN = """---
title: "Lipid Management Guideline"
id: 7
---

Intro text before any heading.

# Introduction

Why this guideline exists.
<!-- an editor's note -->

## Scope

Adults aged 40 to 75 years.

## Scope

A repeated heading.

# 3.4 Statin Therapy

Statins lower LDL cholesterol.

```
# not a heading inside a fence
```

### Dosing

Atorvastatin 10-80 mg.

#### Notes ####

Take at night.

# Empty Parent

## Child

Child text.
"""


def test_markdown_sections(tmp_path: Path) -> None:
    (doc,) = read_guideline_path(write(tmp_path, "Lipid Guide.md", MARKDOWN))
    check_tree(doc)
    assert doc.doc_id == "lipid-guide"
    assert doc.title == "Lipid Management Guideline"
    assert ids(doc) == [
        "preamble",
        "introduction",
        "introduction/scope",
        "introduction/scope-2",
        "statin-therapy",
        "statin-therapy/dosing",
        "statin-therapy/dosing/notes",
        "empty-parent",
        "empty-parent/child",
    ]
    numbers = {s.section_id: s.number for s in doc.sections}
    assert numbers == {
        "preamble": "",
        "introduction": "1",
        "introduction/scope": "1.1",
        "introduction/scope-2": "1.2",
        "statin-therapy": "3.4",
        "statin-therapy/dosing": "3.4.1",
        "statin-therapy/dosing/notes": "3.4.1.1",
        "empty-parent": "3",
        "empty-parent/child": "3.1",
    }
    assert get(doc, "preamble").text == "Intro text before any heading."
    assert get(doc, "introduction").text == "Why this guideline exists."
    statins = get(doc, "statin-therapy")
    assert statins.title == "Statin Therapy"
    assert statins.text.startswith("Statins lower LDL cholesterol.")
    assert "# not a heading inside a fence" in statins.text
    assert "Atorvastatin" not in statins.text, "sub-sections are not in the text"
    assert statins.children == ["statin-therapy/dosing"]
    assert get(doc, "statin-therapy/dosing/notes").title == "Notes"
    assert get(doc, "statin-therapy/dosing/notes").level == 3
    assert get(doc, "empty-parent").text == ""
    assert get(doc, "introduction").chars == len("Why this guideline exists.")


def test_markdown_single_top_heading_is_the_document_title(tmp_path: Path) -> None:
    text = "# Hypertension Guideline\n\n## Diagnosis\n\nMeasure twice.\n\n## Treatment\n\nTreat.\n"
    (doc,) = read_guideline_path(write(tmp_path, "htn.md", text))
    check_tree(doc)
    assert doc.title == "Hypertension Guideline"
    assert ids(doc) == ["hypertension-guideline", "diagnosis", "treatment"]
    assert [s.number for s in doc.sections] == ["", "1", "2"]
    assert get(doc, "diagnosis").parent == "hypertension-guideline"


def test_markdown_without_title_uses_file_stem(tmp_path: Path) -> None:
    (doc,) = read_guideline_path(
        write(tmp_path, "notes.md", "# A\n\nx text\n\n# B\n\ny\n")
    )
    assert doc.title == "notes"
    assert ids(doc) == ["a", "b"]


@needs_data
def test_real_ngc_markdown() -> None:
    (doc,) = read_guideline_path(GUIDELINES / "ngc" / "ngc-10056.md")
    check_tree(doc)
    assert doc.doc_id == "ngc-10056"
    assert doc.title.startswith(
        "Medications for risk reduction of primary breast cancer"
    )
    major = get(doc, "recommendations/major-recommendations")
    assert major.number == "2.1"
    assert major.text.startswith(
        "The U.S. Preventive Services Task Force (USPSTF) grades"
    )
    summary = get(
        doc,
        "recommendations/major-recommendations/summary-of-recommendations-and-evidence",
    )
    assert summary.parent == major.section_id
    assert "tamoxifen or raloxifene" in summary.text


@needs_data
def test_every_ngc_file_reads() -> None:
    docs = read_guideline_path(GUIDELINES / "ngc")
    assert len(docs) == 30
    assert len({d.doc_id for d in docs}) == 30
    for doc in docs:
        check_tree(doc)
        assert sum(s.chars for s in doc.sections) > 10_000


# --- sections.json ----------------------------------------------------------------------


@needs_data
def test_real_sections_json() -> None:
    path = GUIDELINES / "vadod" / "VADoDCOPDCPGFinal508.sections.json"
    (doc,) = read_guideline_path(path)
    check_tree(doc)
    raw = json.loads(path.read_text())
    assert doc.doc_id == "vadodcopdcpgfinal508"
    assert doc.title == raw["title"]
    assert len(doc.sections) == raw["n_sections"] == 63
    root = doc.sections[0]
    assert root.parent is None and root.number == ""
    intro = get(doc, "introduction")
    assert (intro.number, intro.title, intro.level) == ("I", "Introduction", 2)
    copd = get(doc, "background/description-of-copd")
    assert (copd.number, copd.parent) == ("A", "background")
    assert copd.text == raw["sections"][4]["text"].strip()


@needs_data
def test_markdown_and_sections_json_agree_on_ids() -> None:
    folder = GUIDELINES / "vadod"
    (outline,) = read_guideline_path(folder / "VADoDCOPDCPGFinal508.sections.json")
    (markdown,) = read_guideline_path(folder / "VADoDCOPDCPGFinal508.md")
    assert markdown.doc_id == outline.doc_id
    assert set(ids(outline)) <= set(ids(markdown))


def test_sections_json_nested_children_and_given_ids(tmp_path: Path) -> None:
    outline = {
        "title": "Nested outline",
        "sections": [
            {
                "level": 1,
                "title": "1 Overview",
                "text": "Overview text.",
                "id": "sec-1",
                "children": [
                    {
                        "level": 5,
                        "title": "Aims",
                        "text": "Aims text.",
                        "id": "sec-1-1",
                    },
                    {"level": 2, "title": "Users", "text": "Users text."},
                ],
            },
            {"level": 1, "title": "2 Care", "text": "Care text.", "page": 4},
            {"level": 2, "title": "2.1 Drugs", "text": "Drug text."},
        ],
    }
    path = write(tmp_path, "nested.sections.json", json.dumps(outline))
    (doc,) = read_guideline_path(path)
    check_tree(doc)
    assert doc.doc_id == "nested"
    assert ids(doc) == ["sec-1", "sec-1-1", "overview/users", "care", "care/drugs"]
    assert [s.number for s in doc.sections] == ["1", "1.1", "1.2", "2", "2.1"]
    assert get(doc, "sec-1").children == ["sec-1-1", "overview/users"]
    assert get(doc, "care/drugs").parent == "care"


def test_sections_json_errors(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="invalid JSON"):
        read_guideline_path(write(tmp_path, "bad.sections.json", "{"))
    with pytest.raises(InputError, match="sections"):
        read_guideline_path(write(tmp_path, "list.sections.json", "[]"))
    empty = {"title": "t", "sections": [{"level": 1, "title": "A", "text": "  "}]}
    with pytest.raises(InputError, match="no usable text"):
        read_guideline_path(write(tmp_path, "empty.sections.json", json.dumps(empty)))


# --- cpgQA passages -------------------------------------------------------------------


@needs_data
def test_real_cpgqa_passages() -> None:
    (doc,) = read_guideline_path(GUIDELINES / "cpgqa" / "passages.jsonl")
    check_tree(doc)
    assert doc.doc_id == "cpgqa"
    assert len(doc.sections) == 190
    first = doc.sections[0]
    assert (first.section_id, first.title, first.parent) == (
        "p000",
        "Features and overview",
        None,
    )
    assert first.text.startswith("The Opioid Taper Decision Tool")
    questions = (GUIDELINES / "cpgqa" / "questions.jsonl").read_text().splitlines()
    wanted = {json.loads(line)["passage_id"] for line in questions if line.strip()}
    assert wanted <= set(ids(doc))


def test_passages_errors(tmp_path: Path) -> None:
    folder = tmp_path / "mini"
    with pytest.raises(InputError, match="line 2"):
        read_guideline_path(
            write(folder, "passages.jsonl", '{"passage_id": "a", "text": "x"}\n{oops\n')
        )
    with pytest.raises(InputError, match="passage_id"):
        read_guideline_path(write(folder, "passages.jsonl", '{"text": "x"}\n'))
    (doc,) = read_guideline_path(
        write(
            folder,
            "passages.jsonl",
            '{"passage_id": 7, "title": "T", "text": "Body"}\n',
        )
    )
    assert (doc.doc_id, ids(doc)) == ("mini", ["7"])


# --- HTML -----------------------------------------------------------------------------

HTML = """<!doctype html>
<html><head><title>Blood Pressure &amp; You</title>
<style>h1 { color: red }</style>
<script>var heading = "<h2>not a heading</h2>";</script></head>
<body>
<p>Lead paragraph.</p>
<h1>1. Measurement</h1>
<p>Use a validated&nbsp;cuff.</p><p>Repeat   twice.</p>
<h2>Home readings</h2>
<ul><li>Morning</li><li>Evening</li></ul>
<table><tr><th>Stage</th><th>mmHg</th></tr><tr><td>1</td><td>130&ndash;139</td></tr></table>
<h1>Treatment</h1>
<div>Start with <b>lifestyle</b> change.<br>Then drugs.</div>
<noscript>enable scripts</noscript>
</body></html>
"""


def test_html_sections(tmp_path: Path) -> None:
    (doc,) = read_guideline_path(write(tmp_path, "bp.html", HTML))
    check_tree(doc)
    assert doc.title == "Blood Pressure & You"
    assert ids(doc) == [
        "preamble",
        "measurement",
        "measurement/home-readings",
        "treatment",
    ]
    assert [s.number for s in doc.sections] == ["", "1", "1.1", "2"]
    measurement = get(doc, "measurement")
    assert measurement.text == "Use a validated\u00a0cuff.\n\nRepeat twice."
    home = get(doc, "measurement/home-readings").text
    assert "Morning\nEvening" in home
    assert "Stage | mmHg\n1 | 130–139" in home
    treatment = get(doc, "treatment").text
    assert treatment == "Start with lifestyle change.\nThen drugs."
    everything = " ".join(s.text for s in doc.sections)
    assert "color" not in everything and "not a heading" not in everything
    assert "enable scripts" not in everything


# --- JATS -----------------------------------------------------------------------------

JATS = """<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE article SYSTEM "JATS-journalpublishing1.dtd">
<article xmlns:xlink="http://www.w3.org/1999/xlink" article-type="practice-guideline">
<front><article-meta>
<title-group><article-title>Guideline on <italic>Statin</italic> Use</article-title></title-group>
<abstract><title>Abstract</title><p>Statins prevent events.</p></abstract>
</article-meta></front>
<body>
<sec id="s1"><label>1</label><title>Introduction</title>
<p>Cholesterol matters <xref ref-type="bibr" rid="b1">[1]</xref>.</p>
<sec id="s1a"><title>Scope</title><p>Adults only.</p>
<list><list-item><p>Primary prevention</p></list-item><list-item><p>Secondary</p></list-item></list>
</sec>
</sec>
<sec id="s2"><title>Recommendations</title>
<p>Offer a statin.</p>
<table-wrap><label>Table 1</label><caption><p>Doses</p></caption>
<table><tr><th>Drug</th><th>mg</th></tr><tr><td>Atorvastatin</td><td>10&#8211;80</td></tr></table>
</table-wrap>
</sec>
</body>
<back><ref-list><ref id="b1">A reference.</ref></ref-list></back>
</article>
"""


def test_jats_sections(tmp_path: Path) -> None:
    (doc,) = read_guideline_path(write(tmp_path, "statins.nxml", JATS))
    check_tree(doc)
    assert doc.title == "Guideline on Statin Use"
    assert ids(doc) == [
        "abstract",
        "introduction",
        "introduction/scope",
        "recommendations",
    ]
    assert [s.number for s in doc.sections] == ["", "1", "1.1", "2"]
    assert get(doc, "abstract").text == "Statins prevent events."
    assert get(doc, "introduction").text == "Cholesterol matters [1]."
    assert get(doc, "introduction/scope").text == (
        "Adults only.\n\nPrimary prevention\nSecondary"
    )
    recs = get(doc, "recommendations").text
    assert recs.startswith("Offer a statin.\n\nTable 1\nDoses")
    assert "Atorvastatin | 10–80" in recs
    assert "A reference." not in " ".join(s.text for s in doc.sections)


def test_jats_rejects_entity_declarations(tmp_path: Path) -> None:
    bomb = (
        '<?xml version="1.0"?>\n<!DOCTYPE article [\n<!ENTITY a "aaaaaaaaaa">\n'
        '<!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">\n]>\n'
        "<article><body><p>&b;</p></body></article>\n"
    )
    with pytest.raises(InputError, match="entity declarations"):
        read_guideline_path(write(tmp_path, "bomb.xml", bomb))
    external = (
        '<?xml version="1.0"?>\n<!DOCTYPE article [<!ENTITY x SYSTEM "file:///etc/passwd">]>'
        "<article><body><p>&x;</p></body></article>"
    )
    with pytest.raises(InputError):
        read_guideline_path(write(tmp_path, "external.xml", external))


def test_jats_malformed_and_foreign_xml(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="malformed XML"):
        read_guideline_path(write(tmp_path, "broken.xml", "<article><body>"))
    with pytest.raises(InputError, match="not a JATS article"):
        read_guideline_path(write(tmp_path, "other.xml", "<root><p>text</p></root>"))
    with pytest.raises(InputError, match="no usable text"):
        read_guideline_path(write(tmp_path, "hollow.xml", "<article><body/></article>"))


# --- plain text -----------------------------------------------------------------------


def test_short_plain_text_is_one_section(tmp_path: Path) -> None:
    (doc,) = read_guideline_path(
        write(tmp_path, "memo.txt", "Statin memo\n\nOffer statins to adults.\n")
    )
    check_tree(doc)
    assert doc.title == "Statin memo"
    assert [(s.section_id, s.number) for s in doc.sections] == [("text", "1")]
    assert doc.sections[0].text == "Statin memo\n\nOffer statins to adults."


def test_long_plain_text_is_grouped_in_parts(tmp_path: Path) -> None:
    paragraphs = [f"Paragraph {i}. " + " ".join(["word"] * 100) for i in range(30)]
    (doc,) = read_guideline_path(write(tmp_path, "long.txt", "\n\n".join(paragraphs)))
    check_tree(doc)
    assert len(doc.sections) > 1
    assert ids(doc)[:2] == ["part-1", "part-2"]
    assert all(s.chars <= 3000 + 600 for s in doc.sections)
    joined = "\n\n".join(s.text for s in doc.sections)
    assert joined == "\n\n".join(paragraphs)


# --- errors, directories, hashes ------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("empty.md", ""),
        ("headings.md", "# A\n\n## B\n"),
        ("blank.txt", "   \n\n  "),
        ("empty.html", "<html><body><script>x()</script></body></html>"),
    ],
)
def test_no_usable_text_raises_one_line_input_error(
    tmp_path: Path, name: str, content: str
) -> None:
    with pytest.raises(InputError) as caught:
        read_guideline_path(write(tmp_path, name, content))
    assert "no usable text" in caught.value.user_message
    assert "\n" not in caught.value.user_message


def test_unsupported_and_missing_paths(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="unsupported"):
        read_guideline_path(write(tmp_path, "slides.pptx", "x"))
    with pytest.raises(InputError, match="no such file"):
        read_guideline_path(tmp_path / "missing.md")
    bad = tmp_path / "latin1.md"
    bad.write_bytes("# Caf\xe9\n\ntext".encode("latin-1"))
    with pytest.raises(InputError, match="UTF-8"):
        read_guideline_path(bad)


@needs_data
def test_directory_prefers_sections_json() -> None:
    docs = read_guideline_path(GUIDELINES / "vadod")
    assert len(docs) == 6
    assert all(d.source.endswith(".sections.json") for d in docs)
    for doc in docs:
        check_tree(doc)


@needs_data
def test_cpgqa_directory_skips_license_and_questions() -> None:
    docs = read_guideline_path(GUIDELINES / "cpgqa")
    assert [d.doc_id for d in docs] == ["cpgqa"]


def test_directory_reads_every_kind_and_dedupes_doc_ids(tmp_path: Path) -> None:
    write(tmp_path, "a/guide.md", "# One\n\nText one.\n")
    write(tmp_path, "b/guide.md", "# Two\n\nText two.\n")
    write(
        tmp_path,
        "b/guide.sections.json",
        json.dumps(
            {
                "title": "G",
                "sections": [{"level": 1, "title": "Outline", "text": "Outline text."}],
            }
        ),
    )
    write(tmp_path, "c/page.html", HTML)
    write(tmp_path, "c/paper.xml", JATS)
    write(tmp_path, "c/memo.txt", "Memo text here.")
    write(tmp_path, "c/README.txt", "How to use this folder.")
    write(tmp_path, "c/other.json", "{}")
    write(tmp_path, ".hidden/secret.md", "# S\n\nhidden\n")
    docs = read_guideline_path(tmp_path)
    assert sorted(d.doc_id for d in docs) == [
        "guide",
        "guide-2",
        "memo",
        "page",
        "paper",
    ]
    sources = sorted(Path(d.source).name for d in docs)
    assert sources == [
        "guide.md",
        "guide.sections.json",
        "memo.txt",
        "page.html",
        "paper.xml",
    ]
    for doc in docs:
        check_tree(doc)


def test_directory_errors_raise_or_are_reported(tmp_path: Path) -> None:
    write(tmp_path, "good.md", "# Good\n\nGood text.\n")
    write(tmp_path, "empty.md", "# Nothing\n")
    with pytest.raises(InputError, match="empty.md"):
        read_guideline_path(tmp_path)
    skipped: list[tuple[Path, InputError]] = []
    docs = read_guideline_path(tmp_path, on_error=lambda p, e: skipped.append((p, e)))
    assert [d.doc_id for d in docs] == ["good"]
    assert [p.name for p, _ in skipped] == ["empty.md"]
    empty_dir = tmp_path / "empty-dir"
    empty_dir.mkdir()
    with pytest.raises(InputError, match="no readable guideline files"):
        read_guideline_path(empty_dir)


def test_content_hash_is_stable_and_tracks_content(tmp_path: Path) -> None:
    path = write(tmp_path, "g.md", "# A\n\nAlpha.\n\n# B\n\nBeta.\n")
    first = read_guideline_path(path)[0].content_hash
    assert read_guideline_path(path)[0].content_hash == first
    moved = write(tmp_path / "elsewhere", "g.md", "# A\n\nAlpha.\n\n# B\n\nBeta.\n")
    assert read_guideline_path(moved)[0].content_hash == first
    write(tmp_path, "g.md", "# A\n\nAlpha.\n\n# B\n\nBeta!\n")
    changed = read_guideline_path(path)[0].content_hash
    assert changed != first and len(changed) == 64
