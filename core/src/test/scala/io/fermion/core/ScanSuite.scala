package io.fermion.core

import scala.jdk.CollectionConverters._

import io.fermion.core.compaction.Compaction
import io.fermion.core.dataset._
import io.fermion.core.expr.{FilterExpr, FilterValue}
import io.fermion.core.read.ReaderOptions
import io.fermion.core.scan._
import io.fermion.core.schema.{ArrowSchemaMapping, FermionField, FermionSchema, FermionType}
import io.fermion.core.write.{FermionFileWriter, WriterOptions}
import org.apache.arrow.memory.RootAllocator
import org.apache.arrow.vector.types.pojo.{ArrowType, Field, FieldType}
import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.roaringbitmap.RoaringBitmap
import org.scalatest.funsuite.AnyFunSuite

/** The core Scan API without Spark: a dataset built through core APIs alone — appends, a deletion,
  * a rename, a dropped column, a column added as files of its own, a column added without data —
  * read at its latest and older versions, with projections, filters, limits and `_rowaddr`, and
  * compared with a model of the table kept in plain Scala. */
class ScanSuite extends AnyFunSuite {
  private val conf = new Configuration()
  private val opts = WriterOptions(stripeMaxRows = 1000, pageRows = 256)

  private def f(name: String, t: ArrowType, children: Field*): Field =
    new Field(name, FieldType.nullable(t), children.asJava)
  private val arrowFields = Seq(
    new Field("id", FieldType.notNullable(new ArrowType.Int(64, true)), java.util.List.of()),
    f("name", ArrowType.Utf8.INSTANCE),
    f("score", new ArrowType.FloatingPoint(org.apache.arrow.vector.types.FloatingPointPrecision.DOUBLE)),
    f("tags", ArrowType.List.INSTANCE, f("element", ArrowType.Utf8.INSTANCE)),
    f("st", ArrowType.Struct.INSTANCE, f("x", new ArrowType.Int(32, true)), f("y", ArrowType.Utf8.INSTANCE))
  )

  /** The stored values of row `id` in the order of `arrowFields`. */
  private def row(id: Long): IndexedSeq[Any] = IndexedSeq(
    id,
    if (id % 11 == 0) null else s"n$id",
    if (id % 13 == 0) null else id * 0.5,
    if (id % 17 == 0) null else Seq.tabulate((id % 4).toInt)(i => s"t$i"),
    if (id % 19 == 0) null else Seq((id % 1000).toInt, if (id % 3 == 0) null else s"y$id")
  )

  /** Values as [[TestFiles.normalize]] shows Arrow's: structs as maps of their non-null fields. */
  private def expect(name: String, v: Any): AnyRef = (name, v) match {
    case (_, null) => null
    case ("score", d: Double) => ("double", java.lang.Double.doubleToRawLongBits(d))
    case ("tags", s: Seq[_]) => s.toIndexedSeq
    case ("st", s: Seq[_]) =>
      Map("x" -> s(0), "y" -> s(1)).collect { case (k, x) if x != null => k -> x.asInstanceOf[AnyRef] }
    case ("id" | "extra", l: Long) => java.lang.Long.valueOf(l)
    case (_, o) => o.asInstanceOf[AnyRef]
  }

  private def writeFile(
      ds: FermionDataset,
      schema: FermionSchema,
      ids: Range,
      layout: Option[IndexedSeq[Int]] = None
  ): String = {
    val (rel, path) = ds.newDataFile()
    val w = layout match {
      case Some(l) => FermionFileWriter.createAligned(path, conf, schema, opts, l)
      case None => FermionFileWriter.create(path, conf, schema, opts)
    }
    val root = NestedData.root(
      schema.fields.map(ArrowSchemaMapping.toArrowField),
      ids.map(id =>
        if (schema.fields.head.name == "extra") IndexedSeq(if (id % 7 == 0) null else id * 10L) else row(id.toLong)
      )
    )
    try w.write(root)
    finally { root.close(); w.close() }
    rel
  }

