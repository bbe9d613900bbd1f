"""The async operations the CLI (and Python callers) run."""

from veriscribe.service.common import open_store
from veriscribe.service.doctor import DoctorReport, doctor

__all__ = ["DoctorReport", "doctor", "open_store"]
