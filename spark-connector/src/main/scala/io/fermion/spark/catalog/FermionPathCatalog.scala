package io.fermion.spark.catalog

import java.util

import scala.jdk.CollectionConverters._

import io.fermion.core.scan.{ReadAt, Snapshot}
import io.fermion.spark.{FermionTable, FermionTableSchema, SparkTypeMapping}
import org.apache.hadoop.fs.Path
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.analysis.NoSuchTableException
import org.apache.spark.sql.connector.catalog._
import org.apache.spark.sql.connector.expressions.Transform
import org.apache.spark.sql.types.StructType
import org.apache.spark.sql.util.CaseInsensitiveStringMap

/** A catalog whose tables are directories: the identifier's name is the table path. It lets Spark
  * ask "does this path hold a table?" (save modes ErrorIfExists and Ignore) and create one (CTAS).
  * Registered on demand by [[FermionPathCatalog.ensureRegistered]]; users never name it. */
class FermionPathCatalog extends TableCatalog {
  private var catalogName: String = FermionPathCatalog.Name

  override def initialize(name: String, options: CaseInsensitiveStringMap): Unit = catalogName = name
  override def name(): String = catalogName

  private def pathOf(ident: Identifier): String = ident.name()

  private def snapshotAt(ident: Identifier, at: ReadAt = ReadAt.Latest): Snapshot =
    Snapshot.open(
      pathOf(ident),
      FermionTableSchema.hadoopConf(),
      at,
      FermionPathCatalog.mergesSchema(ident),
      FermionTableSchema.loosePartitioning()
    )

  /** Reads: the path must hold a Fermion dataset or Fermion files. */
  override def loadTable(ident: Identifier): Table = readable(pathOf(ident), snapshotAt(ident))

  /** Time travel: `versionAsOf` / `tag` (DataFrame reads) arrive here as a version string. */
  override def loadTable(ident: Identifier, version: String): Table = {
    val v = version.toLongOption.getOrElse(
      throw new IllegalArgumentException(s"Fermion versions are numbers, got '$version'")
    )
    readable(pathOf(ident), snapshotAt(ident, ReadAt.Version(v)))
  }

  /** Time travel by `timestampAsOf`: Spark passes microseconds since the epoch. */
  override def loadTable(ident: Identifier, timestamp: Long): Table =
    readable(pathOf(ident), snapshotAt(ident, ReadAt.Timestamp(Math.floorDiv(timestamp, 1000L))))

  private def readable(path: String, snapshot: Snapshot): Table =
    new FermionTable(
      path,
      FermionTableSchema.of(snapshot.requireExists(FermionTableSchema.hadoopConf())).get,
      acceptAnySchema = true,
      () => snapshot
    )

  /** Writes (append, overwrite): an empty or missing path is a table with no columns yet. */
  override def loadTable(ident: Identifier, writePrivileges: util.Set[TableWritePrivilege]): Table = {
    val snapshot = snapshotAt(ident)
    FermionTable.of(pathOf(ident), snapshot, new StructType(), acceptAnySchema = true)
  }

  override def tableExists(ident: Identifier): Boolean = snapshotAt(ident).schema.nonEmpty

  override def createTable(
      ident: Identifier,
      columns: Array[Column],
      partitions: Array[Transform],
      properties: util.Map[String, String]
  ): Table =
    create(
      ident,
      StructType(columns.map(c => org.apache.spark.sql.types.StructField(c.name, c.dataType, c.nullable))),
      partitions
    )

  @deprecated("use the Column[] variant", "Spark 3.5")
  override def createTable(
      ident: Identifier,
      schema: StructType,
      partitions: Array[Transform],
      properties: util.Map[String, String]
  ): Table =
    create(ident, schema, partitions)

  private def create(ident: Identifier, schema: StructType, partitions: Array[Transform]): Table = {
    SparkTypeMapping.validate(schema)
    val partitionBy = FermionTable.partitionNames(partitions, pathOf(ident))
    // Nothing is created here: the write's commit creates the dataset with its first files, and
    // fails if another writer created it since Spark checked (a create-only commit, WriteIntent).
    val path = pathOf(ident)
    new FermionTable(
      path,
      schema,
      acceptAnySchema = true,
      () => snapshotAt(ident),
      FermionTable.Info(intent = io.fermion.spark.write.WriteIntent.Create, partitionBy = Some(partitionBy))
    )
  }

  override def alterTable(ident: Identifier, changes: TableChange*): Table =
    throw new UnsupportedOperationException(
      s"ALTER TABLE is not supported on path-based Fermion tables (${pathOf(ident)})"
    )

  override def dropTable(ident: Identifier): Boolean = false

  override def renameTable(oldIdent: Identifier, newIdent: Identifier): Unit =
    throw new UnsupportedOperationException("path-based Fermion tables cannot be renamed")

  override def listTables(namespace: Array[String]): Array[Identifier] = Array.empty
}

object FermionPathCatalog {
  val Name = "fermion_paths"
  private val Namespace = Array("fermion")

  /** The table at `path`; the read option `mergeSchema` travels in the namespace, because Spark
    * loads a table before it hands the read options over, and loose files' schema depends on it. */
  def identifier(path: String, mergeSchema: Boolean = false): Identifier =
    Identifier.of(if (mergeSchema) Namespace :+ "mergeSchema" else Namespace, path)

  def mergesSchema(ident: Identifier): Boolean = ident.namespace().contains("mergeSchema")

  /** Adds the catalog to the session's configuration if it is not there yet and returns its name. */
  def ensureRegistered(spark: SparkSession): String = {
    val key = s"spark.sql.catalog.$Name"
    if (!spark.conf.getOption(key).contains(classOf[FermionPathCatalog].getName))
      spark.conf.set(key, classOf[FermionPathCatalog].getName)
    Name
  }
}
