package io.fermion.core.scan

import io.fermion.core.read.ColumnDecoder
import org.apache.arrow.memory.BufferAllocator
import org.apache.arrow.memory.util.MemoryUtil
import org.apache.arrow.vector.{BaseFixedWidthVector, BitVector, BitVectorHelper, FieldVector}

/** Cuts rows out of decoded vectors (deleted rows, rows outside a filter's selection, rows past a
  * limit): new vectors holding only the kept rows, in order: fixed-width values copied by address,
  * the others value by value (nested values included) through Arrow's transfer pairs. Closes the
  * originals. */
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
          ColumnDecoder.allocateValuesUnzeroed(to, kept.length, allocator)
          copyFixed(from, to, kept)
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
    val rows = from.getValueCount
    require(kept.forall(k => k >= 0 && k < rows), "kept rows are rows of the vector") // raw reads below
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
    val validity = to.getValidityBuffer
    if (from.getNullCount == 0) ColumnDecoder.setAllValid(validity, (n + 7) >>> 3)
    else {
      // Cleared when allocated; only the kept non-null rows' bits are set.
      i = 0
      while (i < n) { if (!from.isNull(kept(i))) BitVectorHelper.setBit(validity, i); i += 1 }
    }
  }
}
