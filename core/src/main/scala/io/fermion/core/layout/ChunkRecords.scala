package io.fermion.core.layout

/** Min/max of a page or chunk as two int64 slots whose meaning depends on the column type
  * (docs/format.md, "Statistics"). */
final private[core] case class ValueStats(flags: Int, min: Long, max: Long) {
  def hasMinMax: Boolean = (flags & ValueStats.HasMinMax) != 0

  /** Bounds a reader may use: present, and no flag this reader does not know (docs/format.md 7). */
  def usableBounds: Boolean = hasMinMax && (flags & ~ValueStats.KnownFlags) == 0

  /** Bounds that are signed 64-bit integers (neither a double's bits nor byte prefixes). */
  def integerBounds: Boolean = (flags & (ValueStats.DoubleBits | ValueStats.PrefixBounds)) == 0

  /** Bounds covering both: compared as the flags say (doubles, unsigned prefixes or signed longs). */
  def merge(o: ValueStats): ValueStats =
    if (!o.hasMinMax) copy(flags = flags | o.flags)
    else if (!hasMinMax) o.copy(flags = flags | o.flags)
    else {
      val cmp: (Long, Long) => Int =
        if ((flags & ValueStats.DoubleBits) != 0)
          (a, b) => java.lang.Double.compare(java.lang.Double.longBitsToDouble(a), java.lang.Double.longBitsToDouble(b))
        else if ((flags & ValueStats.PrefixBounds) != 0) java.lang.Long.compareUnsigned
        else java.lang.Long.compare
      ValueStats(flags | o.flags, if (cmp(o.min, min) < 0) o.min else min, if (cmp(o.max, max) > 0) o.max else max)
    }
}

private[core] object ValueStats {
  val HasMinMax: Int = 1

  /** Floats: at least one NaN was seen (NaNs never enter min/max). */
  val HasNaN: Int = 1 << 1

  /** Strings/binary: min and max are 8-byte prefixes, compared as unsigned big-endian. */
  val PrefixBounds: Int = 1 << 2

  /** Floats: min/max hold the IEEE-754 bits of a double, compared as doubles, not as longs. */
  val DoubleBits: Int = 1 << 3
  val None: ValueStats = ValueStats(0, 0L, 0L)
  val KnownFlags: Int = HasMinMax | HasNaN | PrefixBounds | DoubleBits
}

/** What the writer remembers about one page until the CMB is built. */
final private[core] case class PageRecord(size: Int, rowCount: Int, nullCount: Int, stats: ValueStats)

/** What the writer remembers about one stream chunk (one stream in one stripe). `length == 0`
  * means no bytes were written; `allNull` marks a VALIDITY chunk whose stripe is entirely null. */
final private[core] case class ChunkRecord(
    offset: Long,
    length: Long,
    allNull: Boolean,
    nullCount: Int,
    stats: ValueStats,
    pages: IndexedSeq[PageRecord],
    /** Bytes of the bloom filter (and its CRC32) right after a DATA chunk; 0 for none. */
    bloomLength: Int = 0
)

private[core] object ChunkRecord {
  val Empty: ChunkRecord = ChunkRecord(0L, 0L, allNull = false, 0, ValueStats.None, IndexedSeq.empty)
  val AllNull: ChunkRecord = ChunkRecord(0L, 0L, allNull = true, 0, ValueStats.None, IndexedSeq.empty)
}
