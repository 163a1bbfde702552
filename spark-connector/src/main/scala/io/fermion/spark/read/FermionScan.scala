package io.fermion.spark.read

import io.fermion.core.read.filter.FilterExpr
import io.fermion.core.table.DataFileListing
import io.fermion.spark.metrics.FermionScanMetrics
import org.apache.spark.sql.connector.metric.CustomMetric
import io.fermion.spark.{FermionTableSchema, SerializableHadoopConf}
import org.apache.hadoop.fs.Path
import java.util.OptionalLong

import org.apache.spark.sql.connector.read.{Batch, InputPartition, PartitionReaderFactory, Scan, Statistics, SupportsReportStatistics}
import org.apache.spark.sql.internal.SQLConf
import org.apache.spark.sql.types.StructType

/** Plans the scan: every data file is cut into byte ranges of `spark.sql.files.maxPartitionBytes`;
  * a range reads the stripes that start inside it, so each stripe is read by exactly one task. */
final class FermionScan(path: String, tableSchema: StructType, readSchema: StructType, filter: Option[FilterExpr], options: Map[String, String])
    extends Scan with Batch with SupportsReportStatistics {

  override def readSchema(): StructType = readSchema
  override def description(): String =
    s"FermionScan $path [${readSchema.fieldNames.mkString(", ")}]" + filter.map(f => s" StripeFilter: $f").getOrElse("")

  override def supportedCustomMetrics(): Array[CustomMetric] = FermionScanMetrics.all.map(m => m: CustomMetric)
  override def toBatch: Batch = this

  /** Bytes on disk scaled by the share of the row width the scan reads (as Spark's file sources
    * estimate), so that joins with small Fermion tables can be broadcast. */
  override def estimateStatistics(): Statistics = {
    val files = DataFileListing.list(new Path(path), FermionTableSchema.hadoopConf())
    val total = files.map(_.getLen).sum
    val share = if (tableSchema.isEmpty) 1.0 else readSchema.defaultSize.toDouble / tableSchema.defaultSize
    val bytes = math.max(1L, (total * math.min(1.0, share)).toLong)
    new Statistics {
      override def sizeInBytes(): OptionalLong = OptionalLong.of(bytes)
      override def numRows(): OptionalLong = OptionalLong.empty()
    }
  }

  override def planInputPartitions(): Array[InputPartition] = {
    val conf = FermionTableSchema.hadoopConf()
    val maxBytes = math.max(SQLConf.get.filesMaxPartitionBytes, 1L)
    DataFileListing.list(new Path(path), conf).flatMap { f =>
      val len = f.getLen
      val splits = math.max(1L, (len + maxBytes - 1) / maxBytes)
      (0L until splits).map { i =>
        val start = i * maxBytes
        FermionInputPartition(f.getPath.toString, start, math.min(maxBytes, len - start), len): InputPartition
      }
    }.toArray
  }

  override def createReaderFactory(): PartitionReaderFactory =
    new FermionPartitionReaderFactory(readSchema, filter, new SerializableHadoopConf(FermionTableSchema.hadoopConf()), options)
}

/** A byte range of one data file; the stripes whose data starts in [start, start + length). */
final case class FermionInputPartition(file: String, start: Long, length: Long, fileLength: Long) extends InputPartition
