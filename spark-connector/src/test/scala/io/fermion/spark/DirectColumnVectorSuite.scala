package io.fermion.spark

import scala.util.Random

import io.fermion.spark.read.{DeferredElementsColumnVector, DirectArrowColumnVector, SparkColumns}
import org.apache.spark.sql.Row
import org.apache.spark.sql.catalyst.CatalystTypeConverters
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.execution.arrow.ArrowWriter
import org.apache.spark.sql.types._
import org.apache.arrow.vector.IntVector
import org.apache.arrow.vector.complex.ListVector
import org.apache.spark.sql.vectorized.{ArrowColumnVector, ColumnVector, ColumnarBatch}
import org.scalatest.funsuite.AnyFunSuite

/** The direct views Spark reads Fermion's Arrow vectors through (flat and nested) against Spark's
  * own ArrowColumnVector over the same vectors, and both against the rows written: random rows of
  * nested types with nulls at every level, filled into Arrow by Spark's ArrowWriter. */
class DirectColumnVectorSuite extends AnyFunSuite {
  private val schema = StructType(Seq(
    StructField("ll", ArrayType(ArrayType(LongType))),
    StructField("ls", ArrayType(StructType(Seq(StructField("a", IntegerType), StructField("b", StringType))))),
    StructField("m", MapType(StringType, DoubleType)),
    StructField("ma", MapType(IntegerType, ArrayType(StringType))),
    StructField(
      "s",
      StructType(Seq(
        StructField("p", LongType),
        StructField("q", ArrayType(DecimalType(10, 2))),
        StructField("r", DecimalType(30, 5)),
        StructField("t", StructType(Seq(StructField("d", DateType), StructField("bin", BinaryType))))
      ))
    ),
    StructField("flat", ShortType)
  ))

  private def value(t: DataType, rnd: Random, depth: Int): Any =
    if (rnd.nextInt(6) == 0) null
    else
      t match {
        case LongType => rnd.nextLong()
        case IntegerType => rnd.nextInt()
        case ShortType => (rnd.nextInt(65536) - 32768).toShort
        case DoubleType => if (rnd.nextInt(10) == 0) Double.NaN else rnd.nextGaussian()
        case StringType => rnd.alphanumeric.take(rnd.nextInt(6)).mkString
        case BinaryType => Array.fill(rnd.nextInt(4))(rnd.nextInt(256).toByte)
        case DateType => java.time.LocalDate.ofEpochDay(rnd.nextInt(40000).toLong)
        case d: DecimalType =>
          val unscaled = (BigInt(rnd.nextLong()) * BigInt(rnd.nextLong())) % BigInt(10).pow(d.precision)
          BigDecimal(unscaled, d.scale).bigDecimal
        case ArrayType(e, _) => Seq.fill(rnd.nextInt(4))(value(e, rnd, depth + 1))
        case MapType(k, v, _) =>
          (0 until rnd.nextInt(4)).map(i => (nonNull(k, i), value(v, rnd, depth + 1))).toMap
        case s: StructType => Row.fromSeq(s.fields.map(f => value(f.dataType, rnd, depth + 1)).toSeq)
        case other => throw new IllegalArgumentException(other.toString)
      }

  // Map keys are never null, and distinct.
  private def nonNull(t: DataType, i: Int): Any = t match {
    case StringType => s"k$i"
    case IntegerType => i
    case other => throw new IllegalArgumentException(other.toString)
  }

  private def randomRows(seed: Int, n: Int): Seq[Row] = {
    val rnd = new Random(seed)
    Seq.fill(n)(Row.fromSeq(schema.fields.map(f => value(f.dataType, rnd, 0)).toSeq))
  }

  /** `rows` written into Arrow vectors by Spark's ArrowWriter, handed to `f`, then released. */
  private def inArrow(rows: Seq[Row])(f: org.apache.arrow.vector.VectorSchemaRoot => Unit): Unit = {
    val toCatalyst = CatalystTypeConverters.createToCatalystConverter(schema)
    val writer = ArrowWriter.create(schema, "UTC", true, false)
    try {
      rows.foreach(r => writer.write(toCatalyst(r).asInstanceOf[InternalRow]))
      writer.finish()
      f(writer.root)
    } finally writer.root.close()
  }

  private def read(batch: ColumnarBatch): Seq[Row] = {
    val toScala = CatalystTypeConverters.createToScalaConverter(schema)
    SparkColumns.rows(batch, schema).map(r => toScala(r).asInstanceOf[Row])
  }

  // Binary values compare by content; NaN equals NaN.
  private def comparable(r: Any): Any = r match {
    case row: Row => row.toSeq.map(comparable)
    case b: Array[Byte] => b.toSeq
    case s: scala.collection.Seq[_] => s.map(comparable)
    case m: scala.collection.Map[_, _] => m.map { case (k, v) => comparable(k) -> comparable(v) }
    case d: Double if d.isNaN => "NaN"
    case d: java.sql.Date => d.toLocalDate // written as LocalDate, read back as java.sql.Date
    case other => other
  }

  test("direct views of lists, maps and structs read what ArrowColumnVector reads, and what was written") {
    for (seed <- 0 until 6) {
      val rows = randomRows(seed, 300)
      inArrow(rows) { root =>
        val vectors = schema.fields.indices.map(i => root.getVector(i))
        val direct: Array[ColumnVector] =
          schema.fields.indices.map(i => DirectArrowColumnVector.of(vectors(i), schema(i).dataType)).toArray
        assert(direct.count(_.isInstanceOf[ArrowColumnVector]) == 0, "every column read directly")
        val arrow: Array[ColumnVector] = vectors.map(v => new ArrowColumnVector(v): ColumnVector).toArray
        val viaDirect = read(new ColumnarBatch(direct, rows.size))
        val viaArrow = read(new ColumnarBatch(arrow, rows.size))
        assert(viaDirect.map(comparable) == viaArrow.map(comparable), s"seed $seed")
        assert(viaDirect.map(comparable) == rows.map(comparable), s"seed $seed")
      }
    }
  }

  test("deferred lists and maps give each row's elements whatever the order rows are asked for in") {
    val rnd = new Random(11)
    val rows = randomRows(11, 500)
    inArrow(rows) { root =>
      for (c <- Seq(0, 2, 3)) { // ll, m, ma: a list and two maps
        val t = schema(c).dataType
        val full = root.getVector(c).asInstanceOf[ListVector]
        val lengths = new IntVector("lengths", full.getAllocator)
        try {
          lengths.allocateNew(rows.size)
          (0 until rows.size).foreach { i =>
            if (full.isNull(i)) lengths.setNull(i)
            else lengths.set(i, full.getElementEndIndex(i) - full.getElementStartIndex(i))
          }
          lengths.setValueCount(rows.size)
          val deferred = new DeferredElementsColumnVector(t, lengths, () => full)
          val direct = DirectArrowColumnVector.of(full, t)
          val toScala = CatalystTypeConverters.createToScalaConverter(t)
          def at(v: ColumnVector, i: Int): Any =
            if (v.isNullAt(i)) null
            else comparable(toScala(if (t.isInstanceOf[MapType]) v.getMap(i) else v.getArray(i)))
          // In order, each row twice, jumps back and forth, then in order again.
          val order = (0 until rows.size) ++ (0 until rows.size).flatMap(i => Seq(i, i)) ++
            Seq.fill(300)(rnd.nextInt(rows.size)) ++ (0 until rows.size)
          order.foreach(i => assert(at(deferred, i) == at(direct, i), s"column ${schema(c).name}, row $i"))
        } finally lengths.close()
      }
    }
  }
}
