"""Web pages: main content only, headings into the section tree, for guidelines and articles."""

from __future__ import annotations

from pathlib import Path

from veriscribe.documents.articles import Article, read_articles
from veriscribe.documents.guidelines import read_guideline_path

PAGE = """<!DOCTYPE html><html><head><title>Hypertension guideline</title>
<style>body { color: red }</style><script>track()</script></head><body>
<header class="site-header"><a href="/">Start page</a> Site search</header>
<nav><ul><li>Guidelines</li><li>About us</li></ul></nav>
<div id="cookie-consent">We use cookies. <button>Accept all</button></div>
<div class="menu-wrapper"><div>Menu item</div><div>Another</div></div>
<main>
<article><header><h1>Hypertension in adults</h1></header>
<h2>Abstract</h2><p>We review blood pressure targets.</p>
<h2>1. Diagnosis</h2><p>Measure blood pressure twice.</p>
<aside>Related: diabetes guideline</aside>
<h3>1.1 Home monitoring</h3><p>Home readings confirm the diagnosis.</p>
<table><tr><th>Stage</th><th>Systolic</th></tr><tr><td>1</td><td>130-139</td></tr></table>
<h2>2. Treatment</h2><p>Start with lifestyle changes.</p>
<footer>Article footer note</footer>
</article></main>
<div class="banner">Subscribe to our newsletter</div>
<footer>Copyright 2024, all rights reserved</footer>
</body></html>"""

CHROME = (
    "Start page",
    "Site search",
    "Guidelines",
    "cookies",
    "Menu item",
    "Related",
    "Subscribe",
    "Copyright",
    "track",
    "color",
    "Article footer",
)


def test_guideline_page_keeps_main_content_and_headings(tmp_path: Path) -> None:
    path = tmp_path / "bp.html"
    path.write_text(PAGE, encoding="utf-8")
    (doc,) = read_guideline_path(path)
    assert doc.title == "Hypertension guideline"
    titles = [(s.number, s.title, s.level) for s in doc.sections]
    assert ("1", "Diagnosis", 2) in titles and ("1.1", "Home monitoring", 3) in titles
    text = " ".join(s.title + " " + s.text for s in doc.sections)
    for word in CHROME:
        assert word not in text, word
    home = next(s for s in doc.sections if s.title == "Home monitoring")
    assert "Stage | Systolic" in home.text and "1 | 130-139" in home.text


def test_page_without_main_drops_navigation_and_banners(tmp_path: Path) -> None:
    page = PAGE.replace("<main>", "<div>").replace("</main>", "</div>")
    path = tmp_path / "nomain.html"
    path.write_text(page, encoding="utf-8")
    (doc,) = read_guideline_path(path)
    text = " ".join(s.title + " " + s.text for s in doc.sections)
    assert "Measure blood pressure twice." in text
    for word in CHROME:
        assert word not in text, word


def test_article_page_reads_title_abstract_and_paragraphs(tmp_path: Path) -> None:
    path = tmp_path / "paper.html"
    path.write_text(PAGE, encoding="utf-8")
    (article,) = read_articles(path)
    assert isinstance(article, Article)
    assert article.title == "Hypertension in adults"
    assert article.reference == "We review blood pressure targets."
    assert [p.text for p in article.paragraphs][:2] == [
        "Measure blood pressure twice.",
        "Home readings confirm the diagnosis.",
    ]
    assert article.paragraphs[1].path == ("1. Diagnosis", "1.1 Home monitoring")
    assert all(w not in article.body for w in CHROME)
