package io.fermion.core

import scala.jdk.CollectionConverters._
import scala.util.Random

import io.fermion.core.compaction.Compaction
import io.fermion.core.dataset._
import io.fermion.core.scan._
import io.fermion.core.schema.{ArrowSchemaMapping, FermionSchema}
import io.fermion.core.write.{FermionFileWriter, WriterOptions}
import org.apache.arrow.memory.RootAllocator
import org.apache.arrow.vector.types.pojo.{ArrowType, Field, FieldType}
import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.roaringbitmap.RoaringBitmap
import org.scalatest.funsuite.AnyFunSuite

/** Stable row ids that survive updates and compaction (docs/table-format.md 6.5): listed row ids
  * in the manifest or in row id files, the row id index, `_rowid` in scans and takes. The data
  * column `key` holds each row's id as first assigned, so `_rowid == key` must hold for every row
  * of every version, whatever was updated or compacted. */
class RowIdSuite extends AnyFunSuite {
  private val conf = new Configuration()
  private val opts = WriterOptions(stripeMaxRows = 500, pageRows = 128)
  private val schema = ArrowSchemaMapping.toFermion(new org.apache.arrow.vector.types.pojo.Schema(Seq(
    new Field("key", FieldType.notNullable(new ArrowType.Int(64, true)), java.util.List.of()),
    new Field("v", FieldType.nullable(ArrowType.Utf8.INSTANCE), java.util.List.of())
  ).asJava))
  private val stable = Map(FermionDataset.StableRowIdsConfig -> "true")

  test("row id sequences: runs and lists give every row's id, and round-trip through manifest bytes") {
    val rnd = new Random(3)
    for (_ <- 0 until 200) {
      val ids = {
        val b = Array.newBuilder[Long]
        var next = rnd.nextInt(1000).toLong
        for (_ <- 0 until rnd.nextInt(8)) {
          val n = 1 + rnd.nextInt(10)
          if (rnd.nextBoolean()) (0 until n).foreach(i => b += next + i)
          else (0 until n).foreach(_ => b += rnd.nextInt(1 << 20).toLong)
          next += n + rnd.nextInt(3)
        }
        b.result()
      }
      val s = RowIdSequence.of(ids)
      assert(s.length == ids.length && ids.indices.forall(i => s(i.toLong) == ids(i)), ids.mkString(","))
      assert(s.segments.forall(_.length > 0))
      s.segments.sliding(2).foreach {
        case Seq(_: RowIdSegment.Values, _: RowIdSegment.Values) => fail("adjacent lists are one list")
        case _ =>
      }
      val kinds = Seq(RowIds.of(ids), RowIds.Listed(s), RowIds.External("_rowids/x.rowids", ids.length.toLong))
      val frags = kinds.zipWithIndex.map { case (k, i) =>
        Fragment(i.toLong, ids.length.toLong, IndexedSeq(DataFile("data/a.fermion", IndexedSeq(1))), None, Some(k))
      }
      val m = FermionDataset.emptyManifest.copy(version = 1, schema = schema, fragments = frags.toIndexedSeq)
      assert(ManifestCodec.decode(ManifestCodec.encode(m), "ds", "m").fragments == frags)
    }
    assert(RowIds.of(Array(5L, 6L, 7L, 8L, 9L)) == RowIds.Start(5))
    // A listed sequence must hold one id per row.
    val wrong = FermionDataset.emptyManifest.copy(
      version = 1,
      schema = schema,
      fragments =
        IndexedSeq(Fragment(1, 3, IndexedSeq.empty, None, Some(RowIds.Listed(RowIdSequence.of(Array(1L, 9L))))))
    )
    val e = intercept[InvalidFermionDatasetException](ManifestCodec.decode(ManifestCodec.encode(wrong), "ds", "m"))
    assert(e.getMessage.contains("holds 2 row ids for 3 rows"), e.getMessage)
  }

  private def writeRows(ds: FermionDataset, rows: Seq[(Long, String)]): DataFile = {
    val (rel, path) = ds.newDataFile()
    val w = FermionFileWriter.create(path, conf, schema, opts)
    val root = NestedData.root(
      schema.fields.map(ArrowSchemaMapping.toArrowField),
      rows.map(r => IndexedSeq(r._1, r._2)).toIndexedSeq
    )
    try w.write(root)
    finally { root.close(); w.close() }
    DataFile(rel, schema.fields.map(_.fieldId))
  }

