package io.fermion.core

import java.math.{BigDecimal => JBigDecimal}

import scala.jdk.CollectionConverters._

import io.fermion.core.dataset._
import io.fermion.core.expr.{FilterExpr, FilterValue}
import io.fermion.core.scan._
import io.fermion.core.schema.{ArrowSchemaMapping, FermionField, FermionSchema, FermionType, TypeWidening}
import io.fermion.core.write.{FermionFileWriter, WriterOptions}
import org.apache.arrow.memory.RootAllocator
import org.apache.arrow.vector._
import org.apache.arrow.vector.complex.{ListVector, MapVector, StructVector}
import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.scalatest.funsuite.AnyFunSuite

/** Type widening without Spark: files written with the old types, every allowed widening committed
  * as one schema change, files of the new types appended, and every version read back (scan with
  * and without filters, take by address and position) against a model where old values are
  * converted as Spark casts them; narrowing and other changes refused; a `mergeSchema` append
  * (`AppendWithSchema`) adding a column and widening another conflicts with a concurrent schema
  * change. */
class TypeWideningSuite extends AnyFunSuite {
  import FermionType._

  private val conf = new Configuration()
  private val opts = WriterOptions(stripeMaxRows = 500, pageRows = 128)

  private def field(name: String, t: FermionType, children: FermionField*) =
    FermionField(name, -1, t, nullable = true, children.toIndexedSeq)

  /** The old schema (ids from 0 in preorder, as a new dataset's). */
  private val oldSchema = SchemaIds.assignFrom(
    FermionSchema(IndexedSeq.empty),
    FermionSchema(IndexedSeq(
      FermionField("id", -1, Int64, nullable = false),
      field("b", Int8),
      field("s", Int16),
      field("i", Int32),
      field("f", Float32),
      field("d", Decimal(5, 2)),
      field("dt", Date32),
      field("st", Struct, field("x", Int32), field("y", Utf8)),
      field("arr", List, field("element", Int32)),
      field("m", Map, FermionField("key", -1, Utf8, nullable = false), field("value", Int16))
    ))
  )

  /** Every widening the rules allow, one per column. */
  private val widenings: Seq[(Seq[String], FermionType)] = Seq(
    Seq("b") -> Int64,
    Seq("s") -> Int32,
    Seq("i") -> Int64,
    Seq("f") -> Float64,
    Seq("d") -> Decimal(8, 3),
    Seq("dt") -> Timestamp(false),
    Seq("st", "x") -> Int64,
    Seq("arr", "element") -> Int64,
    Seq("m", "value") -> Int32
  )

  private val MicrosPerDay = 86400L * 1000000L

  /** Row `id`'s values in the new types (null every 7th row, per column at a different phase). */
  private def value(col: String, id: Long): Any = {
    val old = id < 3000
    if (col != "id" && (id + col.length) % 7 == 0) return null
    col match {
      case "id" => id
      case "b" => if (old) (id % 200 - 100) else id * 1000000000L
      case "s" => if (old) (id * 11 % 60000 - 30000) else 70000 + id
      case "i" => if (old) (id * 715827L).toInt.toLong else 3000000000L + id
      case "f" => if (old) (id * 0.1f).toDouble else id * 0.1
      case "d" => if (old) JBigDecimal.valueOf(id * 7 - 5000, 2).setScale(3) else JBigDecimal.valueOf(id * 13 + 7, 3)
      case "dt" => if (old) (id - 1000) * MicrosPerDay else id * MicrosPerDay + 12345
      case "st" => Seq(if (id % 5 == 0) null else if (old) id * 3 else 5000000000L + id, s"y$id")
      case "arr" => Seq.tabulate((id % 4).toInt)(k => if (old) id + k else 4000000000L + k)
      case "m" => Seq(s"k$id" -> (if (old) id % 1000 else 100000 + id))
    }
  }

  /** Fills vector `v` with `values`, converting the model's (new-type) values to the type of each
    * flat vector. */
  private def fill(v: FieldVector, values: IndexedSeq[Any]): Unit = NestedData.fillWith(fillLeaf)(v, values)