  /** A dataset at version 7 and the model of each version's rows (id -> column -> value). */
  private lazy val built: (FermionDataset, Map[Long, Manifest]) = {
    val ds = new FermionDataset(new Path(TestFiles.tempDir("fermion-scan").resolve("t").toUri), conf)
    val schema = ArrowSchemaMapping.toFermion(new org.apache.arrow.vector.types.pojo.Schema(arrowFields.asJava))
    def append(ids: Range, readVersion: Long): Manifest = {
      val rel = writeFile(ds, schema, ids)
      ds.commit(
        readVersion,
        Operation.Append(
          schema,
          IndexedSeq(Fragment(0, ids.size, IndexedSeq(DataFile(rel, schema.fields.map(_.fieldId))), None))
        )
      )
    }
    val v1 = append(0 until 3000, 0)
    val v2 = append(3000 until 4000, 1)
    val a = v2.fragments.head
    val gone = new RoaringBitmap()
    (0 until 3000).filter(_ % 5 == 0).foreach(gone.add)
    val v3 = ds.commit(
      2,
      Operation.Delete(
        IndexedSeq(a.copy(deletion = Some(ds.writeDeletionFile(a.id, 2, gone)))),
        Set.empty,
        "id % 5 = 0"
      )
    )
    val v4 = ds.updateSchema().renameColumn("name", "label").commit()
    val v5 = ds.updateSchema().dropColumns("score").commit()
    val extra = SchemaIds.assignFrom(
      v5.schema,
      FermionSchema(IndexedSeq(FermionField("extra", 0, FermionType.Int64, nullable = true))),
      v5.lastFieldId
    )
    val files = v5.fragments.map { fr =>
      val ids = if (fr.id == a.id) 0 until 3000 else 3000 until 4000
      val layout = IndexedSeq.fill(ids.size / 1000)(1000)
      fr.id -> DataFile(writeFile(ds, extra, ids, Some(layout)), extra.fields.map(_.fieldId))
    }.toMap
    val v6 = ds.commit(5, Operation.AddColumnFiles(FermionSchema(v5.schema.fields ++ extra.fields), files, "add extra"))
    val v7 = ds.updateSchema().addColumn(FermionField("later", 0, FermionType.Utf8, nullable = true)).commit()
    (ds, Seq(v1, v2, v3, v4, v5, v6, v7).map(m => m.version -> m).toMap)
  }

  /** The expected rows of a version: each row's values for `columns` (names at that version). */
  private def model(version: Long, columns: Seq[String]): IndexedSeq[IndexedSeq[AnyRef]] = {
    val ids = (0L until (if (version == 1) 3000 else 4000)).filter(id => version < 3 || id >= 3000 || id % 5 != 0)
    ids.map { id =>
      val r = row(id)
      columns.map {
        case "id" => expect("id", r(0))
        case "name" | "label" => expect("name", r(1))
        case "score" => expect("score", r(2))
        case "tags" => expect("tags", r(3))
        case "st" => expect("st", r(4))
        case "extra" => expect("extra", if (id % 7 == 0) null else id * 10L)
        case "later" => null
      }.toIndexedSeq
    }
  }

  private def read(scan: Scan): IndexedSeq[IndexedSeq[AnyRef]] = {
    val allocator = new RootAllocator(Long.MaxValue)
    try {
      val out = IndexedSeq.newBuilder[IndexedSeq[AnyRef]]
      val it = scan.batches(conf, allocator)
      try it.foreach { b =>
          val cols = scan.fields.indices.map(i => TestFiles.column(b.vector(i)))
          (0 until b.numRows).foreach(r => out += cols.map(_(r)))
        }
      finally it.close()
      assert(allocator.getAllocatedMemory == 0, "a finished scan frees all its memory")
      out.result()
    } finally allocator.close()
  }

  private def snapshot(at: ReadAt = ReadAt.Latest): Snapshot = Snapshot.open(built._1.name, conf, at)

