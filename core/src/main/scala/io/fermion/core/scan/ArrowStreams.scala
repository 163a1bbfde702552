package io.fermion.core.scan

import java.io.OutputStream

import scala.jdk.CollectionConverters._

import io.fermion.core.schema.ArrowSchemaMapping
import io.fermion.core.memory.FermionAllocators
import org.apache.arrow.vector.{VectorLoader, VectorSchemaRoot, VectorUnloader}
import org.apache.arrow.vector.ipc.ArrowStreamWriter
import org.apache.arrow.vector.types.pojo.Schema
import org.apache.hadoop.conf.Configuration

/** A scan's rows as an Arrow IPC stream (what pyarrow's `ipc.open_stream` and any Arrow library
  * read): how languages without a JVM binding of their own receive Fermion data. */
object ArrowStreams {

  /** The Arrow schema of a scan's rows. */
  def schema(scan: Scan): Schema = new Schema(scan.fields.map(ArrowSchemaMapping.toArrowField).asJava)

  /** Writes every row of `scan` to `out` (one record batch per scan batch); returns the rows. */
  def write(scan: Scan, conf: Configuration, out: OutputStream): Long = {
    val allocator = FermionAllocators.newRoot()
    try {
      val root = VectorSchemaRoot.create(schema(scan), allocator)
      try {
        val writer = new ArrowStreamWriter(root, null, out)
        writer.start()
        val loader = new VectorLoader(root)
        var rows = 0L
        val batches = scan.batches(conf, allocator)
        try batches.foreach { b =>
            val vectors = scan.fields.indices.map(b.vector)
            val source = new VectorSchemaRoot(root.getSchema.getFields, vectors.asJava, b.numRows)
            val record = new VectorUnloader(source).getRecordBatch
            try loader.load(record)
            finally record.close()
            writer.writeBatch()
            rows += b.numRows
          }
        finally batches.close()
        writer.end()
        rows
      } finally root.close()
    } finally allocator.close()
  }

  /** [[write]] into a byte array. */
  def bytes(scan: Scan, conf: Configuration): Array[Byte] = {
    val out = new java.io.ByteArrayOutputStream()
    write(scan, conf, out)
    out.toByteArray
  }
}
