package io.fermion.core.layout

import java.nio.{ByteBuffer, ByteOrder}

/** Where each stripe's data starts, how long it is and how many rows it holds: 24 bytes per stripe
  * (u64 dataOffset, u64 dataLength, u32 rowCount, u32 reserved). It sits next to the schema so that
  * a planner can split a file by stripes without touching any CMB (docs/format.md, "Stripe
  * directory"). */
final private[core] class StripeDirectory private (buf: ByteBuffer, val numStripes: Int) {
  import StripeDirectory.EntrySize
  def dataOffset(i: Int): Long = buf.getLong(i * EntrySize)
  def dataLength(i: Int): Long = buf.getLong(i * EntrySize + 8)
  def rowCount(i: Int): Int = buf.getInt(i * EntrySize + 16)

  /** First row of each stripe within the file, plus the total at the end. */
  lazy val firstRows: Array[Long] = {
    val r = new Array[Long](numStripes + 1)
    var i = 0
    while (i < numStripes) { r(i + 1) = r(i) + rowCount(i); i += 1 }
    r
  }
}

private[core] object StripeDirectory {
  val EntrySize: Int = 24

  def view(buf: ByteBuffer, numStripes: Int): StripeDirectory =
    new StripeDirectory(buf.slice().order(ByteOrder.LITTLE_ENDIAN), numStripes)

  final case class Entry(dataOffset: Long, dataLength: Long, rowCount: Int)

  def encode(entries: Seq[Entry]): Array[Byte] = {
    val b = ByteBuffer.allocate(entries.size * EntrySize).order(ByteOrder.LITTLE_ENDIAN)
    entries.foreach(e => b.putLong(e.dataOffset).putLong(e.dataLength).putInt(e.rowCount).putInt(0))
    b.array()
  }
}