  test(
    "every version reads exactly its rows and columns: appends, a delete, a rename, a drop, column files, a new column"
  ) {
    val (_, manifests) = built
    for (v <- 1L to 7L) {
      val s = snapshot(ReadAt.Version(v))
      val names = s.schema.get.fields.map(_.name)
      assert(names == manifests(v).schema.fields.map(_.name))
      assert(read(s.scanBuilder().build()) == model(v, names), s"version $v")
    }
    assert(snapshot().schema.get.fields.map(_.name) == Seq("id", "label", "tags", "st", "extra", "later"))
    assert(snapshot(ReadAt.Timestamp(manifests(2L).timestampMillis)).version.contains(2L))
  }

  test("each column alone, its files opened through the column directory (format 1.5), reads as the model says") {
    val (_, manifests) = built
    for (v <- 1L to 7L) {
      val s = snapshot(ReadAt.Version(v))
      // A tail of just the footer: a file of at least 4 columns is opened for the one read.
      manifests(v).schema.fields.map(_.name).foreach { n =>
        val scan = s.scanBuilder().select(n).options(ReaderOptions(tailPrefetchBytes = 64)).build()
        assert(read(scan) == model(v, Seq(n)), s"version $v column $n")
        // Tasks carry where the read's field is, not the manifest's lists of every file's fields.
        val files = scan.planTasks().flatMap(_.splits).map(_.file)
        assert(files.nonEmpty && files.forall(f => f.fieldIds.isEmpty && f.located.keySet == scan.plan.fieldIds))
        // `later` was added without data: the manifest places it in no file, so no schema is searched.
        if (n == "later") assert(files.forall(_.located.values.forall(_.isEmpty)))
      }
    }
  }

  test("aggregates from metadata open each file for the aggregated column alone; the same results either way") {
    val s = snapshot(ReadAt.Version(2))
    val rows = model(2, Seq("id", "name"))
    // One column per plan: a file of 5 columns opened for 1 goes through its column directory when
    // the tail holds just the footer.
    for (options <- Seq(ReaderOptions(), ReaderOptions(tailPrefetchBytes = 64))) {
      def run(aggregates: MetadataAggregate*): IndexedSeq[IndexedSeq[Option[Long]]] = {
        val plan = MetadataAggregation.plan(s, aggregates, options).get
        assert(plan.tasks.nonEmpty && plan.tasks.forall(t => t.columns.size == 1 && t.length > 0))
        plan.tasks.map(plan.compute(_, conf))
      }
      val ids = run(MetadataAggregate.CountRows, MetadataAggregate.Min("id"), MetadataAggregate.Max("id"))
      assert(ids.map(_(0).get).sum == rows.size)
      assert(ids.flatMap(_(1)).min == 0L)
      assert(ids.flatMap(_(2)).max == rows.map(_(0).asInstanceOf[java.lang.Long].longValue).max)
      assert(run(MetadataAggregate.CountValues("name")).map(_(0).get).sum == rows.count(_(1) != null))
    }
  }

  test("projections, nested paths and metadata columns") {
    val s = snapshot()
    val scan = s.scanBuilder().select("label", "st.y").withRowAddress().build()
    assert(scan.fields.map(_.name) == Seq("label", "st", "_rowaddr"))
    assert(scan.fields(1).children.map(_.name) == Seq("y"))
    val rows = read(scan)
    val expected = model(7, Seq("id", "label", "st"))
    assert(rows.map(_.take(1)) == expected.map(r => IndexedSeq(r(1))))
    assert(rows.map(r => r(1)) == expected.map { r =>
      r(2) match { case m: Map[_, _] => m.asInstanceOf[Map[String, AnyRef]].filter(_._1 == "y"); case null => null }
    }.map(m => if (m == null) null else m.asInstanceOf[AnyRef]))
    val fragments = s.manifest.get.fragments
    val addresses = expected.map(_(0).asInstanceOf[java.lang.Long].longValue).map { id =>
      if (id < 3000) ColumnRequest.address(fragments(0).id, id) else ColumnRequest.address(fragments(1).id, id - 3000)
    }
    assert(rows.map(_(2)) == addresses.map(java.lang.Long.valueOf))
    // _rowid is null without stable row ids
    assert(read(s.scanBuilder().select("id").withRowId().build()).forall(_(1) == null))
  }

