package io.fermion.spark.extensions

import io.fermion.core.dataset.FermionDataset
import io.fermion.core.inspect.{DatasetInspector, DatasetSummary}
import io.fermion.spark.{FermionDatasets, FermionTable, FermionTableSchema}
import io.fermion.spark.extensions.FermionSqlParser.{AsOf, AsOfMicros, AsOfString}
import org.apache.hadoop.fs.Path
import org.apache.spark.sql.{Row, SparkSession}
import org.apache.spark.sql.catalyst.expressions.{Attribute, AttributeReference}
import org.apache.spark.sql.connector.catalog.TableCatalog
import org.apache.spark.sql.execution.command.LeafRunnableCommand
import org.apache.spark.sql.execution.datasources.v2.DataSourceV2Relation
import org.apache.spark.sql.types._

/** The SQL table commands of [[FermionSqlParser]]. Each names its table as Spark does (catalog
  * tables, or ``fermion.`/path` ``), finds it through Spark's catalogs and works on the dataset at
  * its location through the dataset API ([[FermionDatasets]]), so SQL and the Python/Scala API
  * behave the same. */
private[extensions] object FermionCommands {

  /** Session setting: rows per fragment that OPTIMIZE compacts to (default 1,000,000). */
  val OptimizeTargetRows = "spark.fermion.optimize.targetRows"

  /** Session setting: `false` lets VACUUM retain less than one hour (no other writer may run). */
  val RetentionCheck = "spark.fermion.vacuum.retentionDurationCheck.enabled"

  /** The Fermion table `nameParts` names (through Spark's catalogs, as a query would). */
  def table(spark: SparkSession, nameParts: Seq[String], command: String): FermionTable = {
    val quoted = nameParts.map(p => "`" + p.replace("`", "``") + "`").mkString(".")
    val plan = spark.table(quoted).asInstanceOf[org.apache.spark.sql.classic.Dataset[_]].queryExecution.analyzed
    plan.collectFirst { case r: DataSourceV2Relation if r.table.isInstanceOf[FermionTable] => r.table }
      .map(_.asInstanceOf[FermionTable])
      .getOrElse(throw new IllegalArgumentException(
        s"$command works on Fermion tables; ${nameParts.mkString(".")} is not one"
      ))
  }

  def dataset(t: FermionTable, command: String): FermionDataset = {
    val ds = new FermionDataset(new Path(t.path), FermionTableSchema.hadoopConf())
    if (!ds.exists)
      throw new IllegalArgumentException(s"$command needs a Fermion dataset; '${t.path}' holds none (no _versions/)")
    ds
  }

  def attrs(schema: StructType): Seq[Attribute] =
    schema.fields.toSeq.map(f => AttributeReference(f.name, f.dataType, f.nullable)())

  /** Refreshes what Spark caches of the table after its data changed. */
  def refreshCaches(spark: SparkSession, t: FermionTable): Unit =
    try spark.catalog.refreshTable(t.name())
    catch { case _: Exception => }
}

import FermionCommands._

/** `DESCRIBE HISTORY t [LIMIT n]`: one row per version, newest first. */
final case class DescribeHistoryCommand(nameParts: Seq[String], limit: Option[Long]) extends LeafRunnableCommand {
  override val output: Seq[Attribute] = attrs(
    StructType(Seq(
      StructField("version", LongType, false),
      StructField("timestamp", TimestampType, false),
      StructField("operation", StringType, false),
      StructField("fragments", LongType, false),
      StructField("rows", LongType, false),
      StructField("tags", ArrayType(StringType, false), false)
    ))
  )

  override def run(spark: SparkSession): Seq[Row] = {
    val t = table(spark, nameParts, "DESCRIBE HISTORY")
    dataset(t, "DESCRIBE HISTORY")
    val rows = FermionDatasets.versions(spark, t.path).collect().toSeq.sortBy(r => -r.getLong(0))
    limit.map(n => rows.take(n.toInt)).getOrElse(rows)
  }
}

