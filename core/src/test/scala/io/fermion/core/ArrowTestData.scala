package io.fermion.core

import java.math.BigDecimal
import java.nio.charset.StandardCharsets

import scala.jdk.CollectionConverters._
import scala.util.Random

import org.apache.arrow.vector._
import org.apache.arrow.vector.types.{DateUnit, FloatingPointPrecision, TimeUnit}
import org.apache.arrow.vector.types.pojo.{ArrowType, Field, FieldType, Schema}

/** Random Arrow batches covering every flat type Fermion stores, with nulls and edge values
  * (min/max, NaN, -0.0, empty and long strings). Seeded, so failures reproduce. */
object ArrowTestData {
  def field(name: String, t: ArrowType, nullable: Boolean = true): Field =
    new Field(name, new FieldType(nullable, t, null), java.util.Collections.emptyList())

  val allTypes: Seq[Field] = Seq(
    field("b", ArrowType.Bool.INSTANCE),
    field("i8", new ArrowType.Int(8, true)),
    field("i16", new ArrowType.Int(16, true)),
    field("i32", new ArrowType.Int(32, true)),
    field("i64", new ArrowType.Int(64, true)),
    field("f32", new ArrowType.FloatingPoint(FloatingPointPrecision.SINGLE)),
    field("f64", new ArrowType.FloatingPoint(FloatingPointPrecision.DOUBLE)),
    field("s", ArrowType.Utf8.INSTANCE),
    field("bin", ArrowType.Binary.INSTANCE),
    field("d", new ArrowType.Date(DateUnit.DAY)),
    field("ts", new ArrowType.Timestamp(TimeUnit.MICROSECOND, "UTC")),
    field("ts_ntz", new ArrowType.Timestamp(TimeUnit.MICROSECOND, null)),
    field("dec_small", new ArrowType.Decimal(10, 2, 128)),
    field("dec_wide", new ArrowType.Decimal(38, 6, 128)),
    field("never_null", new ArrowType.Int(64, true), nullable = false)
  )

  /** Fills a root for `fields` with `rows` rows; `nullRate` of nullable slots are null. With
    * `pool > 0` each column draws from only `pool` distinct values (low-entropy data). */
  def randomRoot(fields: Seq[Field], rows: Int, seed: Long, nullRate: Double = 0.2, pool: Int = 0): VectorSchemaRoot = {
    val rnd = new Random(seed)
    val root = VectorSchemaRoot.create(new Schema(fields.asJava), TestFiles.allocator)
    root.allocateNew()
    fields.zipWithIndex.foreach { case (f, c) =>
      val v = root.getVector(c)
      for (i <- 0 until rows) {
        if (f.isNullable && rnd.nextDouble() < nullRate) setNull(v, i)
        else setRandom(v, i, if (pool > 0) new Random(seed * 7919 + rnd.nextInt(pool)) else rnd)
      }
      v.setValueCount(rows)
    }
    root.setRowCount(rows)
    root
  }

  private def setNull(v: FieldVector, i: Int): Unit = v match {
    case b: BaseVariableWidthVector => b.setNull(i)
    case f: BaseFixedWidthVector => f.setNull(i)
  }

  private def pick[T](rnd: Random, edge: Seq[T], random: => T): T =
    if (rnd.nextInt(8) == 0) edge(rnd.nextInt(edge.size)) else random

  private def setRandom(v: FieldVector, i: Int, rnd: Random): Unit = v match {
    case b: BitVector => b.setSafe(i, if (rnd.nextBoolean()) 1 else 0)
    case t: TinyIntVector =>
      t.setSafe(i, pick(rnd, Seq(Byte.MinValue, Byte.MaxValue, 0.toByte), rnd.nextInt(256).toByte))
    case t: SmallIntVector =>
      t.setSafe(i, pick(rnd, Seq(Short.MinValue, Short.MaxValue, 0.toShort), rnd.nextInt(65536).toShort))
    case t: IntVector => t.setSafe(i, pick(rnd, Seq(Int.MinValue, Int.MaxValue, 0), rnd.nextInt()))
    case t: BigIntVector => t.setSafe(i, pick(rnd, Seq(Long.MinValue, Long.MaxValue, 0L), rnd.nextLong()))
    case t: Float4Vector => t.setSafe(
        i,
        pick(
          rnd,
          Seq(Float.NaN, -0.0f, 0.0f, Float.MinValue, Float.MaxValue, Float.NegativeInfinity),
          rnd.nextFloat() * 1e6f - 5e5f
        )
      )
    case t: Float8Vector => t.setSafe(
        i,
        pick(
          rnd,
          Seq(Double.NaN, -0.0, 0.0, Double.MinValue, Double.MaxValue, Double.PositiveInfinity),
          rnd.nextGaussian() * 1e9
        )
      )
    case t: VarCharVector =>
      val s = pick(rnd, Seq("", "a" * 5000, "ü€😀"), rnd.alphanumeric.take(rnd.nextInt(20)).mkString)
      t.setSafe(i, s.getBytes(StandardCharsets.UTF_8))
    case t: VarBinaryVector =>
      val n = pick(rnd, Seq(0, 3000), rnd.nextInt(16))
      val bytes = new Array[Byte](n); rnd.nextBytes(bytes); t.setSafe(i, bytes)
    case t: DateDayVector => t.setSafe(i, pick(rnd, Seq(-719162, 0, 2932896), rnd.nextInt(40000) - 10000))
    case t: TimeStampMicroTZVector =>
      t.setSafe(i, pick(rnd, Seq(Long.MinValue / 2, 0L, Long.MaxValue / 2), rnd.nextLong() / 1000))
    case t: TimeStampMicroVector =>
      t.setSafe(i, pick(rnd, Seq(-62135596800000000L, 0L, 253402300799999999L), rnd.nextLong() / 1000))
    case t: DecimalVector =>
      val p = t.getPrecision
      val digits = (1 to p).map(_ => ('0' + rnd.nextInt(10)).toChar).mkString
      val unscaled = new java.math.BigInteger(if (rnd.nextBoolean()) "-" + digits else digits)
      t.setSafe(i, new BigDecimal(unscaled, t.getScale))
  }
}