  test("filters return exactly the matching rows; limits cut the scan") {
    import FilterExpr._
    val s = snapshot()
    val f = And(Compare("id", GtEq, FilterValue.Integral(2500)), Compare("extra", Lt, FilterValue.Integral(33000)))
    val expected = model(7, Seq("id", "extra")).filter { r =>
      r(0).asInstanceOf[java.lang.Long] >= 2500 && r(1) != null && r(1).asInstanceOf[java.lang.Long] < 33000
    }
    assert(expected.nonEmpty && expected.size < 1000)
    assert(read(s.scanBuilder().select("id", "extra").filter(f).build()) == expected)
    assert(read(s.scanBuilder().select("id", "extra").filter(f).limit(7).build()) == expected.take(7))
    assert(read(s.scanBuilder().select("id").limit(2001).build()) == model(7, Seq("id")).take(2001))
    // With pushdown off the filter is not applied at all: every row comes back.
    val all = read(s.scanBuilder().select("id").filter(f).options(ReaderOptions(filterPushdown = false)).build())
    assert(all.size == model(7, Seq("id")).size)
  }

  test("tasks split files by stripe and together read every row once") {
    val scan = snapshot().scanBuilder().select("id").build()
    val tasks = scan.planTasks(TaskSizing(maxSplitBytes = 4096, openCostBytes = 0, minTasks = 4))
    assert(tasks.size > 2)
    val allocator = new RootAllocator(Long.MaxValue)
    try {
      val ids = tasks.flatMap { t =>
        val r = new ScanTaskReader(scan.plan, t, conf, allocator)
        try
          Iterator.continually(r.next()).takeWhile(identity).flatMap(_ => TestFiles.column(r.batch.vector(0))).toIndexedSeq
        finally r.close()
      }
      assert(ids.sortBy(_.asInstanceOf[java.lang.Long].longValue) == model(7, Seq("id")).map(_(0)))
    } finally allocator.close()
  }

  test("compaction keeps the rows and drops deleted rows and dropped columns' data") {
    val (ds0, _) = built
    // A copy, so the other tests keep their versions.
    val copy = new Path(TestFiles.tempDir("fermion-scan-compact").resolve("t").toUri)
    val fs = ds0.fs
    org.apache.hadoop.fs.FileUtil.copy(fs, new Path(ds0.name), fs, copy, false, conf)
    val ds = new FermionDataset(copy, conf)
    val plan = Compaction.plan(ds, targetRows = 10000).get
    val m = Compaction.commit(ds, plan, plan.groups.map(g => Compaction.rewrite(plan, g, conf)))
    assert(m.fragments.size == 1 && m.fragments.head.deletion.isEmpty && m.rowCount == model(7, Seq("id")).size)
    val s = Snapshot.open(copy.toString, conf)
    val names = s.schema.get.fields.map(_.name)
    assert(read(s.scanBuilder().build()) == model(7, names))
    assert(Compaction.plan(ds, targetRows = 10000).isEmpty, "nothing left to compact")
  }

