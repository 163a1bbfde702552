package io.fermion.spark.catalog

import java.util
import java.util.Locale

import scala.jdk.CollectionConverters._

import io.fermion.core.dataset.{FermionDataset, Operation}
import io.fermion.core.scan.{ReadAt, Snapshot}
import io.fermion.spark.{FermionDatasets, FermionOptions, FermionTable, FermionTableSchema, SparkTypeMapping}
import io.fermion.spark.write.WriteIntent
import org.apache.hadoop.fs.Path
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.TableIdentifier
import org.apache.spark.sql.catalyst.analysis.{NoSuchTableException, TableAlreadyExistsException}
import org.apache.spark.sql.catalyst.catalog.{
  CatalogStorageFormat, CatalogTable, CatalogTableType, CatalogUtils, SessionCatalog
}
import org.apache.spark.sql.connector.catalog._
import org.apache.spark.sql.connector.catalog.TableChange._
import org.apache.spark.sql.connector.expressions.Transform
import org.apache.spark.sql.types.{Metadata, MetadataBuilder, StructField, StructType}

/** Spark's session catalog with Fermion tables as first-class tables. For tables `USING fermion`:
  *
  *   - `CREATE TABLE` without `LOCATION` makes a managed table under the warehouse directory
  *     (`DROP TABLE` removes its data; an external table's data stays); `CREATE TABLE` commits the
  *     declared schema as the dataset's first version when the location holds none, so the table
  *     keeps the nullability it was declared with;
  *   - `OPTIONS (...)` and `fermion.*` TBLPROPERTIES are checked like a DataFrame's options (a typo
  *     fails) and kept: they are the defaults of every read and write of the table;
  *   - CREATE TABLE AS SELECT, REPLACE TABLE [AS SELECT] and CREATE OR REPLACE TABLE are atomic
  *     ([[StagingTableCatalog]]): the data is one new dataset version, the catalog entry is written
  *     after it; a failed job leaves the table as it was;
  *   - `SELECT ... VERSION AS OF n` (or a tag name) / `TIMESTAMP AS OF ts` read that version;
  *   - `ALTER TABLE ... ADD COLUMNS / DROP COLUMN / RENAME COLUMN / ALTER COLUMN ... TYPE` (a type
  *     widening) commit metadata-only versions of the dataset (and update the catalog entry); comments and properties change in the catalog;
  *   - ``fermion.`/path` `` names the dataset at that path, without a catalog entry (SQL on paths).
  *
  * Everything else is Spark's own catalog. `configure_spark_with_fermion` installs it, and the
  * Fermion session extensions install it when `spark.sql.catalog.spark_catalog` is not set:
  * {{{
  * spark.sql.catalog.spark_catalog = io.fermion.spark.catalog.FermionSessionCatalog
  * }}}
  */
class FermionSessionCatalog extends DelegatingCatalogExtension with StagingTableCatalog {
  import FermionSessionCatalog._

  // ---- loading ----

  override def loadTable(ident: Identifier): Table =
    if (isPathIdentifier(ident)) pathTable(ident, Snapshot.open(ident.name(), conf()))
    else
      super.loadTable(ident) match {
        case t: FermionTable => t
        case t if isFermion(t) => catalogTable(ident, t, snapshot(locationOf(ident, t)))
        case t => t
      }

  /** `VERSION AS OF n` reads version n; `VERSION AS OF 'name'` the version tagged `name`. */
  override def loadTable(ident: Identifier, version: String): Table = fermionEntry(ident) match {
    case Some((path, entry)) =>
      val at = version.trim.toLongOption match {
        case Some(v) => Snapshot.open(path, conf(), ReadAt.Version(v))
        case None => Snapshot.open(path, conf(), ReadAt.Tag(version))
      }
      entry.map(catalogTable(ident, _, at)).getOrElse(pathTable(ident, at))
    case None => super.loadTable(ident, version)
  }

  /** `TIMESTAMP AS OF`: Spark passes microseconds since the epoch. */
  override def loadTable(ident: Identifier, timestamp: Long): Table = fermionEntry(ident) match {
    case Some((path, entry)) =>
      val at = Snapshot.open(path, conf(), ReadAt.Timestamp(Math.floorDiv(timestamp, 1000L)))
      entry.map(catalogTable(ident, _, at)).getOrElse(pathTable(ident, at))
    case None => super.loadTable(ident, timestamp)
  }

