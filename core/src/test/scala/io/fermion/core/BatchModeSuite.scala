package io.fermion.core

import scala.jdk.CollectionConverters._
import scala.util.Random

import io.fermion.core.compaction.Compaction
import io.fermion.core.dataset._
import io.fermion.core.layout.{DescType, StreamType}
import io.fermion.core.read.{FermionFileReader, ReaderOptions}
import io.fermion.core.scan._
import io.fermion.core.schema.{ArrowSchemaMapping, FermionSchema}
import io.fermion.core.write.{FermionFileWriter, WriterOptions}
import org.apache.arrow.memory.RootAllocator
import org.apache.arrow.vector.types.FloatingPointPrecision
import org.apache.arrow.vector.types.pojo.{ArrowType, Field, FieldType}
import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.roaringbitmap.RoaringBitmap
import org.scalatest.funsuite.AnyFunSuite

/** Batch mode: rows appended as batches, each with an id; a batch never straddles a DATA page; the
  * batch index locates batches by id; `batch_id` and `index_in_batch` are computed, not stored. */
class BatchModeSuite extends AnyFunSuite {
  private val conf = new Configuration()
  private def nullable(name: String, t: ArrowType, children: Field*): Field =
    new Field(name, FieldType.nullable(t), children.asJava)
  private val fields = Seq(
    new Field("id", FieldType.notNullable(new ArrowType.Int(64, true)), java.util.List.of()),
    nullable("name", ArrowType.Utf8.INSTANCE),
    nullable(
      "vec",
      ArrowType.List.INSTANCE,
      nullable("element", new ArrowType.FloatingPoint(FloatingPointPrecision.SINGLE))
    ),
    nullable("flag", ArrowType.Bool.INSTANCE),
    nullable("st", ArrowType.Struct.INSTANCE, nullable("x", new ArrowType.Int(32, true)))
  )
  private val schema = ArrowSchemaMapping.toFermion(new org.apache.arrow.vector.types.pojo.Schema(fields.asJava))
  private val opts = WriterOptions(pageRows = 64, stripeMaxRows = 2000, pageSize = 4096)

  private def row(id: Long): IndexedSeq[Any] = IndexedSeq(
    id,
    if (id % 7 == 0) null else s"name-$id-" + "x" * (id % 13).toInt,
    if (id % 11 == 0) null else Seq.tabulate((id % 5).toInt)(i => (id * i).toFloat),
    if (id % 3 == 0) null else id % 2 == 0,
    Seq((id % 100).toInt)
  )

  /** Batch sizes from one row to several pages. */
  private def batchSizes(rnd: Random, n: Int): IndexedSeq[Int] =
    IndexedSeq.fill(n)(rnd.nextInt(10) match {
      case 0 => 150 + rnd.nextInt(200) // several pages of 64 rows
      case 1 => 1
      case _ => 1 + rnd.nextInt(40)
    })

  /** Writes a batch file of batches with ids `ids` (sizes `sizes`); returns the rows (id, batch id, index). */
  private def writeBatches(
      path: Path,
      ids: IndexedSeq[Long],
      sizes: IndexedSeq[Int],
      firstRow: Long = 0,
      options: WriterOptions = opts
  ): IndexedSeq[(Long, Long, Int)] = {
    val w = FermionFileWriter.createBatched(path, conf, schema, options)
    var next = firstRow
    val out = IndexedSeq.newBuilder[(Long, Long, Int)]
    try ids.zip(sizes).foreach { case (b, size) =>
        val rows = (0 until size).map(i => row(next + i))
        val root = NestedData.root(fields, rows)
        try w.appendBatch(b, root)
        finally root.close()
        (0 until size).foreach(i => out += ((next + i, b, i)))
        next += size
      }
    finally w.close()
    out.result()
  }

