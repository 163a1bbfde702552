package io.fermion.core

import java.nio.charset.StandardCharsets

import scala.jdk.CollectionConverters._

import io.fermion.core.layout.ValueStats
import io.fermion.core.stats.PageStatistics
import io.fermion.core.write.WriterOptions
import org.apache.arrow.vector.{Float8Vector, VarCharVector, VectorSchemaRoot}
import org.apache.arrow.vector.types.FloatingPointPrecision
import org.apache.arrow.vector.types.pojo.{ArrowType, Schema}
import org.scalatest.funsuite.AnyFunSuite

/** Page and chunk min/max: chunk bounds merge page bounds with the type's own order. */
class StatisticsSuite extends AnyFunSuite {
  import TestFiles._

  // Few distinct values make dictionary pages, which (unlike PLAIN ones) the reader checks
  // against their statistics.
  private val dictionaryPagesOf512 =
    WriterOptions(pageRows = 512, encodings = io.fermion.core.encoding.EncodingSet.parse("dictionary"))

  test("chunk min/max over many pages: negative doubles and high-byte strings") {
    val file = tempDir("fermion-stats").resolve("s.fermion")
    val schema = new Schema(Seq(
      ArrowTestData.field("x", new ArrowType.FloatingPoint(FloatingPointPrecision.DOUBLE)),
      ArrowTestData.field("s", ArrowType.Utf8.INSTANCE)
    ).asJava)
    val root = VectorSchemaRoot.create(schema, allocator)
    val rows = 5000
    val xs = (0 until rows).map(i => if (i % 100 == 0) Double.NaN else (i - 2500) * 0.5)
    val ss = (0 until rows).map(i => if (i % 2 == 0) s"a$i" else s"\u00e9$i")
    try {
      root.allocateNew()
      val xv = root.getVector(0).asInstanceOf[Float8Vector]
      val sv = root.getVector(1).asInstanceOf[VarCharVector]
      (0 until rows).foreach { i => xv.setSafe(i, xs(i)); sv.setSafe(i, ss(i).getBytes(StandardCharsets.UTF_8)) }
      root.setRowCount(rows)
      write(file, root, WriterOptions(pageSize = 1024))
    } finally root.close()
    val r = open(file)
    try {
      val x = r.columnMetadata(0).get
      assert(x.fullNumPages(1, 0) > 4)
      assert(java.lang.Double.longBitsToDouble(x.fullMin(1, 0)) == xs.filterNot(_.isNaN).min)
      assert(java.lang.Double.longBitsToDouble(x.fullMax(1, 0)) == xs.filterNot(_.isNaN).max)
      assert((x.fullStatsFlags(1, 0) & ValueStats.HasNaN) != 0)
      val s = r.columnMetadata(1).get
      assert(s.fullNumPages(2, 0) > 4)
      val prefixes = ss.map { v =>
        val b = v.getBytes(StandardCharsets.UTF_8); PageStatistics.prefix(b, 0, b.length)
      }
      assert(s.fullMin(2, 0) == prefixes.reduce((a, b) => if (java.lang.Long.compareUnsigned(a, b) <= 0) a else b))
      assert(s.fullMax(2, 0) == prefixes.reduce((a, b) => if (java.lang.Long.compareUnsigned(a, b) >= 0) a else b))
      // each page's bounds lie within the chunk's
      val pm = s.fullPageMetaOffset(2, 0)
      (0 until s.fullNumPages(2, 0)).foreach { p =>
        assert(java.lang.Long.compareUnsigned(s.pageMin(pm, p), s.fullMin(2, 0)) >= 0)
        assert(java.lang.Long.compareUnsigned(s.pageMax(pm, p), s.fullMax(2, 0)) <= 0)
      }
    } finally r.close()
  }

