package io.fermion.core.layout

import java.nio.{ByteBuffer, ByteOrder}

/** A read-only POD view over one column's CMB bytes: nothing is deserialised, every accessor reads
  * the field at its fixed offset (docs/format.md, "Column Metadata Block").
  *
  * {{{
  * [CMBHeader   ] u32 numStreams, u32 numStripes                      8 bytes
  * [StripeMeta[]] u32 rowCount                                        4 bytes each
  * [StreamMeta[]] u8 descType, u8 streamType, u16 pad, u32 chunksOffset   8 bytes each
  * [payload     ] SimpleChunkDesc[numStripes] | FullChunkDesc[numStripes] per stream, then PageMeta pool
  * SimpleChunkDesc: u64 offset, u32 length, u32 reserved                                 16 bytes
  * FullChunkDesc:   u64 offset, u32 length, u32 statsFlags, i64 min, i64 max,
  *                  u32 nullCount, u32 numPages, u32 pageMetaOffset, u32 bloomLength     48 bytes
  * PageMeta:        u32 pageSize, u32 rowCount, i64 min, i64 max, u32 nullCount, u32 statsFlags  32 bytes
  * }}}
  * All offsets inside the block (chunksOffset, pageMetaOffset) are relative to its first byte.
  */
final private[core] class ColumnMetadataBlock private (val buf: ByteBuffer) {
  import ColumnMetadataBlock._

  def numStreams: Int = buf.getInt(0)
  def numStripes: Int = buf.getInt(4)
  def stripeRowCount(stripe: Int): Int = buf.getInt(HeaderSize + stripe * StripeMetaSize)

  private def streamMetaAt(stream: Int): Int = HeaderSize + numStripes * StripeMetaSize + stream * StreamMetaSize
  def descType(stream: Int): Int = buf.get(streamMetaAt(stream)) & 0xff
  def streamType(stream: Int): Int = buf.get(streamMetaAt(stream) + 1) & 0xff
  def chunksOffset(stream: Int): Int = buf.getInt(streamMetaAt(stream) + 4)

  /** Index of the first stream of type `t`, or -1. */
  def streamTypeIndexOf(t: Int): Int = {
    var s = 0
    while (s < numStreams) { if (streamType(s) == t) return s; s += 1 }
    -1
  }

  private def simpleAt(stream: Int, stripe: Int): Int = chunksOffset(stream) + stripe * SimpleChunkDescSize
  def simpleOffset(stream: Int, stripe: Int): Long = buf.getLong(simpleAt(stream, stripe))
  def simpleLength(stream: Int, stripe: Int): Long = buf.getInt(simpleAt(stream, stripe) + 8) & 0xffffffffL

  private def fullAt(stream: Int, stripe: Int): Int = chunksOffset(stream) + stripe * FullChunkDescSize
  def fullOffset(stream: Int, stripe: Int): Long = buf.getLong(fullAt(stream, stripe))
  def fullLength(stream: Int, stripe: Int): Long = buf.getInt(fullAt(stream, stripe) + 8) & 0xffffffffL
  def fullStatsFlags(stream: Int, stripe: Int): Int = buf.getInt(fullAt(stream, stripe) + 12)
  def fullMin(stream: Int, stripe: Int): Long = buf.getLong(fullAt(stream, stripe) + 16)
  def fullMax(stream: Int, stripe: Int): Long = buf.getLong(fullAt(stream, stripe) + 24)
  def fullNullCount(stream: Int, stripe: Int): Int = buf.getInt(fullAt(stream, stripe) + 32)
  def fullNumPages(stream: Int, stripe: Int): Int = buf.getInt(fullAt(stream, stripe) + 36)
  def fullPageMetaOffset(stream: Int, stripe: Int): Int = buf.getInt(fullAt(stream, stripe) + 40)

  /** Bytes of the chunk's bloom filter plus its u32 CRC32, stored right after the chunk; 0 for none. */
  def fullBloomLength(stream: Int, stripe: Int): Int = buf.getInt(fullAt(stream, stripe) + 44)

  /** Chunk position of any stream kind; (0, 0) for USE_DEFAULT / FORCE_NULL streams. */
  def chunkOffset(stream: Int, stripe: Int): Long = descType(stream) match {
    case DescType.Simple => simpleOffset(stream, stripe)
    case DescType.Full => fullOffset(stream, stripe)
    case _ => 0L
  }
  def chunkLength(stream: Int, stripe: Int): Long = descType(stream) match {
    case DescType.Simple => simpleLength(stream, stripe)
    case DescType.Full => fullLength(stream, stripe)
    case _ => 0L
  }

  def pageSize(pageMetaOffset: Int, page: Int): Int = buf.getInt(pageMetaOffset + page * PageMetaSize)
  def pageRowCount(pageMetaOffset: Int, page: Int): Int = buf.getInt(pageMetaOffset + page * PageMetaSize + 4)
  def pageMin(pageMetaOffset: Int, page: Int): Long = buf.getLong(pageMetaOffset + page * PageMetaSize + 8)
  def pageMax(pageMetaOffset: Int, page: Int): Long = buf.getLong(pageMetaOffset + page * PageMetaSize + 16)
  def pageNullCount(pageMetaOffset: Int, page: Int): Int = buf.getInt(pageMetaOffset + page * PageMetaSize + 24)
  def pageStatsFlags(pageMetaOffset: Int, page: Int): Int = buf.getInt(pageMetaOffset + page * PageMetaSize + 28)

  def byteSize: Int = buf.limit()
}

