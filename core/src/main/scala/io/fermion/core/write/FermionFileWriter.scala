package io.fermion.core.write

import java.io.Closeable
import java.nio.{ByteBuffer, ByteOrder}
import java.util.zip.CRC32

import scala.collection.mutable.ArrayBuffer

import io.fermion.core.storage.PositionedOutputFile
import io.fermion.core.layout._
import io.fermion.core.schema.{FermionSchema, SchemaCodec}
import org.apache.arrow.vector.{FieldVector, VectorSchemaRoot}
import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path

/** Writes one Fermion file, data first and metadata last: rows are
  * buffered per column until the stripe is full, then every column's streams are cut into pages
  * and appended; at close the CMBs, schema, stripe directory, CIT and footer follow. Memory is
  * bounded by one stripe buffer plus the per-chunk records kept for the CMBs. */
final class FermionFileWriter private (
    out: PositionedOutputFile,
    val schema: FermionSchema,
    options: WriterOptions,
    stripeLayout: Option[IndexedSeq[Int]],
    /** Rows are appended as batches ([[appendBatch]]), which never straddle a page (format 16.10). */
    val batchMode: Boolean = false
) extends Closeable {
  private val columns = schema.fields.map(new ColumnNodeBuffer(_))
  private val streamTypes = schema.fields.map(_.streamTypes)

  /** Per column, per stream, one record per stripe written so far. */
  private val chunks = streamTypes.map(_.map(_ => ArrayBuffer.empty[ChunkRecord]))
  private val stripes = ArrayBuffer.empty[StripeDirectory.Entry]
  private val pageWriter = new PageWriter(out)
  private val encoder = new StripeColumnEncoder(out, pageWriter, options)
  private var stripeRows = 0
  private var totalRows = 0L
  private var peakBuffered = 0L
  private var closed = false

  /** Per column, the bytes its values took in the buffers of the stripes written so far. */
  private val columnBytesWritten = new Array[Long](columns.size)

  FermionFileWriter.checkColumnPaths(schema, options)
  out.write(FileLayout.Magic)
  out.write(new Array[Byte](FileLayout.HeaderSize - FileLayout.Magic.length))

  /** Rows per append step, so that one step adds at most ~1/16 of the stripe byte limit: the limit
    * is checked between steps, and a wide row set must not overshoot it by a whole batch. */
  private val appendSlice: Int = {
    // validity bit rounded up; variable-width values guessed at 16 bytes, lists at 4 elements
    def estimate(f: io.fermion.core.schema.FermionField): Long = f.dataType match {
      case io.fermion.core.schema.FermionType.Struct => 1 + f.children.map(estimate).sum
      case io.fermion.core.schema.FermionType.List | io.fermion.core.schema.FermionType.Map =>
        5 + 4 * f.children.map(estimate).sum
      case t => val w = io.fermion.core.schema.FermionType.fixedWidth(t); if (w > 0) w + 1 else 17
    }
    val rowBytes = schema.fields.map(estimate).sum.max(1)
    math.max(8L, math.min(4096L, options.stripeMaxBytes / 16 / rowBytes)).toInt
  }

  /** Appends all rows of `root`, whose vectors must follow [[schema]] in order and type. */
  def write(root: VectorSchemaRoot): Unit = {
    val vectors = (0 until root.getFieldVectors.size()).map(root.getVector)
    write(vectors, root.getRowCount)
  }

  def write(vectors: IndexedSeq[FieldVector], rowCount: Int): Unit = write(vectors, 0, rowCount)

  /** Appends rows `[from, from + rowCount)` of `vectors`. */
  def write(vectors: IndexedSeq[FieldVector], from: Int, rowCount: Int): Unit = {
    require(!closed, "writer is closed")
    require(vectors.size == columns.size, s"expected ${columns.size} vectors, got ${vectors.size}")
    if (batchMode && batchId.isEmpty)
      throw new IllegalStateException("a batch-mode writer appends rows inside a batch: startBatch(id) first")
    var done = 0
    while (done < rowCount) {
      // A batch stays in one stripe: the stripe is cut between batches only.
      val n =
        if (batchMode) math.min(appendSlice, rowCount - done)
        else math.min(math.min(appendSlice, rowCount - done), stripeLimit - stripeRows)
      var c = 0
      while (c < columns.size) { columns(c).append(vectors(c), from + done, n); c += 1 }
      stripeRows += n
      done += n
      val buffered = bufferedBytes
      if (buffered > peakBuffered) peakBuffered = buffered
      if (batchMode) batchRows += n
      else if (stripeRows >= stripeLimit || (stripeLayout.isEmpty && buffered >= options.stripeMaxBytes)) flushStripe()
    }
  }

  // ---- batch mode ----

  private var batchId: Option[Long] = None
  private var batchRows = 0
  private val stripeBatchIds = ArrayBuffer.empty[Long]
  private val stripeBatchLengths = ArrayBuffer.empty[Int]
  private val batchIndex = ArrayBuffer.empty[BatchMetaBlock.Entry]

  /** Starts batch `id` (batch-mode writers): the rows [[write]] appends until [[endBatch]] form one
    * batch, stored in one stripe and never across a page boundary of a column's DATA. */
  def startBatch(id: Long): Unit = {
    require(batchMode, "startBatch needs a batch-mode writer (FermionFileWriter.createBatched)")
    if (batchId.nonEmpty) throw new IllegalStateException(s"batch ${batchId.get} is not ended")
    if (stripeRows > 0 && (stripeRows >= stripeLimit || bufferedBytes >= options.stripeMaxBytes)) flushStripe()
    batchId = Some(id)
    batchRows = 0
  }

  def endBatch(): Unit = {
    val id = batchId.getOrElse(throw new IllegalStateException("no batch started"))
    if (batchRows == 0) throw new IllegalArgumentException(s"batch $id has no rows")
    stripeBatchIds += id
    stripeBatchLengths += batchRows
    batchId = None
  }

  /** Appends all rows of `root` as batch `id`. */
  def appendBatch(id: Long, root: VectorSchemaRoot): Unit = {
    startBatch(id)
    write(root)
    endBatch()
  }

  /** Where the current stripe's batches end, in rows. */
  private def batchEnds: Array[Int] =
    if (!batchMode) null else stripeBatchLengths.scanLeft(0)(_ + _).drop(1).toArray

  /** The stripe's two BATCH_META chunks (batch ids, batch lengths), after its columns' chunks. */
  private def writeBatchMeta(): Unit = {
    val settings = options.forColumn("")
    val n = stripeBatchIds.size
    def chunk(values: Array[Byte], width: Int): (Long, Long) = {
      val start = out.position
      val perPage = math.max(8, math.min(settings.pageRows, settings.pageSize / width))
      var i = 0
      while (i < n) {
        val k = math.min(perPage, n - i)
        pageWriter.writeFixed(values, i * width, k, width, settings)
        i += k
      }
      (start, out.position - start)
    }
    val ids = java.nio.ByteBuffer.allocate(n * 8).order(java.nio.ByteOrder.LITTLE_ENDIAN)
    stripeBatchIds.foreach(ids.putLong)
    val lens = java.nio.ByteBuffer.allocate(n * 4).order(java.nio.ByteOrder.LITTLE_ENDIAN)
    stripeBatchLengths.foreach(lens.putInt)
    val (idsAt, idsLen) = chunk(ids.array(), 8)
    val (lensAt, lensLen) = chunk(lens.array(), 4)
    batchIndex += BatchMetaBlock.Entry(idsAt, idsLen, n, lensAt, lensLen, stripeBatchIds.min, stripeBatchIds.max)
    stripeBatchIds.clear()
    stripeBatchLengths.clear()
  }

  def bufferedBytes: Long = columns.iterator.map(_.bufferedBytes).sum

  /** Rows the current stripe takes: a forced layout's next count, else the row limit. */
  private def stripeLimit: Int = stripeLayout match {
    case Some(layout) =>
      if (stripes.size >= layout.size)
        throw new IllegalStateException(s"more rows than the forced stripe layout holds (${layout.sum})")
      layout(stripes.size)
    case None => options.stripeMaxRows
  }

  private def flushStripe(): Unit = if (stripeRows > 0) {
    val start = out.position
    val ends = batchEnds
    var c = 0
    while (c < columns.size) {
      val recs = encoder.encode(columns(c), ends)
      var s = 0
      while (s < recs.size) { chunks(c)(s) += recs(s); s += 1 }
      columnBytesWritten(c) += columns(c).bufferedBytes
      columns(c).clear()
      c += 1
    }
    if (batchMode) writeBatchMeta()
    stripes += StripeDirectory.Entry(start, out.position - start, stripeRows)
    totalRows += stripeRows
    stripeRows = 0
  }

  /** Flushes the last stripe, writes the metadata and closes the file. */
  def close(): Unit = if (!closed) {
    closed = true
    try {
      if (batchId.nonEmpty && batchRows > 0) endBatch() // close() ends an open batch
      flushStripe()
      // The batch index follows the last stripe; the column directory ends where the CMB area starts.
      if (batchMode) out.write(BatchMetaBlock.encode(batchIndex.toSeq))
      val rowsPerStripe = stripes.map(_.rowCount).toIndexedSeq
      val crc = new CRC32
      val cmbBytes = columns.indices.map { c =>
        val colChunks = chunks(c).map(_.toIndexedSeq)
        if (ColumnMetadataBlockBuilder.isAllNull(streamTypes(c), colChunks)) Array.emptyByteArray
        else ColumnMetadataBlockBuilder.build(streamTypes(c), rowsPerStripe, colChunks)
      }
      val cmbAreaStart = out.position + ColumnDirectory.byteSize(columns.size)
      val cmbOffsets = cmbBytes.scanLeft(cmbAreaStart)(_ + _.length).toArray
      val cmbCrcs =
        cmbBytes.map { b => if (b.isEmpty) 0 else { crc.reset(); crc.update(b); crc.getValue.toInt } }.toArray

      val schemaOffset = cmbOffsets(columns.size)
      val (schemaBytes, nodeStarts) = SchemaCodec.encodeWithNodeStarts(schema)
      val stripeDirBytes = StripeDirectory.encode(stripes.toSeq)
      val citBytes = ColumnIndexTable.encode(cmbOffsets, cmbCrcs)
      val unsealed = Footer(
        schemaOffset = schemaOffset,
        schemaLength = schemaBytes.length,
        numColumns = columns.size,
        stripeDirOffset = schemaOffset + schemaBytes.length,
        numStripes = stripes.size,
        settings = (if (options.pageChecksums) FileLayout.Settings.PageCrc32 else 0) |
          (if (batchMode) FileLayout.Settings.BatchMode else 0) | FileLayout.Settings.ColumnDirectory,
        citOffset = schemaOffset + schemaBytes.length + stripeDirBytes.length,
        numRows = totalRows,
        defaultPageSize = options.pageSize,
        metadataCrc32 = 0
      )
      val entries = columns.indices.map { c =>
        val nodeLength = nodeStarts(c + 1) - nodeStarts(c)
        crc.reset(); crc.update(schemaBytes, nodeStarts(c), nodeLength)
        ColumnDirectory.Entry(
          cmbOffsets(c),
          cmbBytes(c).length,
          cmbCrcs(c),
          nodeStarts(c),
          nodeLength,
          crc.getValue.toInt
        )
      }
      out.write(ColumnDirectory.encode(entries, cmbAreaStart, stripeDirBytes, unsealed.crcCoveredBytes()))
      cmbBytes.foreach(b => out.write(b))
      out.write(schemaBytes)
      out.write(stripeDirBytes)
      out.write(citBytes)
      crc.reset(); crc.update(schemaBytes); crc.update(stripeDirBytes); crc.update(citBytes);
      crc.update(unsealed.crcCoveredBytes())
      out.write(unsealed.copy(metadataCrc32 = crc.getValue.toInt).encode())
    } finally out.close()
  }

  def rowsWritten: Long = totalRows + stripeRows

  /** Each column's size in memory over the rows written so far, in Arrow's layout: validity bits,
    * 4-byte lengths of variable-width values, lists and maps, and the values (what a dataset's
    * manifest records for query planners, docs/table-format.md 6.8). */
  def columnBytes: IndexedSeq[Long] = columns.indices.map(c => columnBytesWritten(c) + columns(c).bufferedBytes)
  def bytesWritten: Long = out.position

  /** The largest stripe buffer this writer held, in bytes (the writer-memory benchmark reads it). */
  def peakBufferedBytes: Long = peakBuffered

  /** Pages written so far per encoding name (for tests, benchmarks and progress reports). */
  def pagesByEncoding: Map[String, Long] = pageWriter.encodingCounts.map { case (id, n) => PageEncoding.name(id) -> n }
}

