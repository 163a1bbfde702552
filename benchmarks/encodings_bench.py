"""Encodings (issue 4) and TPC-H-like scans (issue 5, W3): file sizes and full-scan times of
Fermion vs Parquet (zstd) vs ORC (zstd), written from the same DataFrames in one run.

    benchmarks/run.sh encodings [--rows N] [--lineitem-rows N]

Three tables: a TPC-H-like lineitem (16 columns, generated in Spark), random numeric columns, and
low-entropy columns (sorted timestamps, small-range integers, repeated strings, booleans, a mostly
null column). For each: bytes per format; per column (and for the whole row) the time to
materialise it through Spark's noop sink; for lineitem also a Q1-style aggregate.
Writes benchmarks/results/encodings.md.
"""
import argparse
import os
import tempfile

from harness import FORMATS, machine_line, markdown_table, noop_scan, progress, publish, session, size_of, timed, timed_side_by_side, write_all

WORDS = ["carefully", "final", "deposits", "quickly", "regular", "accounts", "furiously", "ironic", "pending",
         "requests", "packages", "blithely", "express", "special", "theodolites", "slyly", "even", "bold",
         "silent", "foxes", "ideas", "instructions", "platelets", "asymptotes", "dependencies", "courts",
         "excuses", "pinto", "beans", "dolphins", "across", "above", "after", "along", "among", "around"]


def lineitem(spark, rows):
    words = "array(" + ",".join(f"'{w}'" for w in WORDS) + ")"
    word = lambda seed: f"element_at({words}, cast(rand({seed}) * {len(WORDS)} as int) + 1)"
    return spark.range(rows, numPartitions=4).selectExpr(
        "id div 4 * 32 + (id % 4) div 3 as l_orderkey",  # sorted, about 4 lines per order
        f"cast(rand(11) * {max(rows // 30, 1000)} as bigint) + 1 as l_partkey",
        f"cast(rand(12) * {max(rows // 600, 100)} as bigint) + 1 as l_suppkey",
        "cast(id % 4 + 1 as int) as l_linenumber",
        "cast(cast(rand(13) * 50 as int) + 1 as decimal(15,2)) as l_quantity",
        "cast(round(rand(14) * 100000 + 900, 2) as decimal(15,2)) as l_extendedprice",
        "cast(cast(rand(15) * 11 as int) / 100 as decimal(15,2)) as l_discount",
        "cast(cast(rand(16) * 9 as int) / 100 as decimal(15,2)) as l_tax",
        "element_at(array('A', 'N', 'R'), cast(rand(17) * 3 as int) + 1) as l_returnflag",
        "element_at(array('O', 'F'), cast(rand(18) * 2 as int) + 1) as l_linestatus",
        "date_add(date'1992-01-02', cast(rand(19) * 2500 as int)) as l_shipdate",
        "date_add(date'1992-01-31', cast(rand(20) * 2500 as int)) as l_commitdate",
        "date_add(date'1992-01-03', cast(rand(21) * 2500 as int)) as l_receiptdate",
        "element_at(array('DELIVER IN PERSON', 'COLLECT COD', 'NONE', 'TAKE BACK RETURN'), cast(rand(22) * 4 as int) + 1) as l_shipinstruct",
        "element_at(array('REG AIR', 'AIR', 'RAIL', 'SHIP', 'TRUCK', 'MAIL', 'FOB'), cast(rand(23) * 7 as int) + 1) as l_shipmode",
        f"concat_ws(' ', {word(24)}, {word(25)}, {word(26)}, {word(27)}) as l_comment")


RANDOM = {
    "int": "cast(rand(1) * 2147483647 as int)",
    "bigint": "cast(rand(2) * 9.2e18 as bigint)",
    "double": "rand(3) * 1e6",
}

LOW_ENTROPY = {
    "sorted timestamps": "timestamp_micros(1700000000000000 + id * 1000 + cast(rand(4) * 1000 as bigint))",
    "small-range int": "cast(rand(5) * 100 as int)",
    "repeated strings": "element_at(array('alpha', 'beta', 'gamma', 'delta', 'epsilon', 'zeta', 'eta', 'theta'), cast(rand(6) * 8 as int) + 1)",
    "boolean": "rand(7) < 0.3",
    "mostly null": "if(rand(8) < 0.95, null, cast(rand(9) * 1e9 as bigint))",
    "sorted bigint": "id * 3",
}

Q1 = """select l_returnflag, l_linestatus, sum(l_quantity), sum(l_extendedprice),
        sum(l_extendedprice * (1 - l_discount)), avg(l_quantity), avg(l_discount), count(*)
        from {t} where l_shipdate <= date'1998-09-02' group by l_returnflag, l_linestatus"""