  test("loose files: columns a file lacks read null; mergeSchema unites the files' columns") {
    val dir = TestFiles.tempDir("fermion-loose")
    def file(name: String, fields: Seq[Field], rows: IndexedSeq[IndexedSeq[Any]]): Unit = {
      val root = NestedData.root(fields, rows)
      try TestFiles.write(dir.resolve(name), root, WriterOptions())
      finally root.close()
    }
    val a = new Field("a", FieldType.nullable(new ArrowType.Int(64, true)), java.util.List.of())
    val b = new Field("b", FieldType.nullable(ArrowType.Utf8.INSTANCE), java.util.List.of())
    file("1.fermion", Seq(a, b), IndexedSeq(IndexedSeq(1L, "x"), IndexedSeq(2L, null)))
    file("2.fermion", Seq(a), IndexedSeq(IndexedSeq(3L)))
    file(
      "3.fermion",
      Seq(b, new Field("c", FieldType.nullable(new ArrowType.Int(32, true)), java.util.List.of())),
      IndexedSeq(IndexedSeq("z", 7))
    )
    val first = Snapshot.open(dir.toString, conf)
    assert(first.schema.get.fields.map(_.name) == Seq("a", "b"))
    assert(read(first.scanBuilder().build()) == IndexedSeq(
      IndexedSeq(1L, "x"),
      IndexedSeq(2L, null),
      IndexedSeq(3L, null),
      IndexedSeq(null, "z")
    ).map(_.map(_.asInstanceOf[AnyRef])))
    val merged = Snapshot.open(dir.toString, conf, ReadAt.Latest, mergeSchema = true)
    assert(merged.schema.get.fields.map(f => f.name -> f.nullable) == Seq("a" -> true, "b" -> true, "c" -> true))
    assert(read(merged.scanBuilder().build()).last == IndexedSeq(null, "z", Integer.valueOf(7)))
    file(
      "4.fermion",
      Seq(new Field("a", FieldType.nullable(ArrowType.Utf8.INSTANCE), java.util.List.of())),
      IndexedSeq(IndexedSeq("s"))
    )
    val e =
      intercept[InvalidFermionDatasetException](Snapshot.open(dir.toString, conf, ReadAt.Latest, mergeSchema = true))
    assert(e.getMessage.contains("4.fermion") && e.getMessage.contains("`a`"))
    val e2 = intercept[InvalidFermionDatasetException](read(Snapshot.open(dir.toString, conf).scanBuilder().build()))
    assert(e2.getMessage.contains("4.fermion"))
  }

  test("a missing dataset, a missing version and a bad column are typed errors") {
    intercept[FermionDatasetNotFoundException](
      Snapshot.open(TestFiles.tempDir("fermion-none").resolve("x").toString, conf).requireExists(conf)
    )
    intercept[FermionVersionNotFoundException](snapshot(ReadAt.Version(99)))
    intercept[FermionVersionNotFoundException](snapshot(ReadAt.Tag("nope")))
    intercept[IllegalArgumentException](snapshot().scanBuilder().select("nope").build())
    intercept[IllegalArgumentException](snapshot().scanBuilder().select("st.nope").build())
  }

  /** (address, row values) of every row of the latest version, in scan order. */
  private lazy val latestByAddress: IndexedSeq[(Long, IndexedSeq[AnyRef])] = {
    val s = snapshot()
    read(s.scanBuilder().withRowAddress().build()).map(r => r.last.asInstanceOf[java.lang.Long].longValue -> r.init)
  }

  private def take(scan: Scan)(f: (Scan, RootAllocator) => ScanBatch): (IndexedSeq[IndexedSeq[AnyRef]], ScanMetrics) = {
    val allocator = new RootAllocator(Long.MaxValue)
    try {
      val b = f(scan, allocator)
      try {
        val cols = scan.fields.indices.map(i => TestFiles.column(b.vector(i)))
        ((0 until b.numRows).map(r => cols.map(_(r))), b.metrics)
      } finally b.close()
    } finally { assert(allocator.getAllocatedMemory == 0); allocator.close() }
  }

  test("take by address, position and row offset returns exactly the scan's rows, in request order") {
    val rnd = new scala.util.Random(5)
    val all = latestByAddress
    val s = snapshot()
    for (round <- 0 until 20) {
      val picks = IndexedSeq.fill(1 + rnd.nextInt(40))(rnd.nextInt(all.size)) ++ (if (round == 0)
                                                                                    IndexedSeq(0, 0, all.size - 1)
                                                                                  else Nil)
      val scan = s.scanBuilder().build()
      val (byAddr, _) = take(scan)((sc, a) => sc.takeAddresses(picks.map(all(_)._1).toArray, conf, a))
      assert(byAddr == picks.map(all(_)._2), s"round $round")
      val (byPos, _) = take(scan)((sc, a) => sc.takePositions(picks.map(_.toLong).toArray, conf, a))
      assert(byPos == picks.map(all(_)._2), s"round $round positions")
      // a projection with nested pruning and _rowaddr, whole pages (CRC-checked) or not
      for (whole <- Seq(false, true)) {
        val proj = s.scanBuilder().select("st.y", "extra", "id").withRowAddress().options(ReaderOptions(takeWholePages =
          whole
        )).build()
        val (got, _) = take(proj)((sc, a) => sc.takeAddresses(picks.map(all(_)._1).toArray, conf, a))
        val expected = read(proj)
        val byAddress = expected.map(r => r.last -> r).toMap
        assert(
          got == picks.map(p => byAddress(java.lang.Long.valueOf(all(p)._1))),
          s"round $round projection whole=$whole"
        )
      }
    }
  }

