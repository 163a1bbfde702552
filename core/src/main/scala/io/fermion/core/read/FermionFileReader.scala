package io.fermion.core.read

import java.io.Closeable
import java.nio.ByteBuffer
import java.util.zip.CRC32

import io.fermion.core.errors._
import io.fermion.core.storage.{ByteRange, HadoopInputFile, InputFile, RangeCoalescer}
import io.fermion.core.layout._
import io.fermion.core.schema.{FermionField, FermionSchema, FermionType, SchemaCodec}
import org.apache.arrow.memory.BufferAllocator
import org.apache.arrow.vector.FieldVector
import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path

/** Reads one Fermion file. Opening costs one tail read when footer, schema, stripe directory and
  * CIT fit in `tailPrefetchBytes`; CMBs are then loaded only for the columns asked for, and a stripe's chunks of those columns are fetched with coalesced reads and
  * decoded straight into Arrow vectors. A file opened for some of its columns
  * ([[FermionFileReader.openColumns]], format 1.5) reads their schema nodes and CMB locations from
  * the column directory instead; the whole schema and CIT are read only if something asks for them. */
final class FermionFileReader private (
    private[core] val input: InputFile,
    private[core] val footer: Footer,
    private[core] val stripes: StripeDirectory,
    /** The whole schema and CIT when the file was opened whole (else null: loaded on first need). */
    opened: FileMetadata,
    /** The columns opened through the column directory (empty when the file was opened whole). */
    directoryColumns: Map[Int, OpenedColumn],
    /** CIT.offset[0]: where the CMB area starts. */
    private[core] val cmbAreaStart: Long,
    tail: ByteBuffer,
    tailStart: Long,
    private[core] val options: ReaderOptions,
    /** Bytes of metadata read on open beyond the tail. */
    openExtraBytes: Long
) extends Closeable {
  val path: String = input.path
  private var metadataBytes = tail.remaining().toLong + openExtraBytes

  /** The whole schema and CIT, from the open or read now (verified as an open verifies them). */
  private lazy val metadata: FileMetadata =
    if (opened != null) opened
    else {
      val (m, bytes) = FermionFileReader.readMetadata(input, footer, tail, tailStart, options)
      metadataBytes += bytes
      m
    }

  /** The file's schema: every top-level column. After [[FermionFileReader.openColumns]] the first
    * call reads the whole schema and CIT. */
  def schema: FermionSchema = metadata.schema

  /** Top-level column `column` of the file (from the column directory when it was opened through it). */
  def field(column: Int): FermionField = directoryColumns.get(column) match {
    case Some(o) => o.field
    case None => schema.fields(column)
  }

  def numColumns: Int = footer.numColumns

  /** The columns whose metadata the open read through the column directory (empty: the whole
    * schema and CIT were read). */
  def openedColumns: Set[Int] = directoryColumns.keySet

  private def cmbOffset(c: Int): Long = directoryColumns.get(c).fold(metadata.cit.cmbOffset(c))(_.cmbOffset)
  private def cmbLength(c: Int): Long = directoryColumns.get(c).fold(metadata.cit.cmbLength(c))(_.cmbLength)
  private def cmbCrc32(c: Int): Int = directoryColumns.get(c).fold(metadata.cit.cmbCrc32(c))(_.cmbCrc32)

  /** Loaded CMBs by column (None: the column has none). Maps, not arrays of every column: a file
    * opened for a few of 100,000 columns must not cost per-column state for the others. */
  private val cmbs = new java.util.concurrent.ConcurrentHashMap[Int, Option[ColumnMetadataBlock]]

  /** Fetched but not yet verified CMB bytes (eager loading fetches blocks nobody asked for yet). */
  private val cmbRaw = new java.util.concurrent.ConcurrentHashMap[Int, ByteBuffer]

  /** Page decoders not in use; a column decode borrows one (each holds scratch buffers). */
  private val idleDecoders = new java.util.concurrent.ConcurrentLinkedQueue[ColumnDecoder]
  private val allDecoders = new java.util.concurrent.ConcurrentLinkedQueue[ColumnDecoder]
  private def borrowDecoder(): ColumnDecoder = Option(idleDecoders.poll()).getOrElse {
    val d = new ColumnDecoder(path, new PageDecoder(path, options.verifyChecksums && footer.hasPageCrc))
    allDecoders.add(d)
    d
  }
  def numRows: Long = footer.numRows

  /** Where each column's CMB is (what `fermion inspect` reports). */
  private[core] def columnIndexTable: ColumnIndexTable = metadata.cit
  def numStripes: Int = footer.numStripes

  /** Rows in stripe `stripe` (0 until [[numStripes]]). */
  def stripeRowCount(stripe: Int): Int = stripes.rowCount(stripe)

  /** Bytes of footer, schema, directory, CIT and CMBs fetched so far. */
  def metadataBytesRead: Long = metadataBytes
  def pagesDecoded: Long = { var n = 0L; allDecoders.forEach(d => n += d.pages.pagesDecoded); n }
  def decodeNanos: Long = { var n = 0L; allDecoders.forEach(d => n += d.pages.decodeNanos); n }
  def bytesRead: Long = input.bytesRead

  /** Where the data area ends: the start of the column directory (format 1.5), else of the CMB
    * area. In a batch-mode file the batch index ends there. */
  private[core] def dataAreaEnd: Long = FermionFileReader.dataAreaEnd(footer, cmbAreaStart)

  /** The batch index of a batch-mode file (format 1.3; settings bit 1), loaded on first use. */
  private[core] lazy val batchIndex: Option[BatchIndex] = BatchIndex.load(this, options.verifyChecksums)

  /** The bloom filter of a flat column's DATA chunk in `stripe`, if the writer made one (its CRC32
    * checked like a page's). */
  private[core] def bloomFilter(column: Int, stripe: Int): Option[io.fermion.core.bloom.SplitBlockBloomFilter] =
    columnMetadata(column).flatMap { m =>
      val s = m.streamTypeIndexOf(StreamType.Data)
      if (s < 0 || m.descType(s) != DescType.Full || m.fullBloomLength(s, stripe) == 0) None
      else {
        val len = m.fullBloomLength(s, stripe)
        val off = m.fullOffset(s, stripe) + m.fullLength(s, stripe)
        if (len < 36 || (len - 4) % 32 != 0 || len - 4 > io.fermion.core.bloom.SplitBlockBloomFilter.MaxBytes)
          throw new InvalidFermionFileException(
            path,
            off,
            s"bloom filter of `${field(column).name}` has $len bytes"
          )
        val b = bytesAt(off, len, metadata = false)
        val bytes = new Array[Byte](len)
        b.duplicate().get(bytes)
        if (options.verifyChecksums) {
          val crc = new java.util.zip.CRC32
          crc.update(bytes, 0, len - 4)
          val stored = java.nio.ByteBuffer.wrap(bytes, len - 4, 4).order(java.nio.ByteOrder.LITTLE_ENDIAN).getInt
          if (stored != crc.getValue.toInt) throw new FermionChecksumException(
            path,
            off,
            s"bloom filter of `${field(column).name}`",
            stored,
            crc.getValue.toInt
          )
        }
        Some(io.fermion.core.bloom.SplitBlockBloomFilter.fromBytes(bytes, 0, len - 4))
      }
    }

  /** Non-null rows of a top-level column in `stripe` counted from its VALIDITY chunk's bits (for
    * columns whose CMB records no null count: a string column of empty strings and nulls has
    * OFFSETS and DATA as USE_DEFAULT). Reads that one chunk only; its pages are checked as a
    * stripe read checks them. */
  private[read] def validityCount(column: Int, stripe: Int): Long = {
    val m = columnMetadata(column).getOrElse(return 0L)
    val rows = stripes.rowCount(stripe)
    m.descType(0) match {
      case DescType.UseDefault => rows.toLong
      case DescType.ForceNull => 0L
      case _ =>
        val len = m.simpleLength(0, stripe)
        if (len == 0) rows.toLong
        else if (len == FileLayout.AllNullChunkLength) 0L
        else {
          val off = m.simpleOffset(0, stripe)
          val bytes = bytesAt(off, len, metadata = false)
          val d = borrowDecoder()
          try {
            var slot = 0
            var set = 0L
            d.pages.foreachPage(bytes, off, io.fermion.core.encoding.PageValues.Bitmap, rows) { p =>
              if ((slot & 7) != 0)
                throw new InvalidFermionFileException(
                  path,
                  off,
                  s"VALIDITY pages of `${field(column).name}` do not match its slots"
                )
              set += FermionFileReader.countBits(p.bytes, p.off, p.valueCount)
              slot += p.valueCount
            }
            if (slot != rows)
              throw new InvalidFermionFileException(
                path,
                off,
                s"VALIDITY chunk of `${field(column).name}` covers $slot of $rows slots"
              )
            set
          } finally idleDecoders.add(d)
        }
    }
  }

  /** Whether the bytes read on open (the tail) hold [offset, offset + len). */
  private[core] def inTail(offset: Long, len: Long): Boolean =
    offset >= tailStart && offset + len <= tailStart + tail.remaining()

  /** Bytes [offset, offset + len) of the file, from the tail read on open when it holds them
    * (what `fermion inspect` uses for page headers). */
  private[core] def readBytes(offset: Long, len: Int): ByteBuffer = bytesAt(offset, len, metadata = false)

  /** Bytes [offset, offset + len), from the tail buffer when it holds them. */
  private def bytesAt(offset: Long, len: Long, metadata: Boolean): ByteBuffer = {
    if (len >= 0 && offset >= tailStart && offset - tailStart <= tail.remaining() - len) {
      val b = tail.duplicate()
      b.position(tail.position() + (offset - tailStart).toInt)
      b.limit(b.position() + len.toInt)
      b.slice()
    } else {
      if (len > Int.MaxValue)
        throw new InvalidFermionFileException(path, offset, s"a single read of $len bytes exceeds 2 GiB")
      val b = input.readFully(offset, len.toInt)
      if (metadata) metadataBytes += len
      b
    }
  }

  /** Loads the CMBs of `columns` that are not loaded yet: all at once when the CMB area is small
    * (eager), otherwise only theirs, with nearby blocks merged into one read. A block is verified
    * (CRC, structure) only when its column is asked for, so damage in one column's CMB never
    * fails a read of another. */
  private[core] def loadColumnMetadata(columns: Seq[Int]): Unit = {
    val missing = columns.distinct.filter(c => !cmbs.containsKey(c))
    if (missing.isEmpty) return
    val unfetched = missing.filter(c => !cmbRaw.containsKey(c))
    if (unfetched.nonEmpty) {
      // Opened for some columns: the point was not to read the others' metadata.
      val eager = directoryColumns.isEmpty && footer.schemaOffset - cmbAreaStart <= options.cmbEagerLoadThreshold
      val wanted = if (eager) (0 until footer.numColumns).filter(c => !cmbRaw.containsKey(c) && !cmbs.containsKey(c))
      else unfetched
      val ranges = wanted.map(c => ByteRange(cmbOffset(c), cmbLength(c)))
      // Opened through the column directory, the CMBs read are those of a few of many columns:
      // bridging the gaps between them would read the other columns' CMBs after all.
      val gap = math.min(coalesceGap, if (directoryColumns.nonEmpty) 4L << 10 else 64L << 10)
      val merged = RangeCoalescer.coalesce(ranges, gap, options.maxCoalescedBytes)
      val buffers = merged.map(m => m.range -> bytesAt(m.range.offset, m.range.length, metadata = true))
      wanted.foreach { c =>
        val len = cmbLength(c)
        if (len > 0) cmbRaw.put(c, FermionFileReader.sliceOf(buffers, cmbOffset(c), len))
      }
    }
    missing.foreach { c =>
      val bytes = cmbRaw.get(c)
      if (bytes != null) {
        val off = cmbOffset(c)
        val name = field(c).name
        if (options.verifyChecksums) {
          val crc = new CRC32
          crc.update(bytes.duplicate())
          val actual = crc.getValue.toInt
          if (actual != cmbCrc32(c))
            throw new FermionChecksumException(path, off, s"CMB of column `$name`", cmbCrc32(c), actual)
        }
        val cmb = ColumnMetadataBlock.view(bytes)
        val types = field(c).streamTypes
        ColumnMetadataBlock.validate(cmb, types, footer.numStripes).foreach { why =>
          throw new InvalidFermionFileException(path, off, s"CMB of column `$name`: $why")
        }
        ColumnMetadataBlock.validateChunks(cmb, types, stripes, off).foreach { case (why, at) =>
          throw new InvalidFermionFileException(path, at, s"CMB of column `$name`: $why")
        }
        cmbs.put(c, Some(cmb))
        cmbRaw.remove(c)
      }
      cmbs.putIfAbsent(c, None)
    }
  }

  /** The column's CMB, or None when the column is null in every row. */
  private[core] def columnMetadata(column: Int): Option[ColumnMetadataBlock] = {
    loadColumnMetadata(Seq(column))
    cmbs.get(column)
  }

  /** Decodes whole `columns` of one stripe into Arrow vectors owned by the caller. */
  def readStripe(stripe: Int, columns: IndexedSeq[Int], allocator: BufferAllocator): IndexedSeq[FieldVector] =
    readStripeProjected(stripe, columns.map(c => c -> ProjectedNode.full(field(c))), allocator)

  /** Decodes the projected parts of columns (column index -> projection of its field) of one
    * stripe; only the chunks of the projected streams are fetched. */
  private[core] def readStripeProjected(
      stripe: Int,
      columns: IndexedSeq[(Int, ProjectedNode)],
      allocator: BufferAllocator,
      selection: RowRanges = null
  ): IndexedSeq[FieldVector] =
    decode(fetch(stripe, columns, selection, now = true), allocator)

  /** Starts fetching what decoding `columns` of `stripe` needs and returns at once: where the file
    * system reads in the background, the caller decodes the current stripe meanwhile (prefetch).
    * With a `selection` (rows of the stripe the caller will keep), the DATA pages of flat columns
    * whose rows all lie outside it are neither read nor decoded. With `now`, the caller decodes the
    * stripe right away ([[InputFile.readNow]]). */
  private[core] def fetch(
      stripe: Int,
      columns: IndexedSeq[(Int, ProjectedNode)],
      selection: RowRanges = null,
      now: Boolean = false
  ): StripeFetch = {
    require(stripe >= 0 && stripe < footer.numStripes, s"stripe $stripe out of range 0..${footer.numStripes - 1}")
    loadColumnMetadata(columns.map(_._1))
    val rows = stripes.rowCount(stripe)
    val partial = selection != null && !selection.covers(rows)
    val plans = columns.map { case (c, node) =>
      val m = cmbs.get(c)
      m.foreach { cmb =>
        if (cmb.stripeRowCount(stripe) != rows)
          throw new InvalidFermionFileException(
            path,
            cmbOffset(c),
            s"CMB of column `${field(c).name}` gives stripe $stripe ${cmb.stripeRowCount(stripe)} rows, the directory $rows"
          )
      }
      val pages = if (partial) m.flatMap(cmb => selectedPages(c, cmb, node, stripe, rows, selection)) else None
      ColumnPlan(c, node, m, pages)
    }
    val wanted = plans.flatMap { p =>
      p.cmb.toSeq.flatMap { m =>
        p.node.streams.flatMap { s =>
          val len = m.chunkLength(s, stripe)
          if (len == 0 || (m.descType(s) == DescType.Simple && len == FileLayout.AllNullChunkLength)) Nil
          else p.dataPages match {
            case Some(sel) if m.streamType(s) == StreamType.Data => sel.map(pg => ByteRange(pg.offset, pg.length))
            case _ => Seq(ByteRange(m.chunkOffset(s, stripe), len))
          }
        }
      }
    }
    val merged = RangeCoalescer.coalesce(wanted, coalesceGap, options.maxCoalescedBytes).map(_.range)
    // The tail buffer already holds the last stripe of a small file.
    val (inTail, toRead) =
      merged.partition(r => r.offset >= tailStart && r.offset - tailStart <= tail.remaining() - r.length)
    val futures = inTail.map(r =>
      r -> java.util.concurrent.CompletableFuture.completedFuture(bytesAt(r.offset, r.length, metadata = false))
    ) ++
      toRead.zip(if (now) input.readNow(toRead) else input.readRanges(toRead))
    pagesSkipped += plans.map(p =>
      p.dataPages.map(sel => p.cmb.get.fullNumPages(p.node.streamOf(dataIndex(p.node)), stripe) - sel.size).getOrElse(0)
    ).sum
    new StripeFetch(stripe, rows, plans, futures, inTail.size)
  }

  /** Decodes a fetched stripe (waiting for its reads). Rows outside the fetch's selection may
    * hold any value: the caller drops them. */
  private[core] def decode(f: StripeFetch, allocator: BufferAllocator): IndexedSeq[FieldVector] = {
    f.claim()
    val fetched = IndexedSeq.newBuilder[(ByteRange, ByteBuffer)]
    // Decoded vectors hold copies of the bytes and every decoding thread has finished when `run`
    // returns (or throws): the buffers read for this fetch can then serve later reads.
    try {
      f.futures.foreach { case (r, fut) => fetched += r -> FermionFileReader.await(fut) }
      val buffers = fetched.result()
      def chunk(offset: Long, length: Long): ByteBuffer = FermionFileReader.sliceOf(buffers, offset, length)
      val out = new Array[FieldVector](f.plans.size)
      def decodeOne(i: Int): Unit = {
        val d = borrowDecoder()
        try { val p = f.plans(i); out(i) = d.decode(p.node, p.cmb, f.stripe, f.rows, chunk, allocator, p.dataPages) }
        finally idleDecoders.add(d)
      }
      try {
        ParallelDecode.run(f.plans.size, options.decodeThreads, f.bytes)(decodeOne)
        out.toIndexedSeq
      } catch { case t: Throwable => out.filter(_ != null).foreach(_.close()); throw t }
    } finally input.releaseReadBuffers(fetched.result().drop(f.fromTail).map(_._2))
  }

  /** DATA pages skipped so far because no selected row lies in them. */
  def dataPagesSkipped: Long = pagesSkipped
  private var pagesSkipped = 0L
  private val coalesceGap = if (options.coalesceGapBytes >= 0) options.coalesceGapBytes else input.defaultCoalesceGap

  private def dataIndex(node: ProjectedNode): Int = node.field.ownStreamTypes.indexOf(StreamType.Data)

  /** The DATA pages of a flat column that hold selected rows, or None when the column is read
    * whole: nested, a single page, or pages that do not add up to the stripe (then the decoder's
    * checks report the damage). */
  private def selectedPages(
      c: Int,
      m: ColumnMetadataBlock,
      node: ProjectedNode,
      stripe: Int,
      rows: Int,
      selection: RowRanges
  ): Option[IndexedSeq[SelectedPage]] = {
    if (node.children.nonEmpty || node.elementsDeferred || FermionType.isNested(node.field.dataType)) return None
    val di = dataIndex(node)
    if (di < 0) return None
    val s = node.streamOf(di)
    if (m.descType(s) != DescType.Full || m.fullLength(s, stripe) == 0) return None
    val n = m.fullNumPages(s, stripe)
    if (n <= 1) return None
    val pool = m.fullPageMetaOffset(s, stripe)
    val t = node.field.dataType
    // Fixed-width values can be decoded at chosen slots of BITPACK, FOR and dictionary pages.
    val byRow = !FermionType.isVariableWidth(t) && t != FermionType.Bool
    def fewRows(wanted: Int, slots: Int) = byRow && wanted.toLong * FermionFileReader.FewRowsShare <= slots
    val out = IndexedSeq.newBuilder[SelectedPage]
    var row = 0L
    var at = m.fullOffset(s, stripe)
    var p = 0
    while (p < n) {
      val rc = m.pageRowCount(pool, p)
      val size = m.pageSize(pool, p) & 0xffffffffL
      if (rc < 0 || row + rc > rows) return None
      val from = row.toInt
      val wanted = selection.countIn(from, from + rc)
      if (wanted > 0)
        out += SelectedPage(from, rc, at, size, p, if (fewRows(wanted, rc)) selection.rowsIn(from, from + rc) else null)
      row += rc
      at += size
      p += 1
    }
    if (row != rows || at != m.fullOffset(s, stripe) + m.fullLength(s, stripe)) None else Some(out.result())
  }

  def close(): Unit = input.close()
}

