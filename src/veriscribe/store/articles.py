"""Article texts in the database, so graph state can carry ids instead of text."""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Sequence

from veriscribe.documents.articles import Article, Paragraph
from veriscribe.errors import NotFound
from veriscribe.store.db import Store


def article_key(article: Article) -> str:
    """Return the stable key of an article: its id and a hash of its content."""
    digest = hashlib.sha256(f"{article.id}\n{article.content_hash}".encode())
    return digest.hexdigest()[:24]


async def put_article(store: Store, article: Article) -> str:
    """Store an article (once) and return its key."""
    key = article_key(article)
    if await store.conn.execute_fetchall(
        "SELECT 1 FROM documents WHERE doc_key = ?", (key,)
    ):
        return key
    await store.conn.execute("BEGIN IMMEDIATE")
    try:
        await store.conn.execute(
            "INSERT OR IGNORE INTO documents VALUES (?, ?, ?, ?, ?, ?, ?)",
            (
                key,
                article.id,
                article.source,
                article.title,
                article.reference,
                json.dumps(article.meta),
                time.time(),
            ),
        )
        await store.conn.executemany(
            "INSERT OR IGNORE INTO paragraphs VALUES (?, ?, ?, ?, ?)",
            [
                (key, i, p.section, json.dumps(list(p.path)), p.text)
                for i, p in enumerate(article.paragraphs)
            ],
        )
        await store.conn.execute("COMMIT")
    except BaseException:
        await store.conn.execute("ROLLBACK")
        raise
    return key


async def get_article(store: Store, key: str) -> Article:
    """Load a stored article by key."""
    rows = list(
        await store.conn.execute_fetchall(
            "SELECT id, source, title, reference, meta FROM documents "
            "WHERE doc_key = ?",
            (key,),
        )
    )
    if not rows:
        raise NotFound(f"no stored article {key}")
    row = rows[0]
    paragraphs = [
        Paragraph(section, text, tuple(json.loads(path)))
        for section, path, text in await store.conn.execute_fetchall(
            "SELECT section, path, text FROM paragraphs WHERE doc_key = ? ORDER BY idx",
            (key,),
        )
    ]
    return Article(row[0], row[1], row[2], paragraphs, row[3], json.loads(row[4]))


async def put_articles(store: Store, articles: Sequence[Article]) -> list[str]:
    """Store many articles in one transaction (stored ones are skipped); return keys.

    The transaction is explicit on the store's shared connection: call this only while
    no other coroutine uses that connection (a batch registers before it starts work).
    """
    keys = [article_key(a) for a in articles]
    if not articles:
        return keys
    known: set[str] = set()
    for start in range(0, len(keys), 500):
        chunk = keys[start : start + 500]
        marks = ", ".join("?" for _ in chunk)
        rows = await store.conn.execute_fetchall(
            f"SELECT doc_key FROM documents WHERE doc_key IN ({marks})", chunk
        )
        known.update(row[0] for row in rows)
    new = {k: a for k, a in zip(keys, articles, strict=True) if k not in known}
    if not new:
        return keys
    now = time.time()
    await store.conn.execute("BEGIN IMMEDIATE")
    try:
        await store.conn.executemany(
            "INSERT OR IGNORE INTO documents VALUES (?, ?, ?, ?, ?, ?, ?)",
            [
                (k, a.id, a.source, a.title, a.reference, json.dumps(a.meta), now)
                for k, a in new.items()
            ],
        )
        await store.conn.executemany(
            "INSERT OR IGNORE INTO paragraphs VALUES (?, ?, ?, ?, ?)",
            [
                (k, i, p.section, json.dumps(list(p.path)), p.text)
                for k, a in new.items()
                for i, p in enumerate(a.paragraphs)
            ],
        )
        await store.conn.execute("COMMIT")
    except BaseException:
        await store.conn.execute("ROLLBACK")
        raise
    return keys
