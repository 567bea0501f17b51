#!/usr/bin/env python3
"""pmindex report: figures and one HTML page from `pmindex bench --json` results.

    pmindex report RESULTS.json... [--out DIR] [--title TEXT]
    pmindex-report RESULTS.json... [--out DIR]          (the installed script)
    python3 python/pmindex/report.py RESULTS.json...     (from the source tree)

Draws, each as PNG and SVG in DIR: throughput per index and workload,
throughput against threads, latency percentiles, flushes and fences per
operation, PM and DRAM bytes per record, and recovery time; then DIR/index.html,
one self-contained page (the SVGs inline) with the runs' context (machine,
build, command) and a table of every run. A figure whose data no run has
(e.g. recovery without --recover, one thread count only) is left out and the
page says why.

Reads the harness's JSON (docs/bench.md) and also the flat summaries kept in
docs/results/ (one object per run with fields such as mops, p50_ns,
flushes_per_op, pm_bytes_used, clean_open_seconds; a {"median": x} stands for
x). Runs with the same index, variant, workload and thread count (the
repetitions of `pmindex bench --repetitions`, or the same run in several
files) are shown as their median, with min-max error bars. A series with no
data for a figure is left out of it (an index in dram mode has no flushes:
the persistence figure names it underneath). PNGs are drawn at 200 dpi.

This file imports nothing from the pmindex package (only matplotlib), so the
`pmindex report` verb can run it straight from the source tree.
"""

import argparse
import html
import json
import os
import statistics
import sys

FIGURES = {
    "throughput": "Throughput per index and workload",
    "threads": "Throughput against threads",
    "latency": "Latency percentiles",
    "persistence": "Flushes and fences per operation",
    "space": "PM and DRAM bytes per record",
    "recovery": "Recovery time",
}
PERCENTILES = ["p50", "p90", "p99", "p99.9", "p99.99"]
# The parameters that tell runs of one index apart (beside workload and threads).
NUMBERS = ["mops", "flushes_per_op", "fences_per_op", "load_flushes_per_insert", "load_fences_per_insert",
           "pm_bytes_per_record", "dram_bytes_per_record", "bytes_per_record", "clean_open_s", "dirty_open_s",
           "recover_s"]
VARIANT_FIELDS = ["mode", "parallel", "dataset", "value_size", "universe", "distribution"]


class ReportError(Exception):
    """A bad input file or argument: exit code 2 (usage), as the C++ verbs."""


# ----------------------------------------------------------------- reading

def _num(v):
    if isinstance(v, dict) and "median" in v:
        v = v["median"]
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    return float(v)


def _first(rec, *paths):
    """The first number found at one of the dotted paths."""
    for p in paths:
        cur = rec
        for part in p.split("|"):
            if not isinstance(cur, dict) or part not in cur:
                cur = None
                break
            cur = cur[part]
        n = _num(cur)
        if n is not None:
            return n
    return None