  private def read(scan: Scan): IndexedSeq[IndexedSeq[AnyRef]] = {
    val allocator = new RootAllocator()
    try {
      val it = scan.batches(conf, allocator)
      val out = IndexedSeq.newBuilder[IndexedSeq[AnyRef]]
      try it.foreach { b =>
          val cols = scan.fields.indices.map(i => TestFiles.column(b.vector(i)))
          (0 until b.numRows).foreach(r => out += cols.map(_(r)))
        }
      finally it.close()
      out.result()
    } finally allocator.close()
  }

  test("batches round-trip with computed batch_id and index_in_batch; 1.2 readers' view is the same rows") {
    val rnd = new Random(1)
    val dir = TestFiles.tempDir("fermion-batch")
    val sizes = batchSizes(rnd, 300)
    val ids = rnd.shuffle((0 until 300).map(i => 1000L + i * 3)).toIndexedSeq
    val expected = writeBatches(new Path(dir.resolve("b.fermion").toUri), ids, sizes)
    val s = Snapshot.open(dir.toString, conf)
    val got = read(s.scanBuilder().select("id").withBatchColumns().build())
    assert(got == expected.map { case (id, b, i) => IndexedSeq[AnyRef](Long.box(id), Long.box(b), Int.box(i)) })
    // every column, as a plain scan reads it
    val all = read(s.scanBuilder().build())
    assert(all.size == expected.size && all.map(_(0)) == expected.map(e => Long.box(e._1)))
    val r = TestFiles.open(dir.resolve("b.fermion"))
    try {
      assert(r.footer.minor == io.fermion.core.layout.FormatVersion.Minor && (r.footer.settings & 2) != 0)
      assert(r.batchIndex.get.block.numStripes == r.numStripes)
    } finally r.close()
  }

  test("no batch straddles a DATA page of any column but booleans, nested elements included") {
    val rnd = new Random(2)
    val dir = TestFiles.tempDir("fermion-batch-pages")
    val file = dir.resolve("p.fermion")
    writeBatches(new Path(file.toUri), (0 until 400).map(_.toLong), batchSizes(rnd, 400))
    val r = TestFiles.open(file)
    try {
      val index = r.batchIndex.get
      var checked = 0
      for (stripe <- 0 until r.numStripes) {
        val ends = index.batchStarts(stripe)
        // Batch ends in each node's slots: rows for top-level and struct nodes, elements for vec.
        val vecLengths = {
          val v = r.readStripe(stripe, IndexedSeq(2), TestFiles.allocator).head.asInstanceOf[
            org.apache.arrow.vector.complex.ListVector
          ]
          try (0 to v.getValueCount).map(i => v.getOffsetBuffer.getInt(i.toLong * 4)).toArray
          finally v.close()
        }
        def checkPages(column: Int, stream: Int, batchEnds: Array[Int]): Unit = {
          val m = r.columnMetadata(column).get
          if (m.descType(stream) == DescType.Full && m.fullNumPages(stream, stripe) > 1) {
            val pool = m.fullPageMetaOffset(stream, stripe)
            var start = 0
            for (p <- 0 until m.fullNumPages(stream, stripe)) {
              val end = start + m.pageRowCount(pool, p)
              // The page [start, end) holds whole batches, or lies inside one batch.
              val inside = batchEnds.sliding(2).exists(w => w(0) <= start && end <= w(1))
              assert(
                inside || (batchEnds.contains(start) && batchEnds.contains(end)),
                s"column $column stripe $stripe page $p [$start, $end) straddles a batch"
              )
              start = end
              checked += 1
            }
          }
        }
        checkPages(0, 1, ends) // id DATA
        checkPages(1, 2, ends) // name DATA
        checkPages(2, 3, ends.map(vecLengths)) // vec element DATA, in element slots
        checkPages(4, 2, ends) // st.x DATA
      }
      assert(checked > 50, s"only $checked pages checked")
    } finally r.close()
  }

