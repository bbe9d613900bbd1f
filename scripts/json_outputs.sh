#!/usr/bin/env bash
# Run every command with --json on the simulated model over fixed inputs and write each
# output, with its timings and clock times blanked, to OUTDIR/<command>.json.
# Two checkouts' outputs can then be compared: `diff -r OUTDIR_A OUTDIR_B`.
#
# Usage: bash scripts/json_outputs.sh OUTDIR [CHECKOUT]
# CHECKOUT (default: this one) is the source tree to run, with this checkout's .venv
# (or $PYTHON): an older commit's worktree can be run the same way.
set -uo pipefail
out=$(realpath -m "${1:?usage: json_outputs.sh OUTDIR [CHECKOUT]}")
here=$(cd "$(dirname "$0")/.." && pwd)
repo=$(cd "${2:-$here}" && pwd)
data="$here/../shared/data"
py="${PYTHON:-$here/.venv/bin/python}"
vs() { PYTHONPATH="$repo/src" "$py" -c 'from veriscribe.cli.app import main; main()' "$@"; }
# A fixed place: run ids are derived from the inputs' absolute paths.
work=/tmp/veriscribe-json-outputs
rm -rf "$work" && mkdir -p "$work" "$out"
trap 'rm -rf "$work"' EXIT
cd "$work"
export VERISCRIBE_DB="$work/db.sqlite"
export VERISCRIBE_LLM__CACHE=true
# One fixed data directory for every checkout: paths in the outputs compare equal.
mkdir -p in
cp "$repo/examples/plos-editorial.xml" in/
cp "$data/articles/jats/plos__journal.pone.0008519.xml" in/
cp "$data/articles/jats/epmc__PMC3289602.xml" in/
cp "$data/guidelines/ngc/ngc-10056.md" "$data/guidelines/ngc/ngc-10359.md" in/
head -n 20 "$data/biorc800/dev.jsonl" > in/biorc.jsonl

normalise() {  # stdin JSON -> stdout JSON with volatile values blanked
  "$py" -c '
import json, re, sys
VOLATILE = re.compile(
    r"(seconds|elapsed|_ms$|_s$|duration|per_second|started|finished|updated|created"
    r"|^at$|_at$|time|load_seconds|tokens_per_second|endpoint$|^worker$|^ended$"
    r"|^heartbeat$|^peak_calls_in_flight$)"
)
def clean(v, key=""):
    if isinstance(v, dict):
        return {k: clean(x, k) for k, x in v.items()}
    if isinstance(v, list):
        return [clean(x, key) for x in v]
    if VOLATILE.search(key) and isinstance(v, (int, float, str)) and not isinstance(v, bool):
        return "<volatile>"
    if isinstance(v, str):
        return v.replace(sys.argv[1], "<work>")
    return v
text = sys.stdin.read()
try:
    print(json.dumps(clean(json.loads(text)), indent=1, sort_keys=True))
except json.JSONDecodeError:
    try:  # JSON lines: one normalised line each, in a stable order
        lines = [json.dumps(clean(json.loads(l)), sort_keys=True) for l in text.splitlines() if l.strip()]
        print("\n".join(sorted(lines)))
    except json.JSONDecodeError:
        print(text)
' "$work"
}

snap() {  # name, then the command's arguments
  local name=$1
  shift
  vs "$@" > "$work/raw.txt" 2> "$work/err.txt"
  echo "rc=$?" > "$out/$name.json"
  normalise < "$work/raw.txt" >> "$out/$name.json"
}

snap doctor doctor --model sim --json
snap abstract abstract in/plos-editorial.xml --model sim --json
snap abstract_bc abstract in/plos__journal.pone.0008519.xml --model sim --prompt bc --reasoning --json
snap batch batch in/plos__journal.pone.0008519.xml in/epmc__PMC3289602.xml --model sim -o results.jsonl --json
normalise < results.jsonl > "$out/batch_results.jsonl"
# Articles finish in any order: the evaluations read them in one order.
sort results.jsonl -o results.jsonl
run_id=$("$py" -c 'import json,sys; print(json.load(open(sys.argv[1]))["run_id"])' "$work/raw.txt" 2>/dev/null \
  || vs runs list --json | "$py" -c 'import json,sys; print(json.load(sys.stdin)[0]["run_id"])')
snap runs_list runs list --json
snap runs_show runs show "$run_id" --json
snap runs_resume runs resume "$run_id" --json
snap corpus_add corpus add ngc in/ngc-10056.md in/ngc-10359.md --model sim --json
snap corpus_list corpus list --json
snap corpus_show corpus show ngc --json
snap ask ask "What is recommended for screening?" --corpus ngc --model sim --json
cp "$work/raw.txt" answer.json
snap ask_bm25 ask "What is recommended for screening?" --corpus ngc --retriever bm25 --model sim --json
snap verify verify answer.json --corpus ngc --model sim --json
snap verify_all verify answer.json --corpus ngc --all-claims --no-judge --model sim --json
snap make_questions eval make-questions --corpus ngc --n 4 -o questions.jsonl --model sim --json
normalise < questions.jsonl > "$out/questions.jsonl"
snap ask_set ask --questions questions.jsonl --corpus ngc -o answers.jsonl --model sim --json
normalise < answers.jsonl > "$out/answers.jsonl"
snap eval_qa eval qa answers.jsonl --json
snap eval_judge eval judge --corpus ngc --sources 4 --model sim --json
snap eval_retrieval eval retrieval --corpus ngc --questions questions.jsonl --retriever bm25 --json
snap baseline_lead eval baseline lead in/plos__journal.pone.0008519.xml in/epmc__PMC3289602.xml -o lead.jsonl --json
snap baseline_naive eval baseline naive in/plos__journal.pone.0008519.xml in/epmc__PMC3289602.xml -o naive.jsonl --model sim --json
snap eval_abstracts eval abstracts results.jsonl --against lead.jsonl --resamples 200 --json
snap eval_support eval abstracts results.jsonl --support --support-samples 1 --model sim --resamples 200 --json
snap eval_labels eval labels in/biorc.jsonl --json
echo "wrote $(ls "$out" | wc -l) files to $out"
