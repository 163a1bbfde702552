package io.fermion.spark.read

import io.fermion.core.expr.FilterExpr
import io.fermion.core.read.ReaderOptions
import io.fermion.core.scan.Snapshot
import org.apache.spark.sql.connector.expressions.aggregate.Aggregation
import org.apache.spark.sql.connector.expressions.filter.Predicate
import org.apache.spark.sql.connector.read.{Scan, ScanBuilder, SupportsPushDownAggregates, SupportsPushDownLimit}
import org.apache.spark.sql.connector.read.{SupportsPushDownRequiredColumns, SupportsPushDownV2Filters}
import org.apache.spark.sql.types.StructType

/** Column pruning (nested fields included), predicate pushdown, LIMIT and aggregates, handed to
  * the core scan. Statistics only skip data: every predicate is also returned to Spark to evaluate
  * on the rows read ("pushed" and "post-scan" both, honestly reported), except those that name rows
  * by `_rowid` or `_rowaddr`, which a take answers exactly, and the predicates the core evaluates
  * exactly ([[Snapshot.filtersExactly]]) when `exactFilters` is set (for the scan under an
  * aggregate, see [[io.fermion.spark.extensions.PrepareAggregatePushdown]], so that Spark can offer
  * the aggregate to the scan) or when the filter keeps few rows or all of them ([[exactPays]]).
  * Aggregates are answered from file metadata when they can be (COUNT, MIN, MAX without GROUP BY or
  * filter), else computed by the scan's tasks ([[AggregatePushdown]]). */