  test("take of a deleted, missing or out-of-range row is a typed error") {
    val s = snapshot()
    val scan = s.scanBuilder().select("id").build()
    val a = s.manifest.get.fragments.head.id
    val allocator = new RootAllocator(Long.MaxValue)
    try {
      val deleted =
        intercept[FermionRowNotFoundException](scan.takeAddresses(Array(ColumnRequest.address(a, 5)), conf, allocator))
      assert(deleted.getMessage.contains("deleted"))
      intercept[FermionRowNotFoundException](scan.takeAddresses(Array(ColumnRequest.address(a, 3000)), conf, allocator))
      intercept[FermionRowNotFoundException](scan.takeAddresses(Array(ColumnRequest.address(999, 0)), conf, allocator))
      intercept[FermionRowNotFoundException](scan.takePositions(Array(latestByAddress.size.toLong), conf, allocator))
      intercept[FermionRowNotFoundException](scan.takeRowIds(Array(1L), conf, allocator))
      assert(allocator.getAllocatedMemory == 0)
    } finally allocator.close()
  }

  /** 1,000 random bytes (no encoding can shrink them: pages stay PLAIN); empty for every 1000th row from 500. */
  private def blobOf(i: Int): Array[Byte] = {
    val b = new Array[Byte](if (i % 1000 == 500) 0 else 1000); new scala.util.Random(i).nextBytes(b); b
  }

  test("take by stable row id, and of PLAIN uncompressed pages reads little more than the values") {
    val ds = new FermionDataset(new Path(TestFiles.tempDir("fermion-take-ids").resolve("t").toUri), conf)
    val blob = new Field("blob", FieldType.nullable(ArrowType.Binary.INSTANCE), java.util.List.of())
    val id = new Field("id", FieldType.notNullable(new ArrowType.Int(64, true)), java.util.List.of())
    val schema =
      ArrowSchemaMapping.toFermion(new org.apache.arrow.vector.types.pojo.Schema(java.util.List.of(id, blob)))
    val plain = WriterOptions(compression = io.fermion.core.codec.PageCodec.None, pageRows = 1024, stripeMaxRows = 4096)
    def append(from: Int, readVersion: Long): Manifest = {
      val (rel, path) = ds.newDataFile()
      val w = FermionFileWriter.create(path, conf, schema, plain)
      val rows = (from until from + 5000).map(i => IndexedSeq(i.toLong, blobOf(i)))
      val fields = schema.fields.map(ArrowSchemaMapping.toArrowField)
      val root = org.apache.arrow.vector.VectorSchemaRoot.create(
        new org.apache.arrow.vector.types.pojo.Schema(fields.asJava),
        TestFiles.allocator
      )
      try {
        val ids = root.getVector(0).asInstanceOf[org.apache.arrow.vector.BigIntVector]
        val blobs = root.getVector(1).asInstanceOf[org.apache.arrow.vector.VarBinaryVector]
        ids.allocateNew(rows.size); blobs.allocateNew(rows.size)
        rows.indices.foreach { r =>
          ids.set(r, rows(r)(0).asInstanceOf[Long]); blobs.setSafe(r, rows(r)(1).asInstanceOf[Array[Byte]])
        }
        root.setRowCount(rows.size)
        w.write(root)
      } finally { root.close(); w.close() }
      ds.commit(
        readVersion,
        Operation.Append(
          schema,
          IndexedSeq(Fragment(0, 5000, IndexedSeq(DataFile(rel, schema.fields.map(_.fieldId))), None))
        ),
        Map(FermionDataset.StableRowIdsConfig -> "true")
      )
    }
    append(0, 0)
    append(5000, 1)
    val s = Snapshot.open(ds.name, conf)
    val scan = s.scanBuilder().build()
    // 2500 and 7500 hold empty values far from any other requested value (no bytes to read for them)
    val ids = Array(9999L, 0L, 4999L, 5000L, 1234L, 1234L, 2500L, 7500L)
    val (rows, metrics) = take(scan)((sc, a) => sc.takeRowIds(ids, conf, a))
    assert(rows.map(_(0)) == ids.toSeq.map(java.lang.Long.valueOf))
    assert(rows.map(_(1)) == ids.toSeq.map(i => blobOf(i.toInt).toSeq))
    // ~1 KB per row asked for: header and value only, plus the small OFFSETS chunks
    assert(metrics.bytesRead < ids.length * 1000 * 2 + 40000, metrics)
    val (_, wholePages) = take(s.scanBuilder().options(ReaderOptions(takeWholePages = true)).build())((sc, a) =>
      sc.takeRowIds(ids, conf, a)
    )
    assert(wholePages.bytesRead > 5 * metrics.bytesRead, s"whole pages $wholePages vs values $metrics")
  }

