package io.fermion.spark.write

import io.fermion.core.schema.{ArrowSchemaMapping, FermionSchema}
import io.fermion.core.write.{FermionFileWriter, WriterOptions}
import io.fermion.spark.read.FermionColumnarReader
import org.apache.arrow.vector.VectorSchemaRoot
import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.write.{DataWriter, WriterCommitMessage}
import org.apache.spark.sql.execution.arrow.ArrowWriter
import org.apache.spark.sql.types.StructType

/** One task's writer: rows are gathered into Arrow batches by Spark's own ArrowWriter and handed
  * to the core file writer, which buffers a stripe and writes pages. */
final class FermionDataWriter(
    relativePath: String,
    file: Path,
    schema: StructType,
    fermionSchema: FermionSchema,
    options: WriterOptions,
    conf: Configuration,
    stripeLayout: Option[IndexedSeq[Int]] = None,
    /** Batch mode: the ordinal of the batch key column in the rows (an integral, non-null column). */
    batchKey: Option[Int] = None
) extends DataWriter[InternalRow] {
  private val allocator =
    FermionColumnarReader.root.newChildAllocator(s"fermion-write:$file", 0, Long.MaxValue)
  private val maxBatchRows = FermionDataWriter.batchRowsFor(schema)
  private val root = VectorSchemaRoot.create(ArrowSchemaMapping.toArrow(fermionSchema), allocator)
  // ArrowWriter allocates every vector up front: sized for a batch, not Arrow's default 3,970 rows.
  root.getFieldVectors.forEach(v => v.setInitialCapacity(maxBatchRows))
  private val arrow = ArrowWriter.create(root)
  private val writer = (stripeLayout, batchKey) match {
    case (Some(layout), _) => FermionFileWriter.createAligned(file, conf, fermionSchema, options, layout)
    case (None, Some(_)) => FermionFileWriter.createBatched(file, conf, fermionSchema, options)
    case (None, None) => FermionFileWriter.create(file, conf, fermionSchema, options)
  }

  /** Batch ids written by this task (the job's commit checks no other task wrote one of them). */
  private val batchIds = new org.roaringbitmap.longlong.Roaring64NavigableMap()
  private var currentBatch: Option[Long] = None
  private val keyType = batchKey.map(schema(_).dataType)

  private def keyOf(record: InternalRow, ordinal: Int): Long = {
    if (record.isNullAt(ordinal))
      throw new IllegalArgumentException(s"batch key `${schema(ordinal).name}` is null; every row needs a batch id")
    keyType.get match {
      case org.apache.spark.sql.types.ByteType => record.getByte(ordinal).toLong
      case org.apache.spark.sql.types.ShortType => record.getShort(ordinal).toLong
      case org.apache.spark.sql.types.IntegerType => record.getInt(ordinal).toLong
      case _ => record.getLong(ordinal)
    }
  }
  private var batchRows = 0
  private var closed = false

  override def write(record: InternalRow): Unit = {
    batchKey.foreach { ordinal =>
      // Rows arrive sorted by the key: a new key ends the batch of the previous one.
      val key = keyOf(record, ordinal)
      if (!currentBatch.contains(key)) {
        flushBatch()
        currentBatch.foreach(_ => writer.endBatch())
        if (batchIds.contains(key))
          throw new IllegalArgumentException(
            s"batch key `${schema(ordinal).name}` = $key comes back after other keys: the task's rows are not grouped by it"
          )
        batchIds.addLong(key)
        writer.startBatch(key)
        currentBatch = Some(key)
      }
    }
    arrow.write(record)
    batchRows += 1
    if (batchRows >= maxBatchRows) flushBatch()
  }

  private def flushBatch(): Unit = if (batchRows > 0) {
    arrow.finish()
    writer.write(root)
    arrow.reset()
    batchRows = 0
  }

  override def commit(): WriterCommitMessage = {
    flushBatch()
    if (currentBatch.nonEmpty) writer.endBatch()
    currentBatch = None
    writer.close()
    val ids =
      if (batchKey.isEmpty) None
      else {
        val out = new java.io.ByteArrayOutputStream()
        batchIds.runOptimize()
        batchIds.serialize(new java.io.DataOutputStream(out))
        Some(out.toByteArray)
      }
    FermionCommitMessage(relativePath, writer.rowsWritten, writer.bytesWritten, ids, columnBytes = writer.columnBytes)
  }

  override def abort(): Unit = {
    try close()
    finally io.fermion.core.storage.FileSystems.forPath(file, conf).delete(file, false)
  }

  override def close(): Unit = if (!closed) {
    closed = true
    try writer.close()
    finally
      try root.close()
      finally allocator.close()
  }
}

object FermionDataWriter {
  val BatchRows = 4096

  /** Bytes an Arrow batch of rows may take (by Spark's size estimate of a row). */
  val BatchBytes: Long = 16L << 20

  /** Rows per Arrow batch: 4,096, fewer for wide rows, so that a batch of a 100,000-column table
    * takes megabytes, not gigabytes, of direct memory. */
  def batchRowsFor(schema: StructType): Int =
    math.max(1L, math.min(BatchRows.toLong, BatchBytes / math.max(1, schema.defaultSize))).toInt
}
