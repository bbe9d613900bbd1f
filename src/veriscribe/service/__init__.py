"""The async operations the CLI (and Python callers) run."""

from veriscribe.service.abstracts import generate_abstract, run_abstract
from veriscribe.service.common import open_store
from veriscribe.service.doctor import DoctorReport, doctor

__all__ = ["generate_abstract", "run_abstract", "DoctorReport", "doctor", "open_store"]