/** `DESCRIBE DETAIL t`: one row describing the table's current version. */
final case class DescribeDetailCommand(nameParts: Seq[String]) extends LeafRunnableCommand {
  override val output: Seq[Attribute] = attrs(
    StructType(Seq(
      StructField("format", StringType, false),
      StructField("name", StringType, true),
      StructField("description", StringType, true),
      StructField("location", StringType, false),
      StructField("type", StringType, false),
      StructField("createdAt", TimestampType, true),
      StructField("lastModified", TimestampType, true),
      StructField("version", LongType, true),
      StructField("partitionColumns", ArrayType(StringType, false), false),
      StructField("numFragments", LongType, false),
      StructField("numFiles", LongType, false),
      StructField("numDeletionFiles", LongType, false),
      StructField("sizeInBytes", LongType, false),
      StructField("numRows", LongType, false),
      StructField("numDeletedRows", LongType, false),
      StructField("properties", MapType(StringType, StringType, false), false),
      StructField("tableFeatures", ArrayType(StringType, false), false)
    ))
  )

  override def run(spark: SparkSession): Seq[Row] = {
    val t = table(spark, nameParts, "DESCRIBE DETAIL")
    val ds = new FermionDataset(new Path(t.path), FermionTableSchema.hadoopConf())
    val m = t.snapshot.manifest
    val props = t.properties()
    def prop(k: String) = Option(props.get(k))
    val kind = if (t.info.name.isEmpty) "PATH"
    else if (prop(TableCatalog.PROP_EXTERNAL).contains("true")) "EXTERNAL" else "MANAGED"
    val userProps = scala.jdk.CollectionConverters.MapHasAsScala(props).asScala.toMap.filter { case (k, _) =>
      !Set(
        TableCatalog.PROP_PROVIDER,
        TableCatalog.PROP_LOCATION,
        TableCatalog.PROP_COMMENT,
        TableCatalog.PROP_OWNER,
        TableCatalog.PROP_EXTERNAL,
        TableCatalog.PROP_COLLATION
      ).contains(k)
    }
    val summary = m.map(DatasetInspector.summary(ds, _))
    def total(f: DatasetSummary => Long): Long = summary.map(f).getOrElse(0L)
    Seq(Row(
      "fermion",
      t.info.name.orNull,
      prop(TableCatalog.PROP_COMMENT).orNull,
      t.path,
      kind,
      summary.flatMap(_.createdMillis).map(new java.sql.Timestamp(_)).orNull,
      summary.map(x => new java.sql.Timestamp(x.modifiedMillis)).orNull,
      summary.map(x => java.lang.Long.valueOf(x.version)).orNull,
      summary.map(_.partitionColumns).getOrElse(Nil),
      total(_.fragments.toLong),
      total(_.dataFiles.toLong),
      total(_.deletionFiles.toLong),
      total(_.bytes),
      total(_.rows),
      total(_.deletedRows),
      userProps,
      summary.map(_.readerFeatures).getOrElse(Nil)
    ))
  }
}

/** `OPTIMIZE t`: compaction (small fragments merged, deleted rows dropped) into fragments of
  * `spark.fermion.optimize.targetRows` rows (default 1,000,000), as one new version. */
final case class OptimizeCommand(nameParts: Seq[String]) extends LeafRunnableCommand {
  override val output: Seq[Attribute] = attrs(
    StructType(Seq(
      StructField("path", StringType, false),
      StructField("versionBefore", LongType, false),
      StructField("version", LongType, false),
      StructField("fragmentsBefore", LongType, false),
      StructField("fragmentsAfter", LongType, false)
    ))
  )

  override def run(spark: SparkSession): Seq[Row] = {
    val t = table(spark, nameParts, "OPTIMIZE")
    val ds = dataset(t, "OPTIMIZE")
    val before = ds.latest().get
    val target = spark.conf.get(FermionCommands.OptimizeTargetRows, "1000000").trim.toLong
    val after = FermionDatasets.compact(spark, t.path, target)
    refreshCaches(spark, t)
    Seq(Row(t.path, before.version, after, before.fragments.size.toLong, ds.manifest(after).fragments.size.toLong))
  }
}

/** `VACUUM t [RETAIN n HOURS] [DRY RUN]`: cleanup of versions older than the retention (default
  * 168 hours; never the latest or a tagged one) and of the files no remaining version references.
  * A retention under one hour needs `spark.fermion.vacuum.retentionDurationCheck.enabled=false`.
  * A dry run lists the files it would delete. */