def _normalise(rec, name, context_options):
    """One run (bench format or a flat summary) as a flat dict of figures."""
    run = {}
    run["index"] = str(rec.get("index") or rec.get("variant") or (name.split("/")[0] if name else "?"))
    run["workload"] = str(rec.get("workload") or rec.get("run") or rec.get("config")
                          or (name.split("/", 1)[-1] if name else "?"))
    threads = rec.get("threads", context_options.get("threads", 1))
    run["threads"] = int(threads) if isinstance(threads, (int, float)) else 1
    for f in VARIANT_FIELDS:
        v = rec.get(f)
        if v is None and f == "value_size" and "dataset" in rec:
            v = 8
        if v is not None and not isinstance(v, (dict, list)):
            run[f] = str(v)
    mops = _first(rec, "run|mops", "mops", "pmindex_total_mops")
    if mops is None:
        ns = _first(rec, "op_ns_wall")
        mops = 1e3 / ns * run["threads"] if ns else None
    run["mops"] = mops
    lat = {}
    for p in PERCENTILES:
        v = _first(rec, f"run|latency_ns|{p}", f"{p}_ns")
        if v is not None:
            lat[p] = v
    run["latency"] = lat
    run["flushes_per_op"] = _first(rec, "run|flushes_per_op", "flushes_per_op")
    run["fences_per_op"] = _first(rec, "run|fences_per_op", "fences_per_op")
    run["load_flushes_per_insert"] = _first(rec, "load|flushes_per_insert", "load_flushes_per_insert",
                                            "flushes_per_insert")
    run["load_fences_per_insert"] = _first(rec, "load|fences_per_insert", "load_fences_per_insert",
                                           "fences_per_insert")
    records = _first(rec, "space|records", "records_prefilled", "records")
    run["records"] = _first(rec, "workload_spec|records", "records_prefilled", "records", "space|records")
    pm = _first(rec, "space|pm_bytes_per_record", "pm_bytes_per_record")
    if pm is None and records:
        used = _first(rec, "space|pm_bytes_used", "pm_bytes_used")
        pm = used / records if used is not None else None
    dram = None
    if records:
        d = _first(rec, "space|dram_bytes", "dram_bytes")
        dram = d / records if d is not None else None
    run["pm_bytes_per_record"] = pm
    run["dram_bytes_per_record"] = dram
    run["bytes_per_record"] = _first(rec, "space|bytes_per_record", "bytes_per_record")
    run["clean_open_s"] = _first(rec, "recovery|clean_open_seconds", "clean_open_seconds", "clean_open_s")
    run["dirty_open_s"] = _first(rec, "recovery|dirty_open_seconds", "dirty_open_seconds")
    run["recover_s"] = _first(rec, "recovery|dirty_recover_seconds", "dirty_recover_seconds", "recovery_s")
    check = rec.get("check")
    ok = check.get("ok") if isinstance(check, dict) else rec.get("check_ok", rec.get("checks_ok",
                                                                                       rec.get("all_checks_ok")))
    run["check"] = None if ok is None else bool(ok)
    run["notes"] = [str(n) for n in rec.get("notes", []) if isinstance(n, str)]
    return run


def load_file(path):
    """(context, runs) of one result file; raises ReportError if unreadable."""
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except FileNotFoundError:
        raise ReportError(f"cannot read {path}") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ReportError(f"{path}: not JSON ({e})") from None
    if not isinstance(data, dict):
        raise ReportError(f"{path}: not a result file (a JSON object is expected)")
    context = data.get("context") if isinstance(data.get("context"), dict) else {}
    for k in ("command", "machine", "notes", "date"):
        if isinstance(data.get(k), str) and k not in context:
            context[k] = data[k]
    options = context.get("options") if isinstance(context.get("options"), dict) else {}
    items = []
    for key in ("results", "runs"):
        block = data.get(key)
        if isinstance(block, list):
            items += [("", r) for r in block if isinstance(r, dict)]
        elif isinstance(block, dict):
            items += [(n, r) for n, r in block.items() if isinstance(r, dict)]
    runs = []
    for name, rec in items:
        run = _normalise(rec, name, options)
        if any(run[k] is not None for k in ("mops", "flushes_per_op", "pm_bytes_per_record",
                                            "bytes_per_record", "clean_open_s", "recover_s")) or run["latency"]:
            run["file"] = path
            runs.append(run)
    return context, runs


def series_labels(runs):
    """Adds run['series']: the index plus whatever variant fields differ."""
    varying = [f for f in VARIANT_FIELDS if len({r.get(f) for r in runs}) > 1]
    for r in runs:
        extra = [f"{f}={r[f]}" for f in varying if r.get(f) is not None]
        r["series"] = r["index"] + (" (" + ", ".join(extra) + ")" if extra else "")
    return varying