/** One DATA page to decode: its first slot, slot count, bytes in the file (header included), its
  * index in the chunk (its PageMeta), and, when the selection keeps few of its slots, those slots
  * (ascending, from 0 at the page's first slot): the decoder may then write only their values. */
final private[core] case class SelectedPage(
    firstSlot: Int,
    slots: Int,
    offset: Long,
    length: Long,
    page: Int = -1,
    kept: Array[Int] = null
)

/** What [[FermionFileReader.fetch]] planned for one column: its CMB (None: null in every row) and,
  * when only some DATA pages are read, which. */
final private[core] case class ColumnPlan(
    column: Int,
    node: ProjectedNode,
    cmb: Option[ColumnMetadataBlock],
    dataPages: Option[IndexedSeq[SelectedPage]]
)

/** A stripe whose bytes are being fetched (see [[FermionFileReader.fetch]]): the first `fromTail`
  * ranges are views of the reader's tail buffer, the others buffers read for this fetch alone. */
final private[core] class StripeFetch private[read] (
    val stripe: Int,
    val rows: Int,
    private[read] val plans: IndexedSeq[ColumnPlan],
    private[read] val futures: IndexedSeq[(ByteRange, java.util.concurrent.CompletableFuture[ByteBuffer])],
    private[read] val fromTail: Int
) {
  private val decoded = new java.util.concurrent.atomic.AtomicBoolean

  /** Its buffers are handed back after one decode: a second would read reused memory. */
  private[read] def claim(): Unit =
    if (!decoded.compareAndSet(false, true))
      throw new IllegalStateException(s"stripe $stripe's fetch was already decoded")

  /** Bytes this fetch reads. */
  def bytes: Long = futures.map(_._1.length).sum
}

