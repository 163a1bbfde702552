package io.fermion.core

import java.nio.{ByteBuffer, ByteOrder}

import io.fermion.core.compaction.Compaction
import io.fermion.core.dataset._
import io.fermion.core.scan.{ReadAt, Snapshot}
import io.fermion.core.schema.{ArrowSchemaMapping, FermionField, FermionSchema, FermionType}
import io.fermion.core.write.{FermionFileWriter, WriterOptions}
import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.scalatest.funsuite.AnyFunSuite

/** Column sizes: what the writer counts per column (Arrow's layout, checked against sizes worked
  * out from the rows), the manifest's column sizes section (round trip, checks, minor version), and
  * the live bytes a snapshot reports to planners (deletions deducted, files without sizes left out). */
class ColumnSizesSuite extends AnyFunSuite {
  private val conf = new Configuration()
  private val schema = FermionSchema(IndexedSeq(
    FermionField("id", 1, FermionType.Int64, nullable = false),
    FermionField("name", 2, FermionType.Utf8, nullable = true),
    FermionField("xs", 3, FermionType.List, nullable = true, IndexedSeq(FermionField("e", 4, FermionType.Int32, true)))
  ))

  /** Row i: id i, name "n" * (i % 7) (null when i % 5 == 0), xs of i % 4 elements (null when i % 6 == 0). */
  private def rows(n: Int): IndexedSeq[IndexedSeq[Any]] = (0 until n).map { i =>
    IndexedSeq[Any](
      i.toLong,
      if (i % 5 == 0) null else "n" * (i % 7),
      if (i % 6 == 0) null else IndexedSeq.fill(i % 4)(i)
    )
  }

  private def newDataset(): FermionDataset =
    new FermionDataset(new Path(TestFiles.tempDir("fermion-sizes").resolve("t").toUri), conf)

  /** Writes `n` rows in stripes of `stripeRows` as a data file of `ds`; returns it and the writer's sizes. */
  private def write(ds: FermionDataset, n: Int, stripeRows: Int): (String, IndexedSeq[Long]) = {
    val (rel, path) = ds.newDataFile()
    val w = FermionFileWriter.create(path, conf, schema, WriterOptions(stripeMaxRows = stripeRows))
    val root = NestedData.root(schema.fields.map(ArrowSchemaMapping.toArrowField), rows(n))
    try w.write(root)
    finally { root.close(); w.close() }
    (rel, w.columnBytes)
  }

  /** Creates `ds` with one fragment per (rows, recorded) of `files`, each a file of one stripe whose
    * sizes the manifest records when `recorded`; returns the sizes the writer counted. */
  private def create(ds: FermionDataset, files: Seq[(Int, Boolean)]): Seq[IndexedSeq[Long]] = {
    val ids = schema.fields.map(_.fieldId)
    val written = files.map { case (n, recorded) => (n, recorded, write(ds, n, 1000)) }
    ds.commit(
      0,
      Operation.Create(
        schema,
        written.map { case (n, recorded, (path, sizes)) =>
          Fragment(0, n.toLong, IndexedSeq(DataFile(path, ids, if (recorded) sizes else IndexedSeq.empty)), None)
        }.toIndexedSeq
      )
    )
    written.map(_._3._2)
  }

  test("the writer counts each column's size in Arrow's layout: validity bits per stripe, 4-byte lengths, values") {
    val n = 2500
    val stripes = Seq(1000, 1000, 500)
    val bits = stripes.map(s => (s + 7) / 8).sum.toLong
    val data = rows(n)
    val nameBytes = data.map(_(1)).collect { case s: String => s.length }.sum
    val lists = data.map(_(2))
    val elements = lists.collect { case xs: IndexedSeq[_] => xs.size }
    // Elements per stripe, for the element validity bitmaps.
    val elementBits =
      stripes.scanLeft(0)(_ + _).sliding(2).map { case Seq(a, b) =>
        val m = lists.slice(a, b).collect { case xs: IndexedSeq[_] => xs.size }.sum
        (m + 7) / 8
      }.sum
    val (_, sizes) = write(newDataset(), n, stripeRows = 1000)
    assert(sizes == IndexedSeq(
      bits + 8L * n,
      bits + 4L * n + nameBytes,
      bits + 4L * n + elementBits + 4L * elements.sum
    ))
  }

