package io.fermion.core.read

/** Rows of one stripe as sorted, disjoint, non-adjacent half-open ranges `[start, end)`: what page
  * statistics leave of a stripe for a filter. Page boundaries differ between columns, so a filter
  * over two columns intersects (AND) or unites (OR) their page ranges row by row.
  *
  * Rows a filter kept one by one (scattered matches) are kept as their sorted list, and their
  * ranges found only if asked for: a filter's next column and the pages to decode need the rows
  * (as a list, or counted per page), which the list gives without a pass over ranges of one row. */
final private[core] class RowRanges private (given: Array[Int], listed: Array[Int], listedCount: Int) {
  // Found on first use for listed rows (a plain field, read in the loops over ranges).
  private var found: Array[Int] = given
  private def bounds: Array[Int] = {
    if (found == null) found = RowRanges.boundsOf(listed, listedCount)
    found
  }

  /** Number of ranges. */
  def size: Int = bounds.length / 2
  def start(i: Int): Int = bounds(2 * i)
  def end(i: Int): Int = bounds(2 * i + 1)
  def isEmpty: Boolean = if (listed != null) listedCount == 0 else bounds.isEmpty

  /** Rows covered. */
  def rowCount: Int =
    if (listed != null) listedCount
    else {
      var n = 0
      var i = 0
      while (i < size) { n += end(i) - start(i); i += 1 }
      n
    }

  /** Whether some row of `[from, until)` is selected. */
  def overlaps(from: Int, until: Int): Boolean = from < until && {
    if (listed != null) countIn(from, until) > 0
    else { val i = firstEndingAfter(from); i < size && start(i) < until }
  }

  /** How many rows of `[from, until)` are selected. */
  def countIn(from: Int, until: Int): Int =
    if (listed != null) math.max(0, firstListedAtLeast(until) - firstListedAtLeast(from))
    else {
      var n = 0
      var i = firstEndingAfter(from)
      while (i < size && start(i) < until) { n += math.min(end(i), until) - math.max(start(i), from); i += 1 }
      n
    }

  /** The selected rows of `[from, until)`, each less `from` (ascending). */
  def rowsIn(from: Int, until: Int): Array[Int] = {
    val out = new Array[Int](countIn(from, until))
    var k = 0
    if (listed != null) {
      val first = firstListedAtLeast(from)
      while (k < out.length) { out(k) = listed(first + k) - from; k += 1 }
    } else {
      var i = firstEndingAfter(from)
      while (i < size && start(i) < until) {
        var r = math.max(start(i), from)
        val e = math.min(end(i), until)
        while (r < e) { out(k) = r - from; k += 1; r += 1 }
        i += 1
      }
    }
    out
  }

  /** The first range ending after `row` (`size` if none). */
  private def firstEndingAfter(row: Int): Int = {
    var lo = 0
    var hi = size
    while (lo < hi) { val mid = (lo + hi) >>> 1; if (end(mid) <= row) lo = mid + 1 else hi = mid }
    lo
  }

  /** The index of the first listed row at or after `row` (`listedCount` if none). */
  private def firstListedAtLeast(row: Int): Int = {
    var lo = 0
    var hi = listedCount
    while (lo < hi) { val mid = (lo + hi) >>> 1; if (listed(mid) < row) lo = mid + 1 else hi = mid }
    lo
  }

  def covers(rows: Int): Boolean =
    if (listed != null)
      listedCount >= rows && listedCount > 0 && listed(0) == 0 && listed(listedCount - 1) == listedCount - 1
    else size == 1 && start(0) == 0 && end(0) >= rows

  /** Whether the rows are held as a list (scattered rows a filter kept). */
  def isListed: Boolean = listed != null

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
    new RowRanges(out.result(), null, 0)
  }

  /** The selected rows in order (not to be modified: a listed selection returns its own list). */
  def rows: Array[Int] =
    if (listed != null) listed
    else {
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
  val Empty: RowRanges = new RowRanges(Array.emptyIntArray, null, 0)

  def all(rows: Int): RowRanges = if (rows <= 0) Empty else new RowRanges(Array(0, rows), null, 0)

  /** The rows `rows(0 until n)` (ascending, distinct): a filter's matches, kept as their list
    * (a copy when `rows` holds more than `n`). */
  def ofSortedRows(rows: Array[Int], n: Int): RowRanges = {
    var i = 1
    while (i < n) { require(rows(i) > rows(i - 1), "rows ascending and distinct"); i += 1 }
    new RowRanges(null, if (rows.length == n) rows else java.util.Arrays.copyOf(rows, n), n)
  }

  /** The runs of consecutive rows among `rows(0 until n)`, as bounds. */
  private def boundsOf(rows: Array[Int], n: Int): Array[Int] = {
    var runs = 0
    var i = 0
    while (i < n) { if (i == 0 || rows(i) != rows(i - 1) + 1) runs += 1; i += 1 }
    val bounds = new Array[Int](2 * runs)
    var b = -1
    i = 0
    while (i < n) {
      val r = rows(i)
      if (i == 0 || r != rows(i - 1) + 1) { b += 1; bounds(2 * b) = r }
      bounds(2 * b + 1) = r + 1
      i += 1
    }
    bounds
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
    new RowRanges(out.result(), null, 0)
  }
}
