package io.fermion.core.scan

import java.nio.{ByteBuffer, ByteOrder}

import io.fermion.core.codec.{PageCodec, ZstdBlocks}
import io.fermion.core.encoding.PageValues
import io.fermion.core.errors.InvalidFermionFileException
import io.fermion.core.layout.{ColumnMetadataBlock, DescType, FileLayout, PageEncoding, PageHeader, StreamType}
import io.fermion.core.read.{ColumnDecoder, FermionFileReader, PageDecoder, ProjectedNode, ReaderOptions}
import io.fermion.core.schema.{ArrowSchemaMapping, FermionType}
import io.fermion.core.stats.PageStatistics
import io.fermion.core.storage.{ByteRange, RangeCoalescer}
import org.apache.arrow.memory.BufferAllocator
import org.apache.arrow.vector._
import org.apache.arrow.vector.complex.{ListVector, MapVector, StructVector}

/** Reads given rows of one file without decoding whole stripes: the random-access path.
  *
  * For each stripe that holds requested rows, rounds of reads are issued (each one vectored
  * request with nearby ranges merged): first every VALIDITY and OFFSETS chunk of the requested
  * columns' nodes (what maps rows to the slots of nested nodes and to byte positions), then only
  * the DATA pages that hold requested slots, found by the page row counts of the CMB. Of a PLAIN
  * page stored uncompressed only the requested values' bytes are read (their CRC32 cannot be
  * checked without the whole page; every page read whole is checked as usual). Of a larger page
  * that may be a PLAIN page compressed in blocks (`zstd-blocks`), the second round reads the
  * header and block table, and a third only the blocks holding the requested values (each checked
  * against its own CRC32). Values are decoded into Arrow vectors of just the requested rows, in
  * row order. */
