package io.fermion.core

import scala.util.Random

import io.fermion.core.read.RowRanges
import org.scalatest.funsuite.AnyFunSuite

/** RowRanges against plain sets of rows. */
class RowRangesSuite extends AnyFunSuite {
  private def random(rnd: Random): Seq[(Int, Int)] =
    Seq.fill(rnd.nextInt(6)) { val s = rnd.nextInt(100); (s, s + rnd.nextInt(20)) }
  private def set(rs: Seq[(Int, Int)]): Set[Int] = rs.flatMap { case (s, e) => s until e }.toSet

  test("of, union, intersect, overlaps and rows agree with sets (property)") {
    val rnd = new Random(5)
    for (_ <- 0 until 2000) {
      val a = random(rnd)
      val b = random(rnd)
      val ra = RowRanges.of(a)
      val rb = RowRanges.of(b)
      assert(ra.rows.toSeq == set(a).toSeq.sorted)
      assert(ra.rowCount == set(a).size)
      assert(ra.union(rb).rows.toSet == (set(a) ++ set(b)))
      assert(ra.intersect(rb).rows.toSet == (set(a) intersect set(b)))
      assert(ra.union(rb) == RowRanges.of(a ++ b), "normal form is unique")
      val sorted = set(a).toArray.sorted
      assert(RowRanges.ofSortedRows(sorted :+ 1000, sorted.length) == ra, s"the runs of $a's rows")
      val from = rnd.nextInt(120)
      val until = from + rnd.nextInt(10)
      assert(ra.overlaps(from, until) == (from until until).exists(set(a)), s"$ra overlaps [$from, $until)")
      // Ranges are disjoint and not adjacent.
      (1 until ra.size).foreach(i => assert(ra.start(i) > ra.end(i - 1)))
    }
    assert(RowRanges.all(10).covers(10) && !RowRanges.of(Seq(0 -> 5)).covers(10) && RowRanges.all(0).isEmpty)
  }
}