def merge_repeats(runs):
    """One run per (series, workload, threads): medians of the repeats."""
    groups = {}
    for r in runs:
        groups.setdefault((r["series"], r["workload"], r["threads"]), []).append(r)
    merged = []
    for (series, workload, threads), rs in groups.items():
        m = dict(rs[0])
        m["repeats"] = len(rs)
        # (min, max) of each figure the repeats measured differently: the
        # error bars of the figures.
        m["spread"] = {}
        for k in NUMBERS:
            vals = [x[k] for x in rs if x.get(k) is not None]
            m[k] = statistics.median(vals) if vals else None
            if len(vals) > 1 and min(vals) < max(vals):
                m["spread"][k] = (min(vals), max(vals))
        m["latency"] = {}
        for p in PERCENTILES:
            vals = [x["latency"][p] for x in rs if p in x["latency"]]
            if vals:
                m["latency"][p] = statistics.median(vals)
                if len(vals) > 1 and min(vals) < max(vals):
                    m["spread"]["latency|" + p] = (min(vals), max(vals))
        checks = [x["check"] for x in rs if x["check"] is not None]
        m["check"] = all(checks) if checks else None
        merged.append(m)
    return merged


def _ordered(values):
    seen = []
    for v in values:
        if v not in seen:
            seen.append(v)
    return seen


# ----------------------------------------------------------------- figures

DPI = 200  # PNGs for print: 200 dots per inch at the figure's size in inches


def _plt():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    plt.rcParams.update({"svg.hashsalt": "pmindex", "svg.fonttype": "none", "font.size": 10,
                         "axes.titlesize": 10, "axes.labelsize": 10, "xtick.labelsize": 9, "ytick.labelsize": 9,
                         "legend.fontsize": 9, "figure.titlesize": 11,
                         "axes.grid": True, "grid.alpha": 0.3, "axes.axisbelow": True,
                         "errorbar.capsize": 2.5})
    return plt


_COLORS = {}  # series -> color, the same in every figure of a report


def _set_colors(plt, series):
    cmap = plt.get_cmap("tab10" if len(series) <= 10 else "tab20")
    _COLORS.clear()
    for i, s in enumerate(series):
        _COLORS[s] = cmap(i % cmap.N)


def _wrap(label, width):
    """A tick label in lines of about `width` characters, broken at spaces
    (and before parentheses: series names such as "btree (mode=dram, ...)")."""
    words, lines, cur = label.replace("(", " (").split(), [], ""
    for w in words:
        if cur and len(cur) + 1 + len(w) > width:
            lines.append(cur)
            cur = w
        else:
            cur = f"{cur} {w}" if cur else w
    lines.append(cur)
    return "\n".join(lines)


# Category labels: up to this many side by side (wrapped), more of them
# upright; either way the figure is wide enough that none runs into the next.
_FLAT_LABELS = 6
_CHAR_IN = 0.075  # inches per character of a 9-point tick label
_LINE_IN = 0.17   # inches per line of it


def _label_texts(labels):
    flat = len(labels) <= _FLAT_LABELS
    return [_wrap(str(label), 14 if flat else 26) for label in labels], flat


def _label_inches(labels):
    """The width (inches) each category needs for its label."""
    texts, flat = _label_texts(labels)
    if flat:
        return max([0.6] + [_CHAR_IN * max(len(x) for x in t.split("\n")) + 0.2 for t in texts])
    return max([0.35] + [_LINE_IN * (t.count("\n") + 1) + 0.12 for t in texts])


def _ticklabels(ax, labels):
    texts, flat = _label_texts(labels)
    ax.set_xticks(range(len(labels)))
    ax.set_xticklabels(texts, rotation=0 if flat else 90, ha="center", va="top")


def _yerr(values, spreads):
    """Asymmetric error bars (median to min, median to max); zero where a
    value has no spread; None when no value has one."""
    if not any(spreads):
        return None
    lo = [v - sp[0] if sp else 0 for v, sp in zip(values, spreads)]
    hi = [sp[1] - v if sp else 0 for v, sp in zip(values, spreads)]
    return [lo, hi]


def _has_data(series, groups, value):
    """The series with at least one value in these groups."""
    return [s for s in series if any(value(s, g) is not None for g in groups)]