  test("encoded float pages with and without NaN and nulls read back; their statistics are checked") {
    val file = tempDir("fermion-stats-nan").resolve("n.fermion")
    val schema = new Schema(Seq(
      ArrowTestData.field("d", new ArrowType.FloatingPoint(FloatingPointPrecision.DOUBLE)),
      ArrowTestData.field("f", new ArrowType.FloatingPoint(FloatingPointPrecision.SINGLE)),
      ArrowTestData.field("dn", new ArrowType.FloatingPoint(FloatingPointPrecision.DOUBLE))
    ).asJava)
    val root = VectorSchemaRoot.create(schema, allocator)
    val rows = 4096
    // Few distinct values: dictionary pages, which (unlike PLAIN ones) the reader checks against
    // their statistics. Pages of 512 rows: some with a NaN, some without, `dn` with nulls.
    val values = IndexedSeq(1.5, -2.0, Double.PositiveInfinity, -0.0)
    def x(i: Int) = if (i % 1000 == 7) Double.NaN else values(i % values.size)
    try {
      root.allocateNew()
      val d = root.getVector(0).asInstanceOf[Float8Vector]
      val f = root.getVector(1).asInstanceOf[org.apache.arrow.vector.Float4Vector]
      val dn = root.getVector(2).asInstanceOf[Float8Vector]
      (0 until rows).foreach { i =>
        d.setSafe(i, x(i)); f.setSafe(i, x(i).toFloat)
        if (i % 3 == 0) dn.setNull(i) else dn.setSafe(i, x(i))
      }
      root.setRowCount(rows)
      write(file, root, dictionaryPagesOf512)
    } finally root.close()
    val got = readAll(file)
    assert(got(0) == (0 until rows).map(i => normalize(Double.box(x(i)))))
    assert(got(1) == (0 until rows).map(i => normalize(Float.box(x(i).toFloat))))
    assert(got(2) == (0 until rows).map(i => if (i % 3 == 0) null else normalize(Double.box(x(i)))))
  }

  test("encoded float pages of one sign (their range taken from their bits' range) read back; a NaN among them too") {
    val file = tempDir("fermion-stats-sign").resolve("s.fermion")
    val schema = new Schema(Seq(
      ArrowTestData.field("d", new ArrowType.FloatingPoint(FloatingPointPrecision.DOUBLE)),
      ArrowTestData.field("f", new ArrowType.FloatingPoint(FloatingPointPrecision.SINGLE))
    ).asJava)
    val root = VectorSchemaRoot.create(schema, allocator)
    val rows = 4096
    // Dictionary pages of 512 rows: `d` non-negative (0.0 and +Infinity among them), `f` negative
    // (-0.0 and -Infinity among them); pages 3 and 6 hold a NaN, which the bits cannot rule on.
    val positive = IndexedSeq(0.0, 1.5, 3.25, Double.PositiveInfinity, 1e-300)
    val negative = IndexedSeq(-0.0f, -1.5f, Float.NegativeInfinity, -7.0f)
    def d(i: Int) = if (i == 3 * 512 + 5) Double.NaN else positive(i % positive.size)
    def f(i: Int) = if (i == 6 * 512 + 9) Float.NaN else negative(i % negative.size)
    try {
      root.allocateNew()
      val dv = root.getVector(0).asInstanceOf[Float8Vector]
      val fv = root.getVector(1).asInstanceOf[org.apache.arrow.vector.Float4Vector]
      (0 until rows).foreach { i => dv.setSafe(i, d(i)); fv.setSafe(i, f(i)) }
      root.setRowCount(rows)
      write(file, root, dictionaryPagesOf512)
    } finally root.close()
    val got = readAll(file)
    assert(got(0) == (0 until rows).map(i => normalize(Double.box(d(i)))))
    assert(got(1) == (0 until rows).map(i => normalize(Float.box(f(i)))))
  }

  test("merge follows each type's order") {
    def d(v: Double) = java.lang.Double.doubleToRawLongBits(v)
    val f = ValueStats.HasMinMax | ValueStats.DoubleBits
    assert(ValueStats(f, d(-5), d(-1)).merge(ValueStats(f, d(-10), d(3))) == ValueStats(f, d(-10), d(3)))
    val p = ValueStats.HasMinMax | ValueStats.PrefixBounds
    assert(ValueStats(p, 0x41L << 56, 0x42L << 56).merge(ValueStats(p, 0xc3L << 56, 0xc4L << 56)) == ValueStats(
      p,
      0x41L << 56,
      0xc4L << 56
    ))
    val i = ValueStats.HasMinMax
    assert(ValueStats(i, -3, 4).merge(ValueStats.None) == ValueStats(i, -3, 4))
    assert(ValueStats(i, -3, 4).merge(ValueStats(i, -9, 2)) == ValueStats(i, -9, 4))
  }
}
