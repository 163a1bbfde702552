package io.fermion.core.layout

import java.nio.{ByteBuffer, ByteOrder}
import java.nio.charset.StandardCharsets

/** The batch index of a batch-mode file (footer settings bit 1, format 1.3; docs/format.md 16.10):
  * where each stripe's two BATCH_META chunks are (batch ids, int64; batch lengths, u32) and the
  * stripe's batch count and min/max batch id. It fills the bytes between the end of the last
  * stripe's range and the first CMB:
  * {{{
  * +0  u8[4] magic "FBMB"     +4 u32 numStripes
  * per stripe, 48 bytes: u64 idsOffset, u32 idsLength, u32 numBatches, u64 lengthsOffset,
  *                       u32 lengthsLength, u32 reserved, i64 minBatchId, i64 maxBatchId
  * u32 crc32 of every byte before it
  * }}} */
final private[core] class BatchMetaBlock private (buf: ByteBuffer, val numStripes: Int) {
  import BatchMetaBlock._
  private def at(stripe: Int): Int = HeaderSize + stripe * EntrySize
  def idsOffset(stripe: Int): Long = buf.getLong(at(stripe))
  def idsLength(stripe: Int): Long = buf.getInt(at(stripe) + 8) & 0xffffffffL
  def numBatches(stripe: Int): Int = buf.getInt(at(stripe) + 12)
  def lengthsOffset(stripe: Int): Long = buf.getLong(at(stripe) + 16)
  def lengthsLength(stripe: Int): Long = buf.getInt(at(stripe) + 24) & 0xffffffffL
  def minBatchId(stripe: Int): Long = buf.getLong(at(stripe) + 32)
  def maxBatchId(stripe: Int): Long = buf.getLong(at(stripe) + 40)
}

private[core] object BatchMetaBlock {
  val Magic: Array[Byte] = "FBMB".getBytes(StandardCharsets.US_ASCII)
  val HeaderSize = 8
  val EntrySize = 48

  def size(numStripes: Int): Long = HeaderSize + numStripes.toLong * EntrySize + 4

  final case class Entry(
      idsOffset: Long,
      idsLength: Long,
      numBatches: Int,
      lengthsOffset: Long,
      lengthsLength: Long,
      minBatchId: Long,
      maxBatchId: Long
  )

  def encode(entries: Seq[Entry]): Array[Byte] = {
    val b = ByteBuffer.allocate(size(entries.size).toInt).order(ByteOrder.LITTLE_ENDIAN)
    b.put(Magic).putInt(entries.size)
    entries.foreach { e =>
      b.putLong(e.idsOffset).putInt(e.idsLength.toInt).putInt(e.numBatches).putLong(e.lengthsOffset)
        .putInt(e.lengthsLength.toInt).putInt(0).putLong(e.minBatchId).putLong(e.maxBatchId)
    }
    val crc = new java.util.zip.CRC32
    crc.update(b.array(), 0, b.position())
    b.putInt(crc.getValue.toInt)
    b.array()
  }

  /** A view of `bytes` (exactly the block), or why it is not a valid block for `numStripes`
    * stripes (the CRC is checked by the caller, which knows whether checksums are verified). */
  def view(bytes: ByteBuffer, numStripes: Int): Either[String, BatchMetaBlock] = {
    val b = bytes.slice().order(ByteOrder.LITTLE_ENDIAN)
    if (b.remaining != size(numStripes)) Left(s"batch index of ${b.remaining} bytes, expected ${size(numStripes)}")
    else {
      val magic = new Array[Byte](4)
      b.duplicate().get(magic)
      if (!java.util.Arrays.equals(magic, Magic)) Left("batch index does not start with FBMB")
      else if (b.getInt(4) != numStripes) Left(s"batch index lists ${b.getInt(4)} stripes, the file has $numStripes")
      else Right(new BatchMetaBlock(b, numStripes))
    }
  }
}