  private def fillLeaf(v: FieldVector, values: IndexedSeq[Any]): Unit = {
    val n = values.size
    def each(set: (Int, Any) => Unit): Unit = {
      v.setInitialCapacity(n); v.allocateNew()
      values.indices.foreach { i =>
        if (values(i) == null) v.asInstanceOf[BaseFixedWidthVector].setNull(i) else set(i, values(i))
      }
    }
    v match {
      case x: TinyIntVector => each((i, o) => x.set(i, o.asInstanceOf[Long].toByte))
      case x: SmallIntVector => each((i, o) => x.set(i, o.asInstanceOf[Long].toShort))
      case x: IntVector => each((i, o) => x.set(i, o.asInstanceOf[Long].toInt))
      case x: BigIntVector => each((i, o) => x.set(i, o.asInstanceOf[Long]))
      case x: Float4Vector => each((i, o) => x.set(i, o.asInstanceOf[Double].toFloat))
      case x: Float8Vector => each((i, o) => x.set(i, o.asInstanceOf[Double]))
      case x: DecimalVector => each((i, o) => x.set(i, o.asInstanceOf[JBigDecimal].setScale(x.getScale)))
      case x: DateDayVector => each((i, o) => x.set(i, Math.floorDiv(o.asInstanceOf[Long], MicrosPerDay).toInt))
      case x: TimeStampMicroVector => each((i, o) => x.set(i, o.asInstanceOf[Long]))
      case x: VarCharVector =>
        x.setInitialCapacity(n); x.allocateNew()
        values.indices.foreach { i =>
          if (values(i) == null) x.setNull(i) else x.setSafe(i, values(i).toString.getBytes("UTF-8"))
        }
    }
  }

  private def append(ds: FermionDataset, schema: FermionSchema, ids: Range, readVersion: Long): Operation.Append = {
    val (rel, path) = ds.newDataFile()
    val w = FermionFileWriter.create(path, conf, schema, opts)
    val root = VectorSchemaRoot.create(ArrowSchemaMapping.toArrow(schema), TestFiles.allocator)
    try {
      schema.fields.indices.foreach(c =>
        fill(root.getVector(c), ids.map(id => value(schema.fields(c).name, id.toLong)))
      )
      root.setRowCount(ids.size)
      w.write(root)
    } finally { root.close(); w.close() }
    Operation.Append(
      schema,
      IndexedSeq(Fragment(0, ids.size, IndexedSeq(DataFile(rel, schema.fields.map(_.fieldId))), None))
    )
  }

  /** v1: rows 0-2999 in the old types; v2: every widening; v3: rows 3000-3999 in the new types. */
  private lazy val built: FermionDataset = {
    val ds = new FermionDataset(new Path(TestFiles.tempDir("fermion-widen").resolve("t").toUri), conf)
    ds.commit(0, append(ds, oldSchema, 0 until 3000, 0))
    val update = ds.updateSchema()
    widenings.foreach { case (path, t) => update.changeColumnType(path, t) }
    val v2 = update.commit()
    ds.commit(2, append(ds, v2.schema, 3000 until 4000, 2))
    ds
  }

  /** The model's rows of `ids` as [[TestFiles.column]] shows them. */
  private def expected(ids: Seq[Long], cols: Seq[String]): IndexedSeq[IndexedSeq[AnyRef]] =
    ids.map(id => cols.map(c => shown(c, value(c, id))).toIndexedSeq).toIndexedSeq

  private def shown(col: String, v: Any): AnyRef = (col, v) match {
    case (_, null) => null
    case ("s", l: Long) => Integer.valueOf(l.toInt)
    case ("f", d: Double) => ("double", java.lang.Double.doubleToRawLongBits(d))
    case ("dt", l: Long) => java.time.LocalDateTime.ofEpochSecond(
        Math.floorDiv(l, 1000000L),
        (Math.floorMod(l, 1000000L) * 1000).toInt,
        java.time.ZoneOffset.UTC
      )
    case ("st", s: Seq[_]) =>
      scala.collection.immutable.Map("x" -> s(0), "y" -> s(1)).collect {
        case (k, x) if x != null => k -> x.asInstanceOf[AnyRef]
      }
    case ("arr", s: Seq[_]) => s.map(_.asInstanceOf[AnyRef]).toIndexedSeq
    case ("m", s: Seq[_]) =>
      s.map { case (k: String, x: Long) =>
        scala.collection.immutable.Map("key" -> k, "value" -> Integer.valueOf(x.toInt))
      }.toIndexedSeq
    case (_, o) => o.asInstanceOf[AnyRef]
  }

  private val cols = oldSchema.fields.map(_.name)

  private def read(scan: Scan): (IndexedSeq[IndexedSeq[AnyRef]], ScanMetrics) = {
    val allocator = new RootAllocator(Long.MaxValue)
    try {
      val out = IndexedSeq.newBuilder[IndexedSeq[AnyRef]]
      val it = scan.batches(conf, allocator)
      val metrics =
        try {
          it.foreach { b =>
            val cs = scan.fields.indices.map(i => TestFiles.column(b.vector(i)))
            (0 until b.numRows).foreach(r => out += cs.map(_(r)))
          }
          it.metrics
        } finally it.close()
      assert(allocator.getAllocatedMemory == 0, "a finished scan frees all its memory")
      (out.result(), metrics)
    } finally allocator.close()
  }

  private def normalizeRows(rows: IndexedSeq[IndexedSeq[AnyRef]]) = rows

