package io.fermion.core.scan

import io.fermion.core.read.ColumnDecoder
import org.apache.arrow.memory.BufferAllocator
import org.apache.arrow.memory.util.MemoryUtil
import org.apache.arrow.memory.ArrowBuf
import org.apache.arrow.vector.{BaseFixedWidthVector, BaseVariableWidthVector, BitVector, BitVectorHelper, FieldVector}

/** Cuts rows out of decoded vectors (deleted rows, rows outside a filter's selection, rows past a
  * limit): new vectors holding only the kept rows, in order: fixed-width values, strings and binary
  * copied by address, the others value by value (nested values included) through Arrow's transfer
  * pairs. Closes the originals. */
private[scan] object RowSelection {
  def keep(vs: IndexedSeq[FieldVector], kept: Array[Int], allocator: BufferAllocator): IndexedSeq[FieldVector] = {
    val out = new Array[FieldVector](vs.size)
    try {
      vs.indices.foreach(i => out(i) = keep(vs(i), kept, allocator))
      out.toIndexedSeq
    } catch {
      case t: Throwable =>
        out.foreach(v => if (v != null) v.close())
        vs.indices.filter(out(_) == null).foreach(i => vs(i).close())
        throw t
    }
  }

  def keep(v: FieldVector, kept: Array[Int], allocator: BufferAllocator): FieldVector =
    try copy(v, kept, allocator)
    finally v.close()

  /** The kept rows of `v` as a new vector; `v` stays as it is. */
  def copy(v: FieldVector, kept: Array[Int], allocator: BufferAllocator): FieldVector = {
    val out = v.getField.createVector(allocator)
    try {
      (v, out) match {
        case (from: BaseFixedWidthVector, to: BaseFixedWidthVector) if !from.isInstanceOf[BitVector] =>
          // Every value slot is written below.
          ColumnDecoder.allocateUnzeroed(to, kept.length, allocator)
          copyFixed(from, to, kept)
        case (from: BaseVariableWidthVector, to: BaseVariableWidthVector) => copyVariable(from, to, kept)
        case _ =>
          out.setInitialCapacity(kept.length)
          out.allocateNew()
          val copier = v.makeTransferPair(out)
          var i = 0
          while (i < kept.length) { copier.copyValueSafe(kept(i), i); i += 1 }
      }
      out.setValueCount(kept.length)
      out
    } catch { case t: Throwable => out.close(); throw t }
  }

  /** Fixed-width values (not bits) copied by address, and their validity bit by bit only when the
    * source has nulls: Arrow's per-value `copyFromSafe` checks bounds and capacity for every row
    * (a tenth of a selective TPC-H Q6 scan). `to` has room for `kept.length` values; every kept
    * index is a row of `from`. */
  private def copyFixed(from: BaseFixedWidthVector, to: BaseFixedWidthVector, kept: Array[Int]): Unit = {
    val n = kept.length
    val width = from.getTypeWidth
    require(to.getValueCapacity >= n && to.getTypeWidth == width, "a vector with room for the kept rows")
    checkRows(kept, from.getValueCount)
    val src = from.getDataBufferAddress
    val dst = to.getDataBufferAddress
    var i = 0
    width match {
      case 4 => while (i < n) { MemoryUtil.putInt(dst + 4L * i, MemoryUtil.getInt(src + 4L * kept(i))); i += 1 }
      case 8 => while (i < n) { MemoryUtil.putLong(dst + 8L * i, MemoryUtil.getLong(src + 8L * kept(i))); i += 1 }
      case 16 =>
        while (i < n) {
          val at = src + 16L * kept(i)
          MemoryUtil.putLong(dst + 16L * i, MemoryUtil.getLong(at))
          MemoryUtil.putLong(dst + 16L * i + 8, MemoryUtil.getLong(at + 8))
          i += 1
        }
      case w => while (i < n) { MemoryUtil.copyMemory(src + w.toLong * kept(i), dst + w.toLong * i, w); i += 1 }
    }
    copyValidity(from, to.getValidityBuffer, kept)
  }

  /** Kept rows are rows of the vector (the copies read raw memory). */
  private def checkRows(kept: Array[Int], rows: Int): Unit = {
    var i = 0
    while (i < kept.length) {
      val k = kept(i)
      if (k < 0 || k >= rows)
        throw new IllegalArgumentException(s"kept rows are rows of the vector: $k is not one of its $rows")
      i += 1
    }
  }

  /** `validity` (cleared when allocated) set for the kept rows that are not null in `from`. */
  private def copyValidity(from: FieldVector, validity: ArrowBuf, kept: Array[Int]): Unit = {
    val n = kept.length
    if (ColumnDecoder.nullCount(from) == 0) ColumnDecoder.setAllValid(validity, (n + 7) >>> 3)
    else {
      var i = 0
      while (i < n) { if (!from.isNull(kept(i))) BitVectorHelper.setBit(validity, i); i += 1 }
    }
  }

  /** Strings and binary: the kept values' bytes summed first, so that the data buffer is allocated
    * once, then each value copied by address with its offset (Arrow's per-value `copyValueSafe`
    * checks and grows the buffers value by value: a quarter of a TPC-H Q1 task). */
  private def copyVariable(from: BaseVariableWidthVector, to: BaseVariableWidthVector, kept: Array[Int]): Unit = {
    val n = kept.length
    checkRows(kept, from.getValueCount)
    val offsets = from.getOffsetBufferAddress
    def start(r: Int): Int = MemoryUtil.getInt(offsets + 4L * r)
    var bytes = 0L
    var i = 0
    while (i < n) { val r = kept(i); bytes += start(r + 1) - start(r); i += 1 }
    if (bytes > Int.MaxValue) throw new IllegalStateException(s"$bytes bytes of kept values exceed a vector's 2 GiB")
    to.allocateNew(math.max(1L, bytes), n)
    val data = from.getDataBufferAddress
    val toOffsets = to.getOffsetBufferAddress
    val toData = to.getDataBufferAddress
    var at = 0
    MemoryUtil.putInt(toOffsets, 0)
    i = 0
    while (i < n) {
      val r = kept(i)
      val s = start(r)
      val len = start(r + 1) - s
      if (len > 0) MemoryUtil.copyMemory(data + s, toData + at, len.toLong)
      at += len
      MemoryUtil.putInt(toOffsets + 4L * (i + 1), at)
      i += 1
    }
    copyValidity(from, to.getValidityBuffer, kept)
    to.setLastSet(n - 1)
  }
}
