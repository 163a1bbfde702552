package io.fermion.spark

import java.util

import scala.jdk.CollectionConverters._

import io.fermion.spark.catalog.FermionPathCatalog
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

  override def getTable(schema: StructType, partitioning: Array[Transform], properties: util.Map[String, String]): Table = {
    if (partitioning.nonEmpty)
      throw new IllegalArgumentException(s"Fermion tables are not partitioned (yet); remove PARTITIONED BY / partitionBy(${partitioning.mkString(", ")})")
    val props = properties.asScala.toMap
    SparkTypeMapping.validate(schema)
    new FermionTable(FermionOptions.tablePath(props), schema, acceptAnySchema = false)
  }

  override def extractIdentifier(options: CaseInsensitiveStringMap): Identifier = {
    val map = options.asScala.toMap
    FermionOptions.checkKnown(map)
    FermionPathCatalog.identifier(FermionOptions.tablePath(map))
  }

  override def extractCatalog(options: CaseInsensitiveStringMap): String =
    FermionPathCatalog.ensureRegistered(SparkSession.active)
}
