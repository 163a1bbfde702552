package io.fermion.spark.read

import java.util.OptionalLong

import io.fermion.core.expr.FilterExpr
import io.fermion.core.scan.{Scan => CoreScan, TaskSizing}
import io.fermion.spark.SerializableHadoopConf
import io.fermion.spark.metrics.FermionScanMetrics
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.connector.metric.CustomMetric
import org.apache.spark.sql.connector.read.{Batch, InputPartition, PartitionReaderFactory, Scan, Statistics}
import org.apache.spark.sql.connector.expressions.{Expressions, NamedReference}
import org.apache.spark.sql.connector.expressions.filter.Predicate
import org.apache.spark.sql.connector.read.{SupportsReportStatistics, SupportsRuntimeV2Filtering}
import org.apache.spark.sql.internal.SQLConf
import org.apache.spark.sql.types._

/** A planned core scan as Spark's Scan and Batch: tasks sized by Spark's file-source settings
  * (`spark.sql.files.maxPartitionBytes`, `spark.sql.files.openCostInBytes`, the default
  * parallelism), or one task per file in row order (`wholeFiles`, what writing a new column per
  * fragment needs). */
final class FermionScan(
    scan: CoreScan,
    tableSchema: StructType,
    readSchema: StructType,
    wholeFiles: Boolean,
    pushed: String,
    /** Which read columns are `_metadata`. */
    fileMetadata: Array[Boolean],
    /** How a streaming read of this scan follows the dataset. */
    streamSettings: io.fermion.core.scan.StreamSettings = io.fermion.core.scan.StreamSettings(),
    /** The same scan planned again with a runtime filter added, when this scan takes them. */
    withRuntimeFilter: Option[FilterExpr => CoreScan] = None,
    /** Runtime filters are taken on clustered stored columns too (`runtimeFilters`), not only on
      * partition columns. */
    clusteredKeys: Boolean = false,
    /** The share of rows the pushed filter keeps, estimated on a sample (at most once per builder:
      * the builder may have asked already, to decide whether to filter exactly). */
    filterShare: () => Option[Double]
) extends Scan with Batch with SupportsReportStatistics with SupportsRuntimeV2Filtering {
  private val snapshot = scan.snapshot

  /** What the tasks read: `scan`, or `scan` narrowed by the join's runtime filter. Set once, by
    * [[filter]], before Spark asks for the tasks again and for the reader factory. */
  @volatile private var planned: CoreScan = scan

  /** The keys Spark may send the values of, collected from the other side of a join (dynamic
    * pruning), when this scan takes runtime filters: the partition columns read (the join's keys
    * prune fragments, as Spark's file sources prune partitions), and with [[clusteredKeys]] the
    * flat integer-domain columns read whose values lie in narrow slices per stripe (sorted or
    * clustered keys), so that the join's keys rule out stripes. On other columns a runtime filter
    * skips nothing and would only make the scan wait for the other side (TPC-H sf1 Q8 and Q17,
    * keyed by random part keys: 0.72 -> 1.01 s and 0.74 -> 0.98 s). Asked by Spark's optimizer
    * once per join it considers. */
  override def filterAttributes(): Array[NamedReference] = runtimeFilterColumns.map(Expressions.column)

  private lazy val runtimeFilterColumns: Array[String] =
    if (withRuntimeFilter.isEmpty) Array.empty
    else {
      val (partition, stored) = readSchema.fields.partition(f => snapshot.partitionIndex(f.name).nonEmpty)
      val candidates =
        if (!clusteredKeys) Array.empty[String]
        else stored.filter(f => FermionScan.filterable(f.dataType)).map(_.name)
      val clustered =
        if (candidates.isEmpty) Set.empty[String]
        else scan.clusteredColumns(candidates.toSeq, io.fermion.spark.FermionTableSchema.hadoopConf())
      partition.filter(f => FermionScan.partitionFilterable(f.dataType)).map(_.name) ++ candidates.filter(
        clustered.contains
      )
    }

  /** Narrows the scan to the rows whose keys are among the values the other side of a join holds
    * (`key IN (...)`, as Spark sends them): stripes and pages are skipped by their statistics and
    * bloom filters, and the other columns are decoded only for the matching rows when those are
    * few (late materialisation). Rows that do not match may still be returned; the join drops
    * them. A list longer than [[FermionScan.MaxRuntimeValues]] is ignored: every task carries it. */
  override def filter(predicates: Array[Predicate]): Unit = withRuntimeFilter.foreach { rebuild =>
    val runtime = predicates.toSeq.filter(p => p.children().length <= FermionScan.MaxRuntimeValues + 1)
      .flatMap(p => SparkPredicateTranslation.translate(p, tableSchema))
    runtime.reduceOption[FilterExpr](FilterExpr.And).foreach(f => planned = rebuild(f))
  }

  override def readSchema(): StructType = readSchema

  /** Whether Spark may plan this scan again from its table: it left every predicate to Spark
    * (statistics only skip data; a pushed LIMIT Spark keeps too) and reads no `_metadata`. */
  def replannable: Boolean = !scan.plan.exactFilter && !wholeFiles && !fileMetadata.contains(true)
  override def description(): String =
    s"FermionScan ${snapshot.root}${snapshot.version.map(v => s" version $v").getOrElse("")} " +
      s"[${readSchema.fieldNames.mkString(", ")}]$pushed$partitions"

  /** Partition pruning, as EXPLAIN shows it: fragments kept of the version's. */
  private def partitions: String =
    if (!snapshot.isPartitioned) ""
    else s" PartitionPruning: ${snapshot.files.size} of ${snapshot.files.size + scan.filesPruned} fragments"

  override def supportedCustomMetrics(): Array[CustomMetric] =
    FermionScanMetrics.all.map(m => m: CustomMetric) :+ new io.fermion.spark.metrics.FragmentsPrunedMetric

  override def reportDriverMetrics(): Array[org.apache.spark.sql.connector.metric.CustomTaskMetric] =
    Array(FermionScanMetrics.fragmentsPruned(planned.filesPruned.toLong))
  override def toBatch: Batch = this

  /** Two scans of the same version, files, columns, filter and options read the same rows: Spark
    * compares BatchScanExec's batches to reuse an exchange or a subquery between them (a plan that
    * repeats a join of the same tables, as TPC-H Q11's subquery does, broadcasts them once). The
    * parts are case classes compared by value (filter literals and string patterns by their bytes);
    * one holding an array compares by reference, which only forgoes a reuse. */
  private lazy val identity =
    (
      snapshot.root,
      snapshot.version,
      snapshot.files,
      scan.plan,
      readSchema,
      wholeFiles,
      pushed,
      fileMetadata.toSeq,
      streamSettings
    )
  override def equals(other: Any): Boolean = other match {
    case o: FermionScan => (o eq this) || identity == o.identity
    case _ => false
  }
  // Hashed without the files (only their number): their field ids make a hash O(files x columns),
  // about 5 ms a query on a 10,000-column table of 24 files. Scans with equal identities still hash
  // alike.
  private lazy val identityHash = identity.copy(_3 = snapshot.files.size).hashCode()
  override def hashCode(): Int = identityHash

  override def toMicroBatchStream(checkpointLocation: String)
      : org.apache.spark.sql.connector.read.streaming.MicroBatchStream =
    new FermionMicroBatchStream(scan, streamSettings, readSchema, fileMetadata)

  /** Every partition is read as columnar batches: Spark need not ask partition by partition. */
  override def columnarSupportMode(): Scan.ColumnarSupportMode = Scan.ColumnarSupportMode.SUPPORTED

  /** The size Spark's planner compares with the broadcast threshold: the smaller of two estimates.
    * Spark's own for its file sources, so that joins are planned as they would be over Parquet of
    * the same bytes: the files' bytes (column files added to fragments included, deleted rows
    * deducted in proportion) times the share of the
    * row width the scan reads by Spark's default sizes, times `spark.sql.sources.fileCompressionFactor`.
    * And the rows the pushed filter keeps at their size in memory: the version's live rows times the
    * share of rows the filter keeps on a sample ([[io.fermion.core.scan.Scan.filteredShare]]; read
    * option `filterEstimate`), times 8 bytes of row overhead plus the read columns' sizes in memory
    * as the manifest records them; Spark, without column statistics, sizes a filtered scan as the
    * whole read. TPC-H sf1 Q12's `lineitem`, 4.3 % of whose rows its predicates keep, is then
    * broadcast instead of both sides shuffled, and Q10's `orders` (3.8 % kept) is the side built.
    * The rows are reported too, scaled by the same share. */
  override def estimateStatistics(): Statistics = {
    val (bytes, rows) = estimate
    new Statistics {
      override def sizeInBytes(): OptionalLong = OptionalLong.of(bytes)
      override def numRows(): OptionalLong = rows.map(OptionalLong.of).getOrElse(OptionalLong.empty())
    }
  }

  /** Size and rows as [[estimateStatistics]] reports them, computed once: the optimizer asks for
    * them again and again. */
  private lazy val estimate: (Long, Option[Long]) = {
    import FermionScan.RowOverheadBytes
    val rows = snapshot.liveRows
    val kept = filterShare().getOrElse(1.0)
    val liveFileBytes = snapshot.files.iterator.map { f =>
      val bytes = f.bytes.toDouble
      f.liveRows.filter(_ => f.physicalRows > 0).map(n => bytes * n / f.physicalRows).getOrElse(bytes)
    }.sum
    val widthShare = (RowOverheadBytes + readSchema.defaultSize).toDouble / (RowOverheadBytes + tableSchema.defaultSize)
    val fileBytes = SQLConf.get.fileCompressionFactor * liveFileBytes * math.min(1.0, widthShare)
    val keptBytes = rows match {
      case Some(n) => (n * RowOverheadBytes + columnBytes(n)) * kept
      case None => fileBytes * kept
    }
    (math.max(1L, math.min(fileBytes, keptBytes).toLong), rows.map(n => (n * kept).toLong))
  }

  /** The read columns' size in memory over `rows` rows: recorded sizes where the manifest has them
    * (a struct read in part counted in proportion of Spark's default sizes), else default sizes. */
  private def columnBytes(rows: Long): Long = {
    def lower(name: String) = name.toLowerCase(java.util.Locale.ROOT)
    val ids = snapshot.columnIds.getOrElse(Map.empty[String, Int])
    val recorded = snapshot.recordedBytes(readSchema.fields.toSeq.flatMap(f => ids.get(lower(f.name))))
    readSchema.fields.iterator.map { f =>
      ids.get(lower(f.name)).flatMap(recorded.get) match {
        case Some(b) =>
          val whole = tableSchema.fields.find(t => lower(t.name) == lower(f.name)).map(_.dataType.defaultSize)
          val share = whole.map(w => math.min(1.0, f.dataType.defaultSize.toDouble / math.max(1, w))).getOrElse(1.0)
          (b * share).toLong
        case None => rows * f.dataType.defaultSize
      }
    }.sum
  }

  override def planInputPartitions(): Array[InputPartition] = {
    val p = planned
    (if (wholeFiles) p.fileTasks else FermionScan.tasks(p)).map(t => FermionInputPartition(t): InputPartition).toArray
  }

  override def createReaderFactory(): PartitionReaderFactory =
    new FermionPartitionReaderFactory(planned.plan, readSchema, fileMetadata, SerializableHadoopConf.broadcast())
}

