package io.fermion.core.scan

import java.nio.charset.StandardCharsets

import io.fermion.core.{NestedData, TestFiles}
import io.fermion.core.dataset._
import io.fermion.core.expr.{FilterExpr, FilterValue}
import io.fermion.core.schema.{ArrowSchemaMapping, FermionField, FermionSchema, FermionType}
import io.fermion.core.write.{FermionFileWriter, WriterOptions}
import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.scalatest.funsuite.AnyFunSuite

/** The share of rows a scan's filter keeps, estimated on a sample (`Scan.filteredShare`), against
  * the share the generated data has: uniform keys (the sample's rows), a sorted key (statistics
  * rule stripes out), strings, both at once, and filters nothing can evaluate or that match nothing. */
class FilterSelectivitySuite extends AnyFunSuite {
  import FilterExpr._

  private val conf = new Configuration()
  private val rowsPerFile = 20000
  private val files = 2
  private val total = rowsPerFile * files
  private val schema = FermionSchema(IndexedSeq(
    FermionField("id", 1, FermionType.Int64, nullable = false),
    FermionField("k", 2, FermionType.Int32, nullable = true),
    FermionField("tag", 3, FermionType.Utf8, nullable = true)
  ))

  /** `k` spreads 0..99 evenly over every run of 100 ids in a scrambled order (1 in 50 null), `tag`
    * is "a" for 3 ids in 10. */
  private def k(id: Long): Option[Int] = if (id % 50 == 7) None else Some(((id * 37) % 100).toInt)
  private def tag(id: Long): String = if (id % 10 < 3) "a" else "b"

  private lazy val snapshot: Snapshot = written()

  private def written(): Snapshot = {
    val ds = new FermionDataset(new Path(TestFiles.tempDir("fermion-selectivity").resolve("t").toUri), conf)
    val opts = WriterOptions(stripeMaxRows = 5000)
    val fragments = (0 until files).map { f =>
      val (rel, path) = ds.newDataFile()
      val w = FermionFileWriter.create(path, conf, schema, opts)
      val ids = (f * rowsPerFile).toLong until ((f + 1) * rowsPerFile).toLong
      val root = NestedData.root(
        schema.fields.map(ArrowSchemaMapping.toArrowField),
        ids.map(id => IndexedSeq[Any](id, k(id).map(Int.box).orNull, tag(id))).toIndexedSeq
      )
      try w.write(root)
      finally { root.close(); w.close() }
      Fragment(0, ids.size.toLong, IndexedSeq(DataFile(rel, schema.fields.map(_.fieldId), w.columnBytes)), None)
    }
    ds.commit(0, Operation.Create(schema, fragments, IndexedSeq.empty))
    Snapshot.open(ds.name, conf, ReadAt.Latest)
  }

  private def share(f: FilterExpr): Double =
    snapshot.scanBuilder().select("id").filter(f).build().filteredShare(conf).get

  /** The share of the generated rows that satisfy `p`. */
  private def truth(p: Long => Boolean): Double = (0L until total).count(p).toDouble / total

  private def int(v: Long) = FilterValue.Integral(v)

  test("uniform keys: the sampled rows' share; a sorted key: the stripes statistics leave") {
    val kBelow10 = truth(id => k(id).exists(_ < 10))
    assert(math.abs(share(Compare("k", Lt, int(10))) - kBelow10) < 0.01)
    val kIn = truth(id => k(id).exists(Set(3, 50, 97)))
    assert(math.abs(share(In("k", IndexedSeq(int(3), int(50), int(97)))) - kIn) < 0.01)
    // Sorted ids: stripes of 5,000 rows, the last one whole in play, the others ruled out.
    assert(share(Compare("id", GtEq, int(35000))) == truth(_ >= 35000))
    val both = truth(id => id >= 35000 && k(id).exists(_ < 10))
    assert(math.abs(share(And(Compare("id", GtEq, int(35000)), Compare("k", Lt, int(10)))) - both) < 0.005)
    val a = FilterValue.Bytes("a".getBytes(StandardCharsets.UTF_8))
    assert(math.abs(share(Compare("tag", Eq, a)) - truth(id => tag(id) == "a")) < 0.01)
    assert(math.abs(share(IsNull("k")) - truth(id => k(id).isEmpty)) < 0.005)
  }