def _bars(ax, groups, series, value, ylabel, log=False, spread=None):
    """Grouped bars: one group per entry of `groups`, one bar per series;
    error bars from spread(series, group) -> (min, max) or None."""
    width = 0.8 / max(1, len(series))
    for i, s in enumerate(series):
        xs, ys, sps = [], [], []
        for g, group in enumerate(groups):
            v = value(s, group)
            if v is not None:
                xs.append(g + (i - (len(series) - 1) / 2) * width)
                ys.append(v)
                sps.append(spread(s, group) if spread else None)
        ax.bar(xs, ys, width, label=s, color=_COLORS.get(s), yerr=_yerr(ys, sps),
               error_kw={"elinewidth": 0.9, "ecolor": "0.15"})
    _ticklabels(ax, groups)
    ax.set_ylabel(ylabel)
    if log:
        ax.set_yscale("log")


def _width(groups, series=None):
    """Figure width (inches) for bars: room for every bar and every label."""
    bars = len(groups) * max(1, len(series or []))
    return min(24.0, max(6.0, 0.3 * bars + 2.5, _label_inches(groups) * len(groups) + 2.0))


def _legend(fig, ax):
    handles, labels = ax.get_legend_handles_labels()
    if handles:  # outside, right of the axes (savefig's tight box keeps it)
        fig.legend(handles, labels, loc="center left", bbox_to_anchor=(1.0, 0.5), frameon=False)


def _footnote(fig, text):
    """A line under the figure (what it leaves out, what the bars mean)."""
    if text:
        fig.text(0.01, -0.01, text, ha="left", va="top", fontsize=8, color="0.3", wrap=True)


def _spread_note(runs):
    reps = sorted({r.get("repeats", 1) for r in runs})
    if reps[-1] <= 1:
        return ""
    n = str(reps[0]) if len(reps) == 1 else f"{reps[0]}-{reps[-1]}"
    return f"Medians of {n} repetitions; error bars: min-max."


def _finish(fig, title):
    fig.suptitle(title)
    fig.tight_layout()


def _grid(plt, n):
    """A figure with n panels, three a row."""
    cols = min(3, n)
    rows = (n + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(4.2 * cols, 3.2 * rows), squeeze=False)
    for ax in axes.flat[n:]:
        ax.set_visible(False)
    return fig, axes


def _at_max_threads(runs):
    """For each (series, workload) the run with the most threads."""
    best = {}
    for r in runs:
        k = (r["series"], r["workload"])
        if k not in best or r["threads"] > best[k]["threads"]:
            best[k] = r
    return best


def _spread_of(r, field):
    return r.get("spread", {}).get(field) if r else None


def fig_throughput(plt, runs):
    best = {k: r for k, r in _at_max_threads(runs).items() if r["mops"] is not None}
    if not best:
        return None, "no run reports a throughput"
    series = _ordered(s for s, _ in best)
    workloads = _ordered(w for _, w in best)
    fig, ax = plt.subplots(figsize=(_width(workloads, series), 4))
    vals = [r["mops"] for r in best.values() if r["mops"] > 0]
    wide = bool(vals) and max(vals) > 50 * min(vals)  # e.g. the `null` index beside real ones
    _bars(ax, workloads, series, lambda s, w: best[(s, w)]["mops"] if (s, w) in best else None,
          "Mops/s (log scale)" if wide else "Mops/s", log=wide,
          spread=lambda s, w: _spread_of(best.get((s, w)), "mops"))
    threads = sorted({r["threads"] for r in best.values()})
    _legend(fig, ax)
    _finish(fig, f"Throughput ({'/'.join(map(str, threads))} thread{'s' if threads != [1] else ''})")
    _footnote(fig, _spread_note(best.values()))
    return fig, None


def fig_threads(plt, runs):
    by = {}
    for r in runs:
        if r["mops"] is not None:
            by.setdefault(r["workload"], {}).setdefault(r["series"], []).append(
                (r["threads"], r["mops"], _spread_of(r, "mops")))
    workloads = [w for w, ss in by.items() if any(len({p[0] for p in pts}) > 1 for pts in ss.values())]
    if not workloads:
        return None, "every run has one thread count"
    fig, axes = _grid(plt, len(workloads))
    for ax, w in zip(axes.flat, workloads):
        for s, pts in by[w].items():
            pts = sorted(pts, key=lambda p: p[0])
            ys = [p[1] for p in pts]
            ax.errorbar([p[0] for p in pts], ys, yerr=_yerr(ys, [p[2] for p in pts]), marker="o", label=s,
                        color=_COLORS.get(s), elinewidth=0.9)
        ax.set_title(w)
        ax.set_xlabel("threads")
        ax.set_ylabel("Mops/s")
        ax.set_xticks(sorted({p[0] for pts in by[w].values() for p in pts}))
    _legend(fig, axes.flat[0])
    _finish(fig, "Throughput against threads")
    _footnote(fig, _spread_note(runs))
    return fig, None