  /** Reads `scan` to the end and returns its metrics. */
  private def metricsOf(scan: Scan): ScanMetrics = {
    val allocator = new RootAllocator()
    try {
      val it = scan.batches(conf, allocator)
      try it.foreach(_ => ())
      finally it.close()
      it.metrics
    } finally allocator.close()
  }

  test("lookups by batch id read only those batches' pages and equal a full scan; take of whole batches") {
    val rnd = new Random(3)
    val dir = TestFiles.tempDir("fermion-batch-lookup")
    val ids = (0 until 500).map(i => 10L * i)
    val sizes = IndexedSeq.fill(500)(1 + rnd.nextInt(30))
    val expected = writeBatches(new Path(dir.resolve("l.fermion").toUri), ids, sizes)
    val s = Snapshot.open(dir.toString, conf)
    val everything = Seq("id", "name", "vec", "flag", "st")
    val full = read(s.scanBuilder().select(everything: _*).withBatchColumns().build())
    for (round <- 0 until 10) {
      val wanted = IndexedSeq.fill(1 + rnd.nextInt(5))(ids(rnd.nextInt(ids.size))).toSet ++ Set(7L) // 7: no such batch
      val scan = s.scanBuilder().select("id", "name").withBatchColumns().batches(wanted).build()
      val allocator = new RootAllocator()
      val it = scan.batches(conf, allocator)
      val got = IndexedSeq.newBuilder[IndexedSeq[AnyRef]]
      try it.foreach { b =>
          val cols = scan.fields.indices.map(i => TestFiles.column(b.vector(i)))
          (0 until b.numRows).foreach(r => got += cols.map(_(r)))
        }
      finally it.close()
      val metrics = it.metrics
      allocator.close()
      assert(got.result().map(r => (r(0), r(2))) == expected.filter(e => wanted.contains(e._2)).map(e =>
        (Long.box(e._1), Long.box(e._2))
      ))
      val batchesRead = wanted.count(ids.contains)
      // `id` (no nulls, fixed width: no structure streams): exactly one DATA page per batch.
      val idOnly = metricsOf(s.scanBuilder().select("id").batches(wanted).build())
      assert(idOnly.pagesDecoded == batchesRead, s"round $round: $idOnly")
      // with `name`: one DATA page per batch, and its VALIDITY and OFFSETS pages (two) per stripe read
      assert(metrics.pagesDecoded <= batchesRead * 2 + 3 * metrics.stripesRead, s"round $round: $metrics")
      // nested columns too: the rows of a lookup equal a full scan's, and a list column decodes the
      // pages of the batches' elements (a batch of up to 120 elements: two pages of 64 at most),
      // plus its structure (list VALIDITY, OFFSETS, element VALIDITY), not all its stripes' pages
      val lookedUp = read(s.scanBuilder().select(everything: _*).withBatchColumns().batches(wanted).build())
      assert(lookedUp == full.filter(r => wanted.contains(r(5).asInstanceOf[Long])), s"round $round")
      val vecOnly = metricsOf(s.scanBuilder().select("vec").batches(wanted).build())
      assert(vecOnly.pagesDecoded <= batchesRead * 2 + 3 * vecOnly.stripesRead, s"round $round: $vecOnly")
    }
    // take whole batches, in the order asked for
    val scan = s.scanBuilder().select("id").withBatchColumns().build()
    val allocator = new RootAllocator()
    try {
      val b = scan.takeBatches(Array(4990L, 0L, 120L), conf, allocator)
      try {
        val got =
          (0 until b.numRows).map(i => (b.vector(0).getObject(i), b.vector(1).getObject(i), b.vector(2).getObject(i)))
        val want = Seq(4990L, 0L, 120L).flatMap(id => expected.filter(_._2 == id)).map(e =>
          (Long.box(e._1), Long.box(e._2), Int.box(e._3))
        )
        assert(got == want)
      } finally b.close()
      intercept[FermionRowNotFoundException](scan.takeBatches(Array(3L), conf, allocator))
    } finally { scan.close(); allocator.close() }
  }

