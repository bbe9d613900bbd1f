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
    Migration(
        "0004_corpora",
        """
        CREATE TABLE corpora (
            name TEXT PRIMARY KEY,
            created REAL NOT NULL,
            updated REAL NOT NULL
        );
        CREATE TABLE corpus_documents (
            corpus TEXT NOT NULL REFERENCES corpora(name) ON DELETE CASCADE,
            doc_id TEXT NOT NULL,
            title TEXT NOT NULL,
            source TEXT NOT NULL,
            content_hash TEXT NOT NULL,
            added REAL NOT NULL,
            PRIMARY KEY (corpus, doc_id)
        );
        CREATE TABLE corpus_sections (
            corpus TEXT NOT NULL,
            doc_id TEXT NOT NULL,
            section_id TEXT NOT NULL,
            position INTEGER NOT NULL,
            number TEXT NOT NULL,
            title TEXT NOT NULL,
            parent TEXT,
            children TEXT NOT NULL DEFAULT '[]',
            level INTEGER NOT NULL,
            chars INTEGER NOT NULL,
            text TEXT NOT NULL,
            summary TEXT,
            summary_source TEXT,
            summary_prompt TEXT,
            PRIMARY KEY (corpus, doc_id, section_id),
            FOREIGN KEY (corpus, doc_id)
                REFERENCES corpus_documents(corpus, doc_id) ON DELETE CASCADE
        );
        CREATE INDEX corpus_sections_pending ON corpus_sections(corpus, summary);
        """,
    ),
    Migration(
        "0010_runs",
        """
        CREATE TABLE runs (
            run_id TEXT PRIMARY KEY,
            kind TEXT NOT NULL,
            created REAL NOT NULL,
            updated REAL NOT NULL,
            status TEXT NOT NULL,
            config TEXT NOT NULL
        );
        CREATE TABLE run_items (
            run_id TEXT NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,
            item_id TEXT NOT NULL,
            seq INTEGER NOT NULL,
            source TEXT NOT NULL,
            article_id TEXT,
            doc_key TEXT,
            weight INTEGER NOT NULL DEFAULT 0,
            status TEXT NOT NULL
                CHECK (status IN ('pending', 'running', 'done', 'failed')),
            reason TEXT,
            attempts INTEGER NOT NULL DEFAULT 0,
            seconds REAL,
            calls INTEGER NOT NULL DEFAULT 0,
            prompt_tokens INTEGER NOT NULL DEFAULT 0,
            output_tokens INTEGER NOT NULL DEFAULT 0,
            cached_calls INTEGER NOT NULL DEFAULT 0,
            claimed_by TEXT,
            claimed_at REAL,
            finished_at REAL,
            result TEXT,
            PRIMARY KEY (run_id, item_id)
        );
        CREATE INDEX run_items_queue ON run_items(run_id, status, weight DESC, seq);
        CREATE TABLE run_sessions (
            run_id TEXT NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,
            worker TEXT NOT NULL,
            started REAL NOT NULL,
            heartbeat REAL NOT NULL,
            ended REAL,
            outcome TEXT,
            PRIMARY KEY (run_id, worker)
        );
        """,
    ),
    Migration(
        "0011_llm_calls_endpoint",
        """
        ALTER TABLE llm_calls ADD COLUMN endpoint TEXT;
        """,
    ),
    Migration(
        "0012_corpus_sections_page",
        """
        ALTER TABLE corpus_sections ADD COLUMN page INTEGER;
        """,
    ),
    Migration(
        "0013_section_vectors",
        """
        CREATE TABLE section_vectors (
            corpus TEXT NOT NULL,
            doc_id TEXT NOT NULL,
            section_id TEXT NOT NULL,
            encoder TEXT NOT NULL,
            digest TEXT NOT NULL,
            vectors BLOB NOT NULL,
            PRIMARY KEY (corpus, doc_id, section_id, encoder),
            FOREIGN KEY (corpus, doc_id)
                REFERENCES corpus_documents(corpus, doc_id) ON DELETE CASCADE
        );
        """,
    ),
)
