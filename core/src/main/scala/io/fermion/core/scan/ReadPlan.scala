package io.fermion.core.scan

import io.fermion.core.expr.FilterExpr
import io.fermion.core.read.ReaderOptions
import io.fermion.core.schema.FermionField

/** Everything a task needs besides its files, resolved once when a [[Scan]] is built and shipped
  * to every task: which columns (by field id for a dataset, by name for loose files), the filter
  * (its columns resolved the same way), reader options and limits. It carries only the columns the
  * scan touches, never the table's whole schema (a 100,000-column table ships ten columns). */
final case class ReadPlan(
    root: String,
    columns: IndexedSeq[PlannedColumn],
    filter: Option[FilterExpr],
    /** Field ids of the filter's columns by lower-case name (datasets; empty for loose files). */
    filterFieldIds: Map[String, Int],
    byFieldId: Boolean,
    options: ReaderOptions,
    limit: Option[Long],
    /** Top-level lists and maps are decoded lengths first, their elements only when asked for. */
    deferElements: Boolean,
    /** Return only rows that satisfy the filter (else the filter only skips data). */
    exactFilter: Boolean
)

/** A column of a [[ReadPlan]]. */
sealed trait PlannedColumn extends Serializable {
  def name: String
}

object PlannedColumn {

  /** A stored column: `fieldId` (-1 for loose files) finds it in a file; `request` is the
    * (possibly pruned) tree to decode, with the snapshot's names and types. */
  final case class Stored(name: String, fieldId: Int, request: FermionField) extends PlannedColumn

  /** A column no file of the snapshot holds: null in every row. */
  final case class Absent(name: String, field: FermionField) extends PlannedColumn

  case object RowAddress extends PlannedColumn { def name: String = ColumnRequest.RowAddressName }
  case object RowId extends PlannedColumn { def name: String = ColumnRequest.RowIdName }
}