  test("a lookup's tasks cover only the stripes that may hold its batches, and read what a full scan finds") {
    val rnd = new Random(5)
    val dir = TestFiles.tempDir("fermion-batch-tasks")
    // Two files of ascending ids, so each stripe holds its own range of batch ids; one file
    // without batches, which holds none.
    val ids = (0 until 400).map(i => 5L * i)
    val sizes = IndexedSeq.fill(400)(1 + rnd.nextInt(30))
    val small = opts.copy(stripeMaxRows = 300)
    val first = writeBatches(new Path(dir.resolve("a.fermion").toUri), ids.take(200), sizes.take(200), 0, small)
    val second =
      writeBatches(new Path(dir.resolve("b.fermion").toUri), ids.drop(200), sizes.drop(200), 100000, small)
    val plain = FermionFileWriter.create(new Path(dir.resolve("c.fermion").toUri), conf, schema, opts)
    val root = NestedData.root(fields, (0 until 50).map(i => row(200000L + i)))
    try plain.write(root)
    finally { root.close(); plain.close() }
    val expected = first ++ second
    val s = Snapshot.open(dir.toString, conf)
    val stripesOf = Seq("a", "b").map { n =>
      val r = TestFiles.open(dir.resolve(s"$n.fermion"))
      try (0 until r.numStripes).map(i => (r.stripes.dataOffset(i), r.batchIndex.get.batches(i)._1.toSet))
      finally r.close()
    }
    assert(stripesOf.forall(_.size > 3), stripesOf.map(_.size))
    for (round <- 0 until 8) {
      val wanted = IndexedSeq.fill(1 + rnd.nextInt(3))(ids(rnd.nextInt(ids.size))).toSet
      val scan = s.scanBuilder().select("id").withBatchColumns().batches(wanted).build()
      val tasks = scan.planTasks(TaskSizing(maxSplitBytes = 1L, openCostBytes = 0L), conf)
      // every split starts at a stripe holding a wanted batch; every such stripe is read once
      val starts = tasks.flatMap(_.splits).map(sp => (sp.file.path.endsWith("a.fermion"), sp.start))
      val holding = stripesOf.zipWithIndex.flatMap { case (stripes, f) =>
        stripes.collect { case (off, batchIds) if batchIds.exists(wanted.contains) => (f == 0, off) }
      }
      assert(starts.sorted == holding.sorted, s"round $round")
      val allocator = new RootAllocator()
      val got = IndexedSeq.newBuilder[(AnyRef, AnyRef)]
      try tasks.foreach { t =>
          val r = new ScanTaskReader(scan.plan, t, conf, allocator)
          try while (r.next()) {
              val b = r.batch
              (0 until b.numRows).foreach(i => got += ((b.vector(0).getObject(i), b.vector(1).getObject(i))))
            }
          finally r.close()
        }
      finally allocator.close()
      assert(
        got.result().sortBy(_._1.asInstanceOf[Long]) ==
          expected.filter(e => wanted.contains(e._2)).map(e => (Long.box(e._1), Long.box(e._2))),
        s"round $round"
      )
    }
  }

  test("a batch is never split across stripes; appending outside a batch is an error") {
    val file = new Path(TestFiles.tempDir("fermion-batch-stripes").resolve("s.fermion").toUri)
    val expected = writeBatches(file, (0 until 30).map(_.toLong), IndexedSeq.fill(30)(150)) // stripes of 2,000 rows
    val r = FermionFileReader.open(file, conf, ReaderOptions())
    try {
      val index = r.batchIndex.get
      assert((0 until r.numStripes).map(s => index.batches(s)._2.sum) == (0 until r.numStripes).map(r.stripes.rowCount))
      assert(r.numStripes > 1 && (0 until r.numStripes).forall(s => r.stripes.rowCount(s) % 150 == 0))
    } finally r.close()
    val w = FermionFileWriter.createBatched(new Path(file.toString + "2"), conf, schema, opts)
    val root = NestedData.root(fields, IndexedSeq(row(1)))
    try {
      intercept[IllegalStateException](w.write(root))
      w.startBatch(1)
      intercept[IllegalStateException](w.startBatch(2))
    } finally { root.close(); w.close() }
    assert(expected.size == 4500)
  }

