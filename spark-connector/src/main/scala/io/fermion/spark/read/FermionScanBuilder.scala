package io.fermion.spark.read

import io.fermion.core.read.ReaderOptions
import org.apache.spark.sql.connector.read.{Scan, ScanBuilder, SupportsPushDownRequiredColumns}
import org.apache.spark.sql.types.StructType

/** Column pruning: Spark tells which columns the query needs, and only those CMBs and chunks are
  * ever read. */
final class FermionScanBuilder(path: String, tableSchema: StructType, readerOptions: ReaderOptions, options: Map[String, String])
    extends ScanBuilder with SupportsPushDownRequiredColumns {
  private var required: StructType = tableSchema

  override def pruneColumns(requiredSchema: StructType): Unit = required = requiredSchema

  override def build(): Scan = new FermionScan(path, tableSchema, required, options)
}