object FermionFileWriter {

  /** Every `column.<path>` override must name a node of the schema: a misspelt column would
    * otherwise silently keep the defaults. */
  def checkColumnPaths(schema: FermionSchema, options: WriterOptions): Unit = {
    def paths(f: io.fermion.core.schema.FermionField, prefix: String): Seq[String] = {
      val p = if (prefix.isEmpty) f.name else prefix + "." + f.name
      p +: f.children.flatMap(paths(_, p))
    }
    val known = schema.fields.flatMap(paths(_, "")).map(_.toLowerCase(java.util.Locale.ROOT)).toSet
    options.overriddenPaths.find(p => !known.contains(p.toLowerCase(java.util.Locale.ROOT))).foreach { p =>
      throw new IllegalArgumentException(
        s"Invalid Fermion write option: column.$p.* names no column (columns: ${schema.fields.map(_.name).mkString(", ")})"
      )
    }
    def bloomable(c: String, what: String): Unit = {
      val f = schema.indexOf(c).map(schema.fields).getOrElse(throw new IllegalArgumentException(
        s"Invalid Fermion write option: $what names `$c`, which is not a top-level column (columns: ${schema.fields.map(_.name).mkString(", ")})"
      ))
      if (!io.fermion.core.bloom.BloomValues.supports(f.dataType))
        throw new IllegalArgumentException(
          s"Invalid Fermion write option: $what: `${f.name}` (${f.dataType}) cannot have a bloom filter"
        )
    }
    options.bloomFilterColumns.foreach(c => bloomable(c, "bloomFilterColumns"))
    options.columns.foreach { case (p, o) => if (o.bloomFilter.contains(true)) bloomable(p, s"column.$p.bloomFilter") }
  }