def fig_latency(plt, runs):
    best = {k: r for k, r in _at_max_threads(runs).items() if r["latency"]}
    if not best:
        return None, "no run has latency samples"
    workloads = _ordered(w for _, w in best)
    fig, axes = _grid(plt, len(workloads))
    for ax, w in zip(axes.flat, workloads):
        for (s, w2), r in best.items():
            if w2 != w:
                continue
            ps = [p for p in PERCENTILES if p in r["latency"]]
            ys = [r["latency"][p] for p in ps]
            ax.errorbar(ps, ys, yerr=_yerr(ys, [_spread_of(r, "latency|" + p) for p in ps]), marker="o", label=s,
                        color=_COLORS.get(s), elinewidth=0.9)
        ax.set_yscale("log")
        ax.set_title(w)
        ax.set_ylabel("ns")
    handles = {}
    for ax in axes.flat:
        for h, l in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(l, h)
    fig.legend(list(handles.values()), list(handles.keys()), loc="center left", bbox_to_anchor=(1.0, 0.5),
               frameon=False)
    _finish(fig, "Latency percentiles (sampled operations)")
    _footnote(fig, _spread_note(best.values()))
    return fig, None


def fig_persistence(plt, runs):
    best = {k: r for k, r in _at_max_threads(runs).items()
            if r["flushes_per_op"] is not None or r["fences_per_op"] is not None}
    load = {}
    for r in runs:
        if r["load_flushes_per_insert"] is not None:
            load.setdefault(r["series"], r)
    if not best and not load:
        return None, "no run counts flushes and fences"
    series = _ordered([s for s, _ in best] + list(load))
    workloads = _ordered(w for _, w in best) + (["load (per insert)"] if load else [])

    def value(field, load_field):
        def get(s, w):
            if w == "load (per insert)":
                return load[s][load_field] if s in load else None
            r = best.get((s, w))
            return r[field] if r else None
        return get

    def spread(field, load_field):
        def get(s, w):
            return _spread_of(load.get(s), load_field) if w == "load (per insert)" else _spread_of(best.get((s, w)),
                                                                                                    field)
        return get

    flushes = value("flushes_per_op", "load_flushes_per_insert")
    fences = value("fences_per_op", "load_fences_per_insert")
    # A series that never flushes nor fences (an index in dram mode, a
    # volatile baseline) would be a row of zero-height bars: left out, and
    # named under the figure.
    # (When no series flushes, the zeros are the figure's finding: all stay.)
    silent = [s for s in series if not any((flushes(s, w) or 0) > 0 or (fences(s, w) or 0) > 0 for w in workloads)]
    if len(silent) == len(series):
        silent = []
    series = [s for s in series if s not in silent]
    fig, axes = plt.subplots(2, 1, figsize=(_width(workloads, series), 6.4), sharex=True)
    _bars(axes[0], workloads, series, flushes, "cache lines flushed / op",
          spread=spread("flushes_per_op", "load_flushes_per_insert"))
    _bars(axes[1], workloads, series, fences, "fences / op", spread=spread("fences_per_op", "load_fences_per_insert"))
    axes[0].set_title("flushes")
    axes[1].set_title("fences")
    _legend(fig, axes[0])
    _finish(fig, "Persistence cost per operation")
    notes = [_spread_note(best.values())]
    if silent:
        notes.append("Not shown (no flushes or fences): " + ", ".join(silent) + ".")
    _footnote(fig, " ".join(n for n in notes if n))
    return fig, None


