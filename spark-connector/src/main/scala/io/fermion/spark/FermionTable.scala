package io.fermion.spark

import java.util

import scala.jdk.CollectionConverters._

import io.fermion.core.dataset.FermionDataset
import io.fermion.core.scan.Snapshot
import io.fermion.spark.read.{FermionScanBuilder, MetadataColumns}
import io.fermion.spark.write.{FermionRowLevelOperation, FermionWriteBuilder, WriteIntent}
import org.apache.hadoop.fs.Path
import org.apache.spark.sql.connector.catalog._
import org.apache.spark.sql.connector.read.ScanBuilder
import org.apache.spark.sql.connector.write.{
  LogicalWriteInfo, RowLevelOperation, RowLevelOperationBuilder, RowLevelOperationInfo, WriteBuilder
}
import org.apache.spark.sql.types.{Metadata, StructType}
import org.apache.spark.sql.util.CaseInsensitiveStringMap

/** A Fermion dataset (or a plain directory of Fermion files) seen as one table, at the version
  * `snapshot` holds.
  *
  * `acceptAnySchema` is set for path-based DataFrame writes: the DataFrame's own columns are
  * written (the first write defines the table; an append must match it by name and type, checked
  * in [[FermionWriteBuilder]]). Catalog tables keep Spark's by-position INSERT semantics and their
  * declared nullability. `_rowaddr` (fragment id << 32 | row offset in the fragment) is a metadata
  * column.
  *
  * DELETE, UPDATE and MERGE run as row-level operations ([[FermionRowLevelOperation]]): Spark
  * evaluates the statement on a scan of this version and hands the delta writer the `_rowaddr` of
  * each row to delete and each new row, committed as deletion files and new fragments; a DELETE
  * without a condition and TRUNCATE TABLE remove every fragment. */
final class FermionTable(
    val path: String,
    tableSchema: StructType,
    acceptAnySchema: Boolean,
    snapshotOf: () => Snapshot,
    val info: FermionTable.Info = FermionTable.Info(),
    /** Read one partition per data file, rows in file order (what writing a new column per
      * fragment needs). */
    wholeFiles: Boolean = false
) extends SupportsRead with SupportsWrite with SupportsMetadataColumns with SupportsRowLevelOperations
    with TruncatableTable {

  lazy val snapshot: Snapshot = snapshotOf()

  /** An identifier Spark can parse back (it does, in some error messages): the catalog's name of
    * the table, or `fermion.`<path>`` for a path. The version read is in the scan's description. */
  override def name(): String = info.name.getOrElse(FermionTable.pathName(path))

  /** The columns with their comments, metadata and declared CHAR(n) / VARCHAR(n) types (Spark
    * keeps those as strings with the declared type in the field's metadata). */
  override def columns(): Array[Column] = declaredColumns.clone()

  // Spark asks for the columns several times per query; a 10,000-column table built them anew each time.
  private lazy val declaredColumns: Array[Column] = tableSchema.fields.map { f =>
    if (f.metadata == Metadata.empty) Column.create(f.name, f.dataType, f.nullable, null, null)
    else declared(f)
  }

  private def declared(f: org.apache.spark.sql.types.StructField): Column = {
    val comment = if (f.metadata.contains("comment")) f.metadata.getString("comment") else null
    val rest = new org.apache.spark.sql.types.MetadataBuilder().withMetadata(f.metadata).remove("comment").build()
    val declared = org.apache.spark.sql.catalyst.util.CharVarcharUtils.getRawType(f.metadata) match {
      case Some(raw) if f.dataType == org.apache.spark.sql.types.StringType => raw
      case _ => f.dataType
    }
    Column.create(f.name, declared, f.nullable, comment, if (rest == Metadata.empty) null else rest.json)
  }

  @deprecated("Spark 4 tables expose columns()", "4.0")
  override def schema(): StructType = tableSchema

  /** What DESCRIBE shows: provider, location, the catalog's properties (type, owner, comment,
    * `option.*` table options, TBLPROPERTIES). */
  override def properties(): util.Map[String, String] = {
    val shown = info.properties.filter { case (k, v) =>
      k != TableCatalog.PROP_IS_MANAGED_LOCATION && k != TableCatalog.PROP_TABLE_TYPE &&
      // Spark's V1 entry lists each option twice: as `option.<key>` (kept) and as `<key>`.
      !info.properties.get(TableCatalog.OPTION_PREFIX + k).contains(v)
    }
    (Map(TableCatalog.PROP_PROVIDER -> "fermion", TableCatalog.PROP_LOCATION -> path) ++ shown).asJava
  }

  /** The partition columns: a partitioned dataset's, or the `k=v` directories of loose files. */
  override def partitioning(): Array[org.apache.spark.sql.connector.expressions.Transform] =
    snapshot.partitionFields.map(f =>
      org.apache.spark.sql.connector.expressions.Expressions.identity(f.name): org.apache.spark.sql.connector
        .expressions.Transform
    ).toArray

  override def capabilities(): util.Set[TableCapability] = {
    val caps = Set(
      TableCapability.BATCH_READ,
      TableCapability.MICRO_BATCH_READ,
      TableCapability.BATCH_WRITE,
      TableCapability.STREAMING_WRITE,
      TableCapability.TRUNCATE,
      TableCapability.OVERWRITE_BY_FILTER,
      TableCapability.OVERWRITE_DYNAMIC,
      // MERGE / INSERT WITH SCHEMA EVOLUTION: Spark adds the source's new columns and widens types
      // through the catalog's alterTable (one schema version) before it writes.
      TableCapability.AUTOMATIC_SCHEMA_EVOLUTION
    ) ++
      (if (acceptAnySchema) Set(TableCapability.ACCEPT_ANY_SCHEMA) else Set.empty)
    caps.asJava
  }

  override def metadataColumns(): Array[MetadataColumn] = MetadataColumns.all

  override def newScanBuilder(options: CaseInsensitiveStringMap): ScanBuilder = {
    // The table's own options are defaults; the read's options win.
    val map = FermionOptions.readKeys(info.options) ++ options.asScala.toMap
    new FermionScanBuilder(
      snapshot,
      tableSchema,
      FermionOptions.readerOptions(map),
      wholeFiles,
      io.fermion.core.scan.StreamSettings.parse(map),
      exactFilters = options.containsKey(io.fermion.spark.extensions.PrepareAggregatePushdown.ExactFiltersKey)
    )
  }

  override def newWriteBuilder(writeInfo: LogicalWriteInfo): WriteBuilder = {
    // The table's own options are defaults; the write's options win.
    val options = FermionOptions.writeKeys(info.options) ++ writeInfo.options().asScala.toMap
    new FermionWriteBuilder(
      path,
      snapshot,
      tableSchema,
      writeInfo,
      options,
      checkAppendSchema = acceptAnySchema,
      defaultIntent = info.intent,
      onCommit = info.onCommit,
      partitionBy = info.partitionBy
    )
  }

  override def newRowLevelOperationBuilder(operationInfo: RowLevelOperationInfo): RowLevelOperationBuilder = {
    val command = operationInfo.command()
    if (snapshot.manifest.isEmpty && snapshot.files.nonEmpty)
      throw new UnsupportedOperationException(
        s"$command needs a Fermion dataset; '$path' holds Fermion files without one (no _versions/)"
      )
    if (command != RowLevelOperation.Command.DELETE) {
      val stored = snapshot.manifest.map(io.fermion.core.dataset.FermionDataset.storedWriteOptions).getOrElse(Map.empty)
      if (io.fermion.core.options.OptionRegistry.BatchKey.in(stored).exists(_.nonEmpty))
        throw new UnsupportedOperationException(
          s"$command is not supported on a dataset written in batches (batchKey) yet (${name()}); DELETE is"
        )
    }
    () => new FermionRowLevelOperation(this, command)
  }

  /** DELETE without a condition and TRUNCATE TABLE: every fragment of this version removed in one
    * `delete` (rows appended by others meanwhile stay, as they would have after a serial run). */
  override def truncateTable(): Boolean = {
    snapshot.manifest.foreach { m =>
      val ds = new FermionDataset(new Path(path), FermionTableSchema.hadoopConf())
      ds.checkCommitStore()
      ds.deleteAll(m.version, "delete all rows")
    }
    if (snapshot.manifest.isEmpty && snapshot.files.nonEmpty)
      throw new UnsupportedOperationException(
        s"Cannot delete from '$path': it holds Fermion files without a dataset (no _versions/)"
      )
    true
  }
}