  override def tableExists(ident: Identifier): Boolean =
    if (isPathIdentifier(ident)) new FermionDataset(new Path(ident.name()), conf()).exists
    else super.tableExists(ident)

  override def invalidateTable(ident: Identifier): Unit = if (!isPathIdentifier(ident)) super.invalidateTable(ident)

  // ---- creating ----

  override def createTable(
      ident: Identifier,
      columns: Array[Column],
      partitions: Array[Transform],
      properties: util.Map[String, String]
  ): Table = {
    val props = properties.asScala.toMap
    if (isPathIdentifier(ident)) {
      val schema = checked(ident, columns, partitions, props)
      val path = ident.name()
      if (new FermionDataset(new Path(path), conf()).exists) throw new TableAlreadyExistsException(ident)
      if (schema.isEmpty) throw new IllegalArgumentException(s"No Fermion dataset at '$path': declare the columns")
      createDataset(path, schema, props, FermionTable.partitionNames(partitions, ident.toString))
      loadTable(ident)
    } else if (isFermionProvider(props)) {
      val declared = checked(ident, columns, partitions, props)
      val withLocation = locate(ident, props)
      val path = withLocation(TableCatalog.PROP_LOCATION)
      val found = snapshot(path)
      val existing = FermionTableSchema.of(found)
      // A directory of loose files (no dataset) is read with the declared columns, as Parquet's:
      // those no file has read as null.
      val loose = existing.isDefined && !found.isDataset
      // CREATE TABLE t USING fermion LOCATION '...' without columns: the dataset's; with columns:
      // they must be the dataset's (nullability aside), as Spark checks for its own sources.
      val schema = (existing, declared.isEmpty) match {
        case (Some(_), false) if loose => declared
        case (Some(s), true) => s
        case (None, true) =>
          throw new IllegalArgumentException(
            s"No Fermion dataset at '$path' to take $ident's columns from; declare them"
          )
        case (Some(s), false) if !FermionTableSchema.sameColumns(s, declared) =>
          throw new IllegalArgumentException(
            s"The columns declared for $ident (${declared.toDDL}) are not those of the Fermion dataset at '$path' " +
              s"(${s.toDDL}); declare them as the dataset has them, or leave them out"
          )
        case _ => declared
      }
      sessionCatalog.createTable(catalogEntry(ident, schema, withLocation, None), false, true)
      // The declared schema becomes the dataset's first version (the table keeps it).
      if (existing.isEmpty)
        try createDataset(path, schema, props, FermionTable.partitionNames(partitions, ident.toString))
        catch {
          case _: io.fermion.core.dataset.FermionCommitConflictException
              if new FermionDataset(new Path(path), conf()).exists => // created meanwhile: it is the table's
        }
      loadTable(ident)
    } else super.createTable(ident, columns, partitions, properties)
  }

  override def stageCreate(
      ident: Identifier,
      columns: Array[Column],
      partitions: Array[Transform],
      properties: util.Map[String, String]
  ): StagedTable = {
    val props = properties.asScala.toMap
    if (isPathIdentifier(ident)) {
      if (tableExists(ident)) throw new TableAlreadyExistsException(ident)
      stagedPath(ident, columns, partitions, props, WriteIntent.Create)
    } else if (isFermionProvider(props)) {
      if (super.tableExists(ident)) throw new TableAlreadyExistsException(ident)
      stagedCatalogTable(ident, columns, partitions, props, existing = None)
    } else bestEffort(ident, super.createTable(ident, columns, partitions, properties))
  }

  override def stageReplace(
      ident: Identifier,
      columns: Array[Column],
      partitions: Array[Transform],
      properties: util.Map[String, String]
  ): StagedTable = {
    if (!tableExists(ident)) throw new NoSuchTableException(ident)
    stageCreateOrReplace(ident, columns, partitions, properties)
  }

  override def stageCreateOrReplace(
      ident: Identifier,
      columns: Array[Column],
      partitions: Array[Transform],
      properties: util.Map[String, String]
  ): StagedTable = {
    val props = properties.asScala.toMap
    if (isPathIdentifier(ident)) stagedPath(ident, columns, partitions, props, WriteIntent.Overwrite)
    else if (isFermionProvider(props)) {
      val existing = if (super.tableExists(ident)) Some(super.loadTable(ident)) else None
      existing match {
        case Some(t) if !isFermion(t) =>
          // Another format's table: it cannot be replaced atomically (as in Spark's own REPLACE
          // TABLE, it is dropped first), then the Fermion table is created.
          super.dropTable(ident)
          stagedCatalogTable(ident, columns, partitions, props, existing = None)
        case _ => stagedCatalogTable(ident, columns, partitions, props, existing)
      }
    } else {
      if (super.tableExists(ident)) super.dropTable(ident)
      bestEffort(ident, super.createTable(ident, columns, partitions, properties))
    }
  }

