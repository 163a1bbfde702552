"""The engine-free core Scan API returns exactly what Spark returns: a dataset changed through
Spark (appends, a delete, a rename, a dropped column, columns added as files of their own and
without data) is read at several versions, with projections and filters, once through
spark.read and once through io.fermion.core.scan (no Spark involved in the read: the JVM
returns an Arrow IPC stream that pyarrow decodes)."""
import pyarrow as pa
import pyarrow.ipc

from fermion_spark.dataset import FermionDataset


def jarray(spark, cls, items):
    arr = spark.sparkContext._gateway.new_array(cls, len(items))
    for i, x in enumerate(items):
        arr[i] = x
    return arr


def core_read(spark, path, version=None, columns=None, filter_expr=None, row_address=False):
    jvm = spark._jvm
    scan_pkg = jvm.io.fermion.core.scan
    conf = spark._jsc.hadoopConfiguration()
    at = scan_pkg.ReadAt.latest() if version is None else scan_pkg.ReadAt.version(version)
    builder = scan_pkg.Snapshot.open(path, conf, at).scanBuilder()
    if columns is not None:
        builder = builder.select(jarray(spark, jvm.String, columns))
    if filter_expr is not None:
        builder = builder.filter(filter_expr(jvm.io.fermion.core.expr.Filters, lambda *fs: getattr(
            jvm.io.fermion.core.expr.Filters, "and")(jarray(spark, jvm.io.fermion.core.expr.FilterExpr, fs))))
    if row_address:
        builder = builder.withRowAddress()
    data = scan_pkg.ArrowStreams.bytes(builder.build(), conf)
    return pa.ipc.open_stream(bytes(data)).read_all()


def rows(table, sort_key="id"):
    out = table.to_pylist()
    return sorted(out, key=lambda r: (r[sort_key] is None, r[sort_key]))


def test_core_scan_reads_what_spark_reads(spark, tmp_table):
    path = tmp_table()
    base = spark.range(0, 3000, 1, 2).selectExpr(
        "id", "if(id % 11 = 0, null, concat('n', id)) as name", "if(id % 13 = 0, null, id * 0.5) as score",
        "if(id % 17 = 0, null, transform(sequence(1, cast(id % 4 as int)), i -> concat('t', i))) as tags",
        "if(id % 19 = 0, null, named_struct('x', cast(id % 1000 as int), 'y', if(id % 3 = 0, null, concat('y', id)))) as st")
    base.write.format("fermion").option("stripeRows", "700").option("pageRows", "128").save(path)
    spark.range(3000, 4000).selectExpr(
        "id", "concat('n', id) as name", "id * 0.5 as score", "array('a') as tags",
        "named_struct('x', cast(id as int), 'y', 'z') as st").write.format("fermion").mode("append").save(path)
    ds = FermionDataset(spark, path)
    ds.delete("id % 5 = 0 and id < 3000")
    ds.rename_column("name", "label")
    ds.drop_columns(["score"])
    ds.add_columns_from({"extra": "if(id % 7 = 0, null, id * 10)"})
    ds.add_columns("later string")
    assert ds.latest_version() == 7

    def spark_read(version=None):
        r = spark.read.format("fermion")
        if version is not None:
            r = r.option("versionAsOf", version)
        return r.load(path)

    for version in [None, 1, 2, 3, 4, 5, 6]:
        expected = spark_read(version).toArrow()
        got = core_read(spark, path, version)
        assert got.schema.names == expected.schema.names, version
        assert rows(got) == rows(expected), f"version {version}"

    # projections, nested paths, _rowaddr
    expected = spark_read().selectExpr("id", "st.y", "_rowaddr").toArrow()
    got = core_read(spark, path, columns=["id", "st.y"], row_address=True)
    assert [(r["id"], None if r["st"] is None else r["st"]["y"], r["_rowaddr"]) for r in rows(got)] == \
        [(r["id"], r["y"], r["_rowaddr"]) for r in rows(expected)]

    # filters: the core returns exactly the matching rows
    expected = spark_read().where("id >= 2500 and extra < 33000 and label like 'n2%'").toArrow()
    got = core_read(spark, path, filter_expr=lambda F, and_: and_(
        F.gtEq("id", 2500), F.lt("extra", 33000), F.startsWith("label", "n2")))
    assert len(expected) > 0
    assert rows(got) == rows(expected)
