package io.fermion.spark

import java.util

import scala.jdk.CollectionConverters._

import io.fermion.spark.catalog.FermionPathCatalog
import io.fermion.core.scan.Snapshot
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.connector.catalog.{Identifier, SupportsCatalogOptions, Table, TableProvider}
import org.apache.spark.sql.connector.expressions.Transform
import org.apache.spark.sql.sources.DataSourceRegister
import org.apache.spark.sql.types.StructType
import org.apache.spark.sql.util.CaseInsensitiveStringMap

/** `format("fermion")`: the entry point Spark finds through `META-INF/services`.
  *
  * DataFrame reads and writes by path go through [[FermionPathCatalog]] (via
  * SupportsCatalogOptions), which is what gives every save mode its meaning: Spark sends
  * ErrorIfExists and Ignore to a catalog as CREATE TABLE AS SELECT, and only a catalog can say
  * whether a path already holds a table. Catalog tables (`CREATE TABLE ... USING fermion`) come
  * through [[getTable]] with the schema Spark's session catalog stores.
  *
  * {{{
  * df.write.format("fermion").mode("overwrite").save("/data/t")
  * spark.read.format("fermion").load("/data/t")
  * }}}
  */
class FermionDataSource extends TableProvider with DataSourceRegister with SupportsCatalogOptions {
  override def shortName(): String = "fermion"

  override def supportsExternalMetadata(): Boolean = true

  override def inferSchema(options: CaseInsensitiveStringMap): StructType = {
    val path = FermionOptions.tablePath(options.asScala.toMap)
    FermionTableSchema.infer(path, FermionTableSchema.hadoopConf())
      .getOrElse(throw new IllegalArgumentException(s"No Fermion data files at '$path' to infer a schema from"))
  }

  override def getTable(
      schema: StructType,
      partitioning: Array[Transform],
      properties: util.Map[String, String]
  ): Table = {
    val props = properties.asScala.toMap
    SparkTypeMapping.validate(schema)
    val path = FermionOptions.tablePath(props)
    // Spark's own session catalog hands over the table's properties (OPTIONS as `option.*`): they
    // are checked here too, so that a typo fails even without Fermion's catalog.
    val options = FermionOptions.tableOptions(props)
    FermionOptions.checkTableOptions(options)
    // A dataset's own schema wins over the catalog's copy, which schema changes made through the
    // dataset API (or another session) leave behind; the catalog's nullability, comments and
    // CHAR/VARCHAR stay.
    val snapshot = Snapshot.open(path, FermionTableSchema.hadoopConf())
    val tableSchema = FermionTableSchema.of(snapshot).map(FermionTableSchema.withDeclared(_, schema)).getOrElse(schema)
    val partitionBy = FermionTable.partitionNames(partitioning, path)
    new FermionTable(
      path,
      tableSchema,
      acceptAnySchema = false,
      () => snapshot,
      FermionTable.Info(options = options, partitionBy = if (partitionBy.isEmpty) None else Some(partitionBy))
    )
  }

  /** `versionAsOf` (a version number) or `tag` (a tag's version) of a DataFrame read. */
  override def extractTimeTravelVersion(options: CaseInsensitiveStringMap): java.util.Optional[String] = {
    val map = options.asScala.toMap
    FermionOptions.timeTravel(map) match {
      case Some(FermionOptions.AtVersion(v)) => java.util.Optional.of(v.toString)
      case Some(FermionOptions.AtTag(tag)) =>
        val dataset = new io.fermion.core.dataset.FermionDataset(
          new org.apache.hadoop.fs.Path(FermionOptions.tablePath(map)),
          FermionTableSchema.hadoopConf()
        )
        java.util.Optional.of(dataset.tagVersion(tag).toString)
      case _ => java.util.Optional.empty()
    }
  }

  /** `timestampAsOf` of a DataFrame read, a timestamp string Spark parses in the session time zone. */
  override def extractTimeTravelTimestamp(options: CaseInsensitiveStringMap): java.util.Optional[String] =
    FermionOptions.timeTravel(options.asScala.toMap) match {
      case Some(FermionOptions.AtTimestamp(ts)) => java.util.Optional.of(ts)
      case _ => java.util.Optional.empty()
    }

  override def extractIdentifier(options: CaseInsensitiveStringMap): Identifier = {
    val map = options.asScala.toMap
    FermionOptions.checkKnown(map)
    FermionPathCatalog.identifier(FermionOptions.tablePath(map), FermionOptions.mergeSchema(map))
  }

  override def extractCatalog(options: CaseInsensitiveStringMap): String =
    FermionPathCatalog.ensureRegistered(SparkSession.active)
}
