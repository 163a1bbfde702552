package io.fermion.core.scan

import io.fermion.core.read.{FermionFileReader, ProjectedNode}
import org.apache.arrow.memory.BufferAllocator
import org.apache.arrow.vector.FieldVector

/** The single-file take, as the fuzzer calls it on a reader of bytes in memory (the public takes
  * go through a dataset or a scan of files on a file system). */
object FileTakes {

  /** `rows` (sorted, distinct) of `stripe`, read with the reader's own options but whole pages as
    * `wholePages` says. */
  def take(
      reader: FermionFileReader,
      stripe: Int,
      rows: Array[Int],
      columns: IndexedSeq[(Int, ProjectedNode)],
      wholePages: Boolean,
      allocator: BufferAllocator
  ): IndexedSeq[FieldVector] = {
    FileTake(reader, reader.options.copy(takeWholePages = wholePages))
      .take(IndexedSeq(stripe -> rows), columns, allocator)
      .head
  }
}
