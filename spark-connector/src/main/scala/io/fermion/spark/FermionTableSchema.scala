package io.fermion.spark

import io.fermion.core.scan.Snapshot
import org.apache.hadoop.conf.Configuration
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.types.StructType

/** The Spark schema of a table: the dataset version's schema, or the first file's for a plain
  * directory of Fermion files. */
object FermionTableSchema {
  def hadoopConf(): Configuration = new Configuration(SparkSession.active.sparkContext.hadoopConfiguration)

  def of(snapshot: Snapshot): Option[StructType] = snapshot.schema.map(SparkTypeMapping.toSpark)

  def infer(path: String, conf: Configuration): Option[StructType] = of(Snapshot.open(path, conf))
}
