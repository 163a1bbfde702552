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
