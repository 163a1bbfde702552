package io.fermion.core.scan

import io.fermion.core.schema.FermionField

/** One column a scan returns, in the order asked for. */
sealed trait ColumnRequest extends Serializable

object ColumnRequest {

  /** A top-level column of the snapshot's schema, matched by name (case-insensitively). `field`
    * may be pruned: a struct lists only the children to read (nested pruning), each with its type.
    * Types must match the snapshot's. */
  final case class Data(field: FermionField) extends ColumnRequest

  /** `_rowaddr`: fragment id << 32 | row offset within the fragment (int64, never null). */
  case object RowAddress extends ColumnRequest

  /** `_rowid`: the row's stable id in datasets created with stable row ids, else null (int64). */
  case object RowId extends ColumnRequest

  /** `batch_id`: the id of the batch a row belongs to, in batch-mode files (else null; int64). */
  case object BatchId extends ColumnRequest

  /** `index_in_batch`: the row's 0-based position within its batch (else null; int32). */
  case object IndexInBatch extends ColumnRequest

  val RowAddressName = "_rowaddr"
  val RowIdName = "_rowid"
  val BatchIdName = "batch_id"
  val IndexInBatchName = "index_in_batch"

  /** Fragment id of a `_rowaddr`. */
  def fragmentOf(address: Long): Long = address >>> 32

  /** Row offset within its fragment of a `_rowaddr`. */
  def rowOf(address: Long): Int = (address & 0xffffffffL).toInt

  def address(fragmentId: Long, row: Long): Long = (fragmentId << 32) | row
}