  test("datasets: deletions keep the batches' other rows, compaction keeps batches whole and aligned") {
    val rnd = new Random(4)
    val ds = new FermionDataset(new Path(TestFiles.tempDir("fermion-batch-ds").resolve("t").toUri), conf)
    var all = IndexedSeq.empty[(Long, Long, Int)]
    for (k <- 0 until 4) {
      val (rel, path) = ds.newDataFile()
      val ids = (0 until 40).map(i => k * 1000L + i)
      val rows = writeBatches(path, ids, batchSizes(rnd, 40), firstRow = k * 100000L)
      all ++= rows
      ds.commit(
        k,
        Operation.Append(
          schema,
          IndexedSeq(Fragment(0, rows.size, IndexedSeq(DataFile(rel, schema.fields.map(_.fieldId))), None))
        )
      )
    }
    val m = ds.latest().get
    val f0 = m.fragments.head
    val gone = new RoaringBitmap()
    (0 until f0.physicalRows.toInt by 5).foreach(gone.add)
    ds.commit(
      m.version,
      Operation.Delete(
        IndexedSeq(f0.copy(deletion = Some(ds.writeDeletionFile(f0.id, m.version, gone)))),
        Set.empty,
        "every 5th"
      )
    )
    val live = all.zipWithIndex.filterNot { case (e, i) => e._1 < 100000L && gone.contains(i) }.map(_._1)
    def check(expected: IndexedSeq[(Long, Long, Int)]): Unit = {
      val s = Snapshot.open(ds.name, conf)
      val got = read(s.scanBuilder().select("id").withBatchColumns().build())
      assert(got.map(r => (r(0), r(1), r(2))) == expected.map(e => (Long.box(e._1), Long.box(e._2), Int.box(e._3))))
    }
    // A deleted row leaves the other rows' index_in_batch as stored ...
    check(live)
    // Lookups of nested columns (taken row by row) drop the deleted rows too.
    val snap = Snapshot.open(ds.name, conf)
    val fullNested = read(snap.scanBuilder().select("id", "vec", "st").withBatchColumns().build())
    for (wanted <- Seq(Set(0L, 1L, 2L), Set(5L, 1003L, 3039L), Set(17L))) {
      val got = read(snap.scanBuilder().select("id", "vec", "st").withBatchColumns().batches(wanted).build())
      assert(got.nonEmpty && got == fullNested.filter(r => wanted.contains(r(3).asInstanceOf[Long])), wanted)
    }
    val plan = Compaction.plan(ds, targetRows = 100000).get
    Compaction.commit(ds, plan, plan.groups.map(g => Compaction.rewrite(plan, g, conf)))
    assert(ds.latest().get.fragments.size < 4)
    // ... and compaction, which drops deleted rows, numbers each batch's rows from 0 again.
    val renumbered =
      live.groupBy(_._2).values.flatMap(rows => rows.sortBy(_._1).zipWithIndex.map { case (e, i) => (e._1, e._2, i) })
        .toIndexedSeq.sortBy(e => live.indexWhere(_._1 == e._1))
    check(renumbered)
    // the compacted files are batch files again, their pages aligned to the batches left
    val s = Snapshot.open(ds.name, conf)
    s.files.foreach { f =>
      val r = FermionFileReader.open(new Path(f.path), conf, ReaderOptions())
      try assert(r.batchIndex.nonEmpty, s"${f.path} lost its batches")
      finally r.close()
    }
  }
}