def speedup(times, other):
    return f"{times[other] / times['fermion']:.2f}x"


def scan_rows(spark, paths, columns, reps):
    rows = []
    for label, col in columns:
        times = timed_side_by_side({f: (lambda f=f: noop_scan(spark.read.format(f).load(paths[f]).select(*col))) for f in FORMATS}, reps=reps)
        progress(f"{label}: " + ", ".join(f"{f} {times[f]:.3f}s" for f in FORMATS))
        rows.append([label, *[f"{times[f]:.3f}" for f in FORMATS], speedup(times, "parquet"), speedup(times, "orc")])
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=10_000_000, help="rows of the random and low-entropy tables")
    ap.add_argument("--lineitem-rows", type=int, default=6_000_000)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results", "encodings.md"))
    args = ap.parse_args()
    spark = session("fermion-encodings-bench")
    base = tempfile.mkdtemp(prefix="fermion-encodings-bench-")
    header = ["column", "Fermion s", "Parquet s", "ORC s", "vs Parquet", "vs ORC"]
    sections, size_rows, total = [], [], {f: 0 for f in FORMATS}

    def table(name, df):
        paths = write_all(spark, df, base, name)
        sizes = {f: size_of(spark, paths[f]) for f in FORMATS}
        for f in FORMATS:
            total[f] += sizes[f]
        size_rows.append([name, *[f"{sizes[f]:,}" for f in FORMATS],
                          f"{sizes['fermion'] / sizes['parquet']:.3f}", f"{sizes['fermion'] / sizes['orc']:.3f}"])
        return paths

    progress(f"lineitem: {args.lineitem_rows:,} rows")
    li = table("lineitem", lineitem(spark, args.lineitem_rows))
    li_cols = [("all 16 columns", ["*"])] + [(c, [c]) for c in ["l_orderkey", "l_partkey", "l_extendedprice", "l_discount",
                                                               "l_returnflag", "l_shipdate", "l_shipmode", "l_comment"]]
    li_rows = scan_rows(spark, li, li_cols, args.reps)
    q1 = timed_side_by_side({f: (lambda f=f: spark.read.format(f).load(li[f]).createOrReplaceTempView("li") or
                                 spark.sql(Q1.format(t="li")).collect()) for f in FORMATS}, reps=args.reps)
    progress("Q1: " + ", ".join(f"{f} {q1[f]:.3f}s" for f in FORMATS))
    li_rows.append(["Q1-style aggregate", *[f"{q1[f]:.3f}" for f in FORMATS], speedup(q1, "parquet"), speedup(q1, "orc")])

    progress(f"random numeric and low-entropy columns: {args.rows:,} rows each")
    rnd_names = {label: f"r{i}" for i, label in enumerate(RANDOM)}
    rnd = table("random numeric", spark.range(args.rows, numPartitions=4).selectExpr(*[f"{e} as {rnd_names[k]}" for k, e in RANDOM.items()]))
    low_names = {label: f"l{i}" for i, label in enumerate(LOW_ENTROPY)}
    low = table("low entropy", spark.range(args.rows, numPartitions=4).selectExpr(*[f"{e} as {low_names[k]}" for k, e in LOW_ENTROPY.items()]))
    rnd_rows = scan_rows(spark, rnd, [(k, [v]) for k, v in rnd_names.items()], args.reps)
    low_rows = scan_rows(spark, low, [(k, [v]) for k, v in low_names.items()], args.reps)

    size_rows.append(["**total**", *[f"{total[f]:,}" for f in FORMATS],
                      f"**{total['fermion'] / total['parquet']:.3f}**", f"**{total['fermion'] / total['orc']:.3f}**"])
    text = [f"# Encodings: file sizes and full scans\n\n{machine_line()}; lineitem {args.lineitem_rows:,} rows, other tables "
            f"{args.rows:,} rows; each format written by Spark from the same DataFrame (Parquet and ORC with zstd, "
            f"Spark's defaults otherwise; Fermion with its defaults). Times: median of {args.reps} runs after 1 warm-up, formats interleaved run by run, each "
            "materialising the columns through the noop sink; speedup = other format's time / Fermion's.\n",
            "## Sizes (bytes)\n", markdown_table(["table", "Fermion", "Parquet", "ORC", "Fermion / Parquet", "Fermion / ORC"], size_rows),
            "\n\n## TPC-H-like lineitem scans\n", markdown_table(header, li_rows),
            "\n\n## Random numeric columns\n", markdown_table(header, rnd_rows),
            "\n\n## Low-entropy columns\n", markdown_table(header, low_rows), "\n"]
    publish(spark, args.out, text)


if __name__ == "__main__":
    main()