  /** The ids a stream reads between two positions, task by task (on this JVM, no engine). */
  private def streamIds(scan: Scan, changes: ChangeStream, from: StreamPosition, to: StreamPosition): Seq[Long] = {
    val allocator = new RootAllocator(Long.MaxValue)
    try changes.tasks(from, to, TaskSizing()).flatMap { task =>
        val r = new ScanTaskReader(scan.plan, task, conf, allocator)
        try {
          val ids = Seq.newBuilder[Long]
          while (r.next()) {
            val v = r.batch.vector(0).asInstanceOf[org.apache.arrow.vector.BigIntVector]
            (0 until r.batch.numRows).foreach(i => ids += v.get(i))
          }
          ids.result()
        } finally r.close()
      }
    finally allocator.close()
  }

  test("a stream follows versions: the start read whole, then appends; deletes and schema changes stop it") {
    val (ds, _) = built
    assert((1L to 7L).map(v => ds.change(v).kind) == Seq(
      VersionChange.Added,
      VersionChange.Added,
      VersionChange.Deleted,
      VersionChange.SchemaChanged,
      VersionChange.SchemaChanged,
      VersionChange.SchemaChanged,
      VersionChange.SchemaChanged
    ))
    assert(ds.change(2).added.map(_.physicalRows) == Seq(1000L))
    val scan = snapshot(ReadAt.Version(1)).scanBuilder().select("id").build()
    val changes = new ChangeStream(scan, StreamSettings(maxFiles = 1), conf)
    val start = changes.initial
    assert(start == StreamPosition(1, 0, 1) && StreamPosition.parse(start.json) == start)
    val first = changes.latest(start)
    assert(first == StreamPosition(2, 0, 1), "one fragment per micro-batch")
    assert(streamIds(scan, changes, start, first).sorted == (0L until 3000L))
    val second = changes.latest(first)
    assert(second == StreamPosition(3, 0, 1))
    assert(streamIds(scan, changes, first, second).sorted == (3000L until 4000L), "read as of version 2")
    val deleted = intercept[UnsupportedOperationException](changes.latest(second))
    assert(deleted.getMessage.contains("version 3") && deleted.getMessage.contains("ignoreDeletes"), deleted.getMessage)
    val skipping = new ChangeStream(scan, StreamSettings(ignoreDeletes = true), conf)
    val renamed = intercept[UnsupportedOperationException](skipping.latest(second))
    assert(renamed.getMessage.contains("version 4") && renamed.getMessage.contains("schema"), renamed.getMessage)
    // from a starting version: its changes only; rows as a limit (at least one fragment)
    val fromTwo = new ChangeStream(scan, StreamSettings(startingVersion = Some(Some(2L)), maxRows = Some(1L)), conf)
    assert(fromTwo.initial == StreamPosition(2, 0, -1) && fromTwo.latest(fromTwo.initial) == StreamPosition(3, 0, -1))
  }
}
