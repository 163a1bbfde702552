package io.fermion.core.scan

import io.fermion.core.read.ColumnDecoder
import io.fermion.core.schema.FermionField
import org.apache.arrow.memory.BufferAllocator
import org.apache.arrow.vector.{FieldVector, IntVector}

/** The rows of one stripe that a scan returns: one [[ScanColumn]] per requested column, in the
  * order asked for. The batch owns its vectors: [[close]] frees them
  * (a [[ScanTaskReader]] closes each batch when it moves to the next).
  *
  * A scan built with [[ScanBuilder.withSelection]] does not cut rows out of its vectors: they hold
  * the stripe's `numRows` rows and [[selection]] lists, in order, those the scan returns (null:
  * all of them); the values of the other rows are unspecified. */
final class ScanBatch private[scan] (
    val numRows: Int,
    val columns: IndexedSeq[ScanColumn],
    /** The file the rows come from (None for rows fetched from several files by a take). */
    val file: Option[SnapshotFile],
    allocator: BufferAllocator,
    /** What producing this batch read, for a take (a scan reports through its reader). */
    val metrics: ScanMetrics = ScanMetrics(),
    /** The rows returned, when the vectors hold more (see above); null: every row. */
    val selection: Array[Int] = null
) extends AutoCloseable {

  /** Rows the batch returns. */
  def selectedRows: Int = if (selection == null) numRows else selection.length

  private val materialized = new Array[FieldVector](columns.size)

  /** Column `i` as an Arrow vector: null columns are allocated and lists read lengths first get
    * their elements decoded, on first call. */
  def vector(i: Int): FieldVector = {
    if (materialized(i) == null) materialized(i) = columns(i) match {
      case ScanColumn.Values(v) => v
      case ScanColumn.Nulls(field) => ColumnDecoder.nullVector(field, numRows, allocator)
      case l: ScanColumn.Lengths => l.elements
    }
    materialized(i)
  }

  /** A copy of the first `n` rows (this batch stays valid and owned by its reader). */
  def firstRows(n: Int, allocator: BufferAllocator): ScanBatch = {
    val rows = Array.range(0, n)
    val copies = scala.collection.mutable.ArrayBuffer.empty[ScanColumn]
    try {
      columns.indices.foreach { i =>
        copies += (columns(i) match {
          case nulls: ScanColumn.Nulls => nulls
          case _ => ScanColumn.Values(RowSelection.copy(vector(i), rows, allocator))
        })
      }
      new ScanBatch(n, copies.toIndexedSeq, file, allocator)
    } catch {
      case t: Throwable => copies.foreach { case ScanColumn.Values(v) => v.close(); case _ => }; throw t
    }
  }

  override def close(): Unit = {
    columns.foreach {
      case ScanColumn.Values(v) => v.close()
      case l: ScanColumn.Lengths => l.close()
      case _ =>
    }
    columns.indices.foreach(i =>
      if (columns(i).isInstanceOf[ScanColumn.Nulls] && materialized(i) != null) materialized(i).close()
    )
  }
}

/** One column of a [[ScanBatch]]. */
sealed trait ScanColumn

object ScanColumn {

  /** Decoded values. */
  final case class Values(vector: FieldVector) extends ScanColumn

  /** A column the batch's file does not hold (added later, or absent from a loose file): null in
    * every row. */
  final case class Nulls(field: FermionField) extends ScanColumn

  /** A top-level list or map read from its VALIDITY and OFFSETS only: `lengths` holds each row's
    * length (null rows null); the elements are decoded by [[elements]] the first time anything
    * asks for them (`size(col)` and null checks never do). */
  final class Lengths private[scan] (val lengths: IntVector, load: () => FieldVector) extends ScanColumn {
    private var full: FieldVector = _

    /** The whole column (list or map vector), decoded on first call. */
    def elements: FieldVector = { if (full == null) full = load(); full }

    private[scan] def close(): Unit = { lengths.close(); if (full != null) full.close() }
  }
}
