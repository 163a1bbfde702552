package io.fermion.spark.read

import io.fermion.core.dataset.TableSnapshot
import io.fermion.core.read.ReaderOptions
import io.fermion.core.expr.FilterExpr
import org.apache.spark.sql.connector.expressions.filter.Predicate
import org.apache.spark.sql.connector.expressions.aggregate.Aggregation
import org.apache.spark.sql.connector.read.{
  Scan, ScanBuilder, SupportsPushDownAggregates, SupportsPushDownLimit, SupportsPushDownRequiredColumns,
  SupportsPushDownV2Filters
}
import org.apache.spark.sql.types.StructType

/** Column pruning (only the needed columns' CMBs and chunks are read, nested fields included) and
  * predicate pushdown: predicates that translate are used to skip whole stripes from their
  * statistics. Skipping is not filtering, so every predicate is also returned to Spark to evaluate
  * on the rows that are read ("pushed" and "post-scan" both, honestly reported). */
final class FermionScanBuilder(
    snapshot: TableSnapshot,
    tableSchema: StructType,
    readerOptions: ReaderOptions,
    wholeFiles: Boolean = false
) extends ScanBuilder with SupportsPushDownRequiredColumns with SupportsPushDownV2Filters
    with SupportsPushDownAggregates
    with SupportsPushDownLimit {
  private var limit: Option[Int] = None

  /** Each partition stops after `n` rows; Spark keeps its own LIMIT on top (partial pushdown). */
  override def pushLimit(n: Int): Boolean = { limit = Some(n); true }
  override def isPartiallyPushed: Boolean = true

  private var required: StructType = tableSchema
  private var pushed: Array[Predicate] = Array.empty
  private var filter: Option[FilterExpr] = None

  override def pruneColumns(requiredSchema: StructType): Unit = required = requiredSchema

  override def pushPredicates(predicates: Array[Predicate]): Array[Predicate] = {
    val translated =
      if (!readerOptions.filterPushdown) Array.empty[(Predicate, Option[FilterExpr])]
      else predicates.map(p => p -> SparkPredicateTranslation.translate(p, tableSchema))
    pushed = translated.collect { case (p, Some(_)) => p }
    filter = translated.flatMap(_._2).reduceOption[FilterExpr](FilterExpr.And)
    predicates
  }

  override def pushedPredicates(): Array[Predicate] = pushed

  private var aggregates: Option[IndexedSeq[MetadataAggregate]] = None

  /** COUNT(*), COUNT(col), MIN and MAX (exact statistics only) without GROUP BY are answered from
    * file metadata. Spark only offers this when no predicate is left to evaluate after the scan. */
  override def pushAggregation(aggregation: Aggregation): Boolean = {
    // File statistics count deleted rows too: with deletions, aggregates need the rows.
    // ... and columns added as files of their own are not in the leading files' statistics.
    // ... and a version without files has no footer to answer from (Spark would sum no partial
    // counts into NULL instead of 0).
    val deletions = snapshot.files.isEmpty || snapshot.files.exists(f => f.deletion.nonEmpty || f.columnFiles.nonEmpty)
    aggregates = if (readerOptions.filterPushdown && !deletions && !wholeFiles)
      MetadataAggregate.plan(aggregation, tableSchema)
    else None
    aggregates.isDefined
  }

  override def build(): Scan = aggregates match {
    case Some(aggs) => new FermionAggregateScan(snapshot, aggs, readerOptions)
    case None => new FermionScan(
        snapshot,
        tableSchema,
        required,
        filter,
        readerOptions,
        wholeFiles,
        if (wholeFiles) None else limit
      )
  }
}
