package io.fermion.spark.read

import org.apache.arrow.memory.BufferAllocator
import org.apache.arrow.vector.FieldVector

/** Cuts rows out of a decoded stripe (deleted rows, and rows outside a filter's selection): a new
  * vector holding only the kept rows, in order, copied value by value (nested values included)
  * through Arrow's transfer pair. Closes the original. */
object DeletedRows {
  def compact(v: FieldVector, kept: Array[Int], allocator: BufferAllocator): FieldVector = {
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
    finally v.close()
  }
}