  test("old files read widened: every allowed type pair, nulls, a struct field, list elements, map values") {
    val ds = built
    val s = Snapshot.open(ds.name, conf)
    val types = s.schema.get.fields.map(f => f.name -> f.dataType).toMap
    assert(types("i") == Int64 && types("dt") == Timestamp(false) && types("d") == Decimal(8, 3))
    val (rows, _) = read(s.scanBuilder().build())
    assert(normalizeRows(rows) == expected(0L until 4000L, cols))
    // Versions: the flag from the widening on, and the version before it reads the old types.
    assert((ds.manifest(1).readerFeatures & Manifest.FeatureTypeWidening) == 0)
    assert(Seq(2L, 3L).forall(v => (ds.manifest(v).readerFeatures & Manifest.FeatureTypeWidening) != 0))
    assert(Seq(2L, 3L).forall(v => (ds.manifest(v).writerFeatures & Manifest.FeatureTypeWidening) != 0))
    val v1 = Snapshot.open(ds.name, conf, ReadAt.Version(1))
    assert(v1.schema.get.fields.map(_.dataType) == oldSchema.fields.map(_.dataType))
    val (old, _) = read(v1.scanBuilder().select("id", "i", "dt").build())
    assert(old.size == 3000 && old(1)(1) == Integer.valueOf(715827))
    assert(old(1)(2) == Integer.valueOf(-999), "days, as the file stores them")
    // A pruned struct: only the widened field.
    val (xs, _) = read(s.scanBuilder().select("id", "st.x").build())
    assert(normalizeRows(xs).map(_(1)) == expected(0L until 4000L, Seq("st")).map(_(0)).map {
      case m: Map[_, _] => m.asInstanceOf[Map[String, AnyRef]].filter(_._1 == "x")
      case o => o
    })
  }

  test("filters on widened columns keep exactly the matching rows; statistics still skip old files") {
    import FilterExpr._
    val s = Snapshot.open(built.name, conf)
    def rowsWhere(f: FilterExpr, c: String, keep: Any => Boolean) = {
      val (got, metrics) = read(s.scanBuilder().select("id", c).filter(f).build())
      val want = (0L until 4000L).filter(id => value(c, id) != null && keep(value(c, id)))
      assert(got.map(_(0)) == want.map(java.lang.Long.valueOf), s"$f")
      metrics
    }
    // Above every int: the old file's statistics (ints, compared as longs) rule all its stripes out.
    val m = rowsWhere(Compare("i", Gt, FilterValue.Integral(2999999999L)), "i", _.asInstanceOf[Long] > 2999999999L)
    assert(m.stripesSkipped >= 6, m)
    rowsWhere(Compare("i", Lt, FilterValue.Integral(-1000000L)), "i", _.asInstanceOf[Long] < -1000000L)
    rowsWhere(Compare("b", Eq, FilterValue.Integral(-7)), "b", _ == -7L)
    rowsWhere(Compare("s", GtEq, FilterValue.Integral(29000)), "s", _.asInstanceOf[Long] >= 29000)
    rowsWhere(Compare("f", Gt, FilterValue.Floating(250.5)), "f", _.asInstanceOf[Double] > 250.5)
    // Dates widened to timestamps: compared as microseconds, never as the old files' days.
    val t = 500L * MicrosPerDay
    rowsWhere(Compare("dt", GtEq, FilterValue.Integral(t)), "dt", _.asInstanceOf[Long] >= t)
    rowsWhere(Compare("dt", Eq, FilterValue.Integral(t)), "dt", _.asInstanceOf[Long] == t)
    // Decimals rescaled from scale 2 to 3: unscaled 5000 at scale 3 is 5.000.
    rowsWhere(
      Compare("d", Lt, FilterValue.Integral(5000)),
      "d",
      _.asInstanceOf[JBigDecimal].compareTo(new JBigDecimal("5.000")) < 0
    )
    val (nulls, _) = read(s.scanBuilder().select("id").filter(IsNull("i")).build())
    assert(nulls.map(_(0)) == (0L until 4000L).filter(id => value("i", id) == null).map(java.lang.Long.valueOf))
  }

  test("take by address and position returns widened values") {
    val s = Snapshot.open(built.name, conf)
    val all = read(s.scanBuilder().withRowAddress().build())._1
    val picks = IndexedSeq(0, 1, 7, 2999, 3000, 3999, 1234, 5)
    val allocator = new RootAllocator(Long.MaxValue)
    try {
      val scan = s.scanBuilder().build()
      for (byAddress <- Seq(true, false)) {
        val b =
          if (byAddress)
            scan.takeAddresses(picks.map(all(_).last.asInstanceOf[java.lang.Long].longValue).toArray, conf, allocator)
          else scan.takePositions(picks.map(_.toLong).toArray, conf, allocator)
        try {
          val cs = scan.fields.indices.map(i => TestFiles.column(b.vector(i)))
          val got = (0 until b.numRows).map(r => cs.map(_(r)))
          assert(normalizeRows(got) == expected(picks.map(_.toLong), cols), s"byAddress=$byAddress")
        } finally b.close()
      }
    } finally { assert(allocator.getAllocatedMemory == 0); allocator.close() }
  }