object FermionFileReader {

  /** A selected page keeping at most one slot in this many is decoded at its kept slots only, where
    * its encoding allows: at 1 in 4 and fewer, finding each value's bits alone cost less than
    * unpacking the page whole (TPC-H Q6's later filter columns keep 1 row in 7, its returned
    * column 1 in 55). */
  private[read] val FewRowsShare = 4

  /** Set bits among the first `bits` bits (LSB-first) of `bytes(off ..)`. */
  private[read] def countBits(bytes: Array[Byte], off: Int, bits: Int): Long = {
    var n = 0L
    var i = 0
    val whole = bits >>> 3
    while (i < whole) { n += Integer.bitCount(bytes(off + i) & 0xff); i += 1 }
    val rest = bits & 7
    if (rest != 0) n += Integer.bitCount(bytes(off + whole) & ((1 << rest) - 1))
    n
  }

  /** The bytes of a finished read; its failure rethrown as it was raised (a Fermion error stays typed). */
  private def await(f: java.util.concurrent.CompletableFuture[ByteBuffer]): ByteBuffer =
    try f.join()
    catch {
      case e: java.util.concurrent.CompletionException if e.getCause != null =>
        e.getCause match {
          case u: java.io.UncheckedIOException => throw u.getCause
          case other => throw other
        }
    }

