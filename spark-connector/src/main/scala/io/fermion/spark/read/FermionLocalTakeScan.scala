package io.fermion.spark.read

import io.fermion.core.scan.{Scan => CoreScan}
import io.fermion.spark.FermionTableSchema
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.read.LocalScan
import org.apache.spark.sql.types.StructType

/** A lookup of few rows by `_rowid` or `_rowaddr` (at most `localTakeMaxRows`), read by the core's
  * take on the driver and handed to Spark as a local table: a Spark job costs tens of milliseconds
  * more than reading a few rows does. Fermion's session extensions plan it as a
  * [[FermionLocalTakeExec]] (read when the query runs, shown in EXPLAIN); without them Spark plans
  * a `LocalTableScan`, which reads the rows while the query is planned. */
final class FermionLocalTakeScan(
    scan: CoreScan,
    lookup: RowLookup,
    readSchema: StructType,
    fileMetadata: Array[Boolean]
) extends LocalScan {
  override def readSchema(): StructType = readSchema
  override def description(): String = FermionTakeScan.describe(scan, readSchema, lookup) + ", on the driver"

  override def rows(): Array[InternalRow] = {
    val conf = FermionTableSchema.hadoopConf()
    val live = FermionTakeScan.liveAddresses(scan, lookup, conf)
    if (live.isEmpty) return Array.empty
    val allocator = FermionColumnarReader.root.newChildAllocator("fermion-local-take", 0, Long.MaxValue)
    try {
      val batch = scan.takeAddresses(live, conf, allocator)
      try SparkColumns.rows(FermionTakeScan.columnar(batch, readSchema, fileMetadata), readSchema).toArray
      finally batch.close()
    } finally allocator.close()
  }
}
