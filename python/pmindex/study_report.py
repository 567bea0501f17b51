"""The report page of a study run (`pmindex study run`, docs/studies.md).

Reads DIR/results.json as `pmindex study run` writes it and makes, in DIR:
index.html (context, exact command, findings with their verdicts, the
paper's published figures beside ours, throughput per part) and one PNG per
figure. Standard library plus matplotlib; without matplotlib the page is
written with its tables only (and says so).

    python3 -m pmindex.study_report DIR/results.json [--out DIR]
"""

import argparse
import html
import json
import os
import sys

VERDICT_COLOURS = {"held": "#d8f0d8", "not held": "#f6d5d5", "not comparable": "#eeeeee"}


def _plt():
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        return plt
    except ImportError:
        return None


def _fmt(v, digits=3):
    if v is None:
        return ""
    if isinstance(v, float) and v != 0 and (abs(v) >= 1e5 or abs(v) < 1e-3):
        return f"{v:.{digits}g}"
    return f"{v:.{digits}g}" if isinstance(v, float) else str(v)


def _metric(cell, name):
    return cell.get("metrics", {}).get(name)


def part_groups(doc, part):
    """The cells of a part grouped by every label but index and workload:
    one panel per group, workloads on the x axis, one bar per index."""
    groups = {}
    for c in doc.get("cells", []):
        lab = c["labels"]
        if lab.get("part") != part:
            continue
        key = tuple(sorted((k, v) for k, v in lab.items()
                           if k not in ("index", "workload", "part", "records")))
        groups.setdefault(key, []).append(c)
    return groups


def fig_part(plt, doc, part, out_dir):
    groups = part_groups(doc, part)
    groups = {k: v for k, v in groups.items() if any(_metric(c, "run.mops") for c in v)}
    if not groups:
        return None
    n = len(groups)
    cols = min(n, 2)
    rows = (n + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(7 * cols, 3.6 * rows), squeeze=False)
    # One colour per index across every panel of the figure.
    every = sorted({c["labels"].get("index", "") for v in groups.values() for c in v})
    palette = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    colour = {idx: palette[i % len(palette)] for i, idx in enumerate(every)}
    for ax, (key, cells) in zip([a for r in axes for a in r], sorted(groups.items())):
        workloads = sorted({c["labels"].get("workload", "") for c in cells})
        indexes = sorted({c["labels"].get("index", "") for c in cells})
        width = 0.8 / max(1, len(indexes))
        for i, idx in enumerate(indexes):
            xs, ys, lo, hi = [], [], [], []
            for j, w in enumerate(workloads):
                for c in cells:
                    if c["labels"].get("index") == idx and c["labels"].get("workload") == w:
                        m = _metric(c, "run.mops")
                        if m:
                            xs.append(j + (i - (len(indexes) - 1) / 2) * width)
                            ys.append(m["median"])
                            lo.append(m["median"] - m["min"])
                            hi.append(m["max"] - m["median"])
            if xs:
                ax.bar(xs, ys, width, yerr=[lo, hi], label=idx, capsize=2, color=colour[idx])
        ax.set_xticks(range(len(workloads)))
        ax.set_xticklabels(workloads, rotation=20, ha="right", fontsize=8)
        ax.set_ylabel("Mops/s (median, min-max)")
        ax.set_title(", ".join(f"{k}={v}" for k, v in key if k != "run") or part, fontsize=9)
        ax.legend(fontsize=7)
    for a in [a for r in axes for a in r][n:]:
        a.axis("off")
    fig.tight_layout()
    name = f"part-{part}.png"
    fig.savefig(os.path.join(out_dir, name), dpi=90)
    plt.close(fig)
    return name


def fig_published(plt, fig_doc, out_dir):
    vals = fig_doc.get("values", [])
    if not vals:
        return None
    names = [v["index"] for v in vals]
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.4), sharey=False)
    axes[0].bar(names, [v["paper"] for v in vals], color="#8899bb")
    axes[0].set_title("paper" + (" (approximate, read off a plot)" if fig_doc.get("approximate") else ""),
                      fontsize=9)
    ours = [v.get("ours") for v in vals]
    errs = [[(v["ours"] - v["ours_min"]) if v.get("ours") is not None else 0 for v in vals],
            [(v["ours_max"] - v["ours"]) if v.get("ours") is not None else 0 for v in vals]]
    axes[1].bar(names, [o if o is not None else 0 for o in ours], yerr=errs, color="#bb8866", capsize=2)
    for i, o in enumerate(ours):
        if o is None:
            axes[1].text(i, 0, "not\nmeasured", ha="center", va="bottom", fontsize=7)
    axes[1].set_title("ours (median, min-max)", fontsize=9)
    for ax in axes:
        ax.set_ylabel(fig_doc.get("unit", ""))
        ax.tick_params(axis="x", labelrotation=20, labelsize=8)
    fig.suptitle(f'{fig_doc["title"]} ({fig_doc["source"]})', fontsize=10)
    fig.tight_layout()
    name = f'published-{fig_doc["id"]}.png'
    fig.savefig(os.path.join(out_dir, name), dpi=90)
    plt.close(fig)
    return name


