"""The embedded runtime is optional: without llama-cpp-python the rest of veriscribe works.

llama.cpp and the code that runs on it (``veriscribe.llm.embedded``) come with the
``local`` extra. Only the model factory imports them, inside the function that builds an
embedded model; the probes below run with ``llama_cpp`` made unimportable, in a fresh
interpreter, as on an install without the extra.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import veriscribe
from veriscribe.llm.factory import INSTALL_LOCAL

ROOT = Path(veriscribe.__file__).parent
EMBEDDED = ROOT / "llm" / "embedded"
MISSING = f"the embedded model needs the local extra: {INSTALL_LOCAL}"

# Any import of llama_cpp (or of a submodule of it) fails, as when it is not installed.
BLOCK = "import sys; sys.modules['llama_cpp'] = None\n"


def _runtime_imports(path: Path) -> list[tuple[str, bool]]:
    """Return the runtime modules a file imports, each with whether a function does."""
    found = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            inside = in_function or isinstance(
                child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda
            )
            names: list[str] = []
            if isinstance(child, ast.Import):
                names = [alias.name for alias in child.names]
            elif isinstance(child, ast.ImportFrom) and child.level == 0:
                module = child.module or ""
                names = [module]
                if module == "veriscribe.llm":
                    names = [f"veriscribe.llm.{alias.name}" for alias in child.names]
            for name in names:
                if name.split(".")[0] == "llama_cpp" or name.startswith(
                    "veriscribe.llm.embedded"
                ):
                    found.append((name, inside))
            visit(child, inside)

    visit(ast.parse(path.read_text("utf-8")), False)
    return found


def test_only_the_factory_imports_the_runtime_and_only_when_it_builds_one() -> None:
    wrong = []
    for path in sorted(ROOT.rglob("*.py")):
        if EMBEDDED in path.parents:
            continue
        where = path.relative_to(ROOT).as_posix()
        for name, in_function in _runtime_imports(path):
            if not (where == "llm/factory.py" and in_function):
                wrong.append(f"{where} imports {name}")
    assert wrong == []


def _probe(code: str, tmp_path: Path) -> dict[str, object]:
    env = {**os.environ, "VERISCRIBE_DB": str(tmp_path / "v.sqlite")}
    done = subprocess.run(
        [sys.executable, "-c", BLOCK + code],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    report: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return report


IMPORT_ALL = """
import importlib, json, os, sys
from pathlib import Path
import veriscribe
from veriscribe.errors import ConfigError
from veriscribe.llm.factory import make_llm
from veriscribe.settings import Settings

root = Path(veriscribe.__file__).parent
failed = {}
for path in sorted(root.rglob("*.py")):
    parts = path.relative_to(root.parent).with_suffix("").parts
    name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
    if name.startswith(("veriscribe.llm.embedded", "veriscribe.__main__")):
        continue
    try:
        importlib.import_module(name)
    except Exception as exc:
        failed[name] = repr(exc)
os.environ["OPENAI_BASE_URL"] = "http://127.0.0.1:9/v1"
built = [
    make_llm(spec, Settings()).spec.backend
    for spec in ("ollama:llama3.2", "openai:gpt-4o-mini", "sim")
]
try:
    make_llm("local", Settings())
    local = "built"
except ConfigError as exc:
    local = exc.user_message
print(json.dumps({
    "failed": failed,
    "built": built,
    "local": local,
    "embedded": [m for m in sys.modules if m.startswith("veriscribe.llm.embedded")],
}))
"""


def test_without_llama_cpp_every_module_imports_and_server_models_build(
    tmp_path: Path,
) -> None:
    report = _probe(IMPORT_ALL, tmp_path)
    assert report["failed"] == {}
    assert report["built"] == ["ollama", "openai", "sim"]
    assert report["local"] == MISSING
    assert report["embedded"] == []


CLI = """
import json, sys
from veriscribe.cli.app import app
try:
    app(sys.argv[1:], prog_name="veriscribe")
except SystemExit as exit:
    code = exit.code
print(json.dumps({"code": code}))
"""


def test_without_llama_cpp_the_cli_says_what_to_install(tmp_path: Path) -> None:
    article = tmp_path / "a.md"
    article.write_text(
        "# Walking\n\nWalking 120 minutes a week lowers blood pressure.\n"
    )
    env = {**os.environ, "VERISCRIBE_DB": str(tmp_path / "v.sqlite")}
    done = subprocess.run(
        [sys.executable, "-c", BLOCK + CLI, "abstract", str(article)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    assert json.loads(done.stdout.strip().splitlines()[-1]) == {"code": 1}
    assert done.stderr.strip().splitlines() == [f"error: {MISSING}"]


HTTP = """
import asyncio, json
from pathlib import Path
import httpx
from veriscribe.serve import ServeConfig, create_app
from veriscribe.settings import Settings

async def main():
    app = create_app(ServeConfig(settings=Settings(model="local"), work_dir=Path(%r)))
    transport = httpx.ASGITransport(app=app)
    async with (
        app.router.lifespan_context(app),
        httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client,
    ):
        ready = await client.get("/readyz")
        files = {"files": ("g.md", b"# Urine\\n\\nCollect midstream urine.\\n")}
        added = await client.post("/v1/corpora/urine/documents", files=files)
        asked = {"question": "Is midstream urine collected?", "corpus": "urine"}
        answer = await client.post("/v1/answers", json=asked)
        return {"ready": ready.status_code, "added": added.status_code,
                "answer": answer.status_code, "problem": answer.json()}

print(json.dumps(asyncio.run(main())))
"""


def test_without_llama_cpp_the_server_serves_and_says_what_to_install(
    tmp_path: Path,
) -> None:
    report = _probe(HTTP % str(tmp_path / "serve"), tmp_path)
    assert report["ready"] == 503  # not ready: every answer would fail
    assert report["added"] == 200  # no model call
    assert report["answer"] == 503
    problem = report["problem"]
    assert isinstance(problem, dict)
    assert problem["detail"] == MISSING
