package io.fermion.core.layout

import java.nio.{ByteBuffer, ByteOrder}

/** The CIT (column index table): numColumns + 1 u64 CMB offsets — the last one is the
  * end of the CMB area, and a column whose offset equals the next one has no CMB because it is
  * entirely null — followed by numColumns u32 CRC32s of the CMBs (0 for absent ones), so that a
  * lazily loaded CMB is verified on its own. */
final private[core] class ColumnIndexTable private (buf: ByteBuffer, val numColumns: Int) {
  def cmbOffset(column: Int): Long = buf.getLong(column * 8)
  def cmbLength(column: Int): Long = buf.getLong((column + 1) * 8) - buf.getLong(column * 8)
  def cmbCrc32(column: Int): Int = buf.getInt((numColumns + 1) * 8 + column * 4)
  def cmbAreaStart: Long = cmbOffset(0)
  def cmbAreaEnd: Long = buf.getLong(numColumns * 8)
}

private[core] object ColumnIndexTable {
  def byteSize(numColumns: Int): Long = (numColumns.toLong + 1) * 8 + numColumns.toLong * 4

  def view(buf: ByteBuffer, numColumns: Int): ColumnIndexTable =
    new ColumnIndexTable(buf.slice().order(ByteOrder.LITTLE_ENDIAN), numColumns)

  def encode(offsets: Array[Long], crcs: Array[Int]): Array[Byte] = {
    val b = ByteBuffer.allocate(byteSize(crcs.length).toInt).order(ByteOrder.LITTLE_ENDIAN)
    offsets.foreach(b.putLong)
    crcs.foreach(b.putInt)
    b.array()
  }
}