def _count(n):
    for unit, div in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if n >= div and n % div == 0:
            return f"{n // div}{unit}"
    for unit, div in (("G", 1e9), ("M", 1e6), ("K", 1e3)):
        if n >= div:
            return f"{n / div:g}{unit}"
    return str(n)


def _per_series(runs, fields):
    """The median over a series' runs of each field that some run has, and
    its (min, max) over the runs and their repeats; one entry per record
    count when the runs have several (space and recovery depend on it)."""
    several = len({r["records"] for r in runs if r.get("records")}) > 1

    def key(r):
        return r["series"] + (f", {_count(int(r['records']))} records" if several and r.get("records") else "")

    out = {}
    for k in _ordered(key(r) for r in runs):
        rs = [r for r in runs if key(r) == k]
        vals = {f: [r[f] for r in rs if r[f] is not None] for f in fields}
        if any(vals.values()):
            out[k] = {f: statistics.median(v) if v else None for f, v in vals.items()}
            lows = {f: [(_spread_of(r, f) or (r[f], r[f]))[0] for r in rs if r[f] is not None] for f in fields}
            highs = {f: [(_spread_of(r, f) or (r[f], r[f]))[1] for r in rs if r[f] is not None] for f in fields}
            out[k]["spread"] = {f: (min(lows[f]), max(highs[f])) for f in fields
                                if lows[f] and min(lows[f]) < max(highs[f])}
    return out


def fig_space(plt, runs):
    per = _per_series(runs, ["pm_bytes_per_record", "dram_bytes_per_record", "bytes_per_record"])
    if not per:
        return None, "no run reports its space"
    series = list(per)
    fig, ax = plt.subplots(figsize=(_width(series), 4.2))
    pm = [per[s]["pm_bytes_per_record"] or 0 for s in series]
    dram = [per[s]["dram_bytes_per_record"] or 0 for s in series]
    # Summaries that only know the total show it as one bar.
    total_only = [per[s]["bytes_per_record"] if not pm[i] and not dram[i] and per[s]["bytes_per_record"] else 0
                  for i, s in enumerate(series)]
    xs = range(len(series))
    if any(pm):
        ax.bar(xs, pm, 0.6, label="PM")
    if any(dram):
        ax.bar(xs, dram, 0.6, bottom=pm, label="DRAM")
    if any(total_only):
        ax.bar(xs, total_only, 0.6, label="total (not split)", color="0.6")
    # The spread of the total (PM + DRAM) over repetitions, at the top of
    # each stack.
    tops = [pm[i] + dram[i] + total_only[i] for i in range(len(series))]
    sps = [per[s]["spread"].get("bytes_per_record") for s in series]
    if any(sps):
        ax.errorbar(list(xs), tops, yerr=_yerr(tops, sps), fmt="none", ecolor="0.15", elinewidth=0.9)
    _ticklabels(ax, series)
    ax.set_ylabel("bytes per record")
    _legend(fig, ax)
    _finish(fig, "Space: PM and DRAM bytes per record")
    _footnote(fig, _spread_note(runs))
    return fig, None


def fig_recovery(plt, runs):
    per = _per_series(runs, ["clean_open_s", "dirty_open_s", "recover_s"])
    per = {s: v for s, v in per.items() if v["clean_open_s"] is not None or v["recover_s"] is not None}
    if not per:
        return None, "no run measured recovery (bench --recover)"
    series = list(per)
    fig, ax = plt.subplots(figsize=(_width(series, [1, 2, 3]), 4.2))
    kinds = [("clean_open_s", "reopen after a clean close"), ("dirty_open_s", "dirty open (mapping)"),
             ("recover_s", "recovery after a crash")]
    kinds = [(f, l) for f, l in kinds if any(per[s][f] is not None for s in series)]
    width = 0.8 / len(kinds)
    for i, (f, label) in enumerate(kinds):
        have = [s for s in series if per[s][f] is not None]
        xs = [j + (i - (len(kinds) - 1) / 2) * width for j, s in enumerate(series) if per[s][f] is not None]
        ys = [per[s][f] * 1e3 for s in have]
        sps = [tuple(x * 1e3 for x in per[s]["spread"][f]) if f in per[s]["spread"] else None for s in have]
        ax.bar(xs, ys, width, label=label, yerr=_yerr(ys, sps), error_kw={"elinewidth": 0.9, "ecolor": "0.15"})
    _ticklabels(ax, series)
    ax.set_ylabel("ms")
    ax.set_yscale("log")
    _legend(fig, ax)
    _finish(fig, "Recovery time")
    _footnote(fig, _spread_note(runs))
    return fig, None