  // ---- changing, dropping ----

  override def alterTable(ident: Identifier, changes: TableChange*): Table = fermionEntry(ident) match {
    case Some((path, entry)) =>
      val spark = SparkSession.active
      changes.foreach {
        case a: AddColumn if a.fieldNames().length == 1 =>
          if (!a.isNullable) throw new IllegalArgumentException(
            s"Columns added to a Fermion dataset are nullable (`${a.fieldNames().head}`)"
          )
          FermionDatasets.addColumns(spark, path, s"`${a.fieldNames().head.replace("`", "``")}` ${a.dataType().sql}")
        case d: DeleteColumn if d.fieldNames().length == 1 =>
          FermionDatasets.dropColumns(path, java.util.List.of(d.fieldNames().head))
        case r: RenameColumn if r.fieldNames().length == 1 =>
          FermionDatasets.renameColumn(path, r.fieldNames().head, r.newName())
        case u: UpdateColumnType =>
          FermionDatasets.changeColumnType(path, u.fieldNames().toSeq, u.newDataType())
        case _: UpdateColumnComment | _: RemoveProperty if entry.nonEmpty => // the catalog's alone
        case s: SetProperty if entry.nonEmpty =>
          if (s.property().regionMatches(true, 0, FermionOptions.TablePropertyPrefix, 0, 8))
            FermionOptions.checkTableOptions(FermionOptions.tableOptions(Map(s.property() -> s.value())))
        case other =>
          throw new UnsupportedOperationException(
            s"ALTER TABLE on a Fermion table supports ADD COLUMNS, DROP COLUMN and RENAME COLUMN of top-level " +
              s"columns, ALTER COLUMN ... TYPE (widening), column comments and TBLPROPERTIES${if (entry.isEmpty) " (on a table with a catalog entry)"
                else ""}; not $other"
          )
      }
      if (entry.nonEmpty) super.alterTable(ident, changes: _*)
      loadTable(ident)
    case None => super.alterTable(ident, changes: _*)
  }

  override def dropTable(ident: Identifier): Boolean =
    if (isPathIdentifier(ident))
      throw new UnsupportedOperationException(
        s"DROP TABLE does not delete datasets named by path (${ident.name()}); remove the directory instead"
      )
    else super.dropTable(ident)

  override def purgeTable(ident: Identifier): Boolean =
    if (isPathIdentifier(ident)) dropTable(ident) else super.purgeTable(ident)

  override def renameTable(oldIdent: Identifier, newIdent: Identifier): Unit =
    if (isPathIdentifier(oldIdent) || isPathIdentifier(newIdent))
      throw new UnsupportedOperationException("Fermion datasets named by path cannot be renamed")
    else super.renameTable(oldIdent, newIdent)

  // ---- helpers ----

  private def conf() = FermionTableSchema.hadoopConf()
  private def snapshot(path: String) = Snapshot.open(path, conf())

  private def sessionCatalog: SessionCatalog =
    SparkSession.active.asInstanceOf[org.apache.spark.sql.classic.SparkSession].sessionState.catalog

  private def tableIdentifier(ident: Identifier): TableIdentifier = ident.namespace() match {
    case Array(db) => TableIdentifier(ident.name(), Some(db))
    case Array() => TableIdentifier(ident.name())
    case other =>
      throw new IllegalArgumentException(s"a session catalog table has one namespace, not ${other.mkString(".")}")
  }

  /** The path and catalog entry of a Fermion table (None: not a Fermion table). */
  private def fermionEntry(ident: Identifier): Option[(String, Option[Table])] =
    if (isPathIdentifier(ident)) Some(ident.name() -> None)
    else
      super.loadTable(ident) match {
        case t: FermionTable => Some(t.path -> None)
        case t if isFermion(t) => Some(locationOf(ident, t) -> Some(t))
        case _ => None
      }

  private def locationOf(ident: Identifier, t: Table): String =
    Option(t.properties.get(TableCatalog.PROP_LOCATION)).getOrElse(
      throw new IllegalArgumentException(s"Fermion table $ident has no location")
    )