def findings_table(doc):
    rows = ["<table><tr><th>finding</th><th>the paper says</th><th>source</th><th>verdict</th>"
            "<th>measured ratio</th><th>spread</th><th>what was compared</th></tr>"]
    for f in doc.get("findings", []):
        v = f.get("verdict", "")
        comparable = v != "not comparable"
        want = ""
        if "within" in f:
            want = f"in [{_fmt(f['within'][0])}, {_fmt(f['within'][1])}]"
        elif f.get("kind") == "above":
            want = f"&ge; {_fmt(f['bound'])}"
        elif f.get("kind") == "below":
            want = f"&le; {_fmt(f['bound'])}"
        elif "tolerance" in f:
            want = f"{f['kind']}, tolerance {_fmt(f['tolerance'])}"
        rows.append(
            f'<tr style="background:{VERDICT_COLOURS.get(v, "#fff")}"><td>{html.escape(f["id"])}</td>'
            f'<td>{html.escape(f["statement"])}</td><td>{html.escape(f["source"])}</td>'
            f"<td><b>{html.escape(v)}</b></td>"
            f'<td>{_fmt(f["ratio"]) + " (want " + want + ")" if comparable else ""}</td>'
            f'<td>{_fmt(f["ratio_min"]) + "&ndash;" + _fmt(f["ratio_max"]) if comparable else ""}</td>'
            f'<td>{html.escape(f.get("detail", ""))}</td></tr>')
    rows.append("</table>")
    return "\n".join(rows)


def published_table(fig_doc):
    rows = [f"<table><tr><th>{html.escape(fig_doc.get('by', 'index'))}</th><th>paper</th><th>ours (median)</th><th>ours min&ndash;max</th></tr>"]
    for v in fig_doc.get("values", []):
        ours = v.get("ours")
        rows.append(f'<tr><td>{html.escape(v["index"])}</td><td>{_fmt(v["paper"])}</td>'
                    f'<td>{_fmt(ours) if ours is not None else "not measured"}</td>'
                    f'<td>{_fmt(v["ours_min"]) + "&ndash;" + _fmt(v["ours_max"]) if ours is not None else ""}</td></tr>')
    rows.append("</table>")
    return "\n".join(rows)


def render(doc, out_dir):
    plt = _plt()
    ctx = doc.get("context", {})
    study = doc.get("study", {})
    title = f'{study.get("name", "study")}: {study.get("title", "")}'
    h = [f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>",
         "<style>body{font-family:sans-serif;max-width:1200px;margin:auto}table{border-collapse:collapse;"
         "margin:8px 0}td,th{border:1px solid #bbb;padding:3px 6px;font-size:13px;vertical-align:top}"
         "code{background:#f3f3f3;padding:2px}</style></head><body>",
         f"<h1>{html.escape(title)}</h1>",
         f"<p>Reproduces: {html.escape(study.get('paper', ''))}. {html.escape(study.get('description', ''))}</p>",
         f"<p>Command: <code>{html.escape(ctx.get('command', ''))}</code></p>",
         "<table>"]
    for k in ("date", "host", "cpu", "cores", "kernel", "flush_instruction", "build_type", "compiler",
              "git_commit", "scale", "repetitions"):
        if k in ctx:
            h.append(f"<tr><th>{k}</th><td>{html.escape(str(ctx[k]))}</td></tr>")
    h.append("</table>")
    if plt is None:
        h.append("<p><b>matplotlib is not installed: no figures (pip install matplotlib).</b></p>")
    h.append("<h2>Findings</h2>")
    h.append(findings_table(doc))
    if doc.get("published"):
        h.append("<h2>The paper's figures beside ours</h2>")
    for p in doc.get("published", []):
        h.append(f'<h3>{html.escape(p["title"])}</h3><p>{html.escape(p["source"])}, in {html.escape(p["unit"])}'
                 f'{" (read off a plot: approximate)" if p.get("approximate") else ""}. '
                 f'{html.escape(p.get("note", ""))}</p>')
        if plt is not None:
            name = fig_published(plt, p, out_dir)
            if name:
                h.append(f"<img src='{name}'>")
        h.append(published_table(p))
    h.append("<h2>Measured throughput</h2>")
    for part in study.get("parts", []):
        h.append(f'<h3>{html.escape(part["name"])}: {html.escape(part["title"])}</h3>'
                 f'<p>{html.escape(part.get("description", ""))}</p>')
        if plt is not None:
            name = fig_part(plt, doc, part["name"], out_dir)
            if name:
                h.append(f"<img src='{name}'>")
    if doc.get("notes"):
        h.append("<h2>Notes</h2><ul>")
        h.extend(f"<li>{html.escape(n)}</li>" for n in doc["notes"])
        h.append("</ul>")
    h.append("<h2>Runs</h2><table><tr><th>run</th><th>status</th><th>seconds</th><th>command</th></tr>")
    for r in doc.get("runs", []):
        h.append(f'<tr><td>{html.escape(r["id"])}</td><td>{html.escape(r.get("status", ""))}</td>'
                 f'<td>{_fmt(r.get("seconds"))}</td><td><code>{html.escape(r.get("command", ""))}</code></td></tr>')
    h.append("</table></body></html>")
    path = os.path.join(out_dir, "index.html")
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(h))
    return path


def main(argv=None):
    ap = argparse.ArgumentParser(description="the report page of a `pmindex study run`")
    ap.add_argument("results", help="results.json of a study run")
    ap.add_argument("--out", help="directory of the page (default: the results file's)")
    a = ap.parse_args(argv)
    try:
        with open(a.results, encoding="utf-8") as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        print(f"pmindex study report: {a.results}: {e}", file=sys.stderr)
        return 2
    out = a.out or os.path.dirname(os.path.abspath(a.results))
    os.makedirs(out, exist_ok=True)
    print(render(doc, out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
