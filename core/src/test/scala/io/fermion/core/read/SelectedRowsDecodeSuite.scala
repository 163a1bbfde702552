package io.fermion.core.read

import scala.util.Random

import io.fermion.core.TestFiles._
import io.fermion.core.write.WriterOptions
import org.apache.arrow.vector._
import org.apache.arrow.vector.types.pojo.{ArrowType, Field, FieldType, Schema}
import org.scalatest.funsuite.AnyFunSuite

import scala.jdk.CollectionConverters._

/** Decoding a stripe at a selection of rows (a filter's matches): the selected rows of every
  * fixed-width type hold what a whole decode holds, whichever the pages' encodings (BITPACK, FOR,
  * dictionary, whose selected values are decoded one by one when a page keeps few rows; PLAIN
  * and the others, decoded whole) and however many rows each page keeps. */
class SelectedRowsDecodeSuite extends AnyFunSuite {

  private val types: Seq[(String, ArrowType)] = Seq(
    "i8" -> new ArrowType.Int(8, true),
    "i16" -> new ArrowType.Int(16, true),
    "i32" -> new ArrowType.Int(32, true),
    "i64" -> new ArrowType.Int(64, true),
    "date" -> new ArrowType.Date(org.apache.arrow.vector.types.DateUnit.DAY),
    "ts" -> new ArrowType.Timestamp(org.apache.arrow.vector.types.TimeUnit.MICROSECOND, "UTC"),
    "dec" -> new ArrowType.Decimal(15, 2, 128),
    "f64" -> new ArrowType.FloatingPoint(org.apache.arrow.vector.types.FloatingPointPrecision.DOUBLE)
  )

  /** Value of row `i` of a column: runs of 300 rows alternate between small values (BITPACK), a
    * narrow range far from zero (FOR), five repeated values (dictionary) and random ones (PLAIN);
    * columns with nulls have one row in 7 null. */
  private def value(rnd: Random, i: Int, bits: Int): Option[Long] = {
    val limit = if (bits >= 64) Long.MaxValue else (1L << (bits - 1)) - 1
    if (i % 7 == 3 && bits != 63) None
    else
      Some((i / 300) % 4 match {
        case 0 => rnd.nextInt(100).toLong
        case 1 => limit - 1000 + rnd.nextInt(1000)
        case 2 => Seq(-5L, 17L, limit / 3, -limit / 2, 42L)(rnd.nextInt(5))
        case _ => rnd.nextLong() % limit
      })
  }

  test("selected rows decode as a whole decode does, for every fixed-width type and encoding (property)") {
    val rnd = new Random(41)
    val rows = 12000
    val schema = new Schema(types.map { case (n, t) => new Field(n, FieldType.nullable(t), null) }.asJava)
    val root = VectorSchemaRoot.create(schema, allocator)
    val file = tempDir("selected-rows").resolve("f.fermion")
    try {
      root.allocateNew()
      for (i <- 0 until rows) {
        types.indices.foreach { c =>
          root.getVector(c) match {
            case v: TinyIntVector => value(rnd, i, 8).fold(v.setNull(i))(x => v.setSafe(i, x.toByte))
            case v: SmallIntVector => value(rnd, i, 16).fold(v.setNull(i))(x => v.setSafe(i, x.toShort))
            case v: IntVector => value(rnd, i, 32).fold(v.setNull(i))(x => v.setSafe(i, x.toInt))
            case v: BigIntVector => value(rnd, i, 63).fold(v.setNull(i))(x => v.setSafe(i, x))
            case v: DateDayVector => value(rnd, i, 16).fold(v.setNull(i))(x => v.setSafe(i, x.toInt))
            case v: TimeStampMicroTZVector => value(rnd, i, 50).fold(v.setNull(i))(x => v.setSafe(i, x))
            case v: DecimalVector =>
              value(rnd, i, 48).fold(v.setNull(i))(x => v.setSafe(i, java.math.BigDecimal.valueOf(x, 2)))
            case v: Float8Vector => value(rnd, i, 20).fold(v.setNull(i))(x => v.setSafe(i, x / 8.0))
          }
        }
      }
      root.setRowCount(rows)
      write(file, root, WriterOptions(stripeMaxRows = 6000, pageRows = 128))
    } finally root.close()
    val reader = open(file)
    try {
      val columns = types.indices.map(c => c -> ProjectedNode.full(reader.schema.fields(c)))
      for (s <- 0 until reader.numStripes) {
        val n = reader.stripes.rowCount(s)
        val full = reader.readStripeProjected(s, columns, allocator)
        try for (share <- Seq(2, 5, 9, 40, 300)) {
            // One row in `share` on average, some pages keeping many rows, some none.
            val chosen = (0 until n).filter(i => rnd.nextInt(share) == 0 || (i / 640) % 7 == 1).toArray
            val part = reader.readStripeProjected(s, columns, allocator, RowRanges.ofSortedRows(chosen, chosen.length))
            try chosen.foreach { i =>
                columns.indices.foreach { c =>
                  val (got, expected) = (part(c).getObject(i), full(c).getObject(i))
                  if (!java.util.Objects.equals(got, expected))
                    fail(
                      s"stripe $s, 1 row in $share: column ${types(c)._1} row $i is $got, a whole decode gives $expected"
                    )
                }
              }
            finally part.foreach(_.close())
          }
        finally full.foreach(_.close())
      }
    } finally reader.close()
  }
}
