package io.fermion.spark

import io.fermion.core.read.{FermionFileReader, ReaderOptions}
import io.fermion.core.table.DataFileListing
import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.types.StructType

/** The Spark schema of a path-based table: the schema of its first data file. */
object FermionTableSchema {
  def hadoopConf(): Configuration = new Configuration(SparkSession.active.sparkContext.hadoopConfiguration)

  def infer(path: String, conf: Configuration): Option[StructType] =
    DataFileListing.list(new Path(path), conf).headOption.map { file =>
      val reader = FermionFileReader.open(file.getPath, conf, ReaderOptions())
      try SparkTypeMapping.toSpark(reader.schema) finally reader.close()
    }
}
