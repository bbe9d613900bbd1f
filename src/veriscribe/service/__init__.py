"""The async operations the CLI (and Python callers) run."""

from veriscribe.service.abstracts import generate_abstract, run_abstract
from veriscribe.service.batch import (
    BatchProgress,
    list_runs,
    register_run,
    resume_run,
    run_batch,
    run_results,
    show_run,
    work_run,
)
from veriscribe.service.common import open_store
from veriscribe.service.corpora import (
    IngestProgress,
    add_corpus,
    list_corpora,
    section_text,
    show_corpus,
)
from veriscribe.service.doctor import doctor
from veriscribe.service.qa import ChatSession, WarmIndexes, ask, verify_answer

__all__ = ["generate_abstract", "run_abstract", "doctor", "open_store"]
__all__ += ["BatchProgress", "run_batch", "resume_run", "list_runs", "show_run"]
__all__ += ["work_run", "register_run", "run_results"]
__all__ += ["IngestProgress", "add_corpus", "list_corpora"]
__all__ += [
    "show_corpus",
    "section_text",
    "ChatSession",
    "WarmIndexes",
    "ask",
    "verify_answer",
]
