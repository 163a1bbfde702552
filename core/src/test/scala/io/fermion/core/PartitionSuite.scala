package io.fermion.core

import java.nio.{ByteBuffer, ByteOrder}
import java.nio.charset.StandardCharsets

import io.fermion.core.compaction.Compaction
import io.fermion.core.dataset._
import io.fermion.core.expr.{ConstantFilter, FilterExpr, FilterValue}
import io.fermion.core.scan.{ReadAt, Snapshot}
import io.fermion.core.schema.{ArrowSchemaMapping, FermionField, FermionSchema, FermionType}
import io.fermion.core.write.{FermionFileWriter, WriterOptions}
import org.apache.arrow.memory.RootAllocator
import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.scalatest.funsuite.AnyFunSuite

/** Partitioned datasets in the core: the manifest's partitioning section (bytes and checks),
  * partition pruning of a scan by fragment values under SQL's three-valued logic, partition
  * columns read as each fragment's constants, partition replacement (its predicate, the check of
  * written rows, its conflicts) and compaction within partitions. */
class PartitionSuite extends AnyFunSuite {
  private val conf = new Configuration()
  private val schema = FermionSchema(IndexedSeq(
    FermionField("id", 1, FermionType.Int64, nullable = false),
    FermionField("p", 2, FermionType.Int32, nullable = true),
    FermionField("region", 3, FermionType.Utf8, nullable = true)
  ))
  private val spec = IndexedSeq(2, 3)
  private val dataSchema = Partitioning.dataSchema(schema, spec)

  private def int(v: Long) = Some(FilterValue.Integral(v))
  private def str(s: String) = Some(FilterValue.Bytes(s.getBytes(StandardCharsets.UTF_8)))

  private def newDataset(): FermionDataset =
    new FermionDataset(new Path(TestFiles.tempDir("fermion-part").resolve("t").toUri), conf)

  /** A data file of `ids` (the data column only) as a fragment of partition `values`. */
  private def fragment(ds: FermionDataset, ids: Seq[Long], values: IndexedSeq[Option[FilterValue]]): Fragment = {
    val (rel, path) = ds.newDataFile()
    val w = FermionFileWriter.create(path, conf, dataSchema, WriterOptions())
    val root =
      NestedData.root(dataSchema.fields.map(ArrowSchemaMapping.toArrowField), ids.map(i => IndexedSeq(i)).toIndexedSeq)
    try w.write(root)
    finally { root.close(); w.close() }
    Fragment(0, ids.size.toLong, IndexedSeq(DataFile(rel, IndexedSeq(1), w.columnBytes)), None, partition = values)
  }

  /** A dataset of four partitions: (1, "eu"), (2, "eu"), (3, "us"), (null, null). */
  private def built(): FermionDataset = {
    val ds = newDataset()
    val fs = IndexedSeq(
      fragment(ds, 0L until 10L, IndexedSeq(int(1), str("eu"))),
      fragment(ds, 10L until 20L, IndexedSeq(int(2), str("eu"))),
      fragment(ds, 20L until 30L, IndexedSeq(int(3), str("us"))),
      fragment(ds, 30L until 35L, IndexedSeq(None, None))
    )
    ds.commit(0, Operation.Create(schema, fs, spec))
    ds
  }

  /** (id, p, region) of every row a scan with `filter` returns, and the fragments it pruned. */
  private def scan(ds: FermionDataset, filter: Option[FilterExpr]): (Set[(Long, Any, Any)], Int) = {
    val b = Snapshot.open(ds.root.toString, conf, ReadAt.Latest, mergeSchema = false).scanBuilder()
    filter.foreach(b.filter)
    val s = b.build()
    val allocator = new RootAllocator(Long.MaxValue)
    val rows = scala.collection.mutable.Set.empty[(Long, Any, Any)]
    try {
      val it = s.batches(conf, allocator)
      try it.foreach { batch =>
          val (id, p, r) = (batch.vector(0), batch.vector(1), batch.vector(2))
          (0 until batch.numRows).foreach { i =>
            rows += ((
              id.getObject(i).asInstanceOf[Long],
              p.getObject(i),
              Option(r.getObject(i)).map(_.toString).orNull
            ))
          }
        }
      finally it.close()
    } finally allocator.close()
    (rows.toSet, s.filesPruned)
  }