final private[scan] class FileTake(
    reader: FermionFileReader,
    verifyChecksums: Boolean,
    /** Read whole pages even where only some values of a PLAIN page are needed (checks their CRC32). */
    wholePages: Boolean,
    coalesceGap: Long,
    /** Decoded VALIDITY and OFFSETS chunks kept between takes (None: decode every time). */
    structures: Option[StructureCache] = None
) {
  private val path = reader.path
  // A file written without page CRCs has 0 in every header's crc32 (and block table): nothing to verify.
  private val checkCrcs = verifyChecksums && reader.footer.hasPageCrc
  private val pages = new PageDecoder(path, checkCrcs)
  private var read = 0L

  /** Bytes fetched by this object. */
  def bytesRead: Long = read

  /** DATA pages decoded by this object, and the time spent on them. */
  def pagesDecoded: Long = pages.pagesDecoded

  /** DATA pages of the columns taken that no requested row needed (what a scan counts as skipped). */
  def pagesSkipped: Long = skipped
  private var skipped = 0L
  def decodeNanos: Long = pages.decodeNanos

  /** For each `(stripe, rows)` (rows sorted, distinct, within the stripe), the values of
    * `columns` (file column, projection) in those rows. All stripes share the two rounds of reads. */
  def take(
      stripes: IndexedSeq[(Int, Array[Int])],
      columns: IndexedSeq[(Int, ProjectedNode)],
      allocator: BufferAllocator
  ): IndexedSeq[IndexedSeq[FieldVector]] = {
    reader.loadColumnMetadata(columns.map(_._1))
    val plans = stripes.map { case (stripe, rows) =>
      val stripeRows = reader.stripes.rowCount(stripe)
      rows.foreach(r => require(r >= 0 && r < stripeRows, s"row $r is outside stripe $stripe ($stripeRows rows)"))
      columns.map { case (c, node) => new ColumnTake(c, reader.columnMetadata(c), node, stripe, stripeRows, rows) }
    }
    // Round 1: VALIDITY and OFFSETS chunks of every node.
    val first = fetch(plans.flatten.flatMap(_.structureRanges))
    plans.flatten.foreach(_.readStructure(first))
    // Round 2: DATA pages (or the requested values of PLAIN uncompressed pages, or the block table
    // of pages that may be compressed in blocks).
    val second = fetch(plans.flatten.flatMap(_.dataRanges))
    plans.flatten.foreach(_.resolveProbes(second))
    // Round 3: the blocks or packed words holding requested values (or the whole page).
    val probed = plans.flatten.flatMap(_.probedRanges)
    val data = if (probed.isEmpty) second else second.andThen(fetch(probed))
    skipped += plans.flatten.map(_.pagesSkipped).sum
    val out = plans.map(ps => new Array[FieldVector](ps.size))
    try {
      plans.indices.foreach(k => plans(k).indices.foreach(i => out(k)(i) = plans(k)(i).build(data, allocator)))
      out.map(_.toIndexedSeq)
    } catch { case t: Throwable => out.foreach(_.foreach(v => if (v != null) v.close())); throw t }
  }

  /** The bytes of one or more rounds of reads, each round's ranges sorted and disjoint. */
  final private class Fetched(val rounds: List[IndexedSeq[(ByteRange, ByteBuffer)]]) {
    def andThen(next: Fetched): Fetched = new Fetched(rounds ++ next.rounds)

    def apply(offset: Long, length: Long): ByteBuffer = {
      // The coalescer drops empty ranges (an empty string's value), so they were never fetched.
      if (length == 0) return ByteBuffer.allocate(0).order(ByteOrder.LITTLE_ENDIAN)
      rounds.iterator.map(find(_, offset, length)).collectFirst { case Some(b) => b }
        .getOrElse(throw new IllegalStateException(s"bytes at $offset were not fetched"))
    }

    private def find(parts: IndexedSeq[(ByteRange, ByteBuffer)], offset: Long, length: Long): Option[ByteBuffer] = {
      // The last range starting at or before `offset`.
      var lo = 0
      var hi = parts.size - 1
      while (lo < hi) {
        val mid = (lo + hi + 1) >>> 1
        if (parts(mid)._1.offset <= offset) lo = mid else hi = mid - 1
      }
      if (parts.isEmpty) return None
      val (range, buf) = parts(lo)
      if (offset < range.offset || offset + length > range.end) None
      else {
        val b = buf.duplicate()
        b.position(buf.position() + (offset - range.offset).toInt)
        b.limit(b.position() + length.toInt)
        Some(b.slice().order(ByteOrder.LITTLE_ENDIAN))
      }
    }
  }

  private def fetch(ranges: Seq[ByteRange]): Fetched = if (ranges.isEmpty) new Fetched(Nil)
  else {
    val merged = RangeCoalescer.coalesce(ranges, coalesceGap, 64L << 20).map(_.range)
    val futures = reader.input.readScattered(merged)
    val buffers = merged.zip(futures).map { case (r, f) =>
      val b =
        try f.join()
        catch {
          case e: java.util.concurrent.CompletionException if e.getCause != null =>
            e.getCause match {
              case u: java.io.UncheckedIOException => throw u.getCause
              case other => throw other
            }
        }
      read += r.length
      r -> b
    }
    new Fetched(List(buffers))
  }

  /** One node of a column's projection in one stripe: its slots there, the requested ones, and
    * what was read for them. */
  final private class NodeTake(column: Int, val node: ProjectedNode, m: ColumnMetadataBlock, stripe: Int) {
    val field = node.field
    var slots = 0

    /** Requested slots, sorted and distinct. */
    var wanted: Array[Int] = Array.emptyIntArray

    /** Validity of every slot (null: all valid; an empty array: all null). */
    var validity: Array[Byte] = _
    var allNull = false

    /** Where each slot's values start (lists, maps, strings); slot `slots` gives the end. */
    var offsets: SlotOffsets = _
    val children: IndexedSeq[NodeTake] = node.children.map(c => new NodeTake(column, c, m, stripe))

    private def cached[T](stream: Int): Option[T] =
      structures.flatMap(_.get(column, stream, stripe)).map(_.asInstanceOf[T])

    private def stream(own: Int) = node.streamOf(own)
    def hasOffsets: Boolean = field.ownStreamTypes.contains(StreamType.Offsets)
    def dataStream: Option[Int] = field.ownStreamTypes.indexOf(StreamType.Data) match {
      case -1 => None
      case i => Some(stream(i))
    }

    def structureRanges: Seq[ByteRange] = {
      val v = if (cached[AnyRef](stream(0)).isEmpty) validityChunk.toSeq else Nil
      val o = if (hasOffsets && cached[AnyRef](stream(1)).isEmpty) offsetsChunk.toSeq else Nil
      v ++ o ++ children.flatMap(_.structureRanges)
    }

    private def validityChunk: Option[ByteRange] = {
      val s = stream(0)
      if (m.descType(s) != DescType.Simple) None
      else {
        val len = m.simpleLength(s, stripe)
        if (len == 0 || len == FileLayout.AllNullChunkLength) None else Some(ByteRange(m.simpleOffset(s, stripe), len))
      }
    }

    private def offsetsChunk: Option[ByteRange] = {
      val s = stream(1)
      val len = m.chunkLength(s, stripe)
      if (len == 0) None else Some(ByteRange(m.chunkOffset(s, stripe), len))
    }

    /** Decodes validity and offsets, then derives the children's slots. */
    def readStructure(fetched: Fetched, slotCount: Int): Unit = {
      slots = slotCount
      val s = stream(0)
      m.descType(s) match {
        case DescType.UseDefault => validity = null
        case DescType.ForceNull => allNull = true
        case _ =>
          val len = m.simpleLength(s, stripe)
          if (len == 0) validity = null
          else if (len == FileLayout.AllNullChunkLength) allNull = true
          else validity = cached[Array[Byte]](s).getOrElse {
            val bitmap = new Array[Byte]((slots + 7) >>> 3)
            var row = 0
            val off = m.simpleOffset(s, stripe)
            pages.foreachPage(fetched(off, len), off, PageValues.Bitmap, slots) { p =>
              if ((row & 7) != 0)
                throw new InvalidFermionFileException(
                  path,
                  off,
                  s"VALIDITY pages of `${field.name}` do not match its slots"
                )
              System.arraycopy(p.bytes, p.off, bitmap, row >>> 3, p.len)
              row += p.valueCount
            }
            if (row != slots)
              throw new InvalidFermionFileException(
                path,
                off,
                s"VALIDITY chunk of `${field.name}` covers $row of $slots slots"
              )
            structures.foreach(_.put(column, s, stripe, bitmap, bitmap.length.toLong))
            bitmap
          }
      }
      if (hasOffsets) offsets = cached[SlotOffsets](stream(1)).getOrElse {
        val decoded = offsetsChunk match {
          case None => SlotOffsets.Constant(0, slots)
          case Some(r) => readOffsets(fetched(r.offset, r.length), r.offset)
        }
        structures.foreach(_.put(column, stream(1), stripe, decoded, decoded.bytes))
        decoded
      }
      // Children: a struct's have the node's slots; a list's or map's the elements of its slots.
      field.dataType match {
        case FermionType.Struct => children.foreach { c => c.wanted = wanted; c.readStructure(fetched, slots) }
        case FermionType.List | FermionType.Map =>
          var total = 0L
          var i = 0
          while (i < wanted.length) { total += offsets(wanted(i) + 1) - offsets(wanted(i)); i += 1 }
          if (total > Int.MaxValue)
            throw new InvalidFermionFileException(path, 0L, s"rows of `${field.name}` hold over 2^31 elements")
          val w = new Array[Int](total.toInt)
          var k = 0
          i = 0
          while (i < wanted.length) {
            var e = offsets(wanted(i))
            val end = offsets(wanted(i) + 1)
            while (e < end) { w(k) = e; k += 1; e += 1 }
            i += 1
          }
          children.foreach { c => c.wanted = w; c.readStructure(fetched, offsets(slots)) }
        case _ =>
      }
    }

    /** An OFFSETS chunk as slot offsets: CONSTANT pages that all give the same length (as for
      * fixed-size vectors and fixed-length strings) need no decoding; otherwise lengths are summed
      * into prefix offsets. */
    private def readOffsets(chunk: ByteBuffer, at: Long): SlotOffsets = {
      constantLength(chunk, at).foreach { length =>
        if (length < 0 || length.toLong * slots > Int.MaxValue)
          throw new InvalidFermionFileException(path, at, s"lengths of `${field.name}` exceed 2^31 in one stripe")
        return SlotOffsets.Constant(length, slots)
      }
      val prefix = new Array[Int](slots + 1)
      var row = 0
      pages.foreachPage(chunk, at, PageValues.Fixed(4), slots) { p =>
        // Relative to the page's values: `p.off` is where they start in `p.bytes` (a page read in
        // place from the chunk starts after its header, not at 0).
        val lens = ByteBuffer.wrap(p.bytes, p.off, p.len).slice().order(ByteOrder.LITTLE_ENDIAN)
        var k = 0
        var acc = prefix(row).toLong
        while (k < p.valueCount) {
          val n = lens.getInt(k * 4)
          acc += n
          if (n < 0 || acc > Int.MaxValue)
            throw new InvalidFermionFileException(path, at, s"lengths of `${field.name}` exceed 2^31 in one stripe")
          prefix(row + k + 1) = acc.toInt
          k += 1
        }
        row += p.valueCount
      }
      if (row != slots)
        throw new InvalidFermionFileException(
          path,
          at,
          s"OFFSETS chunk of `${field.name}` holds $row values for $slots slots"
        )
      SlotOffsets.Prefix(prefix)
    }

    /** The one length of an OFFSETS chunk made only of uncompressed CONSTANT pages of that length
      * covering the node's slots (their CRC32s checked as for any page read), if it is one. */
    private def constantLength(chunk: ByteBuffer, at: Long): Option[Int] = {
      val end = chunk.limit()
      var pos = chunk.position()
      var length = -1
      var values = 0L
      while (pos < end) {
        if (end - pos < PageHeader.Size + 4) return None
        val h = PageHeader.decode(chunk, pos)
        if (
          h.encoding != PageEncoding.Constant || h.codec != PageCodec.None ||
          h.storedLength != 4 || h.valueCount < 0
        ) return None
        val v = chunk.getInt(pos + PageHeader.Size)
        if (length >= 0 && v != length) return None
        if (checkCrcs) {
          val crc = new java.util.zip.CRC32
          val body = new Array[Byte](4)
          chunk.duplicate().position(pos + PageHeader.Size).get(body)
          crc.update(body)
          if (crc.getValue.toInt != h.crc32)
            throw new io.fermion.core.errors.FermionChecksumException(
              path,
              at + (pos - chunk.position()),
              "page",
              h.crc32,
              crc.getValue.toInt
            )
        }
        length = v
        values += h.valueCount
        pos += PageHeader.Size + 4
      }
      if (length >= 0 && values == slots) Some(length) else None
    }

    def isValid(slot: Int): Boolean =
      !allNull && (validity == null || ((validity(slot >>> 3) >> (slot & 7)) & 1) != 0)

    /** Ranges of the DATA bytes the wanted slots need: whole pages, or for a PLAIN uncompressed
      * page only its header and the wanted values. */
    lazy val dataPlan: IndexedSeq[DataRead] = dataStream match {
      case Some(s) if wanted.nonEmpty && !allNull && m.descType(s) == DescType.Full && m.fullLength(s, stripe) > 0 =>
        val n = m.fullNumPages(s, stripe)
        val width = FermionType.fixedWidth(field.dataType)
        // Where each page starts, in slots and in the file: kept between takes like the structure.
        val layout = cached[PageLayout](s).getOrElse {
          val starts = new Array[Int](n + 1)
          val offs = new Array[Long](n + 1)
          offs(0) = m.fullOffset(s, stripe)
          if (n <= 1) { starts(1) = slots; offs(1) = offs(0) + m.fullLength(s, stripe) }
          else {
            val pool = m.fullPageMetaOffset(s, stripe)
            var p = 0
            while (p < n) {
              val rc = m.pageRowCount(pool, p)
              if (rc < 0) throw new InvalidFermionFileException(path, offs(0), s"page of `${field.name}` has $rc rows")
              starts(p + 1) = starts(p) + rc
              offs(p + 1) = offs(p) + (m.pageSize(pool, p) & 0xffffffffL)
              p += 1
            }
          }
          if (starts(n) != slots || offs(n) != m.fullOffset(s, stripe) + m.fullLength(s, stripe))
            throw new InvalidFermionFileException(path, offs(0), s"pages of `${field.name}` do not add up to its chunk")
          val l = PageLayout(starts, offs)
          structures.foreach(_.put(column, s, stripe, l, 12L * (n + 1)))
          l
        }
        val starts = layout.starts
        val offs = layout.offsets
        // Wanted slots grouped by page.
        val out = IndexedSeq.newBuilder[DataRead]
        var i = 0
        var p = 0
        while (i < wanted.length) {
          while (wanted(i) >= starts(p + 1)) p += 1
          // The first wanted slot past the page (runs of list elements are long: search, not walk).
          val next = java.util.Arrays.binarySearch(wanted, i, wanted.length, starts(p + 1))
          val j = if (next >= 0) next else -next - 1
          val inPage = java.util.Arrays.copyOfRange(wanted, i, j)
          val pageBytes = offs(p + 1) - offs(p)
          val rowsInPage = starts(p + 1) - starts(p)
          // A page stored exactly as PLAIN values (checked against its header when read).
          val plainBytes: Long =
            if (field.dataType == FermionType.Bool) -1L
            else if (width > 0) rowsInPage.toLong * (if (width == 16) 16 else width)
            else offsets(starts(p + 1)).toLong - offsets(starts(p))
          val few = !wholePages && plainBytes >= 0 && inPage.length.toLong * 8 < rowsInPage
          val partial = few && pageBytes == PageHeader.Size + plainBytes
          // Maybe a PLAIN page compressed in blocks: its table first (a smaller page is read whole).
          val probe = few && !partial && pageBytes > FileTake.BlockProbeMinBytes
          out += DataRead(p, starts(p), offs(p), pageBytes, inPage, i, partial, width, probe, plainBytes)
          i = j
        }
        out.result()
      case _ => IndexedSeq.empty
    }

    /** DATA pages of this node and its children in the stripe that hold no wanted slot. */
    def pagesSkipped: Long = {
      val own = dataStream match {
        case Some(s) if m.descType(s) == DescType.Full => math.max(0, m.fullNumPages(s, stripe) - dataPlan.size)
        case _ => 0
      }
      own + children.map(_.pagesSkipped).sum
    }

    def dataRanges: Seq[ByteRange] =
      dataPlan.flatMap { d =>
        if (d.probe) Seq(ByteRange(d.offset, FileTake.probeBytes(d.plainBytes, d.length)))
        else if (!d.partial) Seq(ByteRange(d.offset, d.length))
        else {
          val ranges = IndexedSeq.newBuilder[ByteRange]
          ranges += ByteRange(d.offset, PageHeader.Size)
          foreachRun(d) { (k, run) =>
            val from = valueBytes(d, d.slots(k))._1
            val until = valueBytes(d, d.slots(k + run - 1))._2
            ranges += ByteRange(d.offset + PageHeader.Size + from, until - from)
          }
          ranges.result()
        }
      } ++ children.flatMap(_.dataRanges)

    /** Calls `f(k, run)` for each run of `run` consecutive slots from `d.slots(k)` (fixed-width
      * values, whose bytes then lie back to back; one slot at a time for variable-width ones). */
    def foreachRun(d: DataRead)(f: (Int, Int) => Unit): Unit = {
      var k = 0
      while (k < d.slots.length) {
        var run = 1
        if (d.width > 0) while (k + run < d.slots.length && d.slots(k + run) == d.slots(k) + run) run += 1
        f(k, run)
        k += run
      }
    }

    /** After round 2: for each probed page, its block table and the blocks its wanted values need
      * (a PLAIN page in blocks), where its wanted values' packed words lie (an uncompressed FOR or
      * BITPACK page), or else the whole page. */
    def resolveProbes(fetched: Fetched): Unit = {
      dataPlan.foreach { d =>
        if (d.probe) {
          val prefix = fetched(d.offset, FileTake.probeBytes(d.plainBytes, d.length))
          val h = PageHeader.decode(prefix, 0)
          if (h.storedLength.toLong != d.length - PageHeader.Size)
            throw new InvalidFermionFileException(
              path,
              d.offset,
              s"page of `${field.name}` stores ${h.storedLength} bytes where its PageMeta says ${d.length - PageHeader.Size}"
            )
          if (
            (h.codec == PageCodec.ZstdBlocks || h.codec == PageCodec.ZstdPrimedBlocks) &&
            h.encoding == PageEncoding.Plain && h.uncompressedLength.toLong == d.plainBytes
          ) ZstdBlocks.parseTable(
            prefix,
            PageHeader.Size,
            prefix.limit() - PageHeader.Size,
            h.storedLength,
            h.uncompressedLength,
            h.codec == PageCodec.ZstdPrimedBlocks
          ) match {
            case Left(why) => throw new InvalidFermionFileException(path, d.offset, why)
            case Right(None) => d.wholeAfterProbe = true
            case Right(Some(t)) =>
              val needed = new Array[Boolean](t.blocks)
              foreachRun(d) { (k, run) =>
                val from = valueBytes(d, d.slots(k))._1
                val until = valueBytes(d, d.slots(k + run - 1))._2
                if (until > from) {
                  var b = t.blockOf(from)
                  while (b <= t.blockOf(until - 1)) { needed(b) = true; b += 1 }
                }
              }
              // A primed block decompresses with block 0's bytes: block 0 is read too, unless an
              // earlier take of this scan left them in the cache.
              if (needed.indices.exists(t.needsPrime) && structures.flatMap(_.prime(d.offset)).isEmpty) needed(0) = true
              d.blocks = t
              d.neededBlocks = needed.indices.filter(needed(_)).toArray
          }
          else d.packed = packedPage(d, h, prefix).orNull
          if (d.blocks == null && d.packed == null) d.wholeAfterProbe = true
        }
      }
      children.foreach(_.resolveProbes(fetched))
    }

    /** The packed words of an uncompressed FOR or BITPACK page of 1-, 2-, 4- or 8-byte values
      * whose header agrees with the CMB (anything else is read whole and checked as usual). */
    private def packedPage(d: DataRead, h: PageHeader, prefix: ByteBuffer): Option[PackedPage] = {
      val w = d.width
      val fixed = w == 1 || w == 2 || w == 4 || w == 8
      if (!fixed || h.codec != PageCodec.None || d.plainBytes / w != h.valueCount) None
      else {
        val (reference, bits, wordsAt) = h.encoding match {
          case PageEncoding.For => (prefix.getLong(PageHeader.Size), prefix.get(PageHeader.Size + 8) & 0xff, 9)
          case PageEncoding.BitPack => (0L, prefix.get(PageHeader.Size) & 0xff, 1)
          case _ => return None
        }
        val words = (h.valueCount.toLong * bits + 63) / 64
        if (bits > 64 || wordsAt + 8 * words != h.storedLength) None
        else Some(PackedPage(reference, bits, d.offset + PageHeader.Size + wordsAt))
      }
    }

    /** Words `[from, until)` of a packed page holding the values of the run of `run` slots from `k`. */
    def packedWords(d: DataRead, k: Int, run: Int): (Long, Long) = {
      val first = (d.slots(k) - d.firstSlot).toLong
      ((first * d.packed.bits) >>> 6, ((first + run) * d.packed.bits + 63) >>> 6)
    }

    /** Round 3: the needed blocks of pages in blocks, the needed words of packed pages, and probed
      * pages that must be read whole. */
    def probedRanges: Seq[ByteRange] =
      dataPlan.flatMap { d =>
        if (d.wholeAfterProbe) Seq(ByteRange(d.offset, d.length))
        else if (d.blocks != null)
          d.neededBlocks.toSeq.map(b =>
            ByteRange(d.offset + PageHeader.Size + d.blocks.starts(b), d.blocks.storedSize(b))
          )
        else if (d.packed != null && d.packed.bits > 0) {
          val ranges = IndexedSeq.newBuilder[ByteRange]
          foreachRun(d) { (k, run) =>
            val (from, until) = packedWords(d, k, run)
            ranges += ByteRange(d.packed.wordsAt + 8 * from, 8 * (until - from))
          }
          ranges.result()
        } else Nil
      } ++ children.flatMap(_.probedRanges)

    /** Byte range of `slot`'s value within a PLAIN page's payload. */
    def valueBytes(d: DataRead, slot: Int): (Long, Long) =
      if (d.width > 0) ((slot - d.firstSlot).toLong * d.width, (slot - d.firstSlot + 1).toLong * d.width)
      else (offsets(slot).toLong - offsets(d.firstSlot), offsets(slot + 1).toLong - offsets(d.firstSlot))
  }

  final private class ColumnTake(
      column: Int,
      cmb: Option[ColumnMetadataBlock],
      node: ProjectedNode,
      stripe: Int,
      rows: Int,
      wanted: Array[Int]
  ) {
    private val root = cmb.map(m => new NodeTake(column, node, m, stripe))
    root.foreach(_.wanted = wanted)

    def structureRanges: Seq[ByteRange] = root.toSeq.flatMap(_.structureRanges)
    def readStructure(f: Fetched): Unit = root.foreach(_.readStructure(f, rows))
    def dataRanges: Seq[ByteRange] = root.toSeq.flatMap(_.dataRanges)
    def resolveProbes(f: Fetched): Unit = root.foreach(_.resolveProbes(f))
    def probedRanges: Seq[ByteRange] = root.toSeq.flatMap(_.probedRanges)
    def pagesSkipped: Long = root.map(_.pagesSkipped).getOrElse(0L)

    def build(f: Fetched, allocator: BufferAllocator): FieldVector = root match {
      case None => ColumnDecoder.nullVector(node.field, wanted.length, allocator) // no CMB: null everywhere
      case Some(n) =>
        val v = ArrowSchemaMapping.toArrowField(node.field).createVector(allocator)
        try { fill(n, v, f); v }
        catch { case t: Throwable => v.close(); throw t }
    }

    /** Fills `v` with the values of `n`'s wanted slots, in order. */
    private def fill(n: NodeTake, v: FieldVector, f: Fetched): Unit = {
      val count = n.wanted.length
      v match {
        case s: StructVector =>
          s.setInitialCapacity(count); s.allocateNew()
          n.children.zipWithIndex.foreach { case (c, i) =>
            fill(c, ColumnDecoder.childVector(s, i, n.field, n.children.size, path, 0L), f)
          }
        case l: ListVector =>
          l.setInitialCapacity(count); l.allocateNew()
          val outOffsets = new Array[Int](count + 1)
          var i = 0
          while (i < count) {
            val s = n.wanted(i); outOffsets(i + 1) = outOffsets(i) + n.offsets(s + 1) - n.offsets(s); i += 1
          }
          ColumnDecoder.putInts(l.getOffsetBuffer, outOffsets, count + 1)
          l match {
            case mv: MapVector =>
              val entries = mv.getDataVector.asInstanceOf[StructVector]
              val elements = outOffsets(count)
              entries.setInitialCapacity(elements); entries.allocateNew()
              ColumnDecoder.setAllValid(entries.getValidityBuffer, (elements + 7) >>> 3)
              n.children.zipWithIndex.foreach { case (c, k) =>
                fill(c, ColumnDecoder.childVector(entries, k, n.field, n.children.size, path, 0L), f)
              }
              entries.setValueCount(elements)
            case _ => fill(n.children.head, l.getDataVector, f)
          }
          l.setLastSet(count - 1)
        case vw: BaseVariableWidthVector => fillVariable(n, vw, f)
        case other => fillFixed(n, other, f)
      }
      val validity = v.getValidityBuffer
      validity.setZero(0, validity.capacity())
      if (n.validity == null && !n.allNull) ColumnDecoder.setAllValid(validity, (count + 7) >>> 3)
      else {
        var i = 0
        while (i < count) {
          if (n.isValid(n.wanted(i))) BitVectorHelper.setBit(validity, i.toLong)
          i += 1
        }
      }
      v.setValueCount(count)
    }

    /** Calls `f(slot, i, bytes, offset, count)` with the PLAIN value bytes of wanted slots, `i`
      * being the slot's index among the node's wanted slots: `count` consecutive slots whose values
      * lie back to back (runs of fixed-width values; one slot at a time otherwise). */
    private def foreachValue(
        n: NodeTake,
        fetched: Fetched,
        kind: PageValues
    )(f: ValueSink): Unit =
      n.dataPlan.foreach { d =>
        if (d.packed != null) n.foreachRun(d) { (k, run) =>
          f(d.slots(k), d.firstWanted + k, unpack(n, d, k, run, fetched), 0, run)
        }
        else if (d.partial || d.blocks != null) {
          val blockBody = if (d.blocks != null) new BlockBody(fetched, d, n.field.name) else null
          val body: (Long, Long) => Array[Byte] =
            if (blockBody != null) blockBody
            else {
              val h = PageHeader.decode(fetched(d.offset, PageHeader.Size), 0)
              if (
                h.codec != PageCodec.None || h.encoding != PageEncoding.Plain ||
                h.storedLength != d.length - PageHeader.Size
              )
                throw new InvalidFermionFileException(
                  path,
                  d.offset,
                  s"page of `${n.field.name}` is not the PLAIN page its size promised"
                )
              (from, until) => {
                val bytes = new Array[Byte]((until - from).toInt)
                fetched(d.offset + PageHeader.Size + from, until - from).get(bytes)
                bytes
              }
            }
          try n.foreachRun(d) { (k, run) =>
              val slot = d.slots(k)
              val bytes = body(n.valueBytes(d, slot)._1, n.valueBytes(d, d.slots(k + run - 1))._2)
              f(slot, d.firstWanted + k, bytes, 0, run)
            }
          finally if (blockBody != null) blockBody.close()
        } else {
          var k = 0
          var first = d.firstSlot
          val valueLengths =
            if (kind != PageValues.Variable) null
            else (from: Int, count: Int) =>
              io.fermion.core.read.ColumnDecoder.nonNullLengths(n.offsets(_), n.isValid, d.firstSlot + from, count)
          pages.foreachPage(
            fetched(d.offset, d.length),
            d.offset,
            kind,
            n.slots - d.firstSlot,
            valueLengths = valueLengths
          ) { p =>
            val pageFirst = first
            val pageEnd = pageFirst + p.valueCount
            while (k < d.slots.length && d.slots(k) < pageEnd) {
              val slot = d.slots(k)
              kind match {
                case PageValues.Bitmap =>
                  val bit = ((p.bytes(p.off + ((slot - pageFirst) >>> 3)) >> ((slot - pageFirst) & 7)) & 1).toByte
                  f(slot, d.firstWanted + k, Array(bit), 0, 1)
                  k += 1
                case PageValues.Fixed(w) =>
                  // The longest run of consecutive slots from k within the page: slots are sorted
                  // and distinct, so slots(k + r) == slot + r holds for every r up to the run's end.
                  val slotsInPage = math.min(d.slots.length - k, pageEnd - slot)
                  var lo = 1
                  var hi = slotsInPage
                  while (lo < hi) {
                    val mid = (lo + hi + 1) >>> 1
                    if (d.slots(k + mid - 1) == slot + mid - 1) lo = mid else hi = mid - 1
                  }
                  val run = lo
                  f(slot, d.firstWanted + k, p.bytes, p.off + (slot - pageFirst) * w, run)
                  k += run
                case PageValues.Variable =>
                  val from = n.offsets(slot) - n.offsets(pageFirst)
                  val until = n.offsets(slot + 1) - n.offsets(pageFirst)
                  if (until > p.len)
                    throw new InvalidFermionFileException(path, d.offset, "DATA page bytes do not match its OFFSETS")
                  f(slot, d.firstWanted + k, java.util.Arrays.copyOfRange(p.bytes, p.off + from, p.off + until), 0, 1)
                  k += 1
              }
            }
            first += p.valueCount
          }
          if (k != d.slots.length) throw new InvalidFermionFileException(
            path,
            d.offset,
            s"DATA page of `${n.field.name}` holds fewer values than its PageMeta says"
          )
        }
      }

    /** The PLAIN bytes of the run of `run` slots from `d.slots(k)` of a packed page. */
    private def unpack(n: NodeTake, d: DataRead, k: Int, run: Int, fetched: Fetched): Array[Byte] = {
      val p = d.packed
      val (from, until) = n.packedWords(d, k, run)
      val words = new Array[Byte]((8 * (until - from)).toInt)
      if (p.bits > 0) fetched(p.wordsAt + 8 * from, words.length.toLong).get(words)
      val values = new Array[Long](run)
      val firstBit = (d.slots(k) - d.firstSlot).toLong * p.bits - 64 * from
      io.fermion.core.encoding.BitPacking.unpack(words, 0, run, p.bits, p.reference, values, firstBit)
      val out = new Array[Byte](run * d.width)
      io.fermion.core.encoding.PlainValues.writeAll(values, run, d.width, out, 0)
      out
    }

    /** Body bytes of a PLAIN page compressed in blocks, from the blocks round 3 fetched; each block
      * is checked against its CRC32 and decompressed once. */
    final private class BlockBody(fetched: Fetched, d: DataRead, name: String) extends ((Long, Long) => Array[Byte]) {
      private val t = d.blocks
      private val decoded = new Array[Array[Byte]](t.blocks)

      private var primer: PageCodec.PrimedDecompressor = null

      private def prime: PageCodec.PrimedDecompressor = {
        if (primer == null) {
          val first = structures.flatMap(_.prime(d.offset)).getOrElse {
            val b = block(0)
            structures.foreach(_.putPrime(d.offset, b))
            b
          }
          primer = ZstdBlocks.prime(t, first, 0) match {
            case Right(p) => p
            case Left(why) => throw new InvalidFermionFileException(path, d.offset, s"`$name`: $why")
          }
        }
        primer
      }

      /** Releases the native prime, once the page's values are copied out. */
      def close(): Unit = if (primer != null) { primer.close(); primer = null }

      private def block(i: Int): Array[Byte] = {
        if (decoded(i) == null) {
          val at = d.offset + PageHeader.Size + t.starts(i)
          val stored = new Array[Byte](t.storedSize(i))
          fetched(at, stored.length).get(stored)
          if (checkCrcs) {
            val actual = ZstdBlocks.checksum(t, i, stored, 0)
            if (actual != t.crcs(i))
              throw new io.fermion.core.errors.FermionChecksumException(path, at, "block", t.crcs(i), actual)
          }
          val raw = new Array[Byte](t.rawSize(i))
          if (!ZstdBlocks.decodeBlock(t, i, stored, 0, raw, 0, prime))
            throw new InvalidFermionFileException(
              path,
              at,
              s"block $i of a ${PageCodec.name(if (t.primed) PageCodec.ZstdPrimedBlocks else PageCodec.ZstdBlocks)} page of `$name` does not decompress to its ${raw.length} bytes"
            )
          decoded(i) = raw
        }
        decoded(i)
      }

      def apply(from: Long, until: Long): Array[Byte] = {
        val out = new Array[Byte]((until - from).toInt)
        var pos = from
        while (pos < until) {
          val i = t.blockOf(pos)
          val inBlock = (pos - i.toLong * t.blockSize).toInt
          val n = math.min(until - pos, (t.rawSize(i) - inBlock).toLong).toInt
          System.arraycopy(block(i), inBlock, out, (pos - from).toInt, n)
          pos += n
        }
        out
      }
    }

    private def fillFixed(n: NodeTake, v: FieldVector, f: Fetched): Unit = {
      val count = n.wanted.length
      v.setInitialCapacity(count); v.allocateNew()
      val data = v.getDataBuffer
      data.setZero(0, data.capacity())
      val t = n.field.dataType
      val width = FermionType.fixedWidth(t)
      val kind = if (t == FermionType.Bool) PageValues.Bitmap else PageValues.Fixed(width)
      foreachValue(n, f, kind) { (_, i, bytes, off, count) =>
        t match {
          case FermionType.Bool => if (bytes(off) != 0) BitVectorHelper.setBit(data, i.toLong)
          case d: FermionType.Decimal if d.storedWidth == 8 =>
            var k = 0
            while (k < count) {
              val unscaled = PageStatistics.readSigned(bytes, off + k * 8, 8)
              data.setLong((i + k).toLong * 16, unscaled)
              data.setLong((i + k).toLong * 16 + 8, if (unscaled < 0) -1L else 0L)
              k += 1
            }
          case _ => data.setBytes(i.toLong * width, bytes, off, width.toLong * count)
        }
      }
    }

    private def fillVariable(n: NodeTake, vw: BaseVariableWidthVector, f: Fetched): Unit = {
      val count = n.wanted.length
      val outOffsets = new Array[Int](count + 1)
      var i = 0
      while (i < count) {
        val s = n.wanted(i); outOffsets(i + 1) = outOffsets(i) + n.offsets(s + 1) - n.offsets(s); i += 1
      }
      vw.allocateNew(math.max(1L, outOffsets(count).toLong), count)
      ColumnDecoder.putInts(vw.getOffsetBuffer, outOffsets, count + 1)
      foreachValue(n, f, PageValues.Variable) { (_, k, bytes, off, _) =>
        vw.getDataBuffer.setBytes(outOffsets(k).toLong, bytes, off, bytes.length - off)
      }
      vw.setLastSet(count - 1)
    }
  }
}

