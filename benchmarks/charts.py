"""Renders each committed results table (benchmarks/results/<name>.md) as a bar chart beside it
(<name>.png): the ratio columns the table reports (speedups, size ratios, throughputs), one bar
group per row. The markdown table stays the source: the chart is derived from it alone.

    python charts.py [name ...]      (no name: every results table with a chart spec)
"""
import math
import os
import re
import sys

RESULTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")

# name -> which table of the file (0-based), how many leading columns label a row, the columns
# drawn as bars (and their legend, when not the column's name), what the value axis means, and the
# reference line (1.0 = as fast / as large).
CHARTS = {
    "tpch": dict(columns=["speedup", "in-memory vs Parquet"], axis="speedup over Parquet (higher is better)", ref=1.0,
                 legend={"speedup": "Fermion", "in-memory vs Parquet": "Spark's in-memory cache (no file, no decoding)"},
                 spread={"speedup": "middle half of paired speedups"}),
    "analytic": dict(columns=["vs Parquet", "vs ORC"], axis="speedup (higher is better)", ref=1.0),
    "scans": dict(columns=["vs Parquet", "vs ORC"], axis="speedup (higher is better)", ref=1.0),
    "nested": dict(columns=["vs Parquet", "vs ORC"], axis="speedup (higher is better)", ref=1.0),
    "filters": dict(columns=["vs Parquet", "vs ORC"], axis="speedup (higher is better)", ref=1.0),
    "joins": dict(columns=["vs Parquet", "vs Parquet (option off)"], axis="speedup over Parquet (higher is better)",
                  ref=1.0, legend={"vs Parquet": "Fermion, runtimeFilters on", "vs Parquet (option off)": "Fermion, off"},
                  legend_loc="upper right"),
    "wide": dict(label_columns=2, columns=["vs Parquet", "vs ORC"], axis="speedup (higher is better)", ref=1.0,
                 spread={"vs Parquet": "vs Parquet, middle half"}),
    "batch": dict(columns=["vs Parquet", "vs Parquet (noop)"], axis="speedup (higher is better)", ref=1.0),
    "take": dict(label_columns=4, columns=["Fermion vs Lance", "Fermion vs Parquet"],
                 axis="speedup (higher is better, log scale)", ref=1.0),
    "encodings": dict(columns=["Fermion / Parquet", "Fermion / ORC"],
                      axis="file size relative to the other format (lower is better)", ref=1.0),
    "sizes": dict(columns=["Fermion / Parquet", "Fermion level 19 / Vortex compact"],
                  axis="Fermion's size relative to the other format (lower is better)", ref=1.0,
                  legend={"Fermion / Parquet": "Fermion (zstd level 3) / Parquet-zstd",
                          "Fermion level 19 / Vortex compact": "Fermion (zstd level 19) / Vortex compact"}),
    "convert": dict(columns=["after / before"], axis="bytes after / bytes before", ref=1.0),
    "decode": dict(label_columns=2, columns=["decode GB/s", "memcpy GB/s"], axis="GB/s per core (higher is better)"),
    "merge": dict(columns=["time vs MERGE", "written vs MERGE"], axis="relative to MERGE (lower is better)", ref=1.0),
    "wide-open": dict(columns=["whole open ms", "open 10 columns ms", "whole open + read 10 columns ms",
                               "open 10 columns + read ms"],
                      axis="ms (lower is better)",
                      legend={"whole open ms": "open: whole (schema and CIT)",
                              "open 10 columns ms": "open: 10 columns through the column directory (1.5)",
                              "whole open + read 10 columns ms": "open + read: whole",
                              "open 10 columns + read ms": "open + read: through the column directory"},
                      legend_loc="upper right"),
    "writer-memory": dict(columns=["peak stripe buffer MB", "peak heap MB"], axis="MB"),
}


