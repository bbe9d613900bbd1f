from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from veriscribe.documents.articles import (
    Article,
    Paragraph,
    ReadFailure,
    expand_inputs,
    parse_xml,
    read_articles,
)
from veriscribe.errors import InputError

ROOT = Path(__file__).resolve().parents[2]
ARTICLES = ROOT.parent / "shared" / "data" / "articles"
needs_data = pytest.mark.skipif(
    not ARTICLES.is_dir(), reason="shared/data/articles is not beside the repository"
)


def one(path: Path) -> Article:
    items = list(read_articles(path))
    assert len(items) == 1
    item = items[0]
    assert isinstance(item, Article)
    return item


def norm(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def texts_under(root_xml: Path, tag: str) -> list[str]:
    """Return the whitespace-collapsed text of every <p> inside elements named tag."""
    root = parse_xml(root_xml.read_bytes(), root_xml)
    found: list[str] = []
    for element in root.iter():
        if element.tag == tag:
            for p in element.iter("p"):
                text = norm("".join(p.itertext()))
                if len(text) > 40:
                    found.append(text)
    return found


# --------------------------------------------------------------------- real JATS


@needs_data
def test_elife_body_excludes_sub_articles() -> None:
    path = ARTICLES / "jats" / "elife__elife-02833-v2.xml"
    article = one(path)
    review_text = texts_under(path, "sub-article")
    assert len(review_text) > 10  # decision letter and author response exist
    paragraphs = {p.text for p in article.paragraphs}
    assert not paragraphs & set(review_text)
    assert not any("Reviewer #" in p.text for p in article.paragraphs)
    assert article.id == "10.7554/eLife.02833"
    assert article.title.startswith("H3K27 modifications define segmental")
    assert "Drosophila" in article.title  # inline <italic> kept as text


@needs_data
def test_no_abstract_text_leaks_into_paragraphs() -> None:
    files = sorted((ARTICLES / "jats").glob("*.xml"))
    assert len(files) == 44
    for path in files:
        article = one(path)
        abstract_ps = texts_under(path, "abstract")
        assert abstract_ps, path
        for paragraph in article.paragraphs:
            for abstract_p in abstract_ps:
                assert abstract_p not in paragraph.text, (path.name, abstract_p[:60])


@needs_data
def test_reference_is_the_main_abstract() -> None:
    lines = (ARTICLES / "reference_abstracts.jsonl").read_text("utf-8").splitlines()
    assert len(lines) == 44
    for line in lines:
        expected = json.loads(line)
        article = one(ARTICLES / expected["file"])
        assert article.reference is not None
        assert norm(article.reference) == norm(expected["abstract"]), expected["file"]


@needs_data
def test_structured_abstract_keeps_its_headings() -> None:
    article = one(ARTICLES / "jats" / "epmc__PMC3289602.xml")
    assert article.reference is not None
    lines = article.reference.split("\n")
    assert lines[0].startswith("Background: Zika virus (ZIKV)")
    assert lines[-1].startswith("Conclusions/Significance: ")
    assert "Author Summary" not in article.reference  # abstract-type="summary"


@needs_data
def test_paragraphs_carry_their_heading_path() -> None:
    article = one(ARTICLES / "jats" / "plos__journal.pone.0146913.xml")
    top = {p.top_section for p in article.paragraphs}
    assert {"Introduction", "Materials and Methods", "Results", "Discussion"} <= top
    nested = [p for p in article.paragraphs if len(p.path) > 1]
    assert nested
    for paragraph in article.paragraphs:
        assert paragraph.text == norm(paragraph.text) and paragraph.text
        if paragraph.path:
            assert paragraph.section == paragraph.path[-1]
            assert paragraph.top_section == paragraph.path[0]


@needs_data
def test_back_matter_sections_are_dropped() -> None:
    article = one(ARTICLES / "jats" / "epmc__PMC4101712.xml")
    tops = {p.top_section for p in article.paragraphs}
    assert "Competing interests" not in tops
    assert not any("contributions" in t for t in tops)
    assert {"Background", "Methods", "Conclusions"} <= tops


@needs_data
def test_articles_without_abstract_read_with_no_reference() -> None:
    for path in sorted((ARTICLES / "no_abstract").glob("*.xml")):
        article = one(path)
        assert article.reference is None
        assert article.paragraphs
        assert article.id.startswith("10.1371/")


@needs_data
def test_no_tex_source_in_paragraphs() -> None:
    for path in sorted((ARTICLES / "jats").glob("*.xml")):
        for paragraph in one(path).paragraphs:
            assert "\\documentclass" not in paragraph.text


@needs_data
def test_pcd_jsonl_layout() -> None:
    items = list(read_articles(ARTICLES / "pcd.jsonl"))
    assert len(items) == 11
    articles = [i for i in items if isinstance(i, Article)]
    assert len(articles) == 11
    first = articles[0]
    assert first.id == "10.5888/pcd21.220411"
    assert first.source.endswith("pcd.jsonl:1")
    assert first.meta["layout"] == "sectioned"
    assert first.reference is not None
    assert first.reference.startswith("Introduction: Beginning August 10, 2018")
    paths = {p.path for p in first.paragraphs}
    assert ("Results", "Any exposure to e-cigarette warning labels") in paths
    assert not any(
        p.text == "Any exposure to e-cigarette warning labels" for p in first.paragraphs
    )
    for article in articles:
        assert article.reference is not None
        for paragraph in article.paragraphs:
            assert paragraph.text not in article.reference


# ------------------------------------------------------------------- inline JATS

JATS = """<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE article PUBLIC "-//NLM//DTD JATS (Z39.96) Journal Publishing DTD v1.2//EN"
  "JATS-journalpublishing1.dtd">
<article xmlns:xlink="http://www.w3.org/1999/xlink" article-type="case-report">
<front><article-meta>
<article-id pub-id-type="pmid">123</article-id>
<article-id pub-id-type="pmc">4567</article-id>
<title-group><article-title>A <italic>rare</italic> case</article-title></title-group>
<abstract><p>The main abstract.</p></abstract>
<abstract abstract-type="summary"><p>A lay summary.</p></abstract>
</article-meta></front>
<body>
<p>Opening paragraph &Delta; before any section.</p>
<sec><title>Case presentation</title>
  <p>A  man of 45   years <xref ref-type="bibr" rid="b1">[1]</xref> presented with fever.</p>
  <fig id="f1"><caption><p>Figure caption text.</p></caption></fig>
  <boxed-text><p>Boxed text.</p></boxed-text>
  <p>He had <inline-formula><tex-math>\\documentclass{minimal}x</tex-math>
  </inline-formula>a rash.</p>
  <sec><title>Laboratory findings</title><p>CRP was high.</p><p>   </p></sec>
</sec>
<sec><title>Acknowledgements</title><p>We thank everyone.</p></sec>
</body>
<back><ref-list><ref><mixed-citation>Ref one.</mixed-citation></ref></ref-list></back>
<sub-article><body><p>Decision letter text.</p></body></sub-article>
</article>
"""


def write(tmp_path: Path, name: str, content: str | bytes) -> Path:
    path = tmp_path / name
    if isinstance(content, str):
        path.write_text(content, encoding="utf-8")
    else:
        path.write_bytes(content)
    return path


def test_inline_jats_body_only(tmp_path: Path) -> None:
    article = one(write(tmp_path, "case.nxml", JATS))
    texts = [p.text for p in article.paragraphs]
    assert texts == [
        "Opening paragraph \u0394 before any section.",
        "A man of 45 years [1] presented with fever.",
        "He had a rash.",
        "CRP was high.",
    ]
    assert article.paragraphs[0].path == () and article.paragraphs[0].section == ""
    assert article.paragraphs[3].path == ("Case presentation", "Laboratory findings")
    assert article.paragraphs[3].top_section == "Case presentation"
    assert article.reference == "The main abstract."
    assert article.title == "A rare case"
    assert article.id == "PMC4567"
    assert article.meta["article_type"] == "case-report"


def test_malformed_xml_is_one_clear_error(tmp_path: Path) -> None:
    path = write(tmp_path, "broken.xml", "<article><body><p>unclosed</body></article>")
    with pytest.raises(InputError) as info:
        list(read_articles(path))
    message = info.value.user_message
    assert "\n" not in message
    assert str(path) in message and "malformed XML" in message


BILLION_LAUGHS = """<?xml version="1.0"?>
<!DOCTYPE lolz [
 <!ENTITY lol "lol">
 <!ENTITY lol1 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
 <!ENTITY lol2 "&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;">
 <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
]>
<article><body><p>&lol3;</p></body></article>
"""

EXTERNAL_ENTITY = """<?xml version="1.0"?>
<!DOCTYPE article [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>
<article><body><p>&xxe;</p></body></article>
"""


@pytest.mark.parametrize("document", [BILLION_LAUGHS, EXTERNAL_ENTITY])
def test_entity_declarations_are_refused(tmp_path: Path, document: str) -> None:
    path = write(tmp_path, "attack.xml", document)
    with pytest.raises(InputError, match="declares entities"):
        list(read_articles(path))


def test_undeclared_entity_without_dtd_is_malformed(tmp_path: Path) -> None:
    path = write(tmp_path, "x.xml", "<article><body><p>a&Delta;b</p></body></article>")
    with pytest.raises(InputError, match="malformed XML"):
        list(read_articles(path))


@pytest.mark.parametrize(
    "document",
    [
        "<article><front/><body/></article>",
        "<article><body><sec><title>Intro</title><p>  </p></sec></body></article>",
        "<article><front/></article>",
    ],
)
def test_article_without_paragraphs_is_an_error(tmp_path: Path, document: str) -> None:
    path = write(tmp_path, "empty.xml", document)
    with pytest.raises(InputError, match="no paragraph"):
        list(read_articles(path))


def test_xml_that_is_not_an_article(tmp_path: Path) -> None:
    path = write(tmp_path, "other.xml", "<html><body><p>Hello</p></body></html>")
    with pytest.raises(InputError, match="no <article>"):
        list(read_articles(path))


# ------------------------------------------------------------------- JSON lines

PUBMED = {
    "article_id": "PMC1",
    "article_text": ["unused when sections exist ."],
    "abstract_text": ["<S> first abstract sentence . </S>", "<S> second one . </S>"],
    "section_names": ["introduction", "methods"],
    "sections": [
        ["a" * 300 + " .", "b" * 300 + " .", "c" * 100 + " ."],
        ["we did this .", "and that ."],
    ],
}

PMC_MAD_STRINGS = {
    "article_id": "PMC2",
    "title": "A title",
    "abstract": "The abstract.",
    "full_text": "ignored",
    "section_names": ["Introduction", "Results", "References"],
    "sections": [
        "First paragraph.\n\nSecond paragraph.",
        "Only paragraph.",
        "Smith J. A paper. 2001.",
    ],
}

PMC_MAD_LISTS = {
    "article_id": "PMC3",
    "title": "Another",
    "abstract": "Abstract text.",
    "section_names": ["Background", "Discussion"],
    "sections": [["Para one.", "Para two."], ["Para three."]],
}


def test_pubmed_summarisation_layout(tmp_path: Path) -> None:
    path = write(tmp_path, "pubmed.jsonl", json.dumps(PUBMED) + "\n")
    article = one(path)
    assert article.id == "PMC1"
    assert article.meta["layout"] == "pubmed"
    assert article.reference == "first abstract sentence . second one ."
    # Sentences are packed into paragraphs of about 600 characters, per section.
    assert [p.section for p in article.paragraphs] == [
        "introduction",
        "introduction",
        "methods",
    ]
    assert article.paragraphs[0].text.startswith("a" * 300)
    assert article.paragraphs[0].text.endswith("b" * 300 + " .")
    assert article.paragraphs[2].text == "we did this . and that ."


def test_pmc_mad_layout_with_string_and_list_sections(tmp_path: Path) -> None:
    lines = [json.dumps(PMC_MAD_STRINGS), json.dumps(PMC_MAD_LISTS)]
    path = write(tmp_path, "mad.jsonl", "\n".join(lines) + "\n")
    first, second = list(read_articles(path))
    assert isinstance(first, Article) and isinstance(second, Article)
    assert first.meta["layout"] == "pmc-mad"
    assert [(p.section, p.text) for p in first.paragraphs] == [
        ("Introduction", "First paragraph."),
        ("Introduction", "Second paragraph."),
        ("Results", "Only paragraph."),
    ]
    assert first.title == "A title" and first.reference == "The abstract."
    assert [p.text for p in second.paragraphs] == [
        "Para one.",
        "Para two.",
        "Para three.",
    ]
    assert second.source.endswith("mad.jsonl:2")


def test_bad_lines_are_failures_not_stops(tmp_path: Path) -> None:
    lines = [
        json.dumps(PMC_MAD_LISTS),
        "{not json",
        "",
        json.dumps([1, 2]),
        json.dumps({"article_id": "X9", "something": "else"}),
        json.dumps({"article_id": "X10", "sections": [["  "]], "section_names": ["A"]}),
        json.dumps(PUBMED),
    ]
    path = write(tmp_path, "mixed.jsonl", "\n".join(lines))
    items = list(read_articles(path))
    kinds = [type(i).__name__ for i in items]
    assert kinds == [
        "Article",
        "ReadFailure",
        "ReadFailure",
        "ReadFailure",
        "ReadFailure",
        "Article",
    ]
    failures = [i for i in items if isinstance(i, ReadFailure)]
    assert [f.source.rsplit(":", 1)[1] for f in failures] == ["2", "4", "5", "6"]
    assert failures[0].id == "mixed:2" and "invalid JSON" in failures[0].reason
    assert failures[2].id == "X9" and "unknown layout" in failures[2].reason
    assert failures[3].id == "X10" and "no paragraph" in failures[3].reason


def test_undecodable_line_is_a_failure(tmp_path: Path) -> None:
    data = json.dumps(PMC_MAD_LISTS).encode() + b"\n" + b'{"x": "\xff"}\n'
    items = list(read_articles(write(tmp_path, "enc.jsonl", data)))
    assert isinstance(items[0], Article)
    assert isinstance(items[1], ReadFailure) and "UTF-8" in items[1].reason


def test_empty_jsonl_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no article"):
        list(read_articles(write(tmp_path, "empty.jsonl", "\n\n")))


# -------------------------------------------------------------- text, Markdown

MARKDOWN = """# The title

## Abstract

We summarise things.

## Introduction

First paragraph
wrapped over two lines.

### Aims
We aim high.

## References

Smith J. A paper.
"""


def test_markdown_headings_title_and_abstract(tmp_path: Path) -> None:
    article = one(write(tmp_path, "paper.md", MARKDOWN))
    assert article.title == "The title"
    assert article.reference == "We summarise things."
    assert [(p.path, p.text) for p in article.paragraphs] == [
        (("Introduction",), "First paragraph wrapped over two lines."),
        (("Introduction", "Aims"), "We aim high."),
    ]
    assert article.id == "paper"
    assert article.meta["encoding"] == "utf-8"


def test_plain_text_paragraphs(tmp_path: Path) -> None:
    article = one(write(tmp_path, "note.txt", "One.\n\n\nTwo\nlines.\n"))
    assert [p.text for p in article.paragraphs] == ["One.", "Two lines."]
    assert article.paragraphs[0].section == "" and article.reference is None


def test_text_encodings(tmp_path: Path) -> None:
    utf16 = one(write(tmp_path, "u16.txt", "Caf\u00e9 au lait.".encode("utf-16")))
    assert utf16.paragraphs[0].text == "Caf\u00e9 au lait."
    bom = one(write(tmp_path, "bom.txt", b"\xef\xbb\xbfHello there."))
    assert bom.paragraphs[0].text == "Hello there."
    legacy = one(
        write(tmp_path, "win.txt", "\u201cQuoted\u201d text.".encode("cp1252"))
    )
    assert legacy.paragraphs[0].text == "\u201cQuoted\u201d text."
    assert legacy.meta["encoding"] == "cp1252" and "Windows-1252" in legacy.meta["note"]


def test_binary_and_empty_text_files_are_errors(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="binary"):
        list(read_articles(write(tmp_path, "bin.txt", b"\x00\x01\x02abc")))
    with pytest.raises(InputError, match="no paragraph"):
        list(read_articles(write(tmp_path, "empty.md", "# Only a title\n\n")))
    with pytest.raises(InputError, match="not UTF-8"):
        list(read_articles(write(tmp_path, "bad.txt", b"abc \x81\x8d def")))


def test_unknown_suffix_and_missing_file(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="unknown kind"):
        list(read_articles(write(tmp_path, "paper.docx", b"PK\x03\x04")))
    with pytest.raises(InputError, match="cannot read"):
        list(read_articles(tmp_path / "missing.txt"))


# ------------------------------------------------------------ inputs, hashing


def test_expand_inputs(tmp_path: Path) -> None:
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "deep").mkdir()
    for name in ["b/z.xml", "b/deep/a.md", "b/notes.docx", "c.txt", "d.jsonl"]:
        write(tmp_path, name, "x")
    found = expand_inputs([str(tmp_path / "b")])
    assert found == [tmp_path / "b/deep/a.md", tmp_path / "b/z.xml"]
    assert expand_inputs([str(tmp_path / "*.txt"), str(tmp_path / "c.txt")]) == [
        tmp_path / "c.txt"
    ]
    explicit = expand_inputs([str(tmp_path / "b" / "notes.docx")])
    assert explicit == [tmp_path / "b/notes.docx"]
    with pytest.raises(InputError, match="no such file"):
        expand_inputs([str(tmp_path / "nope.xml")])
    with pytest.raises(InputError, match="matches no article file"):
        expand_inputs([str(tmp_path / "*.nxml")])


def test_content_hash_tracks_paragraphs() -> None:
    base = Article("a", "s", "t", [Paragraph("Intro", "Text.", ("Intro",))])
    same = Article("b", "other", "title", [Paragraph("Intro", "Text.", ("Intro",))])
    changed = Article("a", "s", "t", [Paragraph("Intro", "Text!", ("Intro",))])
    assert base.content_hash == same.content_hash
    assert base.content_hash != changed.content_hash
    assert len(base.content_hash) == 64


def test_collapsing_whitespace_matches_the_regex_definition() -> None:
    # ``str.split`` and ``\s`` agree on what whitespace is, in every code point.
    import random
    import re
    import sys

    from veriscribe.documents.articles import _collapse

    spaces = [chr(c) for c in range(sys.maxunicode + 1) if chr(c).isspace()]
    assert spaces == [
        c for c in map(chr, range(sys.maxunicode + 1)) if re.match(r"\s", c)
    ]
    rng = random.Random(0)
    pool = [*spaces, "a", "b", "\u200b", "\ufeff", "é"]
    for _ in range(2000):
        text = "".join(rng.choice(pool) for _ in range(rng.randint(0, 20)))
        assert _collapse(text) == re.sub(r"\s+", " ", text).strip()
