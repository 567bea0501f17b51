#!/bin/bash
# One study at smoke scale (tests/stress/studies.cmake): it runs to the end,
# and leaves results.json (context, runs, cells, a verdict for every finding),
# README.md with the findings table, and the HTML report page. With `resume`,
# --resume is checked too (the same for every study: one study checks it).
# usage: study_smoke.sh PMINDEX NAME [resume]
set -u
PM=$1
NAME=$2
RESUME=${3:-}
DIR=$(mktemp -d /dev/shm/pmindex-study-test.XXXXXX)
trap 'rm -rf "$DIR"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

"$PM" study run "$NAME" --scale smoke --out "$DIR/out" || fail "study run exited $?"
for f in results.json README.md index.html; do
  [ -s "$DIR/out/$f" ] || fail "no $f"
done
grep -q "^## Findings" "$DIR/out/README.md" || fail "README.md has no findings table"
grep -q "<h2>Findings</h2>" "$DIR/out/index.html" || fail "the report page has no findings table"
python3 - "$DIR/out/results.json" <<'PY' || fail "results.json is incomplete"
import json, sys
doc = json.load(open(sys.argv[1]))
ctx = doc["context"]
for k in ("command", "cpu", "flush_instruction", "git_commit", "build_type", "scale"):
    assert k in ctx, f"context has no {k}"
assert ctx["scale"] == "smoke"
assert doc["runs"] and all(r["status"] in ("ok", "skipped") for r in doc["runs"]), doc["runs"]
assert doc["results"] and doc["cells"], "no results"
for r in doc["results"]:
    assert "part" in r["study"] and "run" in r["study"]
verdicts = [f["verdict"] for f in doc["findings"]]
assert verdicts, "no findings"
assert all(v in ("held", "not held", "not comparable") for v in verdicts), verdicts
print(f'{len(doc["results"])} results, {len(doc["cells"])} cells; findings: ' +
      ", ".join(f'{v}: {verdicts.count(v)}' for v in ("held", "not held", "not comparable")))
PY
# --resume reuses every finished run (same command); a run with no record
# of finishing runs again.
if [ "$RESUME" = resume ]; then
  "$PM" study run "$NAME" --scale smoke --out "$DIR/out" --resume > "$DIR/resume.txt" || fail "--resume exited $?"
  runs=$(python3 -c 'import json,sys; print(sum(1 for r in json.load(open(sys.argv[1]))["runs"] if r["status"] == "ok" and "reused" in r))' "$DIR/out/results.json")
  reused=$(grep -c "reused raw/" "$DIR/resume.txt")
  [ "$reused" = "$runs" ] || fail "--resume reused $reused of $runs runs: $(cat "$DIR/resume.txt")"
  first=$(ls "$DIR"/out/raw/*.done | head -1)
  rm -f "$first"
  "$PM" study run "$NAME" --scale smoke --out "$DIR/out" --resume > "$DIR/resume.txt" || fail "--resume exited $?"
  again=$(grep -c "reused raw/" "$DIR/resume.txt")
  [ "$again" = $((runs - 1)) ] || fail "--resume reused $again of $runs runs after one record of finishing was removed"
fi

[ -z "$(ls /dev/shm | grep "pmindex-study-[0-9]")" ] || echo "note: study pools present in /dev/shm (another run?)"
echo "PASS"
