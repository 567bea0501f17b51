# `pmindex report`: a small bench run (two indexes, two workloads, two thread
# counts, --recover) rendered through the `pmindex report` verb; every
# expected figure must exist, as PNG and SVG, non-empty, and the HTML page
# must hold each one and the run's context. Needs matplotlib and the
# `pmindex` binary ($PMINDEX_BIN, set by ctest).
import json
import os
import subprocess
import sys

import pytest

pytest.importorskip("matplotlib")

BIN = os.environ.get("PMINDEX_BIN", "")
HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "pmindex", "report.py")
FIGURES = ["throughput", "threads", "latency", "persistence", "space", "recovery"]

needs_bin = pytest.mark.skipif(not os.path.exists(BIN), reason="PMINDEX_BIN not set (run through ctest)")


def bench(tmp_path, threads, name):
    out = tmp_path / name
    pool = f"/dev/shm/pmindex-pytest-report-{os.getpid()}.pool"
    subprocess.run([BIN, "bench", "--index", "canary,permart", "--workload", "ycsb-c,update90insert10",
                    "-n", "4000", "--seconds", "0.2", "-t", str(threads), "--recover", "--no-progress",
                    "--pool", pool, "--pool-size", "64M", "--json", str(out)],
                   check=True, stdout=subprocess.DEVNULL)
    return out


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    if not os.path.exists(BIN):
        pytest.skip("PMINDEX_BIN not set (run through ctest)")
    tmp = tmp_path_factory.mktemp("bench")
    return [bench(tmp, 1, "t1.json"), bench(tmp, 2, "t2.json")]


@needs_bin
def test_report_verb_draws_every_figure(results, tmp_path):
    out = tmp_path / "report"
    r = subprocess.run([BIN, "report", *map(str, results), "--out", str(out)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    for name in FIGURES:
        for ext in ("png", "svg"):
            f = out / f"{name}.{ext}"
            assert f.exists() and f.stat().st_size > 1000, f
    with open(out / "throughput.png", "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"
    page = (out / "index.html").read_text()
    assert page.count("<svg") == len(FIGURES) and "Not drawn" not in page
    ctx = json.loads(results[0].read_text())["context"]
    for field in ("cpu", "git_commit", "compiler"):
        assert str(ctx[field]) in page
    assert "pmindex bench --index canary,permart" in page
    assert "canary" in page and "ycsb-c" in page and "FAIL" not in page


@needs_bin
def test_one_file_draws_what_it_can_and_says_why_not(results, tmp_path):
    out = tmp_path / "one"
    r = subprocess.run([sys.executable, SCRIPT, str(results[0]), "--out", str(out)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert not (out / "threads.png").exists()  # one thread count only
    assert "every run has one thread count" in (out / "index.html").read_text()
    for name in ("throughput", "latency", "persistence", "space", "recovery"):
        assert (out / f"{name}.svg").stat().st_size > 1000


def test_flat_summaries_as_in_docs_results(tmp_path):
    summary = {"results": [
        {"index": "a", "workload": "read", "threads": 1, "mops": {"median": 2.0, "runs": [1, 2, 3]},
         "flushes_per_op": 0, "fences_per_op": 0, "pm_bytes_used": 6400, "dram_bytes": 1600,
         "records_prefilled": 100, "clean_open_seconds": 0.01, "dirty_recover_seconds": 0.2},
        {"index": "b", "workload": "read", "threads": 2, "mops": 3.0, "p50_ns": 300, "p99_ns": 900}]}
    path = tmp_path / "flat.json"
    path.write_text(json.dumps(summary))
    r = subprocess.run([sys.executable, SCRIPT, str(path)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    out = tmp_path / "flat-report"  # the default: beside the file
    for name in ("throughput", "latency", "persistence", "space", "recovery"):
        assert (out / f"{name}.png").stat().st_size > 1000


def test_bad_inputs_are_usage_errors(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{ not json")
    empty = tmp_path / "empty.json"
    empty.write_text(json.dumps({"results": []}))
    for args in ([str(bad)], [str(empty)], [str(tmp_path / "missing.json")], []):
        r = subprocess.run([sys.executable, SCRIPT, *args, "--out", str(tmp_path / "o")], capture_output=True,
                           text=True)
        assert r.returncode == 2, (args, r.stderr)
        assert "Traceback" not in r.stderr