  /** The full name Spark prints: `spark_catalog.db.t`. */
  private def qualified(ident: Identifier): String =
    (name() +: ident.namespace() :+ ident.name()).map(p =>
      if (p.matches("[A-Za-z_][A-Za-z0-9_]*")) p else s"`${p.replace("`", "``")}`"
    ).mkString(".")

  /** A catalog entry's table at `snap`: the dataset's columns with what the catalog declared
    * (nullability, comments, CHAR/VARCHAR), its properties and options. */
  private def catalogTable(ident: Identifier, entry: Table, found: Snapshot): FermionTable = {
    val declared = StructType(entry.columns().map(columnToField))
    // Loose files are read with the declared columns, found in each file by name (null where a
    // file lacks one), as a Parquet table over a directory is.
    val snap =
      if (found.isDataset || !found.exists) found
      else
        found.copy(schema = Some(SparkTypeMapping.toFermion(StructType(declared.fields.map(_.copy(nullable = true))))))
    val schema = FermionTableSchema.of(snap).map(FermionTableSchema.withDeclared(_, declared)).getOrElse(declared)
    val props = entry.properties.asScala.toMap.filter { case (k, _) => !k.equalsIgnoreCase("option.path") }
    new FermionTable(
      locationOf(ident, entry),
      schema,
      acceptAnySchema = false,
      () => snap,
      FermionTable.Info(Some(qualified(ident)), props, FermionOptions.tableOptions(props))
    )
  }

  private def pathTable(ident: Identifier, snap: Snapshot): FermionTable = {
    val path = ident.name()
    val schema = FermionTableSchema.of(snap).getOrElse {
      val fs = io.fermion.core.storage.FileSystems.forPath(new Path(path), conf())
      // Not NoSuchTableException: Spark would then try `fermion` as a file format and fail with
      // an unrelated message.
      val why =
        if (fs.exists(new Path(path))) "it holds no Fermion dataset or data files" else "the path does not exist"
      throw new IllegalArgumentException(s"Cannot read Fermion table at '$path': $why")
    }
    new FermionTable(path, schema, acceptAnySchema = false, () => snap)
  }

  /** Checks what a CREATE / REPLACE TABLE declares; returns the schema. */
  private def checked(
      ident: Identifier,
      columns: Array[Column],
      partitions: Array[Transform],
      props: Map[String, String]
  ): StructType = {
    val schema = StructType(columns.map(columnToField))
    SparkTypeMapping.validate(schema)
    FermionOptions.checkTableOptions(FermionOptions.tableOptions(props))
    // Partition columns must be columns of a supported type (checked by the core's rules).
    val names = FermionTable.partitionNames(partitions, ident.toString)
    if (names.nonEmpty && schema.nonEmpty)
      io.fermion.core.dataset.Partitioning.specOf(SparkTypeMapping.toFermion(schema), names, ident.toString)
    schema
  }

  /** The properties with a location: a managed table's directory under the warehouse when none
    * was given (marked as a managed location, so that the table stays MANAGED). */
  private def locate(ident: Identifier, props: Map[String, String]): Map[String, String] =
    props.get(TableCatalog.PROP_LOCATION) match {
      case Some(_) => props
      case None =>
        val dir = CatalogUtils.URIToString(sessionCatalog.defaultTablePath(tableIdentifier(ident)))
        props ++ Map(TableCatalog.PROP_LOCATION -> dir, TableCatalog.PROP_IS_MANAGED_LOCATION -> "true")
    }

  /** Commits `schema` as the first version of a new dataset (no rows). */
  private def createDataset(
      path: String,
      schema: StructType,
      props: Map[String, String],
      partitionBy: Seq[String]
  ): Unit = {
    val ds = new FermionDataset(new Path(path), conf())
    ds.checkCommitStore()
    val config = FermionOptions.datasetConfig(FermionOptions.tableOptions(props))
    val fermion = SparkTypeMapping.toFermion(schema)
    val spec = io.fermion.core.dataset.Partitioning.specOf(fermion, partitionBy, path)
    ds.commit(0, Operation.Create(fermion, IndexedSeq.empty, spec), config)
  }