object FermionTable {

  /** What a catalog knows of a table beyond its path and schema: its name, the properties
    * DESCRIBE shows, its options (defaults for reads and writes: `OPTIONS (...)` and `fermion.*`
    * TBLPROPERTIES), what a write to it means by default (create for a table being created) and
    * whom to tell when a write committed (a staged CREATE / REPLACE TABLE). */
  final case class Info(
      name: Option[String] = None,
      properties: Map[String, String] = Map.empty,
      options: Map[String, String] = Map.empty,
      intent: WriteIntent = WriteIntent.Append,
      onCommit: Option[() => Unit] = None,
      /** The partition columns a CREATE / REPLACE TABLE (or `partitionBy`) declares. */
      partitionBy: Option[Seq[String]] = None
  )

  /** The columns of `PARTITIONED BY` / `partitionBy`: plain columns only (no bucket, day, ...). */
  def partitionNames(
      partitions: Array[org.apache.spark.sql.connector.expressions.Transform],
      table: String
  ): Seq[String] =
    partitions.toSeq.map {
      case t if t.name() == "identity" && t.references().length == 1 && t.references()(0).fieldNames().length == 1 =>
        t.references()(0).fieldNames()(0)
      case other =>
        throw new IllegalArgumentException(
          s"Fermion tables are partitioned by top-level columns (PARTITIONED BY (a, b)); $table cannot be partitioned by ${other.describe()}"
        )
    }

  /** `fermion.`<path>``, with backticks in the path doubled. */
  def pathName(path: String): String = s"fermion.`${path.replace("`", "``")}`"

  /** The table of `snapshot`: a dataset's own schema (it wins over any copy a catalog keeps);
    * for loose files the declared schema when there is one (it may name a subset of the files'
    * columns, as for Parquet), else the files'; a table not written yet has the declared one. */
  def of(path: String, snapshot: Snapshot, declared: StructType, acceptAnySchema: Boolean): FermionTable = {
    val schema =
      if (snapshot.isDataset || declared.isEmpty) FermionTableSchema.of(snapshot).getOrElse(declared) else declared
    new FermionTable(path, schema, acceptAnySchema, () => snapshot)
  }
}
