"""Article texts in the database, so graph state can carry ids instead of text."""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Sequence

from veriscribe.documents.articles import Article, Paragraph
from veriscribe.errors import NotFound
from veriscribe.store.db import Store, Tx


def article_key(article: Article) -> str:
    """Return the stable key of an article: its id and a hash of its content."""
    digest = hashlib.sha256(f"{article.id}\n{article.content_hash}".encode())
    return digest.hexdigest()[:24]


async def put_article(store: Store, article: Article) -> str:
    """Store an article (once) and return its key."""
    key = article_key(article)
    if await store.fetchone("SELECT 1 FROM documents WHERE doc_key = ?", (key,)):
        return key
    await store.transaction(lambda tx: _insert(tx, {key: article}, time.time()))
    return key


async def get_article(store: Store, key: str) -> Article:
    """Load a stored article by key."""
    row = await store.fetchone(
        "SELECT id, source, title, reference, meta FROM documents WHERE doc_key = ?",
        (key,),
    )
    if row is None:
        raise NotFound(f"no stored article {key}")
    paragraphs = [
        Paragraph(section, text, tuple(json.loads(path)))
        for section, path, text in await store.fetchall(
            "SELECT section, path, text FROM paragraphs WHERE doc_key = ? ORDER BY idx",
            (key,),
        )
    ]
    return Article(row[0], row[1], row[2], paragraphs, row[3], json.loads(row[4]))


async def put_articles(store: Store, articles: Sequence[Article]) -> list[str]:
    """Store many articles in one transaction (stored ones are skipped); return keys."""
    keys = [article_key(a) for a in articles]
    if not articles:
        return keys
    known: set[str] = set()
    for start in range(0, len(keys), 500):
        chunk = keys[start : start + 500]
        marks = ", ".join("?" for _ in chunk)
        rows = await store.fetchall(
            f"SELECT doc_key FROM documents WHERE doc_key IN ({marks})", chunk
        )
        known.update(row[0] for row in rows)
    new = {k: a for k, a in zip(keys, articles, strict=True) if k not in known}
    if new:
        await store.transaction(lambda tx: _insert(tx, new, time.time()))
    return keys


def _insert(tx: Tx, articles: dict[str, Article], now: float) -> None:
    """Insert articles (by key) and their paragraphs; known keys are left alone."""
    tx.executemany(
        "INSERT INTO documents VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
        [
            (k, a.id, a.source, a.title, a.reference, json.dumps(a.meta), now)
            for k, a in articles.items()
        ],
    )
    tx.executemany(
        "INSERT INTO paragraphs VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
        [
            (k, i, p.section, json.dumps(list(p.path)), p.text)
            for k, a in articles.items()
            for i, p in enumerate(a.paragraphs)
        ],
    )