  /** The bytes [offset, offset + length) out of the coalesced reads that contain them. */
  private def sliceOf(buffers: IndexedSeq[(ByteRange, ByteBuffer)], offset: Long, length: Long): ByteBuffer = {
    val (range, buf) = buffers.find { case (r, _) => offset >= r.offset && offset + length <= r.end }
      .getOrElse(throw new IllegalStateException(s"bytes at $offset were not fetched"))
    val b = buf.duplicate()
    b.position(buf.position() + (offset - range.offset).toInt)
    b.limit(b.position() + length.toInt)
    b.slice()
  }

  /** Whether the file at `path` ends with the Fermion magic: a cheap test of what a file is meant to be
    * (one 4-byte read), not of its validity, which [[open]] checks. */
  def hasFermionMagic(path: Path, conf: Configuration): Boolean = {
    val input = HadoopInputFile.open(path, conf)
    try {
      val len = input.length
      val magic = FileLayout.Magic
      len >= magic.length && {
        val tail = input.readFully(len - magic.length, magic.length)
        magic.indices.forall(i => tail.get(tail.position() + i) == magic(i))
      }
    } finally input.close()
  }

  def open(path: Path, conf: Configuration, options: ReaderOptions): FermionFileReader =
    open(HadoopInputFile.open(path, conf), options)