private[scan] object FileTake {

  /** Pages above this size that may hold few wanted values are probed for a block table first. */
  val BlockProbeMinBytes: Long = 8L << 10

  /** Bytes read from the start of a probed page of `plainBytes` PLAIN bytes and `pageBytes` on disk:
    * its header and a block table of blocks of 1 KiB (the smallest a writer may choose), at most
    * 256 of them (a page of 4 MiB in the default 16 KiB blocks; a longer table costs a whole-page
    * read). The 9 bytes in front of a FOR page's words fit in any probe. */
  def probeBytes(plainBytes: Long, pageBytes: Long): Long =
    math.min(pageBytes, PageHeader.Size + ZstdBlocks.tableBytes(math.min(256L, (plainBytes + 1023) / 1024).toInt))

  /** A take from `reader` with `options`; the coalescing gap defaults by file system. */
  def apply(reader: FermionFileReader, options: ReaderOptions, structures: Option[StructureCache] = None): FileTake =
    new FileTake(
      reader,
      options.verifyChecksums,
      options.takeWholePages,
      if (options.coalesceGapBytes >= 0) options.coalesceGapBytes else reader.input.defaultCoalesceGap,
      structures
    )
}

/** Receives values: `count` consecutive slots from `slot`, wanted slots `index` on, whose values
  * lie back to back in `bytes` from `offset` (a trait, not a Function5, whose Int arguments would
  * be boxed). */