final case class VacuumCommand(nameParts: Seq[String], retainHours: Option[Double], dryRun: Boolean)
    extends LeafRunnableCommand {
  override val output: Seq[Attribute] =
    if (dryRun) attrs(StructType(Seq(StructField("path", StringType, false))))
    else attrs(
      StructType(Seq(
        StructField("path", StringType, false),
        StructField("versionsRemoved", LongType, false),
        StructField("filesRemoved", LongType, false),
        StructField("bytesRemoved", LongType, false)
      ))
    )

  override def run(spark: SparkSession): Seq[Row] = {
    val t = table(spark, nameParts, "VACUUM")
    val ds = dataset(t, "VACUUM")
    if (!dryRun) ds.checkCommitStore()
    val check = spark.conf.get(FermionCommands.RetentionCheck, "true").trim.toBoolean
    val hours = retainHours.getOrElse(168.0)
    if (check && hours < io.fermion.core.dataset.FermionDataset.MinSafeRetentionHours)
      throw new IllegalArgumentException(
        s"VACUUM ... RETAIN $hours HOURS is below ${io.fermion.core.dataset.FermionDataset.MinSafeRetentionHours} hour: files of writes still " +
          s"running could be removed. When no other writer is active, set ${FermionCommands.RetentionCheck}=false"
      )
    val r = FermionDatasets.cleanupResult(t.path, hours, allowShortRetention = !check, dryRun)
    if (dryRun) r.files.map(f => Row(ds.resolvePath(f).toString))
    else Seq(Row(t.path, r.versionsRemoved.toLong, r.filesRemoved.toLong, r.bytesRemoved))
  }
}

/** `RESTORE [TABLE] t [TO] VERSION AS OF n | TIMESTAMP AS OF ts`: that version's rows and schema
  * committed again as a new version (later versions stay readable by time travel). */
final case class RestoreCommand(nameParts: Seq[String], to: Either[Long, AsOf]) extends LeafRunnableCommand {
  override val output: Seq[Attribute] = attrs(
    StructType(Seq(
      StructField("restoredVersion", LongType, false),
      StructField("version", LongType, false),
      StructField("rows", LongType, false)
    ))
  )

  override def run(spark: SparkSession): Seq[Row] = {
    val t = table(spark, nameParts, "RESTORE")
    val ds = dataset(t, "RESTORE")
    ds.checkCommitStore()
    val version = to match {
      case Left(v) => v
      case Right(AsOfString(text)) => ds.versionAsOfTime(FermionDatasets.timestampMillis(spark, text)).version
      case Right(AsOfMicros(micros)) => ds.versionAsOfTime(Math.floorDiv(micros, 1000L)).version
    }
    val m = ds.restore(version)
    refreshCaches(spark, t)
    Seq(Row(version, m.version, m.rowCount))
  }
}

/** `ALTER TABLE t CREATE [OR REPLACE] TAG [IF NOT EXISTS] name [AS OF VERSION n]` (the latest
  * version by default); read it with `VERSION AS OF 'name'` or the `tag` read option. */
final case class CreateTagCommand(
    nameParts: Seq[String],
    tag: String,
    version: Option[Long],
    ifNotExists: Boolean,
    replace: Boolean
) extends LeafRunnableCommand {
  override def run(spark: SparkSession): Seq[Row] = {
    val ds = dataset(table(spark, nameParts, "CREATE TAG"), "CREATE TAG")
    val v = version.getOrElse(ds.latestVersion().get)
    val exists = ds.tags.contains(tag)
    if (exists && ifNotExists) return Nil
    if (exists && replace) ds.deleteTag(tag)
    ds.createTag(tag, v)
    Nil
  }
}

/** `ALTER TABLE t DROP TAG [IF EXISTS] name`. */
final case class DropTagCommand(nameParts: Seq[String], tag: String, ifExists: Boolean) extends LeafRunnableCommand {
  override def run(spark: SparkSession): Seq[Row] = {
    val ds = dataset(table(spark, nameParts, "DROP TAG"), "DROP TAG")
    if (!(ifExists && !ds.tags.contains(tag))) ds.deleteTag(tag)
    Nil
  }
}