  test("narrowing and other type changes are refused, naming the column and both types") {
    val ds = built
    def refused(path: Seq[String], t: FermionType, words: String*): Unit = {
      val e = intercept[IllegalArgumentException](ds.updateSchema().changeColumnType(path, t).commit())
      words.foreach(w => assert(e.getMessage.contains(w), e.getMessage))
    }
    refused(Seq("i"), Int32, "`i`", "int64", "int32")
    refused(Seq("b"), Float64, "`b`", "int64", "float64")
    refused(Seq("st", "y"), Int32, "`st.y`", "string", "int32")
    refused(Seq("d"), Decimal(9, 5), "`d`", "decimal(8,3)", "decimal(9,5)") // integer digits 5 -> 4
    refused(Seq("dt"), Timestamp(true), "`dt`", "timestamp_ntz", "timestamp")
    refused(Seq("st"), Int64, "`st`", "struct")
    refused(Seq("m", "key"), Int32, "map keys")
    refused(Seq("nope"), Int64, "no such column")
    assert(ds.latestVersion().contains(3L), "nothing committed")
    assert(TypeWidening.allowed(Decimal(5, 2), Decimal(6, 3)) && !TypeWidening.allowed(Decimal(5, 2), Decimal(5, 3)))
    assert(TypeWidening.allowed(Int8, Int16) && !TypeWidening.allowed(Int64, Int32))
    assert(TypeWidening.allowed(Date32, Timestamp(false)) && !TypeWidening.allowed(Date32, Timestamp(true)))
  }

  test("an append with schema changes adds and widens in its own version; a concurrent schema change conflicts") {
    val ds = new FermionDataset(new Path(TestFiles.tempDir("fermion-widen-merge").resolve("t").toUri), conf)
    val base = FermionSchema(oldSchema.fields.take(4)) // id, b, s, i
    ds.commit(0, append(ds, base, 0 until 3000, 0))
    // The data: i as int64, and a new column f.
    val data = SchemaIds.assignFrom(
      ds.manifest(1).schema,
      FermionSchema(IndexedSeq(
        FermionField("id", -1, Int64, nullable = false),
        field("i", Int64),
        field("f", Float64)
      )),
      ds.manifest(1).lastFieldId
    )
    val merged = TypeWidening.merge(ds.manifest(1).schema, data)
    assert(merged.fields.map(f => f.name -> f.dataType) == Seq(
      "id" -> Int64,
      "b" -> Int8,
      "s" -> Int16,
      "i" -> Int64,
      "f" -> Float64
    ))
    def op(readVersion: Long) =
      Operation.AppendWithSchema(
        Operation.Project(merged, "merge schema"),
        append(ds, data, 3000 until 4000, readVersion)
      )
    // Another schema change committed after version 1 was read: the append conflicts.
    ds.updateSchema().renameColumn("b", "bb").commit()
    intercept[FermionCommitConflictException](ds.commit(1, op(1)))
    // Read at the latest version, it commits: one version with the rows and the new schema.
    val v2 = ds.manifest(2)
    val m = ds.commit(
      2,
      Operation.AppendWithSchema(
        Operation.Project(TypeWidening.merge(v2.schema, data), "merge schema"),
        append(ds, data, 3000 until 4000, 2)
      )
    )
    assert(m.version == 3 && m.operation == "append_with_schema")
    assert((m.readerFeatures & Manifest.FeatureTypeWidening) != 0)
    assert(m.schema.fields.map(_.name) == Seq("id", "bb", "s", "i", "f"))
    assert(ds.change(3).kind == VersionChange.SchemaChanged && ds.change(3).added.size == 1)
    val (rows, _) = read(Snapshot.open(ds.name, conf).scanBuilder().select("id", "i", "f").build())
    assert(normalizeRows(rows) == expected(0L until 4000L, Seq("id", "i", "f")).map(r =>
      if (r(0).asInstanceOf[java.lang.Long] < 3000) r.updated(2, null) else r
    ))
    // The transaction decodes as it was written (what conflict checks of later writers read).
    val other = ds.commit(2, Operation.Delete(IndexedSeq.empty, Set(1L), "all old rows"))
    assert(other.fragments.size == 1)
    // A schema change that read version 3 conflicts with nothing; one that read version 2 does.
    intercept[FermionCommitConflictException](ds.commit(2, Operation.Project(v2.schema, "stale change")))
  }
}