private[scan] trait ValueSink {
  def apply(slot: Int, index: Int, bytes: Array[Byte], offset: Int, count: Int): Unit
}

/** The read of one DATA page for some of its slots: the whole page, or (`partial`) its header and
  * the slots' values of a PLAIN page stored uncompressed. */
final private[scan] case class DataRead(
    page: Int,
    firstSlot: Int,
    offset: Long,
    length: Long,
    slots: Array[Int],
    /** Index of `slots(0)` among the node's wanted slots (the others follow it there). */
    firstWanted: Int,
    partial: Boolean,
    width: Int,
    /** The page may be a PLAIN page compressed in blocks: round 2 reads its header and block table. */
    probe: Boolean = false,
    /** The page's PLAIN payload size (-1: not a type whose values are addressed by bytes). */
    plainBytes: Long = -1
) {

  /** Set by the probe: the page's block table and the blocks the wanted values need. */
  var blocks: io.fermion.core.codec.ZstdBlocks.Table = _
  var neededBlocks: Array[Int] = Array.emptyIntArray

  /** Set by the probe: where the packed words of an uncompressed FOR or BITPACK page start. */
  var packed: PackedPage = _

  /** Set by the probe: the page is read whole in round 3. */
  var wholeAfterProbe: Boolean = false
}

