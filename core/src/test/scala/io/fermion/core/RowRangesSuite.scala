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

  test("rows kept as a list answer as their ranges do: counts and rows per window, overlaps, covers (property)") {
    val rnd = new Random(6)
    for (_ <- 0 until 2000) {
      val a = random(rnd)
      val ranges = RowRanges.of(a)
      val sorted = set(a).toArray.sorted
      val listed = RowRanges.ofSortedRows(sorted :+ 1000, sorted.length)
      assert(listed.isListed && !ranges.isListed)
      assert(listed.rowCount == ranges.rowCount && listed.isEmpty == ranges.isEmpty)
      assert(listed.rows.toSeq == ranges.rows.toSeq)
      for (_ <- 0 until 5) {
        val from = rnd.nextInt(130)
        val until = from + rnd.nextInt(40)
        val expected = (from until until).filter(set(a)).map(_ - from)
        for (r <- Seq(ranges, listed)) {
          assert(r.countIn(from, until) == expected.size, s"$a [$from, $until)")
          assert(r.rowsIn(from, until).toSeq == expected, s"$a [$from, $until)")
          assert(r.overlaps(from, until) == expected.nonEmpty)
        }
      }
      val n = rnd.nextInt(30)
      assert(listed.covers(n) == ranges.covers(n), s"$a covers $n")
    }
    assert(RowRanges.ofSortedRows(Array(0, 1, 2, 3), 4).covers(4) && !RowRanges.ofSortedRows(Array(0, 2), 2).covers(2))
    intercept[IllegalArgumentException](RowRanges.ofSortedRows(Array(3, 2), 2))
  }
}
