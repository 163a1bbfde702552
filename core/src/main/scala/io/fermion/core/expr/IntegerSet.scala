package io.fermion.core.expr

/** A set of 64-bit integers tested once per row (an IN list of keys, as a join's runtime filter
  * sends): a bitmap over `[min, max]` when the keys are dense enough that it stays small, else
  * the sorted keys searched by halves. Values outside `[min, max]` are rejected first. */
final private[core] class IntegerSet private (sorted: Array[Long]) {
  private val min = if (sorted.isEmpty) Long.MaxValue else sorted(0)
  private val max = if (sorted.isEmpty) Long.MinValue else sorted(sorted.length - 1)

  // A bitmap costs a shift and a load per row where a search costs ~log2(n) compares (10,000
  // keys: 14); kept to at most 2 MiB and to 256 bits per key, so a few scattered keys do not
  // allocate one.
  private val bits: Array[Long] =
    if (sorted.isEmpty) null
    else {
      val span = max - min
      if (span < 0 || span >= IntegerSet.MaxBitmapBits || span > 256L * sorted.length + 4096) null
      else {
        val b = new Array[Long]((span >>> 6).toInt + 1)
        sorted.foreach { x =>
          val o = x - min; b((o >>> 6).toInt) |= 1L << o
        }
        b
      }
    }

  def size: Int = sorted.length

  /** Whether some element lies in `[lo, hi]`: what a page's or stripe's bounds are tested with,
    * one search whatever the number of elements. */
  def intersects(lo: Long, hi: Long): Boolean =
    if (lo > hi || hi < min || lo > max) false
    else {
      val i = java.util.Arrays.binarySearch(sorted, lo)
      i >= 0 || { val next = -i - 1; next < sorted.length && sorted(next) <= hi }
    }

  def contains(x: Long): Boolean =
    if (x < min || x > max) false
    else if (bits != null) { val o = x - min; (bits((o >>> 6).toInt) & (1L << o)) != 0 }
    else java.util.Arrays.binarySearch(sorted, x) >= 0
}

private[core] object IntegerSet {
  private val MaxBitmapBits = 1L << 24

  def apply(values: Iterable[Long]): IntegerSet = new IntegerSet(values.toArray.distinct.sorted)

  /** The literals as a set, when every one is an integer. */
  def of(values: Seq[FilterValue]): Option[IntegerSet] =
    if (values.forall(_.isInstanceOf[FilterValue.Integral]))
      Some(apply(values.map(_.asInstanceOf[FilterValue.Integral].value)))
    else None
}
