package io.fermion.core.dataset

import java.io.{ByteArrayInputStream, ByteArrayOutputStream, DataInputStream, DataOutputStream}
import java.nio.channels.Channels

import org.apache.arrow.memory.RootAllocator
import org.apache.arrow.vector.{UInt4Vector, VectorSchemaRoot}
import org.apache.arrow.vector.ipc.{ArrowFileReader, ArrowFileWriter, SeekableReadChannel}
import org.apache.arrow.vector.util.ByteArrayReadableSeekableByteChannel
import org.roaringbitmap.RoaringBitmap

/** The bytes of deletion files (docs/table-format.md, "Deletion files"): the deleted local row
  * offsets of one fragment, as an Arrow IPC file with one non-null uint32 column `row` when few rows
  * are deleted, else as a portable serialised Roaring bitmap. */
private[core] object DeletionFiles {

  /** Up to this many rows an Arrow array is written; above, a Roaring bitmap. */
  val ArrowArrayMaxRows = 1024

  def kindFor(rows: RoaringBitmap): Int =
    if (rows.getLongCardinality <= ArrowArrayMaxRows) DeletionFile.ArrowArray else DeletionFile.RoaringBitmap

  def extension(kind: Int): String = if (kind == DeletionFile.ArrowArray) "arrow" else "bin"

  def encode(rows: RoaringBitmap, kind: Int): Array[Byte] = kind match {
    case DeletionFile.RoaringBitmap =>
      rows.runOptimize()
      val out = new ByteArrayOutputStream()
      rows.serialize(new DataOutputStream(out))
      out.toByteArray
    case _ =>
      val allocator = new RootAllocator()
      try {
        val vector = new UInt4Vector("row", allocator)
        val root = VectorSchemaRoot.of(vector)
        try {
          val n = rows.getCardinality
          vector.allocateNew(n)
          var i = 0
          val it = rows.getIntIterator
          while (it.hasNext) { vector.set(i, it.next()); i += 1 }
          vector.setValueCount(n)
          root.setRowCount(n)
          val out = new ByteArrayOutputStream()
          val writer = new ArrowFileWriter(root, null, Channels.newChannel(out))
          writer.start(); writer.writeBatch(); writer.end(); writer.close()
          out.toByteArray
        } finally root.close()
      } finally allocator.close()
  }

  /** The deleted rows of a deletion file of `kind`. Damage is an [[InvalidFermionDatasetException]]:
    * a bitmap that does not deserialise exactly (bytes left over, containers out of order), an
    * Arrow file that does not decode (read through an allocator bounded by the file's own size, so
    * a damaged buffer length cannot allocate more), a null or an offset not above the previous one. */
  def decode(bytes: Array[Byte], kind: Int, dataset: String, file: String): RoaringBitmap = {
    def invalid(why: String): Nothing =
      throw new InvalidFermionDatasetException(dataset, file, s"deletion file does not decode: $why")
    try kind match {
        case DeletionFile.RoaringBitmap =>
          val b = new RoaringBitmap()
          val in = new ByteArrayInputStream(bytes)
          b.deserialize(new DataInputStream(in))
          if (in.available() != 0) invalid(s"${in.available()} bytes after the bitmap")
          if (!b.validate()) invalid("the bitmap's containers are not well formed")
          b
        case _ =>
          val allocator = new RootAllocator(2L * bytes.length + (1L << 20))
          try {
            val reader =
              new ArrowFileReader(new SeekableReadChannel(new ByteArrayReadableSeekableByteChannel(bytes)), allocator)
            try {
              val b = new RoaringBitmap()
              var last = -1L
              while (reader.loadNextBatch()) {
                val v = reader.getVectorSchemaRoot.getVector(0).asInstanceOf[UInt4Vector]
                var i = 0
                while (i < v.getValueCount) {
                  if (v.isNull(i)) invalid(s"row $i is null")
                  val row = v.get(i) & 0xffffffffL
                  if (row <= last) invalid(s"offset $row follows $last")
                  b.add(row.toInt)
                  last = row
                  i += 1
                }
              }
              b
            } finally reader.close()
          } finally allocator.close()
      }
    catch {
      case e: FermionDatasetException => throw e
      case e: Exception =>
        throw new InvalidFermionDatasetException(dataset, file, s"deletion file does not decode: $e", e)
    }
  }

  /** [[decode]], checked against the manifest: the file must delete exactly `deletedRows` rows. */
  def decode(bytes: Array[Byte], kind: Int, dataset: String, file: String, deletedRows: Long): RoaringBitmap = {
    val b = decode(bytes, kind, dataset, file)
    if (b.getLongCardinality != deletedRows)
      throw new InvalidFermionDatasetException(
        dataset,
        file,
        s"deletion file deletes ${b.getLongCardinality} rows, the manifest says $deletedRows"
      )
    b
  }
}
