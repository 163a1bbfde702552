package io.fermion.core

import scala.jdk.CollectionConverters._

import io.fermion.core.layout.{DescType, StreamType}
import io.fermion.core.read.FileAggregates
import io.fermion.core.write.WriterOptions
import org.apache.arrow.vector.{BigIntVector, VarBinaryVector, VarCharVector, VectorSchemaRoot}
import org.apache.arrow.vector.types.pojo.{ArrowType, Schema}
import org.scalatest.funsuite.AnyFunSuite

/** Aggregates answered from metadata, checked against counts computed from the rows written. */
class FileAggregatesSuite extends AnyFunSuite {
  import TestFiles._

  /** `s` (string) and `b` (binary) hold `value(i)` (None = null) and `id` holds i, for `rows` rows. */
  private def file(rows: Int, stripeRows: Int)(value: Int => Option[String]): java.nio.file.Path = {
    val schema = new Schema(Seq(
      ArrowTestData.field("id", new ArrowType.Int(64, true)),
      ArrowTestData.field("s", ArrowType.Utf8.INSTANCE),
      ArrowTestData.field("b", ArrowType.Binary.INSTANCE)
    ).asJava)
    val root = VectorSchemaRoot.create(schema, allocator)
    try {
      root.allocateNew()
      val id = root.getVector(0).asInstanceOf[BigIntVector]
      val s = root.getVector(1).asInstanceOf[VarCharVector]
      val b = root.getVector(2).asInstanceOf[VarBinaryVector]
      for (i <- 0 until rows) {
        id.setSafe(i, i.toLong)
        value(i) match {
          case Some(v) => s.setSafe(i, v.getBytes("UTF-8")); b.setSafe(i, v.getBytes("UTF-8"))
          case None => s.setNull(i); b.setNull(i)
        }
      }
      root.setRowCount(rows)
      val f = tempDir("fermion-agg").resolve("t.fermion")
      write(f, root, WriterOptions(stripeMaxRows = stripeRows))
      f
    } finally root.close()
  }

  test("count(s) of a string column of only empty strings and nulls (issue 13 a)") {
    // CASE WHEN id % 3 = 0 THEN NULL ELSE '' END AS s, 3,000 rows: Parquet says 2,000.
    val value = (i: Int) => if (i % 3 == 0) None else Some("")
    for (stripeRows <- Seq(65536, 1000, 7)) {
      val f = file(3000, stripeRows)(value)
      val r = open(f)
      try {
        val m = r.columnMetadata(1).get
        // The case the defect was about: no null count anywhere in the CMB.
        assert(m.descType(m.streamTypeIndexOf(StreamType.Data)) == DescType.UseDefault)
        assert(m.descType(m.streamTypeIndexOf(StreamType.Offsets)) == DescType.UseDefault)
        assert(FileAggregates.nonNullCount(r, 1) == 2000L, s"stripes of $stripeRows rows")
        assert(FileAggregates.nonNullCount(r, 2) == 2000L, s"binary, stripes of $stripeRows rows")
        assert(FileAggregates.nonNullCount(r, 0) == 3000L)
      } finally r.close()
    }
  }

  test("count(s) where some stripes are entirely null, some without nulls, some mixed") {
    // Stripes of 1,000 rows: [0, 1000) all null, [1000, 2000) no null, [2000, 3000) every 7th null.
    val value = (i: Int) =>
      if (i < 1000) None else if (i < 2000) Some("") else if (i % 7 == 0) None else Some("")
    val expected = (0 until 3000).count(i => value(i).nonEmpty).toLong
    val f = file(3000, 1000)(value)
    val r = open(f)
    try assert(FileAggregates.nonNullCount(r, 1) == expected && expected == 1000L + 857L)
    finally r.close()
  }

  test("count(s) with non-empty strings still uses the DATA chunk's null counts") {
    val value = (i: Int) => if (i % 5 == 0) None else Some("x" * (i % 3))
    val f = file(3000, 1000)(value)
    val r = open(f)
    try assert(FileAggregates.nonNullCount(r, 1) == (0 until 3000).count(_ % 5 != 0).toLong)
    finally r.close()
  }
}
