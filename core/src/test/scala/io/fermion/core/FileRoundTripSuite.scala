package io.fermion.core

import io.fermion.core.codec.PageCodec
import io.fermion.core.encoding.EncodingSet
import io.fermion.core.layout.{DescType, PageEncoding, StreamType}
import io.fermion.core.write.WriterOptions
import org.scalatest.funsuite.AnyFunSuite

/** Writes random Arrow data of every flat type and reads it back: the values must be identical
  * whatever the stripe size, page size, compression and null rate. */
class FileRoundTripSuite extends AnyFunSuite {
  import TestFiles._

  private def roundTrip(
      rows: Int,
      seed: Long,
      options: WriterOptions,
      nullRate: Double,
      pool: Int = 0
  ): Map[String, Long] = {
    val dir = tempDir("fermion-rt")
    val file = dir.resolve("t.fermion")
    val root = ArrowTestData.randomRoot(ArrowTestData.allTypes, rows, seed, nullRate, pool)
    try {
      val pages = write(file, root, options).pagesByEncoding
      val expected = (0 until root.getFieldVectors.size).map(c => column(root.getVector(c)))
      val actual = readAll(file)
      assert(actual.size == expected.size)
      expected.indices.foreach { c =>
        val name = root.getSchema.getFields.get(c).getName
        assert(actual(c).size == rows, s"column $name row count")
        expected(c).indices.foreach { i =>
          assert(actual(c)(i) == expected(c)(i), s"column $name row $i (seed $seed, $options)")
        }
      }
      pages
    } finally root.close()
  }

  test("every flat type round-trips with each page encoding forced, on random and low-entropy data") {
    for (e <- PageEncoding.all; pool <- Seq(0, 1, 3)) {
      val forced = WriterOptions(stripeMaxRows = 700, pageSize = 1024, encodings = EncodingSet(Set(e)))
      val pages = roundTrip(rows = 2500, seed = 20 + e, forced, nullRate = 0.2, pool = pool)
      assert(pages.keySet.subsetOf(Set(PageEncoding.name(e), "plain")), s"forced ${PageEncoding.name(e)} wrote $pages")
      if (e != PageEncoding.Plain && pool == (if (e == PageEncoding.Constant) 1 else 3))
        assert(pages.getOrElse(PageEncoding.name(e), 0L) > 0, s"forced ${PageEncoding.name(e)} never applied: $pages")
    }
    val auto = roundTrip(rows = 5000, seed = 30, WriterOptions(pageSize = 4096), nullRate = 0.1, pool = 4)
    assert(
      auto.getOrElse("dictionary", 0L) > 0 && auto.getOrElse("plain", 0L) < auto.values.sum,
      s"automatic choice on low-entropy data: $auto"
    )
  }

  test("every flat type round-trips with nulls and edge values, many seeds") {
    for (seed <- 1L to 6L)
      roundTrip(rows = 3000, seed, WriterOptions(stripeMaxRows = 1000, pageSize = 1024), nullRate = 0.2)
  }

  test("single stripe, default options") { roundTrip(rows = 5000, seed = 42, WriterOptions(), nullRate = 0.1) }

  test("uncompressed, no checksums, pages cut at odd sizes") {
    roundTrip(
      rows = 2049,
      seed = 7,
      WriterOptions(compression = PageCodec.None, pageChecksums = false, pageSize = 1500, stripeMaxRows = 777),
      nullRate = 0.5
    )
  }

  test("stripes cut by buffered bytes") {
    roundTrip(rows = 4000, seed = 9, WriterOptions(stripeMaxBytes = 16 << 10), nullRate = 0.3)
  }

  test("no nulls and all nulls") {
    roundTrip(rows = 1000, seed = 11, WriterOptions(stripeMaxRows = 300), nullRate = 0.0)
    roundTrip(rows = 1000, seed = 12, WriterOptions(stripeMaxRows = 300), nullRate = 1.0)
  }

  test("zero rows") { roundTrip(rows = 0, seed = 13, WriterOptions(), nullRate = 0.0) }

  test("an all-null column has no CMB; a column without nulls uses USE_DEFAULT validity") {
    val dir = tempDir("fermion-desc")
    val file = dir.resolve("t.fermion")
    val fields = Seq(
      ArrowTestData.field("nulls", new org.apache.arrow.vector.types.pojo.ArrowType.Int(64, true)),
      ArrowTestData.field("full", new org.apache.arrow.vector.types.pojo.ArrowType.Int(64, true)),
      ArrowTestData.field("mixed", new org.apache.arrow.vector.types.pojo.ArrowType.Int(64, true))
    )
    val root = ArrowTestData.randomRoot(fields, 100, 1, nullRate = 0.0)
    try {
      val nulls = root.getVector(0).asInstanceOf[org.apache.arrow.vector.BigIntVector]
      (0 until 100).foreach(i => nulls.setNull(i))
      root.getVector(2).asInstanceOf[org.apache.arrow.vector.BigIntVector].setNull(5)
      write(file, root, WriterOptions(stripeMaxRows = 40))
    } finally root.close()
    val r = open(file)
    try {
      assert(r.columnMetadata(0).isEmpty)
      val full = r.columnMetadata(1).get
      assert(full.streamType(0) == StreamType.Validity && full.descType(0) == DescType.UseDefault)
      assert(full.streamType(1) == StreamType.Data && full.descType(1) == DescType.Full)
      val mixed = r.columnMetadata(2).get
      assert(mixed.descType(0) == DescType.Simple)
      assert(mixed.simpleLength(0, 0) > 0 && mixed.simpleLength(0, 1) == 0, "only stripe 0 has a null")
      assert(mixed.fullNullCount(1, 0) == 1 && mixed.fullNullCount(1, 2) == 0)
    } finally r.close()
    assert(readAll(file).head.forall(_ == null))
  }

  test("reading a subset of columns loads only their CMBs") {
    val dir = tempDir("fermion-lazy")
    val file = dir.resolve("wide.fermion")
    val fields = (0 until 400).map(i =>
      ArrowTestData.field(s"c$i", new org.apache.arrow.vector.types.pojo.ArrowType.Int(64, true))
    )
    val root = ArrowTestData.randomRoot(fields, 2000, 3, nullRate = 0.1)
    try write(file, root, WriterOptions(stripeMaxRows = 100))
    finally root.close()
    val opts = read.ReaderOptions(tailPrefetchBytes = 64 << 10, cmbEagerLoadThreshold = 0)
    val r = open(file, opts)
    try {
      val afterOpen = r.metadataBytesRead
      r.loadColumnMetadata(Seq(3, 200))
      val two = r.metadataBytesRead - afterOpen
      assert(two > 0)
      val perColumn = (r.columnMetadata(3).get.byteSize + r.columnMetadata(200).get.byteSize).toLong
      assert(two <= perColumn + 1, s"read $two metadata bytes for two CMBs of $perColumn bytes")
    } finally r.close()
    val subset = readAll(file, IndexedSeq(7, 399), opts)
    val all = readAll(file)
    assert(subset == IndexedSeq(all(7), all(399)))
  }
}