/** The slot (`starts`) and file offset (`offsets`) at which each DATA page of a chunk starts; the
  * last entries are the chunk's ends. */
final private[scan] case class PageLayout(starts: Array[Int], offsets: Array[Long])

/** An uncompressed FOR or BITPACK page read by its words: value `i` is `reference` plus bits
  * `[i * bits, (i + 1) * bits)` of the little-endian words from file offset `wordsAt`. */
final private[scan] case class PackedPage(reference: Long, bits: Int, wordsAt: Long)

/** Where each slot of a node starts in its child (lists, maps) or its value bytes (strings), for
  * the slots of one stripe; `apply(slots)` is the end. */
sealed private[scan] trait SlotOffsets {
  def apply(slot: Int): Int
  def bytes: Long
}

private[scan] object SlotOffsets {
  final case class Prefix(offsets: Array[Int]) extends SlotOffsets {
    def apply(slot: Int): Int = offsets(slot)
    def bytes: Long = offsets.length * 4L
  }

  /** Every slot of the same length. */
  final case class Constant(length: Int, slots: Int) extends SlotOffsets {
    def apply(slot: Int): Int = length * slot
    def bytes: Long = 16
  }
}

/** Decoded VALIDITY bitmaps and slot offsets of one file kept between takes, least recently used
  * dropped first beyond `maxBytes`. Keys: (column, stream, stripe). */
