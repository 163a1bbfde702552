package io.fermion.core

import java.nio.charset.StandardCharsets
import java.nio.file.{Files, StandardOpenOption}

import scala.util.Random

import io.fermion.core.bloom.{SplitBlockBloomFilter, XxHash64}
import io.fermion.core.errors.FermionChecksumException
import io.fermion.core.layout.StreamType
import io.fermion.core.expr.{FilterExpr, FilterValue}
import io.fermion.core.read.filter.StripeFilter
import io.fermion.core.write.WriterOptions
import org.apache.arrow.vector.{BigIntVector, VarCharVector}
import org.apache.arrow.vector.types.pojo.ArrowType
import org.scalatest.funsuite.AnyFunSuite

/** Bloom filters: the hash against XXH64's published values, no false negatives, a false-positive
  * rate near the target, and stripes skipped in files only where a value is surely absent. */
class BloomFilterSuite extends AnyFunSuite {
  import TestFiles._

  test("XXH64 matches the reference values") {
    def h(s: String) = { val b = s.getBytes(StandardCharsets.UTF_8); XxHash64.hash(b, 0, b.length) }
    assert(h("") == 0xef46db3751d8e999L)
    assert(h("a") == 0xd24ec4f1a98c6e5bL)
    assert(h("abc") == 0x44bc2cf5ad770999L)
    assert(h("Nobody inspects the spammish repetition") == 0xfbcea83c8a378bf1L)
    val rnd = new Random(1)
    for (_ <- 0 until 1000) {
      val v = rnd.nextLong()
      val bytes = java.nio.ByteBuffer.allocate(8).order(java.nio.ByteOrder.LITTLE_ENDIAN).putLong(v).array()
      assert(XxHash64.hashLong(v) == XxHash64.hash(bytes, 0, 8))
    }
  }

  test("no false negatives; false positives near the target rate") {
    val rnd = new Random(2)
    for (fpp <- Seq(0.1, 0.01, 0.001)) {
      val present = Array.fill(20000)(rnd.nextLong())
      val bloom = SplitBlockBloomFilter.forValues(present.length, fpp)
      present.foreach(v => bloom.insert(XxHash64.hashLong(v)))
      val back = SplitBlockBloomFilter.fromBytes(bloom.toBytes, 0, bloom.numBytes)
      assert(present.forall(v => back.mightContain(XxHash64.hashLong(v))))
      val probes = 100000
      val fp = (0 until probes).count(_ => back.mightContain(XxHash64.hashLong(rnd.nextLong())))
      assert(fp.toDouble / probes <= fpp * 2.5, s"fpp $fpp: ${fp.toDouble / probes}")
    }
  }

  private def writeKeys(bloom: Boolean): (java.nio.file.Path, IndexedSeq[Long], IndexedSeq[String]) = {
    val rows = 20000
    val rnd = new Random(3)
    val keys = IndexedSeq.fill(rows)(rnd.nextLong())
    val names = keys.map(k => s"name-$k")
    val root = ArrowTestData.randomRoot(
      Seq(ArrowTestData.field("k", new ArrowType.Int(64, true)), ArrowTestData.field("s", ArrowType.Utf8.INSTANCE)),
      rows,
      4,
      0.0
    )
    try {
      val k = root.getVector(0).asInstanceOf[BigIntVector]
      val s = root.getVector(1).asInstanceOf[VarCharVector]
      keys.indices.foreach { i => k.set(i, keys(i)); s.setSafe(i, names(i).getBytes(StandardCharsets.UTF_8)) }
      s.setValueCount(rows)
      val file = tempDir("fermion-bloom").resolve("t.fermion")
      write(
        file,
        root,
        WriterOptions(stripeMaxRows = 1000, bloomFilterColumns = if (bloom) Set("k", "s") else Set.empty)
      )
      (file, keys, names)
    } finally root.close()
  }

  test("equality and IN skip the stripes whose bloom filter rules the value out, and only those") {
    val (file, keys, names) = writeKeys(bloom = true)
    val r = open(file)
    try {
      assert(r.numStripes == 20)
      def matching(f: FilterExpr) = { val sf = new StripeFilter(r, f); (0 until r.numStripes).filter(sf.mightMatch) }
      for (i <- Seq(0, 4321, 19999)) {
        val stripes = matching(FilterExpr.Compare("k", FilterExpr.Eq, FilterValue.Integral(keys(i))))
        assert(stripes.contains(i / 1000), s"the stripe holding row $i must be kept")
        assert(stripes.size <= 2, stripes)
        assert(matching(FilterExpr.Compare(
          "s",
          FilterExpr.Eq,
          FilterValue.Bytes(names(i).getBytes(StandardCharsets.UTF_8))
        )).contains(i / 1000))
      }
      val absent = matching(FilterExpr.In("k", IndexedSeq(FilterValue.Integral(1L), FilterValue.Integral(2L))))
      assert(absent.size <= 2, absent)
      assert(matching(FilterExpr.Compare(
        "s",
        FilterExpr.Eq,
        FilterValue.Bytes("nope".getBytes(StandardCharsets.UTF_8))
      )).size <= 2)
      assert(r.bytesRead > 0)
    } finally r.close()
    val (plain, keys2, _) = writeKeys(bloom = false)
    val r2 = open(plain)
    try {
      val sf = new StripeFilter(r2, FilterExpr.Compare("k", FilterExpr.Eq, FilterValue.Integral(keys2(5))))
      assert((0 until r2.numStripes).count(sf.mightMatch) == 20, "random keys: statistics alone skip nothing")
    } finally r2.close()
  }

  test("a damaged bloom filter is a checksum error, not a skipped stripe") {
    val (file, keys, _) = writeKeys(bloom = true)
    val r = open(file)
    val (off, len) =
      try {
        val m = r.columnMetadata(0).get
        val s = m.streamTypeIndexOf(StreamType.Data)
        (m.fullOffset(s, 3) + m.fullLength(s, 3), m.fullBloomLength(s, 3))
      } finally r.close()
    assert(len > 36)
    val bytes = Files.readAllBytes(file)
    bytes((off + 5).toInt) = (bytes((off + 5).toInt) ^ 0x40).toByte
    Files.write(file, bytes, StandardOpenOption.TRUNCATE_EXISTING)
    val damaged = open(file)
    try {
      val sf = new StripeFilter(damaged, FilterExpr.Compare("k", FilterExpr.Eq, FilterValue.Integral(keys(3500))))
      intercept[FermionChecksumException](sf.mightMatch(3))
    } finally damaged.close()
  }
}
