package org.apache.spark.sql.fermion

import org.apache.spark.sql.{DataFrame, SparkSession}
import org.apache.spark.sql.connector.catalog.Table
import org.apache.spark.sql.execution.datasources.v2.DataSourceV2Relation
import org.apache.spark.sql.util.CaseInsensitiveStringMap

/** A DataFrame over a table object built in code (rather than found by name or path), so that a
  * read can carry typed settings no user option could set. Spark keeps the constructor of such
  * DataFrames private to its SQL packages, hence this bridge in Spark's namespace. */
object Relations {

  /** A DataFrame of rows held in memory (Spark's internal row format). */
  def local(
      spark: SparkSession,
      schema: org.apache.spark.sql.types.StructType,
      rows: Seq[org.apache.spark.sql.catalyst.InternalRow]
  ): DataFrame =
    org.apache.spark.sql.classic.Dataset.ofRows(
      spark.asInstanceOf[org.apache.spark.sql.classic.SparkSession],
      org.apache.spark.sql.catalyst.plans.logical.LocalRelation(
        org.apache.spark.sql.catalyst.types.DataTypeUtils.toAttributes(schema),
        rows
      )
    )

  /** A DataFrame of rows computed by an RDD of Spark's internal rows. */
  def fromRdd(
      spark: SparkSession,
      schema: org.apache.spark.sql.types.StructType,
      rows: org.apache.spark.rdd.RDD[org.apache.spark.sql.catalyst.InternalRow]
  ): DataFrame =
    spark.asInstanceOf[org.apache.spark.sql.classic.SparkSession].internalCreateDataFrame(rows, schema)

  def dataFrame(spark: SparkSession, table: Table): DataFrame =
    org.apache.spark.sql.classic.Dataset.ofRows(
      spark.asInstanceOf[org.apache.spark.sql.classic.SparkSession],
      DataSourceV2Relation.create(table, None, None, CaseInsensitiveStringMap.empty())
    )
}