  /** (key, v, _rowid, _rowaddr) of every row of `snapshot`, by a scan. */
  private def scanRows(snapshot: Snapshot): IndexedSeq[(Long, String, Long, Long)] = {
    val allocator = new RootAllocator(Long.MaxValue)
    try {
      val scan = snapshot.scanBuilder().withRowId().withRowAddress().build()
      val out = IndexedSeq.newBuilder[(Long, String, Long, Long)]
      val it = scan.batches(conf, allocator)
      try it.foreach { b =>
          val cols = (0 until 4).map(i => TestFiles.column(b.vector(i)))
          (0 until b.numRows).foreach { r =>
            out += ((
              cols(0)(r).asInstanceOf[java.lang.Long],
              Option(cols(1)(r)).map(_.toString).orNull,
              cols(2)(r).asInstanceOf[java.lang.Long],
              cols(3)(r).asInstanceOf[java.lang.Long]
            ))
          }
        }
      finally it.close()
      out.result()
    } finally allocator.close()
  }

  /** (key, v, _rowid) of the rows with ids `ids`, by a take, in request order. */
  private def takeRows(snapshot: Snapshot, ids: Array[Long]): IndexedSeq[(Long, String, Long)] = {
    val allocator = new RootAllocator(Long.MaxValue)
    val scan = snapshot.scanBuilder().withRowId().build()
    try {
      val b = scan.takeRowIds(ids, conf, allocator)
      try {
        val cols = (0 until 3).map(i => TestFiles.column(b.vector(i)))
        (0 until b.numRows).map(r =>
          (
            cols(0)(r).asInstanceOf[java.lang.Long].longValue,
            Option(cols(1)(r)).map(_.toString).orNull,
            cols(2)(r).asInstanceOf[java.lang.Long].longValue
          )
        )
      } finally b.close()
    } finally { scan.close(); allocator.close() }
  }

  /** Rewrites the rows whose key satisfies `hit` with value `value(key)`, as an UPDATE does: their
    * old copies deleted, new copies (keeping their ids) in a new fragment, in one version. */
  private def update(ds: FermionDataset, hit: Long => Boolean, value: Long => String): Manifest = {
    val base = ds.latest().get
    val rows = scanRows(Snapshot.open(ds.name, conf)).filter(r => hit(r._1))
    val deletes = rows.groupBy(r => ColumnRequest.fragmentOf(r._4)).map { case (f, rs) =>
      f -> RoaringBitmap.bitmapOf(rs.map(r => ColumnRequest.rowOf(r._4)): _*)
    }
    val shuffled = new Random(rows.size).shuffle(rows)
    val file = writeRows(ds, shuffled.map(r => r._1 -> value(r._1)))
    val fragment =
      Fragment(0, shuffled.size.toLong, IndexedSeq(file), None, Some(RowIds.of(shuffled.map(_._3).toArray)))
    ds.updateRows(base.version, deletes, schema, IndexedSeq.empty, IndexedSeq(fragment), "update")._2.get
  }

  private def check(ds: FermionDataset, expected: Map[Long, String], at: ReadAt = ReadAt.Latest): Unit = {
    val snapshot = Snapshot.open(ds.name, conf, at)
    val rows = scanRows(snapshot)
    assert(
      rows.forall(r => r._3 == r._1),
      s"_rowid differs from the id first given: ${rows.filter(r => r._3 != r._1).take(5)}"
    )
    assert(rows.map(r => r._1 -> r._2).toMap == expected && rows.size == expected.size)
    val rnd = new Random(expected.size)
    val ids = Array.fill(300)(expected.keys.toIndexedSeq(rnd.nextInt(expected.size)))
    assert(takeRows(snapshot, ids) == ids.toSeq.map(id => (id, expected(id), id)))
  }