  test("exact filtering pays for filters keeping at most 1 row in 16 or every row, not in between") {
    def pays(f: FilterExpr) = Scan.exactFilterPays(share(f))
    assert(pays(Compare("k", Lt, int(5)))) // 5 in 100 of the non-null: 4.9 %
    assert(pays(Compare("id", GtEq, int(0)))) // every row
    assert(pays(IsNotNull("id"))) // every row
    assert(!pays(Compare("k", Lt, int(10)))) // 9.8 %
    assert(!pays(IsNotNull("k"))) // 98 %: cutting out the nulls would copy the rest
    assert(!pays(Compare("tag", Eq, FilterValue.Bytes("a".getBytes(StandardCharsets.UTF_8))))) // 30 %
    assert(Scan.exactFilterPays(1.0 / Scan.CutMatchesBelow) && !Scan.exactFilterPays(1.0 / (Scan.CutMatchesBelow - 1)))
  }

  test("partitions: the share among the fragments partition pruning keeps, their values deciding leaves") {
    val schema = FermionSchema(IndexedSeq(
      FermionField("id", 1, FermionType.Int64, nullable = false),
      FermionField("p", 2, FermionType.Int32, nullable = true)
    ))
    val spec = IndexedSeq(2)
    val data = Partitioning.dataSchema(schema, spec)
    val ds = new FermionDataset(new Path(TestFiles.tempDir("fermion-selectivity-p").resolve("t").toUri), conf)
    // Partition p = f holds ids f * 10,000 until (f + 1) * 10,000, for f = 0 to 3.
    val fragments = (0 until 4).map { f =>
      val (rel, path) = ds.newDataFile()
      val w = FermionFileWriter.create(path, conf, data, WriterOptions(stripeMaxRows = 2500))
      val ids = (f * 10000L) until ((f + 1) * 10000L)
      val root =
        NestedData.root(
          data.fields.map(ArrowSchemaMapping.toArrowField),
          ids.map(id => IndexedSeq[Any](id)).toIndexedSeq
        )
      try w.write(root)
      finally { root.close(); w.close() }
      Fragment(
        0,
        ids.size.toLong,
        IndexedSeq(DataFile(rel, IndexedSeq(1), w.columnBytes)),
        None,
        partition = IndexedSeq(Some(int(f)))
      )
    }
    ds.commit(0, Operation.Create(schema, fragments, spec))
    val s = Snapshot.open(ds.name, conf, ReadAt.Latest)
    def scan(f: FilterExpr) = s.scanBuilder().select("id").filter(f).build()
    // p >= 2 prunes two fragments; of the other two, the filter keeps every row.
    val pruned = scan(Compare("p", GtEq, int(2)))
    assert(pruned.snapshot.files.size == 2 && pruned.filteredShare(conf).contains(1.0))
    // Within p = 1 (ids 10,000 to 19,999), ids below 12,500 fill the first of its 4 stripes.
    assert(scan(And(Compare("p", Eq, int(1)), Compare("id", Lt, int(12500)))).filteredShare(conf).contains(0.25))
    // p = 1 OR id >= 37,500: all of fragment 1, the last stripe of fragment 3, none of 0 and 2.
    val either = scan(Or(Compare("p", Eq, int(1)), Compare("id", GtEq, int(37500))))
    assert(either.filteredShare(conf).contains(12500.0 / 40000))
  }

  test("a filter that matches nothing is 0; one nothing evaluates keeps all; no filter, no estimate") {
    assert(share(Compare("id", Lt, int(0))) == 0.0)
    assert(share(Compare("k", Gt, int(1000))) == 0.0)
    assert(share(Unknown) == 1.0)
    assert(share(Or(Compare("k", Lt, int(10)), Unknown)) == 1.0)
    assert(snapshot.scanBuilder().select("id").build().filteredShare(conf).isEmpty)
  }

  test("an estimate is reused for the same plan over the same files, not for another filter or files") {
    val own = written()
    def estimate(s: Snapshot, f: FilterExpr) = s.scanBuilder().select("id").filter(f).build().filteredShare(conf)
    val first = estimate(own, Compare("k", Lt, int(10)))
    assert(first.exists(v => v > 0.05 && v < 0.15))
    // Without its files, the same filter's estimate can only come from the memo...
    own.files.foreach(f => new java.io.File(new java.net.URI(f.path)).delete())
    assert(estimate(own, Compare("k", Lt, int(10))) == first)
    // ...while another filter reads the sample, and finds the files gone.
    intercept[Exception](estimate(own, Compare("k", Lt, int(20))))
    // The same filter over other files (another dataset, the same rows) is sampled afresh: with
    // those files gone too, it fails.
    val other = written()
    other.files.foreach(f => new java.io.File(new java.net.URI(f.path)).delete())
    intercept[Exception](estimate(other, Compare("k", Lt, int(10))))
  }
}
