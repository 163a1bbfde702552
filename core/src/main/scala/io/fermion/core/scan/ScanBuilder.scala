package io.fermion.core.scan

import java.util.Locale

import io.fermion.core.dataset.{InvalidFermionDatasetException, Partitioning}
import io.fermion.core.expr.{ConstantFilter, FilterExpr}
import io.fermion.core.read.{ProjectedNode, ReaderOptions}
import io.fermion.core.schema.{FermionField, FermionType, UnsupportedColumnTypeException}

/** Builds a [[Scan]] of a [[Snapshot]]: which columns (nested paths included), a filter, a limit,
  * reader options.
  * {{{
  * import io.fermion.core.expr.FilterExpr._
  * val scan = snapshot.scanBuilder()
  *   .select("id", "ctx.user")                       // nested paths read only their streams
  *   .withRowAddress()                               // `_rowaddr` as the last column
  *   .filter(Compare("id", Gt, FilterValue.Integral(100)))
  *   .limit(1000)
  *   .build()
  * }}}
  * Without [[select]] or [[columns]], every column of the snapshot is read. */
final class ScanBuilder private[scan] (snapshot: Snapshot) {
  private var requests: Option[IndexedSeq[ColumnRequest]] = None
  private var extra: IndexedSeq[ColumnRequest] = IndexedSeq.empty
  private var filterExpr: Option[FilterExpr] = None
  private var rowLimit: Option[Long] = None
  private var readerOptions = ReaderOptions()
  private var defer = false
  private var exact = true

  /** Columns by path: `name` for a whole column, `a.b.c` for a nested struct field (only the
    * streams on that path are read); several paths into one column are merged. */
  @scala.annotation.varargs
  def select(paths: String*): ScanBuilder = {
    requests = Some(ColumnPaths.requests(snapshot, paths))
    this
  }

  /** Columns as requests (what an engine that prunes nested fields itself passes). */
  def columns(cols: Seq[ColumnRequest]): ScanBuilder = { requests = Some(cols.toIndexedSeq); this }

  /** Adds `_rowaddr` (fragment id << 32 | row offset in the fragment) after the selected columns. */
  def withRowAddress(): ScanBuilder = { extra :+= ColumnRequest.RowAddress; this }

  /** Adds `_rowid` (stable row ids; null unless the dataset assigns them) after the selected columns. */
  def withRowId(): ScanBuilder = { extra :+= ColumnRequest.RowId; this }

  /** Adds `batch_id` and `index_in_batch` (batch-mode files; null elsewhere) after the selected columns. */
  def withBatchColumns(): ScanBuilder = { extra :+= ColumnRequest.BatchId; extra :+= ColumnRequest.IndexInBatch; this }

  /** Only rows of batches with these ids, found through each file's batch index (stripes by their
    * min/max batch id, then rows by batch lengths): only the pages holding those batches are read. */
  def batches(ids: Set[Long]): ScanBuilder = batchRange(BatchSelection(Some(ids), None, None))

  /** Only rows of batches whose id lies in the selection (see [[BatchSelection]]). */
  def batchRange(selection: BatchSelection): ScanBuilder = {
    batchSelection = Some(batchSelection.fold(selection)(_.intersect(selection)))
    this
  }
  private var batchSelection: Option[BatchSelection] = None

  /** Rows must satisfy `f` (column names as in the snapshot's schema). Statistics and bloom
    * filters skip stripes and pages that cannot match, then the filter is evaluated on the decoded
    * rows: rows returned satisfy every comparison on a flat top-level column exactly; parts of the
    * filter that cannot be evaluated that way ([[FilterExpr.Unknown]], nested columns) keep rows. */
  def filter(f: FilterExpr): ScanBuilder = { filterExpr = Some(filterExpr.fold(f)(FilterExpr.And(_, f))); this }

  /** Statistics only skip data; rows that do not match may be returned (an engine that filters
    * again itself saves the cost of cutting rows out). */
  def skipDataOnly(): ScanBuilder = { exact = false; this }

  def limit(n: Long): ScanBuilder = {
    require(n >= 0, s"limit must not be negative, got $n")
    rowLimit = Some(n)
    this
  }

  def options(o: ReaderOptions): ScanBuilder = { readerOptions = o; this }

  /** Rows the filter or the deletion files remove are not cut out of the vectors: each batch's
    * vectors hold its stripe's rows and [[ScanBatch.selection]] lists the rows returned. A consumer
    * that reads rows by position (an aggregation) saves the copies. Only for stored, partition and
    * absent columns (not `_rowaddr`, `_rowid` or batch columns). */
  def withSelection(): ScanBuilder = { selection = true; this }
  private var selection = false

  /** Top-level lists and maps come back as [[ScanColumn.Lengths]]: elements are decoded only when
    * asked for (what `size(col)` and null checks need). */
  def deferListElements(): ScanBuilder = { defer = true; this }

