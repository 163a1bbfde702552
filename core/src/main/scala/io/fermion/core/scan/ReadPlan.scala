package io.fermion.core.scan

import io.fermion.core.expr.FilterExpr
import io.fermion.core.read.ReaderOptions
import io.fermion.core.schema.{FermionField, FermionType}

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
    exactFilter: Boolean,
    /** Only rows of these batches (batch-mode files; rows of other files have no batch). */
    batches: Option[BatchSelection] = None,
    /** The snapshot's partition columns, in the order of each file's partition values: the filter
      * sees them as the file's constants. */
    partitionColumns: IndexedSeq[String] = IndexedSeq.empty,
    /** The snapshot's type of each flat filter column, by lower-case name (datasets): files
      * written before a column's type was widened hold the older type. */
    filterTypes: Map[String, FermionType] = Map.empty,
    /** Rows are not cut out of the vectors: each batch lists the rows it returns (see
      * [[ScanBatch.selection]]). */
    keepSelection: Boolean = false
) {

  /** The field ids of the stored columns the plan reads or filters on (datasets). */
  def fieldIds: Set[Int] =
    (columns.collect { case c: PlannedColumn.Stored => c.fieldId } ++ filterFieldIds.values).toSet
}

/** Batches by id: a set of ids, or a range (`min` and `max` inclusive, either open). */
final case class BatchSelection(ids: Option[Set[Long]], min: Option[Long], max: Option[Long]) {
  // Every batch of every stripe read is checked against the ids.
  @transient private lazy val set: io.fermion.core.expr.IntegerSet = ids.map(io.fermion.core.expr.IntegerSet(_)).orNull
  private val lo = min.getOrElse(Long.MinValue)
  private val hi = max.getOrElse(Long.MaxValue)

  def contains(id: Long): Boolean = id >= lo && id <= hi && (set == null || set.contains(id))

  /** Whether a stripe whose batch ids lie in [from, to] may hold one of these batches. */
  def overlaps(from: Long, to: Long): Boolean =
    to >= lo && from <= hi && (set == null || set.intersects(math.max(from, lo), math.min(to, hi)))

  def intersect(o: BatchSelection): BatchSelection = BatchSelection(
    (ids, o.ids) match { case (Some(a), Some(b)) => Some(a & b); case (a, b) => a.orElse(b) },
    (min ++ o.min).maxOption,
    (max ++ o.max).minOption
  )
}

/** A column of a [[ReadPlan]]. */
sealed trait PlannedColumn extends Serializable {
  def name: String
}

object PlannedColumn {

  /** A stored column: `fieldId` (-1 for loose files) finds it in a file; `request` is the
    * (possibly pruned) tree to decode, with the snapshot's names and types. */
  final case class Stored(name: String, fieldId: Int, request: FermionField) extends PlannedColumn

  /** A partition column: the same value in every row of a file, the file's `partition(index)`. */
  final case class Partition(name: String, index: Int, field: FermionField) extends PlannedColumn

  /** A column no file of the snapshot holds: null in every row. */
  final case class Absent(name: String, field: FermionField) extends PlannedColumn

  case object RowAddress extends PlannedColumn { def name: String = ColumnRequest.RowAddressName }
  case object RowId extends PlannedColumn { def name: String = ColumnRequest.RowIdName }
  case object BatchId extends PlannedColumn { def name: String = ColumnRequest.BatchIdName }
  case object IndexInBatch extends PlannedColumn { def name: String = ColumnRequest.IndexInBatchName }
}
