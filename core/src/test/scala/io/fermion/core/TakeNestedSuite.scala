package io.fermion.core

import scala.jdk.CollectionConverters._
import scala.util.Random

import io.fermion.core.codec.PageCodec
import io.fermion.core.dataset._
import io.fermion.core.scan._
import io.fermion.core.schema.ArrowSchemaMapping
import io.fermion.core.write.{FermionFileWriter, WriterOptions}
import org.apache.arrow.memory.RootAllocator
import org.apache.arrow.vector.types.pojo.{ArrowType, Field, FieldType}
import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.scalatest.funsuite.AnyFunSuite

/** Take against scan on small random datasets of nested columns with nulls at every level: a few
  * fragments of a few rows, pages of a few rows, compressed and not (small uncompressed pages are
  * read in place from their chunk, where a reader must not assume a page starts at 0), PLAIN only
  * and every encoding. */
class TakeNestedSuite extends AnyFunSuite {
  private val conf = new Configuration()
  private def f(name: String, t: ArrowType, children: Field*): Field =
    new Field(name, FieldType.nullable(t), children.asJava)
  private val fields = Seq(
    f("s", ArrowType.Utf8.INSTANCE),
    f("arr", ArrowType.List.INSTANCE, f("element", new ArrowType.Int(32, true))),
    new Field(
      "m",
      FieldType.nullable(new ArrowType.Map(false)),
      java.util.List.of(new Field(
        "entries",
        FieldType.notNullable(ArrowType.Struct.INSTANCE),
        java.util.List.of(
          new Field("key", FieldType.notNullable(ArrowType.Utf8.INSTANCE), java.util.List.of()),
          f("value", new ArrowType.Int(32, true))
        )
      ))
    ),
    f("st", ArrowType.Struct.INSTANCE, f("ls", ArrowType.List.INSTANCE, f("element", ArrowType.Utf8.INSTANCE)))
  )
  private val schema = ArrowSchemaMapping.toFermion(new org.apache.arrow.vector.types.pojo.Schema(fields.asJava))

  private def randomRow(rnd: Random): IndexedSeq[Any] = {
    def maybe[T](x: => T): Any = if (rnd.nextInt(4) == 0) null else x
    def str = "v" * rnd.nextInt(5) + rnd.nextInt(100)
    IndexedSeq(
      maybe(str),
      maybe(Seq.fill(rnd.nextInt(4))(maybe(rnd.nextInt(1000)))),
      maybe(Seq.tabulate(rnd.nextInt(3))(i => s"k$i" -> maybe(rnd.nextInt(9)))),
      maybe(Seq(maybe(Seq.fill(rnd.nextInt(3))(maybe(str)))))
    )
  }

  test("take by position returns the scan's rows, for nested columns with nulls at every level") {
    val rnd = new Random(11)
    for (round <- 0 until 12) {
      val ds = new FermionDataset(new Path(TestFiles.tempDir("fermion-take-nested").resolve("t").toUri), conf)
      val opts = WriterOptions(
        pageRows = 8 * (1 + rnd.nextInt(2)),
        compression = if (round % 2 == 0) PageCodec.None else PageCodec.Zstd,
        encodings = if (round % 4 < 2) io.fermion.core.encoding.EncodingSet.PlainOnly
        else io.fermion.core.encoding.EncodingSet.All
      )
      val fragments = IndexedSeq.fill(1 + rnd.nextInt(4)) {
        val rows = IndexedSeq.fill(1 + rnd.nextInt(30))(randomRow(rnd))
        val (rel, path) = ds.newDataFile()
        val w = FermionFileWriter.create(path, conf, schema, opts)
        val root = NestedData.root(fields, rows)
        try w.write(root)
        finally { root.close(); w.close() }
        Fragment(0, rows.size.toLong, IndexedSeq(DataFile(rel, schema.fields.map(_.fieldId))), None)
      }
      ds.commit(0, Operation.Append(schema, fragments))
      val allocator = new RootAllocator(Long.MaxValue)
      val scan = Snapshot.open(ds.name, conf).scanBuilder().build()
      try {
        val all = IndexedSeq.newBuilder[IndexedSeq[AnyRef]]
        val it = scan.batches(conf, allocator)
        try it.foreach { b =>
            val cols = fields.indices.map(i => TestFiles.column(b.vector(i)))
            (0 until b.numRows).foreach(r => all += cols.map(_(r)))
          }
        finally it.close()
        val rows = all.result()
        for (_ <- 0 until 5) {
          val picks = Array.fill(1 + rnd.nextInt(rows.size))(rnd.nextInt(rows.size).toLong)
          val b = scan.takePositions(picks, conf, allocator)
          try {
            val cols = fields.indices.map(i => TestFiles.column(b.vector(i)))
            val got = (0 until b.numRows).map(r => cols.map(_(r)))
            assert(got == picks.toSeq.map(p => rows(p.toInt)), s"round $round, rows ${picks.mkString(",")}")
          } finally b.close()
        }
      } finally { scan.close(); allocator.close() }
    }
  }
}