final private[scan] class StructureCache(maxBytes: Long) {
  // Keys: (column, stream, stripe) of a decoded structure stream, or the file offset (a Long) of a
  // zstd-primed-blocks page whose first block's decoded (and checked) bytes are the value.
  private val entries = new java.util.LinkedHashMap[Any, (AnyRef, Long)](16, 0.75f, true)
  private var size = 0L

  def get(column: Int, stream: Int, stripe: Int): Option[AnyRef] = synchronized {
    Option(entries.get((column, stream, stripe))).map(_._1)
  }

  def put(column: Int, stream: Int, stripe: Int, value: AnyRef, bytes: Long): Unit =
    store((column, stream, stripe), value, bytes)

  /** The first block of the primed page at `pageOffset`, if a take kept it: later takes of that
    * page's blocks neither read nor decompress it again. */
  def prime(pageOffset: Long): Option[Array[Byte]] = synchronized {
    Option(entries.get(pageOffset)).map(_._1.asInstanceOf[Array[Byte]])
  }

  def putPrime(pageOffset: Long, block0: Array[Byte]): Unit = store(pageOffset, block0, block0.length.toLong)

  private def store(key: Any, value: AnyRef, bytes: Long): Unit = synchronized {
    if (bytes <= maxBytes) {
      Option(entries.put(key, (value, bytes))).foreach(old => size -= old._2)
      size += bytes
      val it = entries.entrySet().iterator()
      while (size > maxBytes && it.hasNext) { size -= it.next().getValue._2; it.remove() }
    }
  }
}