DRAWERS = {"throughput": fig_throughput, "threads": fig_threads, "latency": fig_latency,
           "persistence": fig_persistence, "space": fig_space, "recovery": fig_recovery}


# ----------------------------------------------------------------- page

CONTEXT_FIELDS = ["date", "host", "machine", "kernel", "cpu", "cores", "flush_instruction", "build_type",
                  "compiler", "flags", "asserts", "git_commit", "command", "notes"]


def bench_command(options):
    """The `pmindex bench` command line a context's options stand for."""
    parts = ["pmindex", "bench"]
    for k, v in options.items():
        if v is True:
            parts.append(f"--{k.replace('_', '-')}")
        elif v is False or v == "" or v is None:
            continue
        else:
            parts.append(f"--{k.replace('_', '-')} {v}")
    return " ".join(parts)


def _fmt(v, digits=3):
    if v is None:
        return "–"
    if isinstance(v, float):
        if v == 0:
            return "0"
        if abs(v) >= 100:
            return f"{v:,.0f}"
        return f"{v:.{digits}g}"
    return html.escape(str(v))


def render_html(title, contexts, runs, drawn, skipped, out_dir):
    e = html.escape
    parts = [f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{e(title)}</title>
<style>
body {{ font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1200px; color: #222; }}
table {{ border-collapse: collapse; margin: 0.5em 0 1.5em; font-size: 0.85em; }}
th, td {{ border: 1px solid #ccc; padding: 0.2em 0.5em; text-align: left; vertical-align: top; }}
td.n {{ text-align: right; font-variant-numeric: tabular-nums; }}
code {{ font-size: 0.85em; word-break: break-all; }}
figure {{ margin: 1.5em 0; }} figure svg {{ max-width: 100%; height: auto; }}
.fail {{ color: #b00; font-weight: bold; }}
</style></head><body>
<h1>{e(title)}</h1>
"""]
    parts.append("<h2>Context</h2>")
    for path, ctx in contexts:
        parts.append(f"<h3><code>{e(path)}</code></h3><table>")
        for k in CONTEXT_FIELDS:
            if k in ctx and ctx[k] not in ("", None):
                parts.append(f"<tr><th>{e(k)}</th><td>{e(str(ctx[k]))}</td></tr>")
        if isinstance(ctx.get("options"), dict):
            parts.append(f"<tr><th>command</th><td><code>{e(bench_command(ctx['options']))}</code></td></tr>")
        parts.append("</table>")
    parts.append("<h2>Figures</h2>")
    for name in drawn:
        with open(os.path.join(out_dir, name + ".svg"), encoding="utf-8") as f:
            svg = f.read()
        svg = svg[svg.find("<svg"):]  # drop the XML prolog and doctype
        parts.append(f'<figure id="{name}">{svg}<figcaption>{e(FIGURES[name])} '
                     f'(<a href="{name}.png">PNG</a>, <a href="{name}.svg">SVG</a>)</figcaption></figure>')
    if skipped:
        parts.append("<p>Not drawn:</p><ul>")
        parts += [f"<li>{e(FIGURES[n])}: {e(why)}</li>" for n, why in skipped.items()]
        parts.append("</ul>")
    parts.append("<h2>Runs</h2><table><tr><th>index</th><th>workload</th><th>threads</th><th>Mops/s</th>"
                 "<th>p50 ns</th><th>p99 ns</th><th>flush/op</th><th>fence/op</th><th>PM B/rec</th>"
                 "<th>DRAM B/rec</th><th>recovery s</th><th>repeats</th><th>check</th></tr>")
    for r in runs:
        check = {None: "–", True: "ok", False: '<span class="fail">FAIL</span>'}[r["check"]]
        cells = [r["mops"], r["latency"].get("p50"), r["latency"].get("p99"), r["flushes_per_op"],
                 r["fences_per_op"], r["pm_bytes_per_record"], r["dram_bytes_per_record"], r["recover_s"]]
        texts = [_fmt(c) for c in cells]
        if "mops" in r.get("spread", {}):
            lo, hi = r["spread"]["mops"]
            texts[0] += f" ({_fmt(lo)}–{_fmt(hi)})"
        parts.append(f"<tr><td>{e(r['series'])}</td><td>{e(r['workload'])}</td><td class=n>{r['threads']}</td>"
                     + "".join(f"<td class=n>{t}</td>" for t in texts)
                     + f"<td class=n>{r.get('repeats', 1)}</td><td>{check}</td></tr>")
    parts.append("</table>")
    notes = _ordered(n for r in runs for n in r["notes"])
    if notes:
        parts.append("<h2>Notes</h2><ul>" + "".join(f"<li>{e(n)}</li>" for n in notes) + "</ul>")
    parts.append("<p><small>Made by <code>pmindex report</code>. Repeats of one run are shown as their "
                 "median (min–max in the table, error bars in the figures).</small></p></body></html>\n")
    return "\n".join(parts)


def make_report(paths, out_dir, title=None):
    """Draws every figure the results allow into out_dir; returns (drawn, skipped)."""
    contexts, runs = [], []
    for p in paths:
        ctx, rs = load_file(p)
        contexts.append((p, ctx))
        runs += rs
    if not runs:
        raise ReportError("no benchmark runs in " + ", ".join(paths)
                          + " (expected `pmindex bench --json` results)")
    series_labels(runs)
    runs = merge_repeats(runs)
    os.makedirs(out_dir, exist_ok=True)
    plt = _plt()
    _set_colors(plt, _ordered(r["series"] for r in runs))
    drawn, skipped = [], {}
    for name, draw in DRAWERS.items():
        fig, why = draw(plt, runs)
        if fig is None:
            skipped[name] = why
            for ext in ("png", "svg"):  # no stale picture of an earlier report
                stale = os.path.join(out_dir, f"{name}.{ext}")
                if os.path.exists(stale):
                    os.remove(stale)
            continue
        fig.savefig(os.path.join(out_dir, name + ".png"), dpi=DPI, bbox_inches="tight")
        fig.savefig(os.path.join(out_dir, name + ".svg"), bbox_inches="tight", metadata={"Date": None})
        plt.close(fig)
        drawn.append(name)
    if title is None:
        title = "pmindex report: " + ", ".join(os.path.basename(p) for p in paths[:4]) + (
            " ..." if len(paths) > 4 else "")
    page = render_html(title, contexts, runs, drawn, skipped, out_dir)
    with open(os.path.join(out_dir, "index.html"), "w", encoding="utf-8") as f:
        f.write(page)
    return drawn, skipped


def default_out(paths):
    if len(paths) == 1:
        stem = os.path.splitext(paths[0])[0]
        return stem + "-report"
    return "pmindex-report"


def main(argv=None):
    ap = argparse.ArgumentParser(prog="pmindex report",
                                 description="Figures (PNG, SVG) and an HTML page from `pmindex bench --json` files.")
    ap.add_argument("results", nargs="+", metavar="RESULTS.json")
    ap.add_argument("--out", metavar="DIR",
                    help="output directory (default: <file>-report beside a single file, else ./pmindex-report)")
    ap.add_argument("--title", help="the page's title")
    try:
        args = ap.parse_args(argv)
    except SystemExit as e:
        return 2 if e.code else 0
    out = args.out or default_out(args.results)
    try:
        drawn, skipped = make_report(args.results, out, args.title)
    except ReportError as e:
        print(f"pmindex: {e}", file=sys.stderr)
        return 2
    except ImportError as e:
        print(f"pmindex: report needs matplotlib (pip install matplotlib): {e}", file=sys.stderr)
        return 12
    print(f"{out}/index.html: {len(drawn)} figures ({', '.join(drawn)})"
          + (f"; not drawn: {', '.join(skipped)}" if skipped else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