  /** CREATE TABLE / REPLACE TABLE [AS SELECT] of `fermion.`/path``: no catalog entry to write. */
  private def stagedPath(
      ident: Identifier,
      columns: Array[Column],
      partitions: Array[Transform],
      props: Map[String, String],
      intent: WriteIntent
  ): StagedTable = {
    val schema = checked(ident, columns, partitions, props)
    val partitionBy = FermionTable.partitionNames(partitions, ident.toString)
    val path = ident.name()
    val before = snapshot(path)
    lazy val staged: FermionStagedTable = new FermionStagedTable(
      new FermionTable(
        path,
        schema,
        acceptAnySchema = false,
        () => before,
        FermionTable.Info(
          options = FermionOptions.tableOptions(props),
          intent = intent,
          onCommit = Some(() => staged.markWritten()),
          partitionBy = Some(partitionBy)
        )
      ),
      written => if (!written) commitEmpty(path, schema, props, intent, partitionBy),
      written => if (written) undo(path, before)
    )
    staged
  }

  /** CREATE [OR REPLACE] TABLE [AS SELECT] of a catalog table: the data first (one version), the
    * catalog entry when the write has committed. */
  private def stagedCatalogTable(
      ident: Identifier,
      columns: Array[Column],
      partitions: Array[Transform],
      props: Map[String, String],
      existing: Option[Table]
  ): StagedTable = {
    val schema = checked(ident, columns, partitions, props)
    val partitionBy = FermionTable.partitionNames(partitions, ident.toString)
    // A replaced table stays where it is unless a new LOCATION is given.
    val withLocation = existing match {
      case Some(old) if !props.contains(TableCatalog.PROP_LOCATION) =>
        val managed = old.properties.asScala.get(TableCatalog.PROP_EXTERNAL).forall(!_.equalsIgnoreCase("true"))
        props ++ Map(TableCatalog.PROP_LOCATION -> locationOf(ident, old)) ++
          (if (managed) Map(TableCatalog.PROP_IS_MANAGED_LOCATION -> "true") else Map.empty)
      case _ => locate(ident, props)
    }
    val path = withLocation(TableCatalog.PROP_LOCATION)
    val before = snapshot(path)
    val intent = if (existing.isEmpty) WriteIntent.Create else WriteIntent.Overwrite
    val existedBefore = io.fermion.core.storage.FileSystems.forPath(new Path(path), conf()).exists(new Path(path))
    lazy val staged: FermionStagedTable = new FermionStagedTable(
      new FermionTable(
        path,
        schema,
        acceptAnySchema = false,
        () => before,
        FermionTable.Info(
          Some(qualified(ident)),
          withLocation,
          FermionOptions.tableOptions(props),
          intent,
          Some(() => staged.markWritten()),
          Some(partitionBy)
        )
      ),
      written => {
        if (!written) commitEmpty(path, schema, withLocation, intent, partitionBy)
        val catalog = sessionCatalog
        existing match {
          case None =>
            // Not validated as a new managed location: the write has just filled it.
            catalog.createTable(catalogEntry(ident, schema, withLocation, None), false, false)
          case Some(_) =>
            val id = tableIdentifier(ident)
            catalog.alterTable(catalogEntry(ident, schema, withLocation, Some(catalog.getTableMetadata(id))))
            catalog.alterTableDataSchema(id, schema)
            catalog.refreshTable(id)
        }
      },
      written =>
        if (written) {
          if (existing.isEmpty && !existedBefore) {
            // A new table's directory that this statement created: nothing else refers to it.
            io.fermion.core.storage.FileSystems.forPath(new Path(path), conf()).delete(new Path(path), true)
          } else undo(path, before)
        }
    )
    staged
  }

  /** A REPLACE TABLE without AS SELECT (or a CTAS of an empty query that wrote nothing): the
    * declared schema as a version without rows. */
  private def commitEmpty(
      path: String,
      schema: StructType,
      props: Map[String, String],
      intent: WriteIntent,
      partitionBy: Seq[String]
  ): Unit = {
    val ds = new FermionDataset(new Path(path), conf())
    ds.checkCommitStore()
    val fermion = SparkTypeMapping.toFermion(schema)
    val spec = io.fermion.core.dataset.Partitioning.specOf(fermion, partitionBy, path)
    val config = FermionOptions.datasetConfig(FermionOptions.tableOptions(props))
    intent match {
      case WriteIntent.Create => ds.commit(0, Operation.Create(fermion, IndexedSeq.empty, spec), config)
      case _ =>
        ds.commit(ds.latestVersion().getOrElse(0L), Operation.Overwrite(fermion, IndexedSeq.empty, spec), config)
    }
  }

  /** After a failure that followed a committed write: the version current before it, again. */
  private def undo(path: String, before: Snapshot): Unit = before.version.foreach { v =>
    new FermionDataset(new Path(path), conf()).restore(v)
  }