  /** [[open]] of a file whose length is known (from a listing): no status request. */
  def open(path: Path, conf: Configuration, options: ReaderOptions, length: Long): FermionFileReader =
    open(HadoopInputFile.open(path, conf, length), options)

  /** Opens a file to read `columns` (top-level column indices) of it. In a file with a column
    * directory (format 1.5) of many more columns than these, only their schema nodes and CMB
    * locations are read and checked, not the whole schema and CIT: metadata in proportion to the
    * columns read. With no columns, only the footer and the stripe directory are read (row and
    * stripe counts, checked by the directory's trailer). Otherwise (older files, metadata in the
    * tail read, many columns) it is [[open]]. Any other column stays readable: asking for it, or
    * for [[FermionFileReader.schema]], reads the rest. `length`: the file's length when known
    * (from a listing), else -1. */
  def openColumns(
      path: Path,
      conf: Configuration,
      options: ReaderOptions,
      length: Long,
      columns: Seq[Int]
  ): FermionFileReader =
    open(
      if (length >= 0) HadoopInputFile.open(path, conf, length) else HadoopInputFile.open(path, conf),
      options,
      Some(columns)
    )

  /** Opens `input` and validates footer and metadata; closes `input` if that fails. */
  private[core] def open(
      input: InputFile,
      options: ReaderOptions,
      columns: Option[Seq[Int]] = None
  ): FermionFileReader =
    try openUnsafe(input, options, columns)
    catch { case t: Throwable => input.close(); throw t }

