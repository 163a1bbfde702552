package io.fermion.core.read

/** Rows of one stripe as sorted, disjoint, non-adjacent half-open ranges `[start, end)`: what page
  * statistics leave of a stripe for a filter. Page boundaries differ between columns, so a filter
  * over two columns intersects (AND) or unites (OR) their page ranges row by row. */
final private[core] class RowRanges private (private val bounds: Array[Int]) {

  /** Number of ranges. */
  def size: Int = bounds.length / 2
  def start(i: Int): Int = bounds(2 * i)
  def end(i: Int): Int = bounds(2 * i + 1)
  def isEmpty: Boolean = bounds.isEmpty

  /** Rows covered. */
  def rowCount: Int = {
    var n = 0
    var i = 0
    while (i < size) { n += end(i) - start(i); i += 1 }
    n
  }

  /** Whether some row of `[from, until)` is selected. */
  def overlaps(from: Int, until: Int): Boolean = from < until && {
    // Binary search for the first range ending after `from`.
    var lo = 0
    var hi = size
    while (lo < hi) { val mid = (lo + hi) >>> 1; if (end(mid) <= from) lo = mid + 1 else hi = mid }
    lo < size && start(lo) < until
  }

  def covers(rows: Int): Boolean = size == 1 && start(0) == 0 && end(0) >= rows

  def union(o: RowRanges): RowRanges = {
    val all = (0 until size).map(i => (start(i), end(i))) ++ (0 until o.size).map(i => (o.start(i), o.end(i)))
    RowRanges.of(all)
  }

  def intersect(o: RowRanges): RowRanges = {
    val out = Array.newBuilder[Int]
    var i = 0
    var j = 0
    while (i < size && j < o.size) {
      val s = math.max(start(i), o.start(j))
      val e = math.min(end(i), o.end(j))
      if (s < e) { out += s; out += e }
      if (end(i) < o.end(j)) i += 1 else j += 1
    }
    new RowRanges(out.result())
  }

  /** The selected rows in order. */
  def rows: Array[Int] = {
    val out = new Array[Int](rowCount)
    var k = 0
    var i = 0
    while (i < size) { var r = start(i); while (r < end(i)) { out(k) = r; k += 1; r += 1 }; i += 1 }
    out
  }

  override def equals(o: Any): Boolean =
    o match { case r: RowRanges => java.util.Arrays.equals(bounds, r.bounds); case _ => false }
  override def hashCode: Int = java.util.Arrays.hashCode(bounds)
  override def toString: String = (0 until size).map(i => s"[${start(i)}, ${end(i)})").mkString("RowRanges(", ", ", ")")
}

private[core] object RowRanges {
  val Empty: RowRanges = new RowRanges(Array.emptyIntArray)

  def all(rows: Int): RowRanges = if (rows <= 0) Empty else new RowRanges(Array(0, rows))

  /** The runs of consecutive rows among `rows(0 until n)` (ascending, distinct): a filter's
    * matches, turned into ranges without a pair per run. */
  def ofSortedRows(rows: Array[Int], n: Int): RowRanges = {
    var runs = 0
    var i = 0
    while (i < n) { if (i == 0 || rows(i) != rows(i - 1) + 1) runs += 1; i += 1 }
    val bounds = new Array[Int](2 * runs)
    var b = -1
    i = 0
    while (i < n) {
      val r = rows(i)
      require(i == 0 || r > rows(i - 1), "rows ascending and distinct")
      if (i == 0 || r != rows(i - 1) + 1) { b += 1; bounds(2 * b) = r }
      bounds(2 * b + 1) = r + 1
      i += 1
    }
    new RowRanges(bounds)
  }

  /** Normalises any ranges (unsorted, overlapping, empty ones dropped). */
  def of(ranges: Iterable[(Int, Int)]): RowRanges = {
    val sorted = ranges.filter { case (s, e) => s < e }.toArray.sortBy(_._1)
    val out = Array.newBuilder[Int]
    var curS = -1
    var curE = -1
    sorted.foreach { case (s, e) =>
      if (curE >= s && curS >= 0) curE = math.max(curE, e)
      else { if (curS >= 0) { out += curS; out += curE }; curS = s; curE = e }
    }
    if (curS >= 0) { out += curS; out += curE }
    new RowRanges(out.result())
  }
}