def tables(text):
    """The markdown tables of `text`, each a (header, rows) of cell strings."""
    out, lines = [], text.splitlines()
    i = 0
    while i < len(lines):
        if lines[i].startswith("|") and i + 1 < len(lines) and re.match(r"^\|[-:| ]+\|$", lines[i + 1]):
            header = cells(lines[i])
            rows = []
            i += 2
            while i < len(lines) and lines[i].startswith("|"):
                rows.append(cells(lines[i]))
                i += 1
            out.append((header, rows))
        else:
            i += 1
    return out


def cells(line):
    return [c.strip() for c in line.strip().strip("|").split("|")]


def number(cell):
    """A cell's value: '1.13x', '0.931', '141,612', '**2.0x**'; None when it holds none."""
    m = re.search(r"-?\d[\d,]*(\.\d+)?", cell.replace("*", ""))
    return float(m.group(0).replace(",", "")) if m else None


def render(name, spec):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    path = os.path.join(RESULTS, f"{name}.md")
    with open(path) as f:
        text = f.read()
    found = tables(text)
    if not found:
        raise SystemExit(f"{path}: no table to chart")
    header, rows = found[spec.get("table", 0)]
    missing = [c for c in spec["columns"] if c not in header]
    if missing:
        raise SystemExit(f"{path}: the table has no column {missing} (columns: {header})")
    label_columns = spec.get("label_columns", 1)
    labels = [" ".join(r[:label_columns]) for r in rows]
    series = {c: [number(r[header.index(c)]) for r in rows] for c in spec["columns"]}
    values = [v for vs in series.values() for v in vs if v is not None]
    height = max(2.5, 0.32 * len(rows) * max(1, len(series)) + 1.2)
    fig, ax = plt.subplots(figsize=(9, height))
    bar = 0.8 / len(series)
    for k, (column, vs) in enumerate(series.items()):
        ys = [i + (k - (len(series) - 1) / 2) * bar for i in range(len(rows))]
        present = [(y, v) for y, v in zip(ys, vs) if v is not None]
        # A column's spread (spec "spread": a column of "low-high" ranges) drawn as a whisker.
        spread = spec.get("spread", {}).get(column)
        whiskers = None
        if spread in header:
            ranges = [re.findall(r"\d+\.\d+", r[header.index(spread)]) for r in rows]
            ok = [len(rg) == 2 for rg, v in zip(ranges, vs) if v is not None]
            if all(ok):
                pairs = [(float(rg[0]), float(rg[1]), v) for rg, v in zip(ranges, vs) if v is not None]
                whiskers = [[max(0.0, v - lo) for lo, _, v in pairs], [max(0.0, hi - v) for _, hi, v in pairs]]
        bars = ax.barh([y for y, _ in present], [v for _, v in present], height=bar, xerr=whiskers,
                       error_kw=dict(elinewidth=0.8, capsize=2),
                       label=spec.get("legend", {}).get(column, column))
        ax.bar_label(bars, labels=[f"{v:g}" for _, v in present], fontsize=7, padding=2)
    if values and min(values) > 0 and max(values) / min(values) > 50:
        ax.set_xscale("log")
    if spec.get("ref") is not None:
        ax.axvline(spec["ref"], color="black", linewidth=0.8)
    ax.set_yticks(range(len(rows)), labels, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel(spec["axis"])
    title = next((line.lstrip("# ").strip() for line in text.splitlines() if line.startswith("# ")), name)
    ax.set_title(title, fontsize=10)
    if len(series) > 1:
        ax.legend(fontsize=8, loc=spec.get("legend_loc", "lower right"))
    fig.tight_layout()
    out = os.path.join(RESULTS, f"{name}.png")
    fig.savefig(out, dpi=100)
    plt.close(fig)
    print(f"[charts] {out}")


def main(names):
    for name in names or [n for n in CHARTS if os.path.exists(os.path.join(RESULTS, f"{n}.md"))]:
        if name not in CHARTS:
            raise SystemExit(f"no chart spec for {name!r} (known: {', '.join(sorted(CHARTS))})")
        render(name, CHARTS[name])


if __name__ == "__main__":
    main(sys.argv[1:])
