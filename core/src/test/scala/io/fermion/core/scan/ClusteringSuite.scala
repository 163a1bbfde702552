package io.fermion.core.scan

import scala.util.Random

import io.fermion.core.expr.IntegerSet
import org.scalatest.funsuite.AnyFunSuite

/** Which columns a join's keys can narrow (stripe bounds of sorted vs random keys), and the key set
  * the row filter and statistics test them with, against plain Scala sets. */
class ClusteringSuite extends AnyFunSuite {

  test("stripes of sorted keys are narrow, of random keys not; too few stripes tell nothing") {
    val sorted = (0 until 20).map(s => (s * 5000L, s * 5000L + 4999))
    assert(Clustering.narrow(sorted))
    val rnd = new Random(3)
    val random = (0 until 20).map(_ => (rnd.nextInt(100).toLong, 199900L + rnd.nextInt(100)))
    assert(!Clustering.narrow(random))
    assert(!Clustering.narrow(sorted.take(3)))
    // Spans that overflow a long: compared in doubles.
    assert(Clustering.narrow((0 until 8).map(s =>
      (Long.MinValue + s * (Long.MaxValue / 4), Long.MinValue + s * (Long.MaxValue / 4) + 1)
    )))
    assert(!Clustering.narrow(Seq.fill(8)((Long.MinValue, Long.MaxValue))))
  }

  test("IntegerSet: membership and range tests equal a plain set's, dense (bitmap) and sparse (property)") {
    val rnd = new Random(17)
    for (round <- 0 until 300) {
      val spread = Seq(50, 5000, 1L << 40, Long.MaxValue)(round % 4)
      val base = if (round % 4 == 3) Long.MinValue / 2 else rnd.nextInt(1000) - 500L
      val keys = Seq.fill(1 + rnd.nextInt(3000))(base + (rnd.nextLong() & Long.MaxValue) % spread)
      val set = IntegerSet(keys)
      val plain = keys.toSet
      val sortedKeys = plain.toArray.sorted
      def probe(): Long = if (rnd.nextBoolean()) keys(rnd.nextInt(keys.size)) + rnd.nextInt(3) - 1 else rnd.nextLong()
      for (_ <- 0 until 200) {
        val x = probe()
        assert(set.contains(x) == plain.contains(x), s"contains($x)")
        val (lo, hi) = { val a = probe(); val b = if (rnd.nextBoolean()) a + rnd.nextInt(100) else probe(); (a, b) }
        val expected = sortedKeys.exists(k => k >= lo && k <= hi)
        assert(set.intersects(lo, hi) == expected, s"intersects($lo, $hi)")
      }
    }
    assert(!IntegerSet(Nil).contains(0) && !IntegerSet(Nil).intersects(Long.MinValue, Long.MaxValue))
  }
}
