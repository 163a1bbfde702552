package io.fermion.core.layout

import java.nio.{ByteBuffer, ByteOrder}
import java.nio.charset.StandardCharsets
import java.util.zip.CRC32

/** The column directory (format 1.5, settings bit 2; docs/format.md 10.1): for every top-level
  * column, where its CMB and its schema node are and their CRCs, in fixed 32-byte entries, in groups
  * of 32 that each end with their own CRC, and a trailer whose CRC covers the stripe directory and
  * the footer. It ends where the CMB area starts. A reader that needs a few of many columns reads the
  * trailer, the groups of those columns, their schema nodes and their CMBs: bytes in proportion to
  * the columns it reads, every one of them checked, instead of the whole schema and CIT.
  *
  * {{{
  * group g (32 entries, the last one fewer), then u32 crc32 of (u32 g, the entries):
  *   entry (32 bytes): u64 cmbOffset | u32 cmbLength | u32 cmbCrc32
  *                     | u32 nodeOffset (from schemaOffset) | u32 nodeLength | u32 nodeCrc32 | u32 reserved
  * trailer (24 bytes): u64 cmbAreaStart | u32 numColumns | u32 reserved | u32 crc32 | "FCDR"
  * }}}
  */
private[core] object ColumnDirectory {
  val EntrySize: Int = 32
  val GroupSize: Int = 32
  val TrailerSize: Int = 24
  val Magic: Array[Byte] = "FCDR".getBytes(StandardCharsets.US_ASCII)

  def numGroups(numColumns: Int): Int = (numColumns + GroupSize - 1) / GroupSize

  /** Bytes of the whole directory of `numColumns` columns. */
  def byteSize(numColumns: Int): Long = numColumns.toLong * EntrySize + 4L * numGroups(numColumns) + TrailerSize

  /** Where group `g` starts, relative to the directory's start, and its length with its CRC. */
  def groupRange(numColumns: Int, g: Int): (Long, Int) =
    (
      g.toLong * (GroupSize * EntrySize + 4),
      (math.min(numColumns, (g + 1) * GroupSize) - g * GroupSize) * EntrySize + 4
    )

  /** One column's entry. */
  final case class Entry(
      cmbOffset: Long,
      cmbLength: Int,
      cmbCrc32: Int,
      nodeOffset: Int,
      nodeLength: Int,
      nodeCrc32: Int
  )

  /** The trailer: where the CMB area starts (= where the directory ends), the column count, and the
    * CRC of trailer, stripe directory and footer. */
  final case class Trailer(cmbAreaStart: Long, numColumns: Int, crc32: Int)

  def encode(
      entries: IndexedSeq[Entry],
      cmbAreaStart: Long,
      stripeDirectory: Array[Byte],
      footerCovered: Array[Byte]
  ): Array[Byte] = {
    val n = entries.size
    val b = ByteBuffer.allocate(byteSize(n).toInt).order(ByteOrder.LITTLE_ENDIAN)
    (0 until numGroups(n)).foreach { g =>
      val at = b.position()
      entries.slice(g * GroupSize, (g + 1) * GroupSize).foreach { e =>
        b.putLong(e.cmbOffset).putInt(e.cmbLength).putInt(e.cmbCrc32)
        b.putInt(e.nodeOffset).putInt(e.nodeLength).putInt(e.nodeCrc32).putInt(0)
      }
      b.putInt(groupCrc(g, b.duplicate().position(at).limit(b.position())))
    }
    val trailerAt = b.position()
    b.putLong(cmbAreaStart).putInt(n).putInt(0)
    b.putInt(trailerCrc(
      b.duplicate().position(trailerAt).limit(trailerAt + 16),
      ByteBuffer.wrap(stripeDirectory),
      footerCovered
    ))
    b.put(Magic)
    b.array()
  }

  /** The CRC a group stores after its entries: of its index (u32) and its entries, so that a group
    * read from the wrong place fails it too. */
  def groupCrc(g: Int, entries: ByteBuffer): Int = {
    val crc = new CRC32
    crc.update(ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN).putInt(0, g))
    crc.update(entries.duplicate())
    crc.getValue.toInt
  }

  /** Group `g`'s stored CRC (its last 4 bytes) and the CRC of its entries (the bytes before). */
  def groupCrcs(g: Int, group: ByteBuffer): (Int, Int) = {
    val body = group.duplicate(); body.limit(body.limit() - 4)
    (group.duplicate().order(ByteOrder.LITTLE_ENDIAN).getInt(group.limit() - 4), groupCrc(g, body))
  }

  /** The trailer in `buf` (its 24 bytes from the position), or None when the magic is not there. */
  def trailer(buf: ByteBuffer): Option[Trailer] = {
    val b = buf.slice().order(ByteOrder.LITTLE_ENDIAN)
    if (!Magic.indices.forall(i => b.get(20 + i) == Magic(i))) None
    else Some(Trailer(b.getLong(0), b.getInt(8), b.getInt(16)))
  }

  /** The CRC the trailer stores: of its first 16 bytes, the stripe directory and the footer's
    * bytes +0..+51. */
  def trailerCrc(trailerFirst16: ByteBuffer, stripeDirectory: ByteBuffer, footerCovered: Array[Byte]): Int = {
    val crc = new CRC32
    val t = trailerFirst16.duplicate(); t.limit(t.position() + 16)
    crc.update(t)
    crc.update(stripeDirectory.duplicate())
    crc.update(footerCovered)
    crc.getValue.toInt
  }

  /** Entry `i` of a group's bytes. */
  def entry(group: ByteBuffer, i: Int): Entry = {
    val b = group.slice().order(ByteOrder.LITTLE_ENDIAN)
    val p = i * EntrySize
    Entry(b.getLong(p), b.getInt(p + 8), b.getInt(p + 12), b.getInt(p + 16), b.getInt(p + 20), b.getInt(p + 24))
  }
}
