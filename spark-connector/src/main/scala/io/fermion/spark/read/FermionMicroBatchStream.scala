package io.fermion.spark.read

import io.fermion.core.scan.{ChangeStream, Scan => CoreScan, StreamPosition, StreamSettings, TaskSizing}
import io.fermion.spark.{FermionTableSchema, SerializableHadoopConf}
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.connector.read.{InputPartition, PartitionReaderFactory}
import org.apache.spark.sql.connector.read.streaming.{
  CompositeReadLimit, MicroBatchStream, Offset, ReadAllAvailable, ReadLimit, ReadMaxFiles, ReadMaxRows,
  SupportsTriggerAvailableNow
}
import org.apache.spark.sql.internal.SQLConf
import org.apache.spark.sql.types.StructType

/** A dataset as a Structured Streaming source (`readStream.format("fermion")`): offsets are core
  * [[StreamPosition]]s, micro-batches the fragments core's [[ChangeStream]] yields between them,
  * read with the scan's plan. Rate limits: `maxFilesPerTrigger`, `maxRowsPerTrigger`. */
final class FermionMicroBatchStream(
    scan: CoreScan,
    settings: StreamSettings,
    readSchema: StructType,
    fileMetadata: Array[Boolean]
) extends MicroBatchStream with SupportsTriggerAvailableNow {
  private val changes = new ChangeStream(scan, settings, FermionTableSchema.hadoopConf())

  /** Trigger.AvailableNow: the versions there when the run started, in micro-batches of the limits. */
  private var lastVersion: Option[Long] = None
  override def prepareForTriggerAvailableNow(): Unit = lastVersion = Some(changes.latestVersion)

  override def initialOffset(): Offset = FermionStreamOffset(changes.initial)
  override def deserializeOffset(json: String): Offset = FermionStreamOffset(StreamPosition.parse(json))

  override def getDefaultReadLimit: ReadLimit = settings.maxRows match {
    case Some(rows) => ReadLimit.compositeLimit(Array(ReadLimit.maxFiles(settings.maxFiles), ReadLimit.maxRows(rows)))
    case None => ReadLimit.maxFiles(settings.maxFiles)
  }

  override def latestOffset(): Offset =
    throw new UnsupportedOperationException("latestOffset(start, limit) is used with admission control")

  override def latestOffset(start: Offset, limit: ReadLimit): Offset = {
    var files = Int.MaxValue
    var rows: Option[Long] = None
    def apply(l: ReadLimit): Unit = l match {
      case f: ReadMaxFiles => files = math.min(files, f.maxFiles())
      case r: ReadMaxRows => rows = Some(rows.fold(r.maxRows())(math.min(_, r.maxRows())))
      case c: CompositeReadLimit => c.getReadLimits.foreach(apply)
      case _: ReadAllAvailable =>
      case other => throw new UnsupportedOperationException(s"read limit $other")
    }
    apply(limit)
    val from = start.asInstanceOf[FermionStreamOffset].position
    FermionStreamOffset(changes.latest(from, files, rows, lastVersion.getOrElse(changes.latestVersion)))
  }

  override def planInputPartitions(start: Offset, end: Offset): Array[InputPartition] = {
    val conf = SQLConf.get
    val sizing = TaskSizing(
      conf.filesMaxPartitionBytes,
      conf.filesOpenCostInBytes,
      math.max(1, SparkSession.active.sparkContext.defaultParallelism)
    )
    changes.tasks(
      start.asInstanceOf[FermionStreamOffset].position,
      end.asInstanceOf[FermionStreamOffset].position,
      sizing
    )
      .map(t => FermionInputPartition(t): InputPartition).toArray
  }

  override def createReaderFactory(): PartitionReaderFactory =
    new FermionPartitionReaderFactory(scan.plan, readSchema, fileMetadata, SerializableHadoopConf.broadcast())

  override def commit(end: Offset): Unit = ()
  override def stop(): Unit = ()
}

/** A stream offset: core's position, as the JSON Spark keeps in the checkpoint. */
final case class FermionStreamOffset(position: StreamPosition) extends Offset {
  override def json(): String = position.json
}
