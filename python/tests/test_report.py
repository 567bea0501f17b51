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


# ------------------------------------------------------------ repetitions

def _report_module():
    import importlib.util
    spec = importlib.util.spec_from_file_location("pmindex_report_under_test", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _png_dpi(path):
    """The PNG's pHYs resolution in dots per inch (None without one)."""
    import struct
    data = open(path, "rb").read()
    i = data.find(b"pHYs")
    if i < 0:
        return None
    ppm_x, _, unit = struct.unpack(">IIB", data[i + 4:i + 13])
    return ppm_x * 0.0254 if unit == 1 else None


@pytest.fixture(scope="module")
def repeated(tmp_path_factory):
    if not os.path.exists(BIN):
        pytest.skip("PMINDEX_BIN not set (run through ctest)")
    out = tmp_path_factory.mktemp("reps") / "r3.json"
    pool = f"/dev/shm/pmindex-pytest-report-reps-{os.getpid()}.pool"
    subprocess.run([BIN, "bench", "--index", "canary,stdmap", "--workload", "ycsb-c,update90insert10",
                    "-n", "4000", "--seconds", "0.1", "-t", "1", "--repetitions", "3", "--recover", "--no-progress",
                    "--pool", pool, "--pool-size", "64M", "--json", str(out)],
                   check=True, stdout=subprocess.DEVNULL)
    return out


@needs_bin
def test_repetitions_are_drawn_as_medians_with_spreads(repeated, tmp_path):
    data = json.loads(repeated.read_text())
    assert len(data["results"]) == 12 and len(data["aggregates"]) == 4
    out = tmp_path / "reps"
    r = subprocess.run([sys.executable, SCRIPT, str(repeated), "--out", str(out)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    for name in ("throughput", "latency", "persistence", "space", "recovery"):
        assert (out / f"{name}.svg").stat().st_size > 1000, name
        assert _png_dpi(out / f"{name}.png") >= 199, name
    assert "Medians of 3 repetitions; error bars: min-max." in (out / "throughput.svg").read_text()
    rep = _report_module()
    _, runs = rep.load_file(str(repeated))
    rep.series_labels(runs)
    merged = rep.merge_repeats(runs)
    assert len(merged) == 4 and all(m["repeats"] == 3 for m in merged)
    for m in merged:  # the median lies within the spread it is drawn with
        lo, hi = m["spread"].get("mops", (m["mops"], m["mops"]))
        assert lo <= m["mops"] <= hi


@needs_bin
def test_a_series_without_flushes_is_left_out_of_the_persistence_figure(repeated, tmp_path):
    rep = _report_module()
    plt = rep._plt()
    _, runs = rep.load_file(str(repeated))
    rep.series_labels(runs)
    runs = rep.merge_repeats(runs)
    rep._set_colors(plt, rep._ordered(r["series"] for r in runs))
    fig, why = rep.fig_persistence(plt, runs)
    assert fig is not None, why
    labels = [t.get_text() for leg in fig.legends for t in leg.get_texts()]
    assert any(lbl.startswith("canary") for lbl in labels), labels
    assert not any(lbl.startswith("stdmap") for lbl in labels), labels
    assert any("stdmap" in t.get_text() and "Not shown" in t.get_text() for t in fig.texts)
    plt.close(fig)


def test_category_labels_do_not_overlap():
    rep = _report_module()
    plt = rep._plt()
    names = ["fptree (mode=persist, dataset=urls)", "btree-dram (mode=dram, dataset=urls)", "permart-bytes",
             "woart (mode=persist, dataset=urls)", "roart", "pactree (mode=persist)", "stdmap (mode=dram)",
             "dptree (mode=persist, dataset=urls)", "lbtree", "utree (mode=persist, dataset=urls)"]
    for some in (names, names[:4]):  # upright labels, and few side by side
        runs = [{"series": n, "workload": "w", "threads": 1, "records": 1000, "pm_bytes_per_record": 60.0 + i,
                 "dram_bytes_per_record": 10.0, "bytes_per_record": 70.0 + i, "clean_open_s": 0.01,
                 "dirty_open_s": 0.02, "recover_s": 0.03, "repeats": 1, "spread": {}}
                for i, n in enumerate(some)]
        rep._set_colors(plt, some)
        for draw in (rep.fig_space, rep.fig_recovery):
            fig, why = draw(plt, runs)
            assert fig is not None, why
            fig.canvas.draw()
            boxes = [t.get_window_extent() for t in fig.axes[0].get_xticklabels() if t.get_text()]
            assert len(boxes) == len(some)
            for i in range(len(boxes) - 1):
                assert boxes[i].x1 < boxes[i + 1].x0, (draw.__name__, some[i], some[i + 1])
            plt.close(fig)