  test("the column sizes section round-trips, keeps minor 0 away, and is checked") {
    val ds = newDataset()
    // The second file as an older writer's: no sizes.
    val Seq(sa, _) = create(ds, Seq(300 -> true, 200 -> false))
    val m = ds.latest().get
    assert(m.fragments.map(_.files.head.fieldBytes) == IndexedSeq(sa, IndexedSeq.empty))
    def minor(bytes: Array[Byte]) =
      ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN).getShort(ManifestCodec.Magic.length + 2)
    assert(minor(ManifestCodec.encode(m)) == 1)
    val plain =
      m.copy(fragments = m.fragments.map(f => f.copy(files = f.files.map(_.copy(fieldBytes = IndexedSeq.empty)))))
    assert(minor(ManifestCodec.encode(plain)) == 0, "without sizes a manifest stays byte for byte minor 0")
    assert(
      ManifestCodec.decode(ManifestCodec.encode(plain), "t", "m").fragments.forall(_.files.forall(_.fieldBytes.isEmpty))
    )

    // Bodies that do not fit the fragments they describe are a damaged manifest.
    def body(f: MetadataWriter => Unit): MetadataReader = {
      val w = new MetadataWriter(Array.emptyByteArray); f(w)
      new MetadataReader(new MetadataWriter(ManifestCodec.Magic).raw(w.written).finish(), ManifestCodec.Magic, "t", "m")
    }
    val bad = Seq(
      body(w => w.u32(1)), // one fragment of two
      body(w => { w.u32(2); w.u32(2) }), // two files for a fragment of one
      body(w => { w.u32(2); w.u32(1).u32(2).i64(1).i64(2); w.u32(1).u32(0) }), // two sizes for three ids
      body(w => { w.u32(2); w.u32(1).u32(3).i64(1).i64(-2).i64(3); w.u32(1).u32(0) }) // a negative size
    )
    bad.foreach(r => intercept[InvalidFermionDatasetException](ManifestCodec.readColumnSizes(r, m.fragments)))
    val good = body(w => { w.u32(2); w.u32(1).u32(3).i64(1).i64(2).i64(3); w.u32(1).u32(0) })
    assert(ManifestCodec.readColumnSizes(good, m.fragments).map(_.files.head.fieldBytes) ==
      IndexedSeq(IndexedSeq(1L, 2L, 3L), IndexedSeq.empty))
  }

  test(
    "a snapshot's recorded bytes: deletions deducted, missing files' sizes leave the column out, compaction records them"
  ) {
    val ds = newDataset()
    val Seq(sa, sb) = create(ds, Seq(400 -> true, 100 -> true))
    val ids = schema.fields.map(_.fieldId)
    def snapshot() = Snapshot.open(ds.root.toString, conf, ReadAt.Latest, mergeSchema = false)
    assert(snapshot().recordedBytes(ids) == ids.indices.map(i => ids(i) -> (sa(i) + sb(i))).toMap)
    // A quarter of the first fragment deleted: its sizes count three quarters.
    val base = ds.latest().get
    val quarter = new org.roaringbitmap.RoaringBitmap()
    quarter.add(0L, 100L)
    ds.deleteRows(base.version, Map(base.fragments.head.id -> quarter), "a quarter of the first fragment")
    assert(snapshot().recordedBytes(Seq(1)) == Map(1 -> (sa(0) * 3 / 4 + sb(0))))
    // A column no file holds reads null: nothing to count. One file without sizes: unknown.
    val unsized = ds.latest().get
    assert(unsized.fragments.head.liveBytes(99) == Some(0L))
    assert(unsized.fragments.head.copy(files = unsized.fragments.head.files.map(_.copy(fieldBytes = IndexedSeq.empty)))
      .liveBytes(1).isEmpty)
    // Compaction writes the rows again and records their sizes.
    val plan = Compaction.plan(ds, targetRows = 10000).get
    Compaction.commit(ds, plan, plan.groups.map(g => Compaction.rewrite(plan, g, conf)))
    val compacted = snapshot()
    assert(compacted.files.size == 1)
    assert(compacted.recordedBytes(Seq(1)) == Map(1 -> ((400 + 7) / 8 + 8L * 400)))
  }
}
