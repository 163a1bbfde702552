package io.fermion.core.scan

import io.fermion.core.read.ColumnDecoder
import org.apache.arrow.vector.{BaseFixedWidthVector, BitVector, BitVectorHelper, FieldVector}
import org.apache.arrow.vector.complex.ListVector

/** Rows of lists of fixed-width values (embedding vectors) gathered into request order: each row's
  * elements are one copy, where Arrow's generic `copyValueSafe` walks them one by one through a
  * writer (the larger part of a take's CPU time for 128-float vectors). */
private[scan] object FixedWidthLists {

  /** A (non-map) list whose elements are fixed-width values other than booleans. */
  def applies(l: ListVector): Boolean = l.getClass == classOf[ListVector] && (l.getDataVector match {
    case _: BitVector => false
    case _: BaseFixedWidthVector => true
    case _ => false
  })

  /** Fills `dst` (allocated, empty) with row `slots(i)` of `sources(i)` as row `i` (null where
    * `sources(i)` is null); the caller sets the value count. */
  def gather(dst: ListVector, sources: Array[FieldVector], slots: Array[Int], n: Int): Unit = {
    val offsets = new Array[Int](n + 1)
    var i = 0
    while (i < n) {
      val src = sources(i).asInstanceOf[ListVector]
      val len = if (src == null || src.isNull(slots(i))) 0 else length(src, slots(i))
      offsets(i + 1) = offsets(i) + len
      i += 1
    }
    val child = dst.getDataVector.asInstanceOf[BaseFixedWidthVector]
    val width = child.getTypeWidth.toLong
    child.setInitialCapacity(offsets(n))
    child.allocateNew()
    ColumnDecoder.putInts(dst.getOffsetBuffer, offsets, n + 1)
    // Null counts are counted over a whole vector: once per source.
    val noNulls = new java.util.IdentityHashMap[FieldVector, java.lang.Boolean]
    i = 0
    while (i < n) {
      val src = sources(i).asInstanceOf[ListVector]
      val len = offsets(i + 1) - offsets(i)
      if (src != null && !src.isNull(slots(i))) {
        BitVectorHelper.setBit(dst.getValidityBuffer, i.toLong)
        val from = src.getOffsetBuffer.getInt(slots(i).toLong * 4)
        val elements = src.getDataVector.asInstanceOf[BaseFixedWidthVector]
        child.getDataBuffer.setBytes(offsets(i) * width, elements.getDataBuffer, from * width, len * width)
        val allValid = noNulls.computeIfAbsent(elements, _ => elements.getNullCount == 0).booleanValue
        var e = 0
        while (e < len) {
          if (allValid || !elements.isNull(from + e))
            BitVectorHelper.setBit(child.getValidityBuffer, (offsets(i) + e).toLong)
          e += 1
        }
      }
      i += 1
    }
    dst.setLastSet(n - 1)
    child.setValueCount(offsets(n))
  }

  private def length(l: ListVector, slot: Int): Int =
    l.getOffsetBuffer.getInt((slot + 1).toLong * 4) - l.getOffsetBuffer.getInt(slot.toLong * 4)
}
