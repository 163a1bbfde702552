package io.fermion.core.scan

import java.nio.charset.StandardCharsets

import scala.util.Random

import io.fermion.core.{NestedData, TestFiles}
import io.fermion.core.dataset._
import io.fermion.core.expr.{FilterExpr, FilterValue}
import io.fermion.core.schema.{ArrowSchemaMapping, FermionField, FermionSchema, FermionType}
import io.fermion.core.write.{FermionFileWriter, WriterOptions}
import org.apache.arrow.memory.RootAllocator
import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.scalatest.funsuite.AnyFunSuite

/** A filter evaluated stage by stage, each later column decoded only at the rows the earlier ones
  * kept (pages of few kept rows decoded at those rows alone), returns exactly the rows a plain
  * evaluation of the generated data keeps, with their values: random conjunctions over integer
  * columns of BITPACK, FOR and dictionary pages, nulls, a string, and ORs across columns. */
class FilterStagesSuite extends AnyFunSuite {
  import FilterExpr._

  private val conf = new Configuration()
  private val rowsPerFile = 30000
  private val schema = FermionSchema(IndexedSeq(
    FermionField("id", 1, FermionType.Int64, nullable = false),
    FermionField("a", 2, FermionType.Int32, nullable = false),
    FermionField("b", 3, FermionType.Int64, nullable = true),
    FermionField("c", 4, FermionType.Int32, nullable = false),
    FermionField("s", 5, FermionType.Utf8, nullable = false)
  ))

  /** Row `id`: `a` 0..99 scattered (BITPACK), `b` near 10^12 (FOR; 1 in 40 null), `c` one of five
    * values (dictionary), `s` one of three strings. */
  final private case class Row(id: Long, a: Int, b: Option[Long], c: Int, s: String)
  private val rows: IndexedSeq[Row] = {
    val rnd = new Random(3)
    (0L until 2L * rowsPerFile).map { id =>
      Row(
        id,
        rnd.nextInt(100),
        if (rnd.nextInt(40) == 0) None else Some(1000000000000L + rnd.nextInt(1000)),
        Seq(-7, 3, 12, 300000, 40000000)(rnd.nextInt(5)),
        Seq("x", "yy", "zzz")(rnd.nextInt(3))
      )
    }
  }

  private lazy val snapshot: Snapshot = {
    val ds = new FermionDataset(new Path(TestFiles.tempDir("fermion-stages").resolve("t").toUri), conf)
    val opts = WriterOptions(stripeMaxRows = 10000, pageRows = 1024)
    val fragments = rows.grouped(rowsPerFile).map { part =>
      val (rel, path) = ds.newDataFile()
      val w = FermionFileWriter.create(path, conf, schema, opts)
      val root = NestedData.root(
        schema.fields.map(ArrowSchemaMapping.toArrowField),
        part.map(r => IndexedSeq[Any](r.id, r.a, r.b.map(Long.box).orNull, r.c, r.s))
      )
      try w.write(root)
      finally { root.close(); w.close() }
      Fragment(0, part.size.toLong, IndexedSeq(DataFile(rel, schema.fields.map(_.fieldId), w.columnBytes)), None)
    }.toIndexedSeq
    ds.commit(0, Operation.Create(schema, fragments, IndexedSeq.empty))
    Snapshot.open(ds.name, conf, ReadAt.Latest)
  }

  private def int(v: Long) = FilterValue.Integral(v)

  /** A random leaf and the rows it keeps. */
  private def leaf(rnd: Random): (FilterExpr, Row => Boolean) = rnd.nextInt(7) match {
    case 0 => val x = rnd.nextInt(100); (Compare("a", Lt, int(x)), _.a < x)
    case 1 =>
      val lo = rnd.nextInt(100); val hi = lo + rnd.nextInt(30)
      (And(Compare("a", GtEq, int(lo)), Compare("a", LtEq, int(hi))), r => r.a >= lo && r.a <= hi)
    case 2 =>
      val x = 1000000000000L + rnd.nextInt(1000)
      (Compare("b", Gt, int(x)), _.b.exists(_ > x))
    case 3 => (IsNotNull("b"), _.b.nonEmpty)
    case 4 =>
      val vs = Seq(-7, 3, 12, 300000, 40000000).filter(_ => rnd.nextBoolean())
      if (vs.isEmpty) (IsNull("b"), _.b.isEmpty)
      else (In("c", vs.map(v => int(v.toLong)).toIndexedSeq), r => vs.contains(r.c))
    case 5 =>
      val v = Seq("x", "yy", "zzz")(rnd.nextInt(3))
      (Compare("s", Eq, FilterValue.Bytes(v.getBytes(StandardCharsets.UTF_8))), _.s == v)
    case _ =>
      val x = rnd.nextInt(20); val y = Seq(3, 40000000)(rnd.nextInt(2))
      (Or(Compare("a", Lt, int(x)), Compare("c", Eq, int(y.toLong))), r => r.a < x || r.c == y)
  }

  test("staged filters return exactly the matching rows and their values (property)") {
    val rnd = new Random(17)
    val allocator = new RootAllocator(Long.MaxValue)
    try for (_ <- 0 until 60) {
        val leaves = Seq.fill(1 + rnd.nextInt(4))(leaf(rnd))
        val filter = leaves.map(_._1).reduce(And(_, _))
        val expected = rows.filter(r => leaves.forall(_._2(r)))
        val scan = snapshot.scanBuilder().select("id", "a", "b", "c").filter(filter).build()
        val got = IndexedSeq.newBuilder[(AnyRef, AnyRef, AnyRef, AnyRef)]
        val it = scan.batches(conf, allocator)
        try it.foreach { b =>
            val cols = (0 until 4).map(i => TestFiles.column(b.vector(i)))
            (0 until b.numRows).foreach(r => got += ((cols(0)(r), cols(1)(r), cols(2)(r), cols(3)(r))))
            b.close()
          }
        finally it.close()
        val want = expected.map(r =>
          (Long.box(r.id), Int.box(r.a), r.b.map(Long.box).orNull, Int.box(r.c)): (AnyRef, AnyRef, AnyRef, AnyRef)
        )
        val result = got.result()
        if (result != want)
          fail(
            s"$filter: ${result.size} rows, expected ${want.size}; first difference at ${result.zip(want).indexWhere(p => p._1 != p._2)}"
          )
        // Skipping data only (the engine filters after): every matching row comes back, and every
        // row that comes back has its own values, also where the matches were not cut out.
        val loose = snapshot.scanBuilder().select("id", "a", "b", "c").filter(filter).skipDataOnly().build()
        val seen = scala.collection.mutable.Set.empty[Long]
        val it2 = loose.batches(conf, allocator)
        try it2.foreach { b =>
            val cols = (0 until 4).map(i => TestFiles.column(b.vector(i)))
            (0 until b.numRows).foreach { r =>
              val id = cols(0)(r).asInstanceOf[java.lang.Long].longValue()
              val row = rows(id.toInt)
              val values = (cols(1)(r), cols(2)(r), cols(3)(r))
              if (values != ((Int.box(row.a), row.b.map(Long.box).orNull, Int.box(row.c))))
                fail(s"$filter, data skipping only: row $id reads $values, holds $row")
              seen += id
            }
            b.close()
          }
        finally it2.close()
        expected.foreach(r => if (!seen(r.id)) fail(s"$filter, data skipping only: row ${r.id} missing"))
      }
    finally allocator.close()
  }
}