  test("updated rows keep their _rowid; the row id index finds their live copy; compaction keeps every id") {
    val ds = new FermionDataset(new Path(TestFiles.tempDir("fermion-rowids").resolve("t").toUri), conf)
    var expected = Map.empty[Long, String]
    def append(keys: Range): Manifest = {
      val rows = keys.map(k => k.toLong -> s"v$k")
      expected ++= rows
      val file = writeRows(ds, rows)
      ds.commit(
        ds.latestVersion().getOrElse(0L),
        Operation.Append(schema, IndexedSeq(Fragment(0, rows.size.toLong, IndexedSeq(file), None))),
        stable
      )
    }
    append(0 until 1000)
    val v2 = append(1000 until 2000)
    assert(v2.fragments.map(_.rowIds) == Seq(Some(RowIds.Start(0)), Some(RowIds.Start(1000))))
    check(ds, expected)

    // A small update: its ids listed in the manifest.
    val v3 = update(ds, _ % 7 == 0, k => s"a$k")
    expected = expected.map { case (k, v) => k -> (if (k % 7 == 0) s"a$k" else v) }
    assert(v3.fragments.last.rowIds.exists(_.isInstanceOf[RowIds.Listed]))
    assert((v3.readerFeatures & Manifest.FeatureRowIdSequences) != 0 && v3.nextRowId == 2000)
    check(ds, expected)

    // A larger one, rows updated twice among them: its ids go to a row id file.
    val v4 = update(ds, _ % 3 == 0, k => s"b$k")
    expected = expected.map { case (k, v) => k -> (if (k % 3 == 0) s"b$k" else v) }
    val external = v4.fragments.last.rowIds.get.asInstanceOf[RowIds.External]
    assert(external.path.startsWith("_rowids/") && ds.fs.exists(ds.resolvePath(external.path)))
    check(ds, expected)
    check(ds, expected.map { case (k, v) => k -> (if (k % 7 == 0) s"a$k" else s"v$k") }, ReadAt.Version(3))

    // New rows after updates take fresh ids.
    val v5 = append(2000 until 2100)
    assert(v5.fragments.last.rowIds.contains(RowIds.Start(2000)))
    check(ds, expected)

    // Compaction: every fragment rewritten, ids carried (runs where consecutive).
    val plan = Compaction.plan(ds, targetRows = 100000).get
    val compacted = Compaction.commit(ds, plan, plan.groups.map(g => Compaction.rewrite(plan, g, conf)))
    assert(compacted.fragments.forall(_.deletion.isEmpty) && compacted.nextRowId == 2100)
    check(ds, expected)

    // Cleanup keeps the row id files versions still use and removes the others.
    val orphan = ds.resolvePath("_rowids/orphan.rowids")
    ds.fs.create(orphan).close()
    ds.cleanup(System.currentTimeMillis() + 1000)
    assert(!ds.fs.exists(orphan))
    ds.latest().get.fragments.flatMap(_.rowIds).collect { case e: RowIds.External => e.path }
      .foreach(p => assert(ds.fs.exists(ds.resolvePath(p)), p))
    check(ds, expected)

    val missing = intercept[FermionRowNotFoundException](takeRows(Snapshot.open(ds.name, conf), Array(5000L)))
    assert(missing.getMessage.contains("no row with _rowid 5000"), missing.getMessage)
  }

  test("a deleted row's id is not found; a compaction that drops row ids is refused") {
    val ds = new FermionDataset(new Path(TestFiles.tempDir("fermion-rowids-del").resolve("t").toUri), conf)
    val file = writeRows(ds, (0 until 10).map(k => k.toLong -> s"v$k"))
    val v1 = ds.commit(0, Operation.Append(schema, IndexedSeq(Fragment(0, 10, IndexedSeq(file), None))), stable)
    ds.deleteRows(1, Map(v1.fragments.head.id -> RoaringBitmap.bitmapOf(4)), "delete")
    val gone = intercept[FermionRowNotFoundException](takeRows(Snapshot.open(ds.name, conf), Array(4L)))
    assert(gone.getMessage.contains("_rowid 4 is deleted"), gone.getMessage)
    val other = writeRows(ds, (0 until 9).map(k => k.toLong -> s"v$k"))
    val e = intercept[IllegalArgumentException](
      ds.commit(2, Operation.Compact(Set(v1.fragments.head.id), IndexedSeq(Fragment(0, 9, IndexedSeq(other), None))))
    )
    assert(e.getMessage.contains("must carry the ids"), e.getMessage)
  }
}