  /** Where the data area ends: before the column directory (format 1.5), else at CIT.offset[0]. */
  private[read] def dataAreaEnd(footer: Footer, cmbAreaStart: Long): Long =
    if (footer.hasColumnDirectory) cmbAreaStart - ColumnDirectory.byteSize(footer.numColumns) else cmbAreaStart

  /** Opened through the column directory: a file of at least this many columns for each one asked
    * for; below, reading the whole schema and CIT costs about as much. */
  private val ColumnsPerOpenedColumn = 4

  private def openUnsafe(input: InputFile, options: ReaderOptions, columns: Option[Seq[Int]]): FermionFileReader = {
    val path = input.path
    val fileLen = input.length
    if (fileLen < FileLayout.HeaderSize + FileLayout.FooterSize)
      throw new InvalidFermionFileException(
        path,
        0,
        s"file of $fileLen bytes is too short to be a Fermion file (at least ${FileLayout.HeaderSize + FileLayout.FooterSize} bytes)"
      )
    val prefetch =
      if (options.tailPrefetchBytes >= 0) options.tailPrefetchBytes.toLong
      else if (columns.nonEmpty) input.columnsTailPrefetch
      else input.defaultTailPrefetch
    val tailLen = math.min(fileLen, math.max(prefetch, FileLayout.FooterSize.toLong)).toInt
    val tailStart = fileLen - tailLen
    val tail = input.readFully(tailStart, tailLen)
    val footer = checkedFooter(path, tail, fileLen)
    val wanted = columns.map(_.distinct).getOrElse(Nil)
    val throughDirectory = footer.hasColumnDirectory && columns.nonEmpty && footer.schemaOffset < tailStart &&
      wanted.size.toLong * ColumnsPerOpenedColumn <= footer.numColumns
    if (throughDirectory) openThroughDirectory(input, footer, tail, tailStart, options, wanted)
    else {
      val (metadata, extra) = readMetadata(input, footer, tail, tailStart, options)
      val stripes = StripeDirectory.view(metadata.stripeDirectory, footer.numStripes)
      checkStripes(path, footer, stripes, dataAreaEnd(footer, metadata.cit.cmbAreaStart))
      new FermionFileReader(
        input,
        footer,
        stripes,
        metadata,
        Map.empty,
        metadata.cit.cmbAreaStart,
        tail,
        tailStart,
        options,
        extra
      )
    }
  }

  /** The footer at the end of `tail`, with the checks that come before any of its offsets is used
    * (docs/format.md 15.1, checks 1-5). */
  private def checkedFooter(path: String, tail: ByteBuffer, fileLen: Long): Footer = {
    val tailLen = tail.remaining()
    val footerAt = tailLen - FileLayout.FooterSize
    val footerOffset = fileLen - FileLayout.FooterSize
    if (!Footer.magicMatches(tail, tail.position() + tailLen - 4))
      throw new InvalidFermionFileException(
        path,
        fileLen - 4,
        "the file does not end with the Fermion magic 'FRMN': it is truncated or not a Fermion file"
      )
    val footer = Footer.decode(tail.duplicate().position(tail.position() + footerAt))
    if (footer.major != FormatVersion.Major)
      throw new UnsupportedFermionVersionException(path, footerOffset + 56, footer.major, footer.minor)

    // Regions must lie before the footer, in order: schema, stripe directory, CIT.
    if (footer.numColumns < 0 || footer.numStripes < 0 || footer.schemaLength < 0)
      throw new InvalidFermionFileException(
        path,
        footerOffset,
        s"footer has negative counts (columns ${footer.numColumns}, stripes ${footer.numStripes})"
      )
    def within(offset: Long, len: Long): Unit = {
      if (offset < FileLayout.HeaderSize) throw new InvalidFermionFileException(
        path,
        footerOffset,
        s"footer points at offset $offset, inside the file header"
      )
      if (offset + len > footerOffset) throw new FermionOffsetOutOfRangeException(path, offset, len, fileLen)
    }
    within(footer.schemaOffset, footer.schemaLength)
    within(footer.stripeDirOffset, footer.numStripes.toLong * StripeDirectory.EntrySize)
    within(footer.citOffset, footer.citLength)
    if (
      footer.stripeDirOffset != footer.schemaOffset + footer.schemaLength ||
      footer.citOffset != footer.stripeDirOffset + footer.numStripes.toLong * StripeDirectory.EntrySize ||
      footer.metadataEnd != footerOffset
    )
      throw new InvalidFermionFileException(path, footerOffset, "footer offsets are inconsistent")
    if (footer.metadataEnd - footer.schemaOffset > Int.MaxValue)
      throw new InvalidFermionFileException(path, footerOffset, "metadata region of 2 GiB or more")
    footer
  }

  /** `[offset, offset + len)` out of the tail read on open, when it holds them. */
  private def sliceAt(tail: ByteBuffer, tailStart: Long, offset: Long, len: Long): Option[ByteBuffer] =
    if (offset < tailStart || offset - tailStart > tail.remaining() - len) None
    else {
      val b = tail.duplicate()
      b.position(tail.position() + (offset - tailStart).toInt)
      b.limit(b.position() + len.toInt)
      Some(b.slice())
    }