private[read] object FermionScan {

  /** The core scan's tasks, sized by Spark's file-source settings and the default parallelism. */
  def tasks(scan: CoreScan): IndexedSeq[io.fermion.core.scan.ScanTask] = {
    val conf = SQLConf.get
    val parallelism = math.max(1, SparkSession.active.sparkContext.defaultParallelism)
    scan.planTasks(
      TaskSizing(conf.filesMaxPartitionBytes, conf.filesOpenCostInBytes, parallelism),
      io.fermion.spark.FermionTableSchema.hadoopConf()
    )
  }

  /** Types of the columns a runtime filter may test: the integer domain, whose `IN` lists the core
    * tests with one set lookup per row (strings are compared with each literal of their length). */
  def filterable(t: DataType): Boolean = t match {
    case ByteType | ShortType | IntegerType | LongType | DateType | TimestampType | TimestampNTZType => true
    case d: DecimalType => d.precision <= 18
    case _ => false
  }

  /** Types of the partition columns a runtime filter may test: those whose values translate
    * (a fragment's partition value is compared with each). */
  def partitionFilterable(t: DataType): Boolean = filterable(t) || t == StringType || t == BooleanType

  /** The most values a runtime filter may list (Spark sends the distinct keys of the other side):
    * the list travels with every task. */
  val MaxRuntimeValues = 65536

  /** What Spark counts per row besides the columns when it sizes a plan without column statistics
    * (`EstimationUtils.getSizePerRow`). */
  val RowOverheadBytes = 8
}