  def create(path: Path, conf: Configuration, schema: FermionSchema, options: WriterOptions): FermionFileWriter =
    new FermionFileWriter(PositionedOutputFile.create(path, conf), schema, options, None)

  /** A batch-mode writer: rows are appended as batches ([[FermionFileWriter.appendBatch]], or
    * `startBatch` / `write` / `endBatch`), each with an id; a batch never straddles a DATA page and
    * stays in one stripe; the file carries a batch index (format 1.3, docs/format.md 16.10). */
  def createBatched(path: Path, conf: Configuration, schema: FermionSchema, options: WriterOptions): FermionFileWriter =
    new FermionFileWriter(PositionedOutputFile.create(path, conf), schema, options, None, batchMode = true)

  /** A writer whose stripes hold exactly `stripeRows(i)` rows each: the layout of another file of
    * the same fragment, so that a reader reads stripe i of both side by side. */
  def createAligned(
      path: Path,
      conf: Configuration,
      schema: FermionSchema,
      options: WriterOptions,
      stripeRows: IndexedSeq[Int]
  ): FermionFileWriter = {
    require(stripeRows.forall(_ > 0), "stripes of an aligned layout hold rows")
    new FermionFileWriter(PositionedOutputFile.create(path, conf), schema, options, Some(stripeRows))
  }
}