final class FermionScanBuilder(
    snapshot: Snapshot,
    tableSchema: StructType,
    readerOptions: ReaderOptions,
    wholeFiles: Boolean = false,
    streamSettings: io.fermion.core.scan.StreamSettings = io.fermion.core.scan.StreamSettings(),
    exactFilters: Boolean = false
) extends ScanBuilder with SupportsPushDownRequiredColumns with SupportsPushDownV2Filters
    with SupportsPushDownAggregates with SupportsPushDownLimit {
  private var limit: Option[Int] = None
  private var required: StructType = tableSchema
  private var pushed: Array[Predicate] = Array.empty
  private var filter: Option[FilterExpr] = None

  /** Whether rows the scan returns satisfy `filter` exactly (Spark was told not to evaluate it). */
  private var filterHandled = false
  private var aggregation: Option[MetadataAggregates] = None
  private var computed: Option[(io.fermion.core.aggregate.Aggregation, StructType)] = None
  private var lookup: Option[RowLookup] = None
  private var batchSelection: Option[io.fermion.core.scan.BatchSelection] = None

  /** The columns whose values are batch ids: `batch_id`, and the dataset's batch key if it has one. */
  private val batchColumns: Set[String] = Set(MetadataColumns.BatchIdName) ++
    snapshot.manifest.flatMap(m =>
      io.fermion.core.options.OptionRegistry.BatchKey.in(io.fermion.core.dataset.FermionDataset.storedWriteOptions(m))
    ).filter(_.nonEmpty)

  /** Each task stops after `n` rows; Spark keeps its own LIMIT on top (partial pushdown). */
  override def pushLimit(n: Int): Boolean = { limit = Some(n); true }
  override def isPartiallyPushed: Boolean = true

  override def pruneColumns(requiredSchema: StructType): Unit = required = requiredSchema

  override def pushPredicates(predicates: Array[Predicate]): Array[Predicate] = {
    val translated =
      if (!readerOptions.filterPushdown) Array.empty[(Predicate, Option[FilterExpr])]
      else predicates.map(p => p -> SparkPredicateTranslation.translate(p, tableSchema))
    pushed = translated.collect { case (p, Some(_)) => p }
    filter = translated.flatMap(_._2).reduceOption[FilterExpr](FilterExpr.And)
    lookup = if (readerOptions.filterPushdown && !wholeFiles) RowLookup.of(predicates.toSeq) else None
    batchSelection =
      if (readerOptions.filterPushdown && !wholeFiles) BatchLookup.of(predicates.toSeq, batchColumns) else None
    pushed = pushed ++ predicates.filter(p => RowLookup.of(p).nonEmpty && !pushed.contains(p))
    // The take returns exactly the live rows whose lookup column holds one of the values every
    // lookup on that column allows: those predicates need no evaluation after the scan.
    lookup match {
      case Some(l) => predicates.filterNot(p => RowLookup.of(p).exists(_.column == l.column))
      case None if !wholeFiles && batchSelection.isEmpty =>
        val exact = translated.collect { case (p, Some(f)) if snapshot.filtersExactly(f) => p }
        filterHandled = exact.nonEmpty && (exactFilters || exactPays)
        if (filterHandled) predicates.filterNot(exact.contains) else predicates
      case None => predicates
    }
  }

  /** The share of rows the pushed filter keeps, estimated once on a sample (`filterEstimate`). */
  private lazy val filterShare: Option[Double] =
    if (!readerOptions.filterEstimate || filter.isEmpty) None
    else {
      val sample = snapshot.scanBuilder().columns(Nil).options(readerOptions).filter(filter.get).build()
      sample.filteredShare(io.fermion.spark.FermionTableSchema.hadoopConf())
    }

  /** Whether the scan takes over the predicates it evaluates exactly although no aggregate asks it
    * to: when its filter keeps few rows or all of them, which costs the scan nothing more
    * ([[io.fermion.core.scan.Scan.exactFilterPays]]) and spares Spark its filter and the columns
    * only that filter reads. Not, though, a filter Spark deems likely selective on a table small
    * enough to be broadcast whole (its files' bytes at most `spark.sql.autoBroadcastJoinThreshold`,
    * as the size estimate counts them): that spares little, while Spark plans dynamic pruning into
    * the other side of a join only from a side that keeps such a `Filter` (a date dimension
    * filtered to one month then prunes the fact table's partitions or stripes; taken over, it did
    * not, and the join read every partition). Null checks alone are not selective to Spark and are
    * taken over (kept, they slowed TPC-H Q8's broadcast dimensions by about 10 %). A `LIKE` pattern
    * ([[LikeFunction]]) is taken over whatever share it keeps: Spark would test it row by row on
    * its rows, which costs more than the scan's copy of the matches (TPC-H Q13's `NOT LIKE` keeps
    * 99 % of `orders`). With `filterEstimate` off nothing is taken over. */
  private def exactPays: Boolean =
    readerOptions.filterEstimate && !(FermionScanBuilder.broadcastWhole(snapshot) && filter.exists(likelySelective)) &&
      (filter.exists(hasLike) || filterShare.exists(io.fermion.core.scan.Scan.exactFilterPays))

  private def hasLike(e: FilterExpr): Boolean = e match {
    case _: FilterExpr.Like => true
    case FilterExpr.And(l, r) => hasLike(l) || hasLike(r)
    case FilterExpr.Or(l, r) => hasLike(l) || hasLike(r)
    case FilterExpr.Not(c) => hasLike(c)
    case _ => false
  }

  /** Spark's `PartitionPruning.isLikelySelective`, on the translated filter. */
  private def likelySelective(e: FilterExpr): Boolean = e match {
    case FilterExpr.And(l, r) => likelySelective(l) || likelySelective(r)
    case FilterExpr.Or(l, r) => likelySelective(l) && likelySelective(r)
    case FilterExpr.Not(c) => likelySelective(c)
    case _: FilterExpr.IsNull | _: FilterExpr.IsNotNull | FilterExpr.Unknown => false
    case _ => true
  }

  override def pushedPredicates(): Array[Predicate] = pushed

  /** COUNT(*), COUNT(col), MIN and MAX (exact statistics only) without GROUP BY are answered from
    * file metadata. Spark only offers this when no predicate is left to evaluate after the scan. */
  override def pushAggregation(agg: Aggregation): Boolean = {
    aggregation =
      // Metadata answers for every row: not for the rows of a lookup (its predicates are not left
      // to Spark) nor of a filter (whose predicates the scan handles).
      if (!readerOptions.filterPushdown || wholeFiles || lookup.nonEmpty || filterHandled) None
      else MetadataAggregates.plan(agg, tableSchema, snapshot, readerOptions)
    computed =
      if (aggregation.nonEmpty || !readerOptions.aggregatePushdown || wholeFiles || lookup.nonEmpty) None
      else if (batchSelection.nonEmpty || limit.nonEmpty || (filter.nonEmpty && !filterHandled)) None
      else AggregatePushdown.translate(agg, tableSchema)
    aggregation.isDefined || computed.isDefined
  }

  override def build(): Scan = aggregation.getOrElse {
    computed.foreach { case (agg, output) =>
      val wanted = agg.columns.map(_.toLowerCase(java.util.Locale.ROOT))
      val read = tableSchema.fields.filter(f => wanted.contains(f.name.toLowerCase(java.util.Locale.ROOT)))
      val builder =
        snapshot.scanBuilder().columns(read.toIndexedSeq.flatMap(MetadataColumns.request(_, tableSchema)))
          .options(readerOptions).withSelection()
      filter.foreach(builder.filter)
      val description = filter.map(f => s" StripeFilter: $f").getOrElse("")
      return new FermionAggregateScan(builder.build(), agg, output, description)
    }
    def builderWith(runtime: Option[FilterExpr]) = {
      val builder = snapshot.scanBuilder()
        .columns(required.fields.toIndexedSeq.flatMap(MetadataColumns.request(_, tableSchema)))
        .options(readerOptions)
        .deferListElements()
      // Rows that do not match may be returned, unless Spark was told the filter is handled.
      if (!filterHandled) builder.skipDataOnly()
      (filter ++ runtime).foreach(builder.filter)
      batchSelection.foreach(builder.batchRange)
      if (!wholeFiles) limit.foreach(n => builder.limit(n.toLong))
      builder
    }
    val builder = builderWith(None)
    val fileMetadata = MetadataColumns.fileMetadata(required, tableSchema)
    lookup.foreach { l =>
      return if (l.values.size <= readerOptions.localTakeMaxRows)
        new FermionLocalTakeScan(builder.build(), l, required, fileMetadata)
      else new FermionTakeScan(builder.build(), l, tableSchema, required, fileMetadata)
    }
    // A join's runtime filter (dynamic pruning) narrows plain reads only: not those of whole files
    // in row order (a new column written per fragment) nor of metadata columns (row addresses and
    // ids a row-level change writes back, file metadata).
    val metadataNames = MetadataColumns.all.map(_.name.toLowerCase(java.util.Locale.ROOT)).toSet
    val runtimeFiltering = readerOptions.filterPushdown && !wholeFiles &&
      !required.fields.exists(f => metadataNames.contains(f.name.toLowerCase(java.util.Locale.ROOT)))
    val description =
      filter.filter(_ => readerOptions.filterPushdown).map(f => s" StripeFilter: $f").getOrElse("") +
        limit.filter(_ => !wholeFiles).map(l => s" Limit: $l").getOrElse("") +
        batchSelection.map(b => s" Batches: $b").getOrElse("")
    new FermionScan(
      builder.build(),
      tableSchema,
      required,
      wholeFiles,
      description,
      fileMetadata,
      streamSettings,
      if (runtimeFiltering) Some(f => builderWith(Some(f)).build()) else None,
      clusteredKeys = readerOptions.runtimeFilters,
      filterShare = () => filterShare
    )
  }
}

object FermionScanBuilder {

  /** Whether the table of `snapshot` is small enough for Spark to broadcast whole: its files' bytes
    * (column files included), times `spark.sql.sources.fileCompressionFactor`, at most
    * `spark.sql.autoBroadcastJoinThreshold`, as the scan's size estimate counts them. Its selective
    * filters stay in Spark's `Filter`, from which Spark plans dynamic pruning. */
  def broadcastWhole(snapshot: Snapshot): Boolean = {
    val conf = org.apache.spark.sql.internal.SQLConf.get
    val threshold = conf.autoBroadcastJoinThreshold
    threshold > 0 &&
    conf.fileCompressionFactor * snapshot.files.iterator.map(_.bytes).sum <= threshold
  }
}