  /** The whole metadata region (schema, stripe directory, CIT) decoded and checked (15.1, checks
    * 6, 7 and 9), and the bytes read for it beyond the tail. */
  private[read] def readMetadata(
      input: InputFile,
      footer: Footer,
      tail: ByteBuffer,
      tailStart: Long,
      options: ReaderOptions
  ): (FileMetadata, Long) = {
    val path = input.path
    val metaLen = footer.metadataEnd - footer.schemaOffset
    val (meta, extra) = sliceAt(tail, tailStart, footer.schemaOffset, metaLen) match {
      case Some(b) => (b, 0L)
      case None => (input.readFully(footer.schemaOffset, metaLen.toInt), metaLen)
    }
    if (options.verifyChecksums) {
      val crc = new CRC32
      crc.update(meta.duplicate())
      crc.update(footer.crcCoveredBytes())
      val actual = crc.getValue.toInt
      if (actual != footer.metadataCrc32)
        throw new FermionChecksumException(
          path,
          footer.schemaOffset,
          "metadata (schema, stripe directory, CIT, footer)",
          footer.metadataCrc32,
          actual
        )
    }
    def region(offset: Long, len: Long): ByteBuffer = {
      val b = meta.duplicate(); b.position((offset - footer.schemaOffset).toInt); b.limit(b.position() + len.toInt);
      b.slice()
    }
    val schema =
      try SchemaCodec.decode(region(footer.schemaOffset, footer.schemaLength))
      catch {
        case e: IllegalArgumentException =>
          throw new InvalidFermionFileException(path, footer.schemaOffset, s"schema: ${e.getMessage}", e)
      }
    if (schema.size != footer.numColumns)
      throw new InvalidFermionFileException(
        path,
        footer.schemaOffset,
        s"schema has ${schema.size} columns, footer says ${footer.numColumns}"
      )
    val cit = ColumnIndexTable.view(region(footer.citOffset, footer.citLength), footer.numColumns)
    var c = 0
    while (c < footer.numColumns) {
      if (
        cit.cmbOffset(c) < FileLayout.HeaderSize || cit.cmbLength(c) < 0 || cit.cmbOffset(c) > footer.schemaOffset - cit
          .cmbLength(c)
      )
        throw new InvalidFermionFileException(
          path,
          footer.citOffset + c * 8L,
          s"CIT entry of column $c points outside the CMB area"
        )
      c += 1
    }
    if (cit.cmbAreaEnd != footer.schemaOffset)
      throw new InvalidFermionFileException(
        path,
        footer.citOffset + footer.numColumns * 8L,
        s"CIT ends the CMB area at ${cit.cmbAreaEnd}, the schema starts at ${footer.schemaOffset}"
      )
    if (dataAreaEnd(footer, cit.cmbAreaStart) < FileLayout.HeaderSize)
      throw new InvalidFermionFileException(
        path,
        footer.citOffset,
        s"the CMB area starts at ${cit.cmbAreaStart}, leaving no room for the column directory"
      )
    (
      FileMetadata(schema, cit, region(footer.stripeDirOffset, footer.numStripes.toLong * StripeDirectory.EntrySize)),
      extra
    )
  }

  /** Stripes: rows adding up to the footer's, byte ranges in order inside the data area (what chunk
    * descriptors are checked against; 15.1, check 8). */
  private def checkStripes(path: String, footer: Footer, stripes: StripeDirectory, dataEnd: Long): Unit = {
    if (stripes.firstRows(footer.numStripes) != footer.numRows)
      throw new InvalidFermionFileException(
        path,
        footer.stripeDirOffset,
        s"stripes hold ${stripes.firstRows(footer.numStripes)} rows, footer says ${footer.numRows}"
      )
    var prevEnd = FileLayout.HeaderSize.toLong
    var t = 0
    while (t < footer.numStripes) {
      val off = stripes.dataOffset(t)
      val len = stripes.dataLength(t)
      if (stripes.rowCount(t) < 1 || off < prevEnd || len < 0 || off > dataEnd - len)
        throw new InvalidFermionFileException(
          path,
          footer.stripeDirOffset + t * StripeDirectory.EntrySize.toLong,
          s"stripe $t holds ${stripes.rowCount(t)} rows in [$off, +$len): stripes need rows and lie in order in the data area [8, $dataEnd)"
        )
      prevEnd = off + len
      t += 1
    }
  }

