package io.fermion.core.scan

import org.apache.arrow.memory.BufferAllocator
import org.apache.arrow.vector.FieldVector

/** Cuts rows out of decoded vectors (deleted rows, rows outside a filter's selection, rows past a
  * limit): new vectors holding only the kept rows, in order, copied value by value (nested values
  * included) through Arrow's transfer pairs. Closes the originals. */
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
      out.setInitialCapacity(kept.length)
      out.allocateNew()
      val copier = v.makeTransferPair(out)
      var i = 0
      while (i < kept.length) { copier.copyValueSafe(kept(i), i); i += 1 }
      out.setValueCount(kept.length)
      out
    } catch { case t: Throwable => out.close(); throw t }
  }
}