  def build(): Scan = {
    val schema = snapshot.schema.getOrElse(
      throw new io.fermion.core.dataset.FermionDatasetNotFoundException(
        snapshot.root,
        "it holds no Fermion dataset or data files"
      )
    )
    val asked = requests.getOrElse(schema.fields.map(ColumnRequest.Data(_))) ++ extra
    val planned = asked.map {
      case ColumnRequest.RowAddress => PlannedColumn.RowAddress
      case ColumnRequest.RowId => PlannedColumn.RowId
      case ColumnRequest.BatchId => PlannedColumn.BatchId
      case ColumnRequest.IndexInBatch => PlannedColumn.IndexInBatch
      case ColumnRequest.Data(req) if snapshot.partitionIndex(req.name).nonEmpty =>
        val i = snapshot.partitionIndex(req.name).get
        val stored = schema.indexOf(req.name).map(schema.fields).getOrElse(snapshot.partitionFields(i))
        if (stored.dataType != req.dataType && req.dataType != null)
          throw new IllegalArgumentException(
            s"Cannot read partition column `${req.name}` of ${snapshot.root} as ${req.dataType}: it is ${stored.dataType}"
          )
        PlannedColumn.Partition(stored.name, i, stored)
      case ColumnRequest.Data(req) =>
        schema.indexOf(req.name) match {
          case Some(i) =>
            val stored = schema.fields(i)
            // Checks the request against the snapshot's schema (types, struct fields) up front.
            val node =
              try ProjectedNode.prune(stored, req)
              catch {
                case e: UnsupportedColumnTypeException =>
                  throw new IllegalArgumentException(
                    s"Cannot read column `${req.name}` of ${snapshot.root}: ${e.getMessage}",
                    e
                  )
              }
            // The stored names and child order: what the decoded vectors carry.
            PlannedColumn.Stored(stored.name, if (snapshot.isDataset) stored.fieldId else -1, node.field)
          // Loose files are matched by name file by file: another file may hold the column.
          case None if !snapshot.isDataset => PlannedColumn.Stored(req.name, -1, req.copy(nullable = true))
          case None => PlannedColumn.Absent(req.name, req.copy(nullable = true))
        }
    }
    val filterIds = filterExpr.toSeq.flatMap(FilterExpr.columns).flatMap { n =>
      snapshot.columnIds.flatMap(_.get(n.toLowerCase(Locale.ROOT))).map(n.toLowerCase(Locale.ROOT) -> _)
    }.toMap
    // Partition pruning: a file whose partition values make the filter certainly not TRUE holds no
    // matching row (three-valued logic; data columns may take any value).
    val kept = (filterExpr, snapshot.isPartitioned) match {
      case (Some(f), true) =>
        snapshot.files.filter(file =>
          ConstantFilter.mayMatch(f, Partitioning.byName(snapshot.partitionFields, file.partition))
        )
      case _ => snapshot.files
    }
    val plan = ReadPlan(
      snapshot.root,
      planned,
      if (readerOptions.filterPushdown) filterExpr else None,
      filterIds,
      byFieldId = snapshot.isDataset,
      readerOptions,
      rowLimit,
      deferElements = defer,
      exactFilter = exact && filterExpr.nonEmpty && readerOptions.filterPushdown,
      batches = batchSelection,
      partitionColumns = snapshot.partitionFields.map(_.name),
      filterTypes = filterIds.keys.flatMap(n => schema.indexOf(n).map(i => n -> schema.fields(i).dataType)).toMap,
      keepSelection = selection
    )
    require(
      !selection || planned.forall {
        case _: PlannedColumn.Stored | _: PlannedColumn.Partition | _: PlannedColumn.Absent => true
        case _ => false
      },
      "withSelection() reads stored, partition and absent columns only"
    )
    val pruned = snapshot.files.size - kept.size
    new Scan(
      if (pruned == 0) snapshot else snapshot.copy(files = kept),
      plan,
      planned.map(ScanBuilder.outputField),
      pruned
    )
  }
}

private[scan] object ScanBuilder {
  def outputField(c: PlannedColumn): FermionField = c match {
    case PlannedColumn.Stored(_, _, req) => req
    case PlannedColumn.Absent(_, field) => field
    case PlannedColumn.Partition(_, _, field) => field
    case PlannedColumn.RowAddress => FermionField(c.name, -1, FermionType.Int64, nullable = false)
    case PlannedColumn.RowId => FermionField(c.name, -1, FermionType.Int64, nullable = true)
    case PlannedColumn.BatchId => FermionField(c.name, -1, FermionType.Int64, nullable = true)
    case PlannedColumn.IndexInBatch => FermionField(c.name, -1, FermionType.Int32, nullable = true)
  }
}