private[core] object ColumnMetadataBlock {
  val HeaderSize = 8
  val StripeMetaSize = 4
  val StreamMetaSize = 8
  val SimpleChunkDescSize = 16
  val FullChunkDescSize = 48
  val PageMetaSize = 32

  /** Wraps `bytes` (exactly one CMB); `validate` checks that every offset stays inside the block,
    * so a corrupt CMB fails here with the reason instead of later with an index error. */
  def view(bytes: ByteBuffer): ColumnMetadataBlock =
    new ColumnMetadataBlock(bytes.slice().order(ByteOrder.LITTLE_ENDIAN))

  /** Returns a description of the first inconsistency, or None when the block is well formed.
    * The block's layout is fully determined by its stream types, descTypes and page counts
    * (docs/format.md 6.1, 6.5): descriptor arrays follow each other from the end of the stream
    * directory in stream order, the PageMeta pool follows them in stream, stripe, page order, and
    * the block ends after the last entry. Every offset is checked to be exactly there, so a
    * damaged offset or count cannot make one stream read another's descriptors. */
  def validate(cmb: ColumnMetadataBlock, expectedStreamTypes: IndexedSeq[Int], expectedStripes: Int): Option[String] = {
    val expectedStreams = expectedStreamTypes.size
    val size = cmb.byteSize
    if (size < HeaderSize) return Some(s"CMB of $size bytes is shorter than its header")
    if (cmb.numStreams != expectedStreams)
      return Some(s"CMB has ${cmb.numStreams} streams, the schema implies $expectedStreams")
    if (cmb.numStripes != expectedStripes)
      return Some(s"CMB has ${cmb.numStripes} stripes, the file has $expectedStripes")
    val dirEnd = HeaderSize.toLong + expectedStripes.toLong * StripeMetaSize + expectedStreams.toLong * StreamMetaSize
    if (dirEnd > size) return Some(s"CMB directory ends at $dirEnd, beyond the block's $size bytes")
    var cursor = dirEnd
    var s = 0
    while (s < expectedStreams) {
      val d = cmb.descType(s)
      if (cmb.streamType(s) != expectedStreamTypes(s))
        return Some(s"stream $s has type ${cmb.streamType(s)}, the schema implies ${expectedStreamTypes(s)}")
      val allowed = expectedStreamTypes(s) match {
        case StreamType.Validity => Set(DescType.Simple, DescType.UseDefault, DescType.ForceNull)
        case StreamType.Data => Set(DescType.Full, DescType.UseDefault)
        case _ => Set(DescType.Simple, DescType.UseDefault)
      }
      if (!allowed.contains(d))
        return Some(s"stream $s of type ${expectedStreamTypes(s)} cannot have descType ${DescType.name(d)}")
      val descSize = d match {
        case DescType.Simple => SimpleChunkDescSize
        case DescType.Full => FullChunkDescSize
        case _ => 0
      }
      if (descSize > 0) {
        val start = cmb.chunksOffset(s).toLong
        if (start != cursor || start + descSize.toLong * expectedStripes > size)
          return Some(s"stream $s chunk descriptors at $start, expected at $cursor (the block has $size bytes)")
        cursor += descSize.toLong * expectedStripes
      } else if (cmb.chunksOffset(s) != 0)
        return Some(s"stream $s is ${DescType.name(d)} but has chunk descriptors at ${cmb.chunksOffset(s)}")
      s += 1
    }
    // The PageMeta pool: one entry per page of every multi-page FULL chunk, in stream, stripe order.
    s = 0
    while (s < expectedStreams) {
      if (cmb.descType(s) == DescType.Full) {
        var st = 0
        while (st < expectedStripes) {
          val pages = cmb.fullNumPages(s, st)
          if (pages < 0) return Some(s"stream $s stripe $st has $pages pages")
          if (pages > 1) {
            val pm = cmb.fullPageMetaOffset(s, st).toLong
            if (pm != cursor || pm + pages.toLong * PageMetaSize > size)
              return Some(s"stream $s stripe $st page metadata at $pm, expected at $cursor (the block has $size bytes)")
            cursor += pages.toLong * PageMetaSize
          } else if (cmb.fullPageMetaOffset(s, st) != 0)
            return Some(
              s"stream $s stripe $st has $pages page(s) but page metadata at ${cmb.fullPageMetaOffset(s, st)}"
            )
          st += 1
        }
      }
      s += 1
    }
    if (cursor != size) return Some(s"CMB content ends at $cursor, the block has $size bytes")
    None
  }

  /** Checks every chunk descriptor of a validated block against the file: row counts equal the
    * stripe directory's; each non-empty chunk (with its bloom filter) lies inside its own stripe's
    * `[dataOffset, dataOffset + dataLength)` and after the column's previous chunk in that stripe
    * (docs/format.md 5.1, so a descriptor copied from another stripe or stream is refused); a
    * FULL chunk has pages if and only if it has bytes, at least 20 bytes per page, page sizes that
    * add up to its length, and null counts within their pages; the all-null sentinel is used only
    * by VALIDITY. Returns the first problem and the file offset to report it at. */
  def validateChunks(
      cmb: ColumnMetadataBlock,
      expectedStreamTypes: IndexedSeq[Int],
      stripes: StripeDirectory,
      blockOffset: Long
  ): Option[(String, Long)] = {
    val streams = expectedStreamTypes.size
    var st = 0
    while (st < stripes.numStripes) {
      val rows = stripes.rowCount(st)
      if (cmb.stripeRowCount(st) != rows)
        return Some((s"gives stripe $st ${cmb.stripeRowCount(st)} rows, the stripe directory $rows", blockOffset))
      val lo = stripes.dataOffset(st)
      val hi = lo + stripes.dataLength(st) // both checked on open: no overflow
      var prevEnd = lo
      var s = 0
      while (s < streams) {
        val d = cmb.descType(s)
        if (d == DescType.Simple || d == DescType.Full) {
          val at = blockOffset + cmb.chunksOffset(s) + st.toLong * (if (d == DescType.Simple) SimpleChunkDescSize
                                                                    else FullChunkDescSize)
          val off = cmb.chunkOffset(s, st)
          val len = cmb.chunkLength(s, stripe = st)
          var bloom = 0L
          if (d == DescType.Simple && len == FileLayout.AllNullChunkLength) {
            if (expectedStreamTypes(s) != StreamType.Validity)
              return Some((s"stream $s (not VALIDITY) uses the all-null length in stripe $st", at))
          } else if (d == DescType.Full) {
            val pages = cmb.fullNumPages(s, st)
            val nulls = cmb.fullNullCount(s, st)
            bloom = cmb.fullBloomLength(s, st).toLong
            if (nulls < 0) return Some((s"stream $s stripe $st has $nulls nulls", at))
            if (len == 0 && (pages != 0 || bloom != 0))
              return Some((
                s"stream $s stripe $st: an empty chunk with $pages pages and a $bloom-byte bloom filter",
                at
              ))
            if (len > 0 && (pages < 1 || pages > len / PageHeader.Size))
              return Some((s"stream $s stripe $st: $pages pages in a chunk of $len bytes", at))
            if (bloom < 0) return Some((s"stream $s stripe $st: bloom filter of $bloom bytes", at))
            if (pages > 1) {
              val pool = cmb.fullPageMetaOffset(s, st)
              var total = 0L
              var p = 0
              while (p < pages) {
                val size = cmb.pageSize(pool, p).toLong
                val rc = cmb.pageRowCount(pool, p)
                val nc = cmb.pageNullCount(pool, p)
                if (size < PageHeader.Size || rc < 0 || nc < 0 || nc > rc)
                  return Some(
                    (
                      s"stream $s stripe $st page $p: $size bytes, $rc slots, $nc nulls",
                      blockOffset + pool + p.toLong * PageMetaSize
                    )
                  )
                total += size
                p += 1
              }
              if (total != len)
                return Some((s"stream $s stripe $st: pages of $total bytes in a chunk of $len bytes", at))
            }
          }
          // A FULL chunk's length is always a real one, 0xFFFFFFFF included: it must lie in the stripe.
          if (len > 0 && !(d == DescType.Simple && len == FileLayout.AllNullChunkLength)) {
            if (len < PageHeader.Size) return Some((s"stream $s stripe $st: a chunk of $len bytes", at))
            if (off < prevEnd || off > hi || hi - off < len + bloom)
              return Some(
                (
                  s"stream $s chunk [$off, +$len${if (bloom > 0) s" +$bloom" else ""}) of stripe $st lies outside the stripe's [$lo, $hi) or before the column's previous chunk",
                  at
                )
              )
            prevEnd = off + len + bloom
          }
        }
        s += 1
      }
      st += 1
    }
    None
  }
}