  /** The session catalog's entry for a Fermion table: a new one, or `old` rewritten in place
    * (schema, location, options, properties, comment), so that a replaced managed table keeps its
    * entry and its data is never dropped along with it. */
  private def catalogEntry(
      ident: Identifier,
      schema: StructType,
      props: Map[String, String],
      old: Option[CatalogTable]
  ): CatalogTable = {
    val managed = props.get(TableCatalog.PROP_IS_MANAGED_LOCATION).exists(_.equalsIgnoreCase("true")) &&
      !props.get(TableCatalog.PROP_EXTERNAL).exists(_.equalsIgnoreCase("true"))
    val options = props.collect { case (k, v) if k.startsWith(TableCatalog.OPTION_PREFIX) => k.substring(7) -> v }
    val userProps = props.filter { case (k, _) => !k.startsWith(TableCatalog.OPTION_PREFIX) && !Reserved.contains(k) }
    val base = old.getOrElse(
      CatalogTable(
        identifier = tableIdentifier(ident),
        tableType = CatalogTableType.MANAGED,
        storage = CatalogStorageFormat.empty,
        schema = schema
      )
    )
    base.copy(
      tableType = if (managed) CatalogTableType.MANAGED else CatalogTableType.EXTERNAL,
      storage =
        base.storage.copy(
          locationUri = Some(CatalogUtils.stringToURI(props(TableCatalog.PROP_LOCATION))),
          properties = options
        ),
      schema = schema,
      provider = Some("fermion"),
      properties = userProps,
      comment = props.get(TableCatalog.PROP_COMMENT),
      owner = props.getOrElse(TableCatalog.PROP_OWNER, base.owner)
    )
  }

  /** A table of another provider created up front (not atomically), as Spark's own CTAS does. */
  private def bestEffort(ident: Identifier, created: Table): StagedTable = {
    val table = Option(created).getOrElse(super.loadTable(ident))
    new StagedTable with SupportsWrite {
      override def name(): String = table.name()
      override def columns(): Array[Column] = table.columns()
      override def properties(): util.Map[String, String] = table.properties()
      override def capabilities(): util.Set[TableCapability] = table.capabilities()
      override def newWriteBuilder(info: org.apache.spark.sql.connector.write.LogicalWriteInfo) =
        table.asInstanceOf[SupportsWrite].newWriteBuilder(info)
      override def commitStagedChanges(): Unit = ()
      override def abortStagedChanges(): Unit = FermionSessionCatalog.super.dropTable(ident)
    }
  }
}

object FermionSessionCatalog {
  val ConfKey = "spark.sql.catalog.spark_catalog"

  /** Properties Spark reserves for itself (not user TBLPROPERTIES). */
  private val Reserved = Set(
    TableCatalog.PROP_PROVIDER,
    TableCatalog.PROP_LOCATION,
    TableCatalog.PROP_COMMENT,
    TableCatalog.PROP_COLLATION,
    TableCatalog.PROP_OWNER,
    TableCatalog.PROP_EXTERNAL,
    TableCatalog.PROP_IS_MANAGED_LOCATION,
    TableCatalog.PROP_TABLE_TYPE
  )

  /** The namespace of SQL on paths: ``fermion.`/data/t` ``. */
  val PathNamespace = "fermion"

  /** ``fermion.`<absolute path or URI>` ``. */
  def isPathIdentifier(ident: Identifier): Boolean =
    ident.namespace().length == 1 && ident.namespace()(0).equalsIgnoreCase(PathNamespace) &&
      scala.util.Try(new Path(ident.name()).isAbsolute).getOrElse(false)

  def isFermion(t: Table): Boolean =
    Option(t.properties.get(TableCatalog.PROP_PROVIDER)).exists(_.equalsIgnoreCase("fermion"))

  def isFermionProvider(props: Map[String, String]): Boolean =
    props.get(TableCatalog.PROP_PROVIDER).exists(_.toLowerCase(Locale.ROOT) == "fermion")

  /** A catalog column as a field: comment and metadata in the field's metadata. */
  def columnToField(c: Column): StructField = {
    val b = new MetadataBuilder()
    Option(c.metadataInJSON()).foreach(j => b.withMetadata(Metadata.fromJson(j)))
    Option(c.comment()).foreach(b.putString("comment", _))
    StructField(c.name(), c.dataType(), c.nullable(), b.build())
  }
}