  /** Opens `columns` through the column directory (docs/format.md 15.9): its trailer (whose CRC
    * covers the stripe directory and the footer), the entry groups of those columns, their schema
    * nodes; every piece checked by its CRC before it is used. */
  private def openThroughDirectory(
      input: InputFile,
      footer: Footer,
      tail: ByteBuffer,
      tailStart: Long,
      options: ReaderOptions,
      columns: Seq[Int]
  ): FermionFileReader = {
    val path = input.path
    var extra = 0L
    // The bytes of `ranges`: from the tail where it holds them, the rest read at once.
    def readAll(ranges: IndexedSeq[ByteRange]): IndexedSeq[ByteBuffer] = {
      val inTail = ranges.map(r => sliceAt(tail, tailStart, r.offset, r.length))
      val rest = ranges.indices.filter(i => inTail(i).isEmpty)
      val fetched = rest.zip(input.readRanges(rest.map(ranges))).toMap
      extra += rest.map(i => ranges(i).length).sum
      ranges.indices.map(i => inTail(i).getOrElse(await(fetched(i))))
    }
    def invalid(at: Long, why: String) = new InvalidFermionFileException(path, at, why)
    val n = footer.numColumns
    columns.find(c => c < 0 || c >= n).foreach(c =>
      throw new IllegalArgumentException(s"column $c out of range 0..${n - 1} of $path")
    )
    val cmbAreaStart =
      readAll(IndexedSeq(ByteRange(footer.citOffset, 8)))(0).order(java.nio.ByteOrder.LITTLE_ENDIAN).getLong(0)
    val dirStart = dataAreaEnd(footer, cmbAreaStart)
    if (cmbAreaStart > footer.schemaOffset || dirStart < FileLayout.HeaderSize)
      throw invalid(
        footer.citOffset,
        s"CIT.offset[0] = $cmbAreaStart leaves no room for the column directory of $n columns"
      )
    val stripeDirLen = footer.numStripes.toLong * StripeDirectory.EntrySize
    val trailerAt = cmbAreaStart - ColumnDirectory.TrailerSize
    val trailerAndStripes = readAll(
      IndexedSeq(ByteRange(trailerAt, ColumnDirectory.TrailerSize), ByteRange(footer.stripeDirOffset, stripeDirLen))
    )
    val trailerBytes = trailerAndStripes(0)
    val stripeDirBytes = trailerAndStripes(1)
    val trailer = ColumnDirectory.trailer(trailerBytes)
      .getOrElse(throw invalid(trailerAt, "no column directory ends at CIT.offset[0] (magic 'FCDR' missing)"))
    if (options.verifyChecksums) {
      val actual = ColumnDirectory.trailerCrc(trailerBytes, stripeDirBytes, footer.crcCoveredBytes())
      if (actual != trailer.crc32)
        throw new FermionChecksumException(
          path,
          trailerAt,
          "column directory trailer (stripe directory, footer)",
          trailer.crc32,
          actual
        )
    }
    if (trailer.cmbAreaStart != cmbAreaStart || trailer.numColumns != n)
      throw invalid(
        trailerAt,
        s"column directory trailer gives ${trailer.numColumns} columns and a CMB area at ${trailer.cmbAreaStart}; the footer and CIT $n and $cmbAreaStart"
      )
    val stripes = StripeDirectory.view(stripeDirBytes, footer.numStripes)
    checkStripes(path, footer, stripes, dirStart)

    val wantedGroups = columns.map(_ / ColumnDirectory.GroupSize).distinct.sorted.toIndexedSeq
    val groupBytes = wantedGroups.zip(readAll(wantedGroups.map { g =>
      val (at, len) = ColumnDirectory.groupRange(n, g)
      ByteRange(dirStart + at, len)
    })).toMap
    if (options.verifyChecksums) groupBytes.foreach { case (g, b) =>
      val (stored, actual) = ColumnDirectory.groupCrcs(g, b)
      if (stored != actual)
        throw new FermionChecksumException(
          path,
          dirStart + ColumnDirectory.groupRange(n, g)._1,
          s"column directory entries of columns ${g * ColumnDirectory.GroupSize}..${math.min(n, (g + 1) * ColumnDirectory.GroupSize) - 1}",
          stored,
          actual
        )
    }
    val entries = columns.map { c =>
      val g = c / ColumnDirectory.GroupSize
      val e = ColumnDirectory.entry(groupBytes(g), c % ColumnDirectory.GroupSize)
      val at =
        dirStart + ColumnDirectory.groupRange(n, g)._1 + (c % ColumnDirectory.GroupSize) * ColumnDirectory.EntrySize
      if (
        e.cmbLength < 0 || (e
          .cmbLength > 0 && (e.cmbOffset < cmbAreaStart || e.cmbOffset > footer.schemaOffset - e.cmbLength))
      )
        throw invalid(at, s"column directory entry of column $c points outside the CMB area")
      if (e.nodeOffset < 4 || e.nodeLength < 8 || e.nodeOffset > footer.schemaLength - e.nodeLength)
        throw invalid(at, s"column directory entry of column $c points outside the schema")
      c -> e
    }
    val nodes =
      readAll(entries.map { case (_, e) => ByteRange(footer.schemaOffset + e.nodeOffset, e.nodeLength) }.toIndexedSeq)
    val opened = entries.zip(nodes).map { case ((c, e), bytes) =>
      val at = footer.schemaOffset + e.nodeOffset
      if (options.verifyChecksums) {
        val crc = new CRC32
        crc.update(bytes.duplicate())
        if (crc.getValue.toInt != e.nodeCrc32)
          throw new FermionChecksumException(path, at, s"schema node of column $c", e.nodeCrc32, crc.getValue.toInt)
      }
      val field =
        try SchemaCodec.decodeField(bytes)
        catch { case ex: IllegalArgumentException => throw invalid(at, s"schema node of column $c: ${ex.getMessage}") }
      c -> OpenedColumn(field, e.cmbOffset, e.cmbLength.toLong, e.cmbCrc32)
    }.toMap
    new FermionFileReader(input, footer, stripes, null, opened, cmbAreaStart, tail, tailStart, options, extra)
  }
}

/** The whole schema and CIT of a file, and its stripe directory's bytes. */
final private[read] case class FileMetadata(schema: FermionSchema, cit: ColumnIndexTable, stripeDirectory: ByteBuffer)

/** A column opened through the column directory: its schema node and where its CMB is. */
final private[read] case class OpenedColumn(field: FermionField, cmbOffset: Long, cmbLength: Long, cmbCrc32: Int)
