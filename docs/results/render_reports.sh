#!/usr/bin/env bash
# Draws the pictures of every benchmark result kept here (pmindex report:
# PNG + SVG figures and index.html beside each JSON). Needs matplotlib.
# crash_checker*.json, substrate.json, wort16m.json and wort_medians.json
# hold no benchmark runs (crash-checker speeds, substrate costs, per-operation
# medians): their figures are the tables of their .md files.
set -euo pipefail
cd "$(dirname "$0")"
report="python3 ../../python/pmindex/report.py"
$report btree.json                      # -> btree-report/
$report permart.json                    # -> permart-report/
$report permart_vs_artifact.json        # -> permart_vs_artifact-report/
$report wort.json                       # -> wort-report/
$report wort16m/recover-sparse.json     # -> wort16m/recover-sparse-report/
$report harness/*.json --out harness-report --title "pmindex report: the harness's own runs (docs/results/harness.md)"
$report bytes/matrix/*-t*.json --out bytes-report --title "pmindex report: byte keys on every dataset (docs/results/bytes.md)"
$report roart/*.json --out roart-report --title "pmindex report: ROART beside PermART, WORT, LB+-Tree (docs/results/roart.md)"
$report pactree/*.json --out pactree-report --title "pmindex report: PACTree beside PermART, FPTree, LB+-Tree, ROART (docs/results/pactree.md)"