  private def cmp(c: String, op: FilterExpr.Op, v: Long) = FilterExpr.Compare(c, op, FilterValue.Integral(v))

  test("the partitioning section round-trips; unpartitioned manifests keep minor version 0") {
    val ds = built()
    val m = ds.latest().get
    assert(m.partitionSpec == spec && m.isPartitioned)
    assert((m.readerFeatures & Manifest.FeaturePartitions) != 0)
    val bytes = ManifestCodec.encode(m)
    val back = ManifestCodec.decode(bytes, "t", "m")
    assert(back.partitionSpec == spec)
    assert(back.fragments.map(_.partition) == m.fragments.map(_.partition))
    def minor(b: Array[Byte]) =
      ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN).getShort(ManifestCodec.Magic.length + 2)
    assert(minor(bytes) == 1)
    // Sizes are recorded for the data column; partition columns, in no file, have none.
    val snapshot = Snapshot.open(ds.root.toString, conf, ReadAt.Latest, mergeSchema = false)
    assert(snapshot.recordedBytes(Seq(1, 2, 3)) == Map(1 -> m.fragments.map(_.files.head.fieldBytes.head).sum))
    val plain = m.copy(
      partitionSpec = IndexedSeq.empty,
      fragments = m.fragments.map(f =>
        f.copy(partition = IndexedSeq.empty, files = f.files.map(_.copy(fieldBytes = IndexedSeq.empty)))
      ),
      readerFeatures = 0,
      writerFeatures = 0
    )
    assert(minor(ManifestCodec.encode(plain)) == 0, "unpartitioned manifests are byte for byte minor 0")
    // A section whose values do not fit their column is a damaged manifest.
    val wrong = m.copy(fragments = m.fragments.map(f => f.copy(partition = IndexedSeq(str("x"), str("y")))))
    intercept[InvalidFermionDatasetException](ManifestCodec.decode(ManifestCodec.encode(wrong), "t", "m"))
  }

  test("partition pruning skips fragments whose values rule the filter out (three-valued logic)") {
    val ds = built()
    import FilterExpr._
    val all = scan(ds, None)._1
    assert(all.size == 35)
    assert(all.filter(_._1 == 12).head == ((12L, 2, "eu")), "partition columns read as the fragment's values")
    assert(all.filter(_._1 == 31).head == ((31L, null, null)))
    def check(f: FilterExpr, pruned: Int, expected: ((Long, Any, Any)) => Boolean): Unit = {
      val (rows, p) = scan(ds, Some(f))
      assert(p == pruned, s"$f pruned $p fragments")
      assert(all.filter(expected).subsetOf(rows), s"$f lost rows")
      assert(rows.subsetOf(all))
    }
    check(cmp("p", Eq, 2), 3, _._2 == 2)
    check(IsNull("p"), 3, _._2 == null)
    check(Not(cmp("p", Eq, 2)), 2, r => r._2 != null && r._2 != 2) // p = NULL: NOT NULL is NULL
    check(Compare("region", Eq, FilterValue.Bytes("eu".getBytes)), 2, _._3 == "eu")
    check(Or(cmp("p", Eq, 1), cmp("id", Gt, 33)), 0, r => r._2 == 1 || r._1 > 33)
    check(And(cmp("p", GtEq, 2), cmp("id", Lt, 15)), 2, r => r._2 != null && r._2.asInstanceOf[Int] >= 2 && r._1 < 15)
    check(In("p", IndexedSeq(FilterValue.Integral(1), FilterValue.Integral(3))), 2, r => r._2 == 1 || r._2 == 3)
    // Rows of a kept fragment are filtered exactly where the filter is decided by its values.
    val (rows, _) = scan(ds, Some(And(cmp("p", Eq, 2), cmp("id", Lt, 12))))
    assert(rows.map(_._1) == Set(10L, 11L))
  }

  test("ConstantFilter: outcomes of filters over constants and varying columns") {
    import ConstantFilter._
    import FilterExpr._
    val lookup: String => Column = {
      case "p" => Constant(Some(FilterValue.Integral(2)))
      case "n" => Constant(None)
      case _ => Varies
    }
    assert(isTrue(cmp("p", Eq, 2), lookup).contains(true))
    assert(isTrue(cmp("n", Eq, 2), lookup).contains(false))
    assert(outcomes(cmp("n", Eq, 2), lookup) == Null)
    assert(outcomes(Not(cmp("n", Eq, 2)), lookup) == Null)
    assert(!mayMatch(And(cmp("n", Eq, 2), cmp("x", Eq, 1)), lookup))
    assert(mayMatch(Or(cmp("n", Eq, 2), cmp("x", Eq, 1)), lookup))
    assert(isTrue(Or(IsNull("n"), cmp("x", Eq, 1)), lookup).contains(true))
    assert(bind(And(cmp("p", Eq, 2), cmp("x", Eq, 1)), lookup).contains(cmp("x", Eq, 1)))
    assert(bind(Or(cmp("p", Eq, 2), cmp("x", Eq, 1)), lookup).isEmpty)
    assert(!isExact(And(cmp("p", Eq, 2), Unknown), _ => true))
    val named: String => Column = {
      case "r" => Constant(str("europe"))
      case "n" => Constant(None)
      case _ => Varies
    }
    assert(isTrue(EndsWith("r", "ope".getBytes), named).contains(true))
    assert(isTrue(EndsWith("r", "eur".getBytes), named).contains(false))
    assert(isTrue(Contains("r", "uro".getBytes), named).contains(true))
    assert(isTrue(Contains("r", "pe!".getBytes), named).contains(false))
    assert(isTrue(Contains("r", Array.emptyByteArray), named).contains(true))
    assert(outcomes(Contains("n", "a".getBytes), named) == Null)
    assert(outcomes(EndsWith("x", "a".getBytes), named) == Any)
  }

  test("replacing partitions: only the selected ones, written rows must fall inside, conflicts") {
    val ds = built()
    val v = ds.latestVersion().get
    val replacement = fragment(ds, Seq(100L, 101L), IndexedSeq(int(1), str("eu")))
    val m = ds.replacePartitions(v, schema, cmp("p", FilterExpr.Eq, 1), IndexedSeq(replacement), "p = 1")
    assert(m.operation == "replace_partitions")
    assert(scan(ds, None)._1.filter(_._2 == 1).map(_._1) == Set(100L, 101L))
    assert(scan(ds, None)._1.size == 25 + 2)
    // Rows outside the predicate fail the write.
    val outside = fragment(ds, Seq(200L), IndexedSeq(int(2), str("eu")))
    val e = intercept[IllegalArgumentException](
      ds.replacePartitions(m.version, schema, cmp("p", FilterExpr.Eq, 1), IndexedSeq(outside), "p = 1")
    )
    assert(e.getMessage.contains("p=2"))
    // Data columns cannot select partitions.
    intercept[IllegalArgumentException](
      ds.replacePartitions(m.version, schema, cmp("id", FilterExpr.Eq, 1), IndexedSeq.empty, "id = 1")
    )
    // A concurrent append into a replaced partition conflicts; one elsewhere does not.
    val read = m.version
    ds.commit(read, Operation.Append(schema, IndexedSeq(fragment(ds, Seq(300L), IndexedSeq(int(3), str("us")))), spec))
    val ok = ds.replacePartitions(read, schema, cmp("p", FilterExpr.Eq, 2), IndexedSeq.empty, "p = 2")
    assert(!ok.fragments.exists(_.partition.head == int(2)))
    val read2 = ok.version
    ds.commit(read2, Operation.Append(schema, IndexedSeq(fragment(ds, Seq(400L), IndexedSeq(int(3), str("us")))), spec))
    intercept[FermionCommitConflictException](
      ds.replacePartitions(read2, schema, cmp("p", FilterExpr.Eq, 3), IndexedSeq.empty, "p = 3")
    )
    // Dynamic overwrite replaces the partitions written.
    val dyn = ds.replaceWrittenPartitions(
      ds.latestVersion().get,
      schema,
      IndexedSeq(fragment(ds, Seq(500L), IndexedSeq(None, None)))
    ).get
    assert(dyn.fragments.count(_.partition == IndexedSeq(None, None)) == 1)
    assert(scan(ds, None)._1.filter(_._2 == null).map(_._1) == Set(500L))
    // Transactions carry the predicate and the values through their bytes.
    def throughBytes(predicate: FilterExpr, removed: Set[Long], fragments: IndexedSeq[Fragment]) =
      TransactionCodec.decode(
        TransactionCodec.encode(
          Transaction(read, "u", Operation.ReplacePartitions(schema, spec, predicate, removed, fragments, "d"))
        ),
        "t",
        "x"
      ).get.operation.asInstanceOf[Operation.ReplacePartitions]
    val txn = throughBytes(Partitioning.anyOf(spec, Seq(IndexedSeq(int(1), None))), Set(1L), IndexedSeq(replacement))
    assert(txn.fragments.map(_.partition) == IndexedSeq(replacement.partition))
    assert(txn.covers(IndexedSeq(int(1), None)) && !txn.covers(IndexedSeq(int(1), str("eu"))))
    // String matches (`LIKE '%su'`, `LIKE '%ur%'` on column 3) travel as filter nodes 9 and 10.
    val like = throughBytes(
      FilterExpr.Or(FilterExpr.EndsWith("3", "su".getBytes), FilterExpr.Contains("3", "ur".getBytes)),
      Set.empty,
      IndexedSeq.empty
    )
    assert(like.covers(IndexedSeq(int(1), str("eur"))) && like.covers(IndexedSeq(int(1), str("asu"))))
    assert(!like.covers(IndexedSeq(int(1), str("us"))) && !like.covers(IndexedSeq(int(1), None)))
  }

  test("compaction merges fragments within their partition only") {
    val ds = newDataset()
    val fs = (0 until 6).map(i => fragment(ds, Seq(i * 10L, i * 10L + 1), IndexedSeq(int(i % 2), str("eu"))))
    ds.commit(0, Operation.Create(schema, fs, spec))
    val before = scan(ds, None)._1
    val plan = Compaction.plan(ds, targetRows = 1000).get
    assert(plan.groups.size == 2)
    Compaction.commit(ds, plan, plan.groups.map(g => Compaction.rewrite(plan, g, conf)))
    val m = ds.latest().get
    assert(m.fragments.size == 2 && m.fragments.map(_.partition.head).toSet == Set(int(0), int(1)))
    assert(scan(ds, None)._1 == before)
    assert(Compaction.plan(ds, targetRows = 1000).isEmpty, "one fragment per partition: nothing left to merge")
  }

  test("partition specs: unknown, repeated, unsupported columns and no data column left fail") {
    intercept[IllegalArgumentException](Partitioning.specOf(schema, Seq("nope"), "t"))
    intercept[IllegalArgumentException](Partitioning.specOf(schema, Seq("p", "P"), "t"))
    intercept[IllegalArgumentException](Partitioning.specOf(schema, Seq("id", "p", "region"), "t"))
    val dbl = FermionSchema(IndexedSeq(FermionField("x", 1, FermionType.Float64, nullable = true), schema.fields(0)))
    intercept[IllegalArgumentException](Partitioning.specOf(dbl, Seq("x"), "t"))
    assert(Partitioning.specOf(schema, Seq("REGION"), "t") == IndexedSeq(3))
  }
}
