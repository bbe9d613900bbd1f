"""Named schema migrations, applied in order and recorded in ``schema_migrations``."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Migration:
    """One named step of the schema."""

    name: str
    sql: str


MIGRATIONS: tuple[Migration, ...] = (
    Migration(
        "0001_llm_calls",
        """
        CREATE TABLE llm_calls (
            id INTEGER PRIMARY KEY,
            at REAL NOT NULL,
            backend TEXT NOT NULL,
            model TEXT NOT NULL,
            prompt_id TEXT NOT NULL,
            prompt_tokens INTEGER NOT NULL DEFAULT 0,
            output_tokens INTEGER NOT NULL DEFAULT 0,
            latency_s REAL NOT NULL DEFAULT 0,
            outcome TEXT NOT NULL,
            detail TEXT,
            run_id TEXT,
            thread_id TEXT
        );
        CREATE INDEX llm_calls_run ON llm_calls(run_id);
        """,
    ),
    Migration(
        "0002_llm_cache",
        """
        CREATE TABLE llm_cache (
            key TEXT PRIMARY KEY,
            content TEXT NOT NULL,
            prompt_tokens INTEGER NOT NULL,
            output_tokens INTEGER NOT NULL,
            created REAL NOT NULL
        );
        """,
    ),
    Migration(
        "0003_documents",
        """
        CREATE TABLE documents (
            doc_key TEXT PRIMARY KEY,
            id TEXT NOT NULL,
            source TEXT NOT NULL,
            title TEXT NOT NULL,
            reference TEXT,
            meta TEXT NOT NULL DEFAULT '{}',
            created REAL NOT NULL
        );
        CREATE TABLE paragraphs (
            doc_key TEXT NOT NULL REFERENCES documents(doc_key) ON DELETE CASCADE,
            idx INTEGER NOT NULL,
            section TEXT NOT NULL,
            path TEXT NOT NULL,
            text TEXT NOT NULL,
            PRIMARY KEY (doc_key, idx)
        );
        """,
    ),
)
