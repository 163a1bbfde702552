package io.fermion.core.read

import java.nio.{ByteBuffer, ByteOrder}

import io.fermion.core.encoding.{DictionaryEntries, PageValues}
import io.fermion.core.errors.InvalidFermionFileException
import io.fermion.core.layout.{ColumnMetadataBlock, DescType, FileLayout, PageEncoding, ValueStats}
import io.fermion.core.schema.{ArrowSchemaMapping, FermionField, FermionType}
import io.fermion.core.stats.PageStatistics
import org.apache.arrow.memory.{ArrowBuf, BufferAllocator, OutOfMemoryException}
import org.apache.arrow.memory.util.MemoryUtil
import org.apache.arrow.vector._
import org.apache.arrow.vector.ipc.message.ArrowFieldNode
import org.apache.arrow.vector.complex.{BaseRepeatedValueVector, ListVector, MapVector, StructVector}

/** Decodes one column of one stripe into an Arrow vector (for a projection without elements, an
  * int vector of lengths), node by node: each VALIDITY chunk into
  * the node's validity bitmap, OFFSETS (slot lengths) into Arrow offsets by prefix sum (which also
  * gives a list's child its slot count), DATA pages copied into the value buffer at their slot
  * position. Reading is buffer copying, never a repetition/definition-level state machine.
  *
  * Page headers carry no CRC, so every header is checked against what the CRC-protected CMB says
  * about its chunk (page sizes and value counts from PageMeta, the chunk's length), and each node's
  * streams against each other (VALIDITY's null count against the DATA chunk's and pages'
  * `nullCount`, null slots against zero lengths, decoded values of encoded pages against the page
  * statistics). A node's slot count is checked against its chunks' page headers before anything is
  * allocated for it (docs/format.md 15.4, 15.5). */
final private[core] class ColumnDecoder(path: String, val pages: PageDecoder) {

  /** `chunk(offset, length)` returns stream chunk bytes fetched by the caller. A missing CMB means
    * the column is null in every row. */
  def decode(
      node: ProjectedNode,
      cmb: Option[ColumnMetadataBlock],
      stripe: Int,
      rows: Int,
      chunk: (Long, Long) => ByteBuffer,
      allocator: BufferAllocator,
      dataPages: Option[IndexedSeq[SelectedPage]] = None
  ): FieldVector = {
    val vector =
      if (node.elementsDeferred) new IntVector(node.field.name, allocator)
      else ArrowSchemaMapping.toArrowField(node.field).createVector(allocator)
    try {
      cmb match {
        case None => allocateNulls(vector, rows)
        case Some(m) if node.elementsDeferred =>
          new StripeColumn(m, stripe, chunk, None, allocator).fillLengths(node, vector.asInstanceOf[IntVector], rows)
        case Some(m) => new StripeColumn(m, stripe, chunk, dataPages, allocator).fill(node, vector, rows)
      }
      vector
    } catch {
      case e: OutOfMemoryException =>
        vector.close()
        throw new InvalidFermionFileException(
          path,
          cmb.map(_.chunkOffset(node.firstStream, stripe)).getOrElse(0L),
          s"column `${node.field.name}` of stripe $stripe needs more memory than the reader's allocator allows " +
            s"(${e.getMessage}); the file claims more values than its stripe can hold, or the stripe is too large for this reader",
          e
        )
      case t: Throwable => vector.close(); throw t
    }
  }

  private def allocateNulls(v: FieldVector, rows: Int): Unit = ColumnDecoder.fillNulls(v, rows)

  /** One column's chunks in one stripe; `dataPages`, for a flat column, the only DATA pages to
    * decode (the slots of the others hold whatever their memory held before: the caller drops those rows). */
  final private class StripeColumn(
      m: ColumnMetadataBlock,
      stripe: Int,
      chunk: (Long, Long) => ByteBuffer,
      dataPages: Option[IndexedSeq[SelectedPage]],
      allocator: BufferAllocator
  ) {
    private def invalid(at: Long, why: String): Nothing = throw new InvalidFermionFileException(path, at, why)

    /** The chunk of `stream` in this stripe, None when it has no bytes. */
    private def bytesOf(stream: Int): Option[(ByteBuffer, Long)] = {
      val len = m.chunkLength(stream, stripe)
      if (len == 0 || (m.descType(stream) == DescType.Simple && len == FileLayout.AllNullChunkLength)) None
      else { val off = m.chunkOffset(stream, stripe); Some((chunk(off, len), off)) }
    }

    private def isFull(stream: Int): Boolean = m.descType(stream) == DescType.Full

    /** What the CMB says about the pages of a FULL chunk (sizes, and value counts where recorded). */
    private def expectedPages(stream: Int): ExpectedPages = {
      val n = m.fullNumPages(stream, stripe)
      if (n <= 1) ExpectedPages.single(m.fullLength(stream, stripe), -1)
      else {
        val pool = m.fullPageMetaOffset(stream, stripe)
        ExpectedPages(
          Array.tabulate(n)(p => m.pageSize(pool, p).toLong & 0xffffffffL),
          Array.tabulate(n)(p => m.pageRowCount(pool, p))
        )
      }
    }

    /** Checks, before anything is allocated for a node of `slots` slots, what its chunks' metadata
      * and page headers say about that count: a damaged length upstream (or a damaged header here)
      * must not make the reader allocate for values the stripe does not hold. Then the memory the
      * node's vector needs must fit the allocator. */
    private def precheck(node: ProjectedNode, slots: Int): Unit = {
      val v = node.firstStream
      val vAt = m.chunkOffset(v, stripe)
      def headerSum(stream: Int, what: String, exact: Boolean): Unit = bytesOf(stream).foreach { case (buf, off) =>
        val n = pages.headerValueCount(buf, off)
        if (if (exact) n != slots else n > slots)
          invalid(off, s"$what pages of `${node.field.name}` hold $n values for its $slots slots")
      }
      m.descType(v) match {
        case DescType.ForceNull => if (slots == 0) invalid(vAt, s"`${node.field.name}` is FORCE_NULL but has no slots")
        case DescType.Simple =>
          if (m.simpleLength(v, stripe) == FileLayout.AllNullChunkLength) {
            if (slots == 0) invalid(vAt, s"`${node.field.name}` is all null in a stripe where it has no slots")
          } else headerSum(v, "VALIDITY", exact = true)
        case _ =>
      }
      node.field.ownStreamTypes.indices.drop(1).foreach { k =>
        val s = node.streamOf(k)
        if (isFull(s)) {
          val nulls = m.fullNullCount(s, stripe)
          if (nulls > slots)
            invalid(m.chunkOffset(s, stripe), s"DATA of `${node.field.name}` counts $nulls nulls in $slots slots")
          val variable = FermionType.isVariableWidth(node.field.dataType)
          if (m.fullLength(s, stripe) > 0 && dataPages.isEmpty) {
            val n = m.fullNumPages(s, stripe)
            if (n > 1) {
              val pool = m.fullPageMetaOffset(s, stripe)
              val total = (0 until n).map(p => m.pageRowCount(pool, p).toLong).sum
              if (if (variable) total > slots else total != slots)
                invalid(
                  m.chunkOffset(s, stripe),
                  s"DATA pages of `${node.field.name}` record $total values for $slots slots"
                )
            } else headerSum(s, "DATA", exact = !variable)
          }
        } else if (m.descType(s) == DescType.Simple) headerSum(s, "OFFSETS", exact = true)
      }
      val perSlot = node.field.dataType match {
        case FermionType.Struct => 0.125
        case FermionType.List | FermionType.Map => 4.125
        case t if FermionType.isVariableWidth(t) => 4.125
        case _: FermionType.Decimal => 16.125
        case FermionType.Bool => 0.25
        case t => FermionType.fixedWidth(t) + 0.125
      }
      val need = (slots * perSlot).toLong
      val headroom = allocator.getHeadroom
      if (need > headroom)
        invalid(
          vAt,
          s"`${node.field.name}` has $slots slots in stripe $stripe, needing $need bytes; the reader's allocator has $headroom left"
        )
    }

    /** Calls `f(firstSlot, page, pageIndex, kept)` for each decoded DATA page of `stream`: every page
      * of the chunk, each header checked against the chunk's PageMeta, or only the selected pages,
      * each checked to hold the slots its PageMeta gives. `kept` is [[SelectedPage.kept]] (null:
      * every slot of the page is wanted). */
    private def foreachDataPage(
        stream: Int,
        kind: PageValues,
        slots: Int,
        maxBytes: Long,
        valueLengths: (Int, Int) => Array[Int] = null,
        fixedAsLongs: Boolean = false,
        keepEncoded: Boolean = false
    )(f: (Int, DecodedPage, Int, Array[Int]) => Unit): Unit =
      dataPages match {
        case None =>
          bytesOf(stream).foreach { case (buf, off) =>
            var row = 0
            var index = 0
            pages.foreachPage(
              buf,
              off,
              kind,
              slots,
              maxBytes,
              expectedPages(stream),
              valueLengths,
              fixedAsLongs,
              keepEncoded
            ) { p =>
              f(row, p, index, null); row += p.valueCount; index += 1
            }
            if (row != slots)
              invalid(off, s"DATA chunk holds $row values for $slots slots")
          }
        case Some(selected) =>
          selected.foreach { sp =>
            var seen = 0
            pages.foreachPage(
              chunk(sp.offset, sp.length),
              sp.offset,
              kind,
              sp.slots,
              maxBytes,
              ExpectedPages.single(sp.length, sp.slots),
              if (valueLengths == null) null else (first, n) => valueLengths(sp.firstSlot + first, n),
              fixedAsLongs,
              keepEncoded
            ) { p => f(sp.firstSlot, p, sp.page, sp.kept); seen += p.valueCount }
            if (seen != sp.slots) invalid(sp.offset, s"DATA page holds $seen values, its PageMeta says ${sp.slots}")
          }
      }

    def fill(node: ProjectedNode, v: FieldVector, slots: Int): Unit = {
      precheck(node, slots)
      v match {
        case s: StructVector =>
          ColumnDecoder.allocateUnzeroed(s, slots, allocator)
          fillValidity(node, s.getValidityBuffer, slots)
          node.children.zipWithIndex.foreach { case (c, i) =>
            fill(
              c,
              ColumnDecoder.childVector(
                s,
                i,
                node.field,
                node.children.size,
                path,
                m.chunkOffset(node.firstStream, stripe)
              ),
              slots
            )
          }
        case l: ListVector =>
          ColumnDecoder.allocateUnzeroed(l, slots, allocator)
          val bits = fillValidity(node, l.getValidityBuffer, slots)
          val offsets = lengthsToOffsets(node, node.streamOf(1), slots, bits)
          ColumnDecoder.putInts(l.getOffsetBuffer, offsets, slots + 1)
          val elements = offsets(slots)
          l match {
            case mv: MapVector =>
              val entries = mv.getDataVector.asInstanceOf[StructVector]
              node.children.foreach(precheck(_, elements))
              ColumnDecoder.allocateUnzeroed(entries, elements, allocator)
              ColumnDecoder.setAllValid(entries.getValidityBuffer, (elements + 7) >>> 3)
              node.children.zipWithIndex.foreach { case (c, k) =>
                fill(
                  c,
                  ColumnDecoder.childVector(
                    entries,
                    k,
                    node.field,
                    node.children.size,
                    path,
                    m.chunkOffset(node.firstStream, stripe)
                  ),
                  elements
                )
              }
              entries.setValueCount(elements)
            case _ => fill(node.children.head, l.getDataVector, elements)
          }
          l.setLastSet(slots - 1)
        case vw: BaseVariableWidthVector => fillVariable(node, vw, slots)
        case other => fillFixed(node, other, slots)
      }
      v.setValueCount(slots)
    }

    /** A list or map read without its elements: an int vector of its lengths, with its validity. */
    def fillLengths(node: ProjectedNode, v: IntVector, slots: Int): Unit = {
      precheck(node, slots)
      ColumnDecoder.allocateUnzeroed(v, slots, allocator)
      val bits = fillValidity(node, v.getValidityBuffer, slots)
      val offsets = lengthsToOffsets(node, node.streamOf(1), slots, bits)
      // Every slot written, straight into the vector allocated above for `slots` values.
      val address = v.getDataBufferAddress
      var i = 0
      while (i < slots) { MemoryUtil.putInt(address + 4L * i, offsets(i + 1) - offsets(i)); i += 1 }
      v.setValueCount(slots)
    }

    /** Slot lengths of an OFFSETS stream turned into Arrow's slots + 1 offsets (the caller has
      * already allocated the node's Arrow buffers for `slots`, so this heap array is never larger
      * than what the allocator granted). A null slot must have length 0 (docs/format.md 5.3). */
    private def lengthsToOffsets(node: ProjectedNode, stream: Int, slots: Int, validity: Bits): Array[Int] = {
      val offsets = new Array[Int](slots + 1)
      bytesOf(stream).foreach { case (buf, off) =>
        var row = 0
        pages.foreachPage(buf, off, PageValues.Fixed(4), slots, fixedAsLongs = true) { p =>
          // Encoded pages come as i64 values: a length is the low 4 bytes of one, as in PLAIN.
          val longs = p.longs
          val lens =
            if (longs != null) null
            else ByteBuffer.wrap(p.bytes, p.off, p.len).order(ByteOrder.LITTLE_ENDIAN).asIntBuffer()
          var k = 0
          var acc = offsets(row).toLong
          if (longs != null && validity.nulls == 0) {
            // The common case in one loop without a test per value: a negative length shows in
            // the OR of all of them, a sum past 2^31 in the total (at most 2^31 values of < 2^31).
            var signs = 0
            while (k < p.valueCount) {
              val n = longs(k).toInt
              signs |= n
              acc += n
              offsets(row + k + 1) = acc.toInt
              k += 1
            }
            if (signs < 0 || acc > Int.MaxValue)
              invalid(off, s"lengths of `${node.field.name}` exceed 2^31 in one stripe")
          } else
            while (k < p.valueCount) {
              val n = if (longs != null) longs(k).toInt else lens.get(k)
              acc += n
              if (n < 0 || acc > Int.MaxValue)
                invalid(off, s"lengths of `${node.field.name}` exceed 2^31 in one stripe")
              if (n != 0 && !validity.isSet(row + k))
                invalid(off, s"null slot ${row + k} of `${node.field.name}` has length $n")
              offsets(row + k + 1) = acc.toInt
              k += 1
            }
          row += p.valueCount
        }
        if (row != slots) invalid(off, s"OFFSETS chunk of `${node.field.name}` holds $row values for $slots slots")
      }
      offsets
    }

    /** The most bytes the DATA chunk's pages can decode to, from their headers alone. */
    private def decodableBytes(stream: Int): Long = bytesOf(stream) match {
      case None => 0L
      case Some((buf, off)) =>
        val base = buf.position()
        var at = base
        var total = 0L
        while (at + 20 <= buf.limit()) {
          val h = io.fermion.core.layout.PageHeader.decode(buf, at)
          val raw = math.max(0L, h.uncompressedLength.toLong)
          total = math.min(
            1L << 50,
            total + (if (h.encoding == PageEncoding.Plain) raw else raw * math.max(1L, h.valueCount.toLong))
          )
          // Headers that do not chain end the walk; decoding the pages reports them.
          if (h.storedLength < 0 || h.storedLength > buf.limit() - at - 20) at = buf.limit()
          else at += 20 + h.storedLength
        }
        total
    }

    private def fillVariable(node: ProjectedNode, vw: BaseVariableWidthVector, slots: Int): Unit = {
      ColumnDecoder.allocateUnzeroed(vw, slots, allocator)
      val bits = fillValidity(node, vw.getValidityBuffer, slots)
      val dataStream = node.streamOf(2)
      checkNullCount(node, dataStream, bits.nulls, slots)
      val offsets = lengthsToOffsets(node, node.streamOf(1), slots, bits)
      val total = offsets(slots).toLong
      // The value bytes are allocated only once the DATA chunk's pages can hold them.
      if (dataPages.isEmpty && total > decodableBytes(dataStream))
        invalid(
          m.chunkOffset(dataStream, stripe),
          s"OFFSETS of `${node.field.name}` need $total value bytes, more than its DATA pages hold"
        )
      // Room for the spill of dictionary values written straight to the buffer (DictionaryEntries).
      if (total + DictionaryEntries.Spill > vw.getDataBuffer.capacity())
        vw.reallocDataBuffer(total + DictionaryEntries.Spill)
      ColumnDecoder.putInts(vw.getOffsetBuffer, offsets, slots + 1)
      var written = 0L
      val valueLengths = (first: Int, n: Int) => ColumnDecoder.nonNullLengths(offsets, bits, first, n)
      foreachDataPage(dataStream, PageValues.Variable, slots, total, valueLengths, keepEncoded = true) {
        (first, p, _, _) =>
          val at = offsets(first).toLong
          if (first + p.valueCount > slots || at + p.len != offsets(first + p.valueCount))
            invalid(m.chunkOffset(dataStream, stripe), "DATA page bytes do not match its OFFSETS")
          if (p.entries != null) p.entries.copyTo(vw.getDataBuffer.memoryAddress() + at)
          else vw.getDataBuffer.setBytes(at, p.bytes, p.off, p.len)
          written += p.len
      }
      if (dataPages.isEmpty && written != total)
        invalid(m.chunkOffset(dataStream, stripe), s"DATA chunk has $written bytes, OFFSETS say $total")
      vw.setLastSet(slots - 1)
    }

    /** The DATA chunk's `nullCount` (and a missing fixed-width chunk's "every slot is null") must
      * agree with the nulls the node's VALIDITY holds. */
    private def checkNullCount(node: ProjectedNode, dataStream: Int, nulls: Int, slots: Int): Unit = {
      if (isFull(dataStream) && m.fullNullCount(dataStream, stripe) != nulls)
        invalid(
          m.chunkOffset(dataStream, stripe),
          s"VALIDITY of `${node.field.name}` holds $nulls nulls, its DATA chunk records ${m.fullNullCount(dataStream, stripe)}"
        )
      if (!FermionType.isVariableWidth(node.field.dataType) && m.chunkLength(dataStream, stripe) == 0 && nulls != slots)
        invalid(
          m.chunkOffset(node.firstStream, stripe),
          s"`${node.field.name}` has ${slots - nulls} non-null slots but no DATA bytes in stripe $stripe"
        )
    }

    private def fillFixed(node: ProjectedNode, v: FieldVector, slots: Int): Unit = {
      v match {
        case fixed: BaseFixedWidthVector if !fixed.isInstanceOf[BitVector] =>
          ColumnDecoder.allocateUnzeroed(fixed, slots, allocator)
        case _ => v.setInitialCapacity(slots); v.allocateNew()
      }
      val validity = fillValidity(node, v.getValidityBuffer, slots)
      val nulls = validity.nulls
      val t = node.field.dataType
      val width = FermionType.fixedWidth(t)
      val data = v.getDataBuffer
      val dataStream = node.streamOf(1)
      checkNullCount(node, dataStream, nulls, slots)
      // Pages cover every slot (checked); only a stripe without DATA bytes needs zeros.
      if (m.chunkLength(dataStream, stripe) == 0) data.setZero(0, data.capacity())
      val off = m.chunkOffset(dataStream, stripe)
      val kind = if (t == FermionType.Bool) PageValues.Bitmap else PageValues.Fixed(width)
      val multiPage = isFull(dataStream) && m.fullNumPages(dataStream, stripe) > 1
      val pool = if (multiPage) m.fullPageMetaOffset(dataStream, stripe) else 0
      // Encoded pages come as i64 values (BITPACK, FOR, DELTA and DELTA_FOR ones still packed),
      // written here with their range found on the way.
      val widened = t match { case d: FermionType.Decimal => d.storedWidth == 8; case _ => false }
      val stride = if (widened) 16 else width
      val range = new ValueRange
      val address = data.memoryAddress()
      val asLongs = t != FermionType.Bool
      foreachDataPage(dataStream, kind, slots, Long.MaxValue, fixedAsLongs = asLongs, keepEncoded = asLongs) {
        (row, p, index, kept) =>
          if (t != FermionType.Bool && (row.toLong + p.valueCount) * stride > data.capacity())
            invalid(off, s"DATA pages of `${node.field.name}` hold more values than its ${slots} slots")
          var ranged = false
          // Only the kept slots' values, when the page's encoding can find each one alone.
          val partial = kept != null && t != FermionType.Bool && (p.packed != null || p.dictionary != null)
          if (partial && kept.nonEmpty && kept(kept.length - 1) >= p.valueCount)
            invalid(
              off,
              s"a DATA page of `${node.field.name}` holds ${p.valueCount} values, fewer than its PageMeta says"
            )
          if (partial) {
            val at = address + row.toLong * stride
            if (p.packed != null) ArrowValues.putPackedRows(p.packed, p.valueCount, kept, width, stride, at, range)
            else if (!ArrowValues.putDictionaryRows(p.dictionary, p.valueCount, kept, width, stride, at, range))
              invalid(off, s"a dictionary page of `${node.field.name}` has a code outside its dictionary")
            ranged = true
          } else if (p.packed != null) {
            ArrowValues.putPacked(p.packed, p.valueCount, width, stride, address + row.toLong * stride, range)
            ranged = true
          } else if (p.deltas != null) {
            ArrowValues.putDeltas(p.deltas, p.valueCount, width, stride, address + row.toLong * stride, range)
            ranged = true
          } else if (p.runs != null) {
            ArrowValues.putRuns(p.runs, p.valueCount, width, stride, address + row.toLong * stride, range)
            ranged = true
          } else if (p.dictionary != null) {
            val at = address + row.toLong * stride
            if (!ArrowValues.putDictionary(p.dictionary, p.valueCount, width, stride, at, range))
              invalid(off, s"a dictionary page of `${node.field.name}` has a code outside its dictionary")
            ranged = true
          } else if (p.longs != null) {
            ArrowValues.putLongs(p.longs, p.valueCount, width, stride, address + row.toLong * stride, range)
            ranged = true
          } else
            t match {
              case FermionType.Bool =>
                if ((row & 7) != 0) invalid(off, "boolean DATA page does not start on a multiple of 8 slots")
                data.setBytes((row >>> 3).toLong, p.bytes, p.off, (p.valueCount + 7) >>> 3)
              case _ if widened =>
                // Each 8-byte unscaled value widened to Arrow's 16 bytes (sign-extended), written
                // straight to the buffer (its capacity checked above).
                val in = java.nio.ByteBuffer.wrap(p.bytes).order(java.nio.ByteOrder.LITTLE_ENDIAN)
                var at = address + row.toLong * 16
                var k = 0
                while (k < p.valueCount) {
                  val unscaled = in.getLong(p.off + k * 8)
                  MemoryUtil.putLong(at, unscaled)
                  MemoryUtil.putLong(at + 8, unscaled >> 63)
                  at += 16
                  k += 1
                }
              case _ =>
                data.setBytes(row.toLong * width, p.bytes, p.off, p.valueCount.toLong * width)
            }
          // The page's own statistics: its PageMeta, or the chunk's for a single-page chunk.
          if (multiPage && index >= 0) {
            val nc = p.valueCount - validity.count(row, p.valueCount)
            if (nc != m.pageNullCount(pool, index))
              invalid(
                off,
                s"DATA page $index of `${node.field.name}` covers $nc nulls, its PageMeta records ${m.pageNullCount(pool, index)}"
              )
          }
          // Encoded pages, and PLAIN pages a damaged header could have misnamed (1- and 2-byte values,
          // bitmaps), must hold values within their statistics. They are read back from the vector.
          if (p.encoding != PageEncoding.Plain || width <= 2) {
            val stats =
              if (multiPage && index >= 0)
                Some((m.pageStatsFlags(pool, index), m.pageMin(pool, index), m.pageMax(pool, index)))
              else if (!multiPage && isFull(dataStream))
                Some((
                  m.fullStatsFlags(dataStream, stripe),
                  m.fullMin(dataStream, stripe),
                  m.fullMax(dataStream, stripe)
                ))
              else None
            stats.foreach { case (flags, min, max) =>
              if (partial) checkWithin(node, t, p.valueCount, row, validity, kept, range, flags, min, max, off)
              else checkStats(
                node,
                t,
                p.valueCount,
                address,
                stride,
                row,
                validity,
                if (ranged) range else null,
                flags,
                min,
                max,
                off
              )
            }
          }
      }
    }

    /** The values of a page decoded only at its `kept` slots (their range `written`) lie within the
      * page's statistics: a page's other values are not decoded, so its exact range is not known.
      * Checked on pages without nulls (a null slot's value is not a value), for the types whose
      * statistics [[checkStats]] compares as integers. */
    private def checkWithin(
        node: ProjectedNode,
        t: FermionType,
        n: Int,
        row: Int,
        validity: Bits,
        kept: Array[Int],
        written: ValueRange,
        flags: Int,
        min: Long,
        max: Long,
        at: Long
    ): Unit = {
      val integral = t match {
        case FermionType.Int8 | FermionType.Int16 | FermionType.Int32 | FermionType.Int64 | FermionType.Date32 |
            FermionType.Timestamp(_) =>
          true
        case d: FermionType.Decimal => d.storedWidth == 8
        case _ => false
      }
      if (
        integral && kept.nonEmpty && (flags & ~ValueStats.KnownFlags) == 0 && (flags & ValueStats.HasMinMax) != 0 &&
        validity.count(row, n) == n && (written.lo < min || written.hi > max)
      )
        invalid(
          at,
          s"DATA page of `${node.field.name}` at slot $row decodes to values in [${written.lo}, ${written.hi}], outside its statistics [$min, $max]"
        )
    }

    /** A decoded page's values have exactly the page's statistics (docs/format.md 7: `min` and
      * `max` are the smallest and largest non-null value, HasNaN says whether a NaN was seen). A
      * header whose encoding byte was damaged can decode to other values of the right length
      * (e.g. FOR read as DELTA); they are caught here, since such values almost never have the
      * same smallest and largest value. The page's `n` values are read back from the vector's
      * value buffer (`address`, one every `stride` bytes from slot `row`; bits for booleans);
      * `known`, when given, is the range of all of them as written. Strings and 16-byte decimals
      * are not checked. */
    private def checkStats(
        node: ProjectedNode,
        t: FermionType,
        n: Int,
        address: Long,
        stride: Int,
        row: Int,
        validity: Bits,
        known: ValueRange,
        flags: Int,
        min: Long,
        max: Long,
        at: Long
    ): Unit = {
      if ((flags & ~ValueStats.KnownFlags) != 0) return
      val hasMinMax = (flags & ValueStats.HasMinMax) != 0
      def bad(what: String): Nothing =
        invalid(
          at,
          s"DATA page of `${node.field.name}` at slot $row decodes to $what, other than its statistics record"
        )
      val base = address + row.toLong * stride
      t match {
        case FermionType.Float32 | FermionType.Float64 if (flags & ValueStats.DoubleBits) == 0 =>
        case FermionType.Float32 | FermionType.Float64 =>
          var lo = Double.PositiveInfinity
          var hi = Double.NegativeInfinity
          var seen = false
          var nan = false
          val single = t == FermionType.Float32
          var i = 0
          val noNulls = n > 0 && validity.count(row, n) == n
          // Pages without nulls (most): the range from the bits' range found while writing them when
          // that settles it, else from the values' keys unless one is a NaN (which the loops find).
          val fromBits = if (noNulls && known != null) ColumnDecoder.floatRangeOfBits(known, single) else null
          val range =
            if (fromBits == null && noNulls) ColumnDecoder.floatRangeByKeys(base, n, single) else fromBits
          if (range != null) { seen = true; lo = range.lo; hi = range.hi; i = n }
          // No validity lookup per value; any non-NaN value leaves lo <= hi.
          else if (noNulls) {
            if (single) while (i < n) {
              val d = java.lang.Float.intBitsToFloat(MemoryUtil.getInt(base + 4L * i)).toDouble
              if (d != d) nan = true else { if (d < lo) lo = d; if (d > hi) hi = d }
              i += 1
            }
            else while (i < n) {
              val d = java.lang.Double.longBitsToDouble(MemoryUtil.getLong(base + 8L * i))
              if (d != d) nan = true else { if (d < lo) lo = d; if (d > hi) hi = d }
              i += 1
            }
            seen = lo <= hi
          }
          while (i < n) {
            if (validity.isSet(row + i)) {
              val d =
                if (single) java.lang.Float.intBitsToFloat(MemoryUtil.getInt(base + 4L * i)).toDouble
                else java.lang.Double.longBitsToDouble(MemoryUtil.getLong(base + 8L * i))
              if (d.isNaN) nan = true
              else { seen = true; if (d < lo) lo = d; if (d > hi) hi = d }
            }
            i += 1
          }
          if (nan != ((flags & ValueStats.HasNaN) != 0)) bad(if (nan) "a NaN" else "no NaN")
          if (seen != hasMinMax) bad(if (seen) "values" else "no value")
          // -0.0 == 0.0: the zeros normalised in the statistics compare equal to either zero.
          if (seen && (lo != java.lang.Double.longBitsToDouble(min) || hi != java.lang.Double.longBitsToDouble(max)))
            bad(s"values in [$lo, $hi]")
        case FermionType.Bool | FermionType.Int8 | FermionType.Int16 | FermionType.Int32 | FermionType.Int64 |
            FermionType.Date32 | FermionType.Timestamp(_) | FermionType.Decimal(_, _) =>
          val w = t match {
            case d: FermionType.Decimal => if (d.storedWidth == 8) 8 else return
            case FermionType.Bool => 0
            case other => FermionType.fixedWidth(other)
          }
          var lo = Long.MaxValue
          var hi = Long.MinValue
          var seen = false
          @inline def valueAt(i: Int): Long = w match {
            case 0 =>
              val s = row + i
              ((MemoryUtil.getByte(address + (s >>> 3)) >>> (s & 7)) & 1).toLong
            case 1 => MemoryUtil.getByte(base + i).toLong
            case 2 => MemoryUtil.getShort(base + 2L * i).toLong
            case 4 => MemoryUtil.getInt(base + 4L * i).toLong
            case _ => MemoryUtil.getLong(base + stride.toLong * i)
          }
          var i = 0
          // Pages without nulls (most): the range found while writing them (encoded pages), or one
          // loop with no validity lookup per value (PLAIN 1- and 2-byte pages).
          val noNulls = n > 0 && validity.count(row, n) == n
          if (noNulls && known != null) { seen = true; lo = known.lo; hi = known.hi; i = n }
          else if (noNulls && w > 0) {
            seen = true
            while (i < n) { val v = valueAt(i); lo = math.min(lo, v); hi = math.max(hi, v); i += 1 }
          }
          while (i < n) {
            if (validity.isSet(row + i)) { val v = valueAt(i); seen = true; if (v < lo) lo = v; if (v > hi) hi = v }
            i += 1
          }
          if (seen != hasMinMax) bad(if (seen) "values" else "no value")
          if (seen && (lo != min || hi != max)) bad(s"values in [$lo, $hi] (statistics [$min, $max])")
        case _ =>
      }
    }

    /** Fills the node's validity bitmap; returns it (a heap copy, for the cross-checks) with its
      * number of null slots. */
    private def fillValidity(node: ProjectedNode, validity: ArrowBuf, slots: Int): Bits = {
      val stream = node.firstStream
      val bytes = (slots + 7) >>> 3
      m.descType(stream) match {
        case DescType.UseDefault => ColumnDecoder.setAllValid(validity, bytes); Bits.allValid(slots)
        case DescType.ForceNull => validity.setZero(0, validity.capacity()); Bits.allNull(slots)
        case _ =>
          val len = m.simpleLength(stream, stripe)
          if (len == 0) { ColumnDecoder.setAllValid(validity, bytes); Bits.allValid(slots) }
          else if (len == FileLayout.AllNullChunkLength) {
            validity.setZero(0, validity.capacity()); Bits.allNull(slots)
          } else {
            val off = m.simpleOffset(stream, stripe)
            val heap = new Array[Byte](bytes) // the Arrow buffer of this size is already allocated
            var row = 0
            pages.foreachPage(chunk(off, len), off, PageValues.Bitmap, slots) { p =>
              if ((row & 7) != 0) invalid(off, s"VALIDITY pages of `${node.field.name}` do not match its slots")
              System.arraycopy(p.bytes, p.off, heap, row >>> 3, (p.valueCount + 7) >>> 3)
              row += p.valueCount
            }
            if (row != slots) invalid(off, s"VALIDITY chunk of `${node.field.name}` covers $row of $slots slots")
            // Bits past the last slot are not checked (5.7.2): clear them so that no consumer sees them.
            if ((slots & 7) != 0) heap(bytes - 1) = (heap(bytes - 1) & ((1 << (slots & 7)) - 1)).toByte
            validity.setBytes(0, heap, 0, bytes)
            Bits.of(heap, slots)
          }
      }
    }
  }

}

private[core] object ColumnDecoder {

  /** The smallest and largest of some float or double values. */
  final class FloatRange(val lo: Double, val hi: Double)

  /** The range of the `n` (> 0) floats or doubles from `address`, or null when one is a NaN. Each
    * value's bits become a key that orders as the values do (a negative value's other bits flipped),
    * so that a value costs one branch-free minimum and maximum; a NaN's key lies beyond both
    * infinities' (the caller then looks at each value). */
  def floatRangeByKeys(address: Long, n: Int, single: Boolean): FloatRange = {
    var lo = Long.MaxValue
    var hi = Long.MinValue
    var i = 0
    if (single)
      while (i < n) {
        val b = MemoryUtil.getInt(address + 4L * i)
        val k = (b ^ ((b >> 31) & Int.MaxValue)).toLong
        lo = math.min(lo, k); hi = math.max(hi, k); i += 1
      }
    else
      while (i < n) {
        val b = MemoryUtil.getLong(address + 8L * i)
        val k = b ^ ((b >> 63) & Long.MaxValue)
        lo = math.min(lo, k); hi = math.max(hi, k); i += 1
      }
    // The keys of the infinities (a key is its own inverse).
    val negativeInfinity = if (single) (0xff800000 ^ Int.MaxValue).toLong else 0xfff0000000000000L ^ Long.MaxValue
    val positiveInfinity = if (single) 0x7f800000L else 0x7ff0000000000000L
    def value(k: Long): Double =
      if (single) java.lang.Float.intBitsToFloat(k.toInt ^ ((k.toInt >> 31) & Int.MaxValue)).toDouble
      else java.lang.Double.longBitsToDouble(k ^ ((k >> 63) & Long.MaxValue))
    if (lo < negativeInfinity || hi > positiveInfinity) null else new FloatRange(value(lo), value(hi))
  }

  /** The smallest and largest of float or double values whose bits' range as signed integers is
    * known (`bits`: of doubles, or of floats sign-extended, as the decoders leave it), when the
    * bits tell: all of one sign and none a NaN. Non-negative values order as their bits do and
    * negative ones in reverse, and a NaN's bits lie beyond those of the infinity of its sign, so
    * the bits' extremes are then the values'. Null otherwise (mixed signs, or a NaN): the caller
    * reads the values. */
  def floatRangeOfBits(bits: ValueRange, single: Boolean): FloatRange = {
    val positiveInfinity = if (single) 0x7f800000L else 0x7ff0000000000000L
    val negativeInfinity = if (single) 0xff800000.toInt.toLong else 0xfff0000000000000L
    def value(b: Long): Double =
      if (single) java.lang.Float.intBitsToFloat(b.toInt).toDouble else java.lang.Double.longBitsToDouble(b)
    if (bits.lo > bits.hi) null
    else if (bits.lo >= 0 && bits.hi <= positiveInfinity) new FloatRange(value(bits.lo), value(bits.hi))
    else if (bits.hi <= negativeInfinity) new FloatRange(value(bits.hi), value(bits.lo))
    else null
  }

  /** The lengths of the non-null slots among the `n` from `first`, from a node's `offsets`: the
    * values a variable-width DATA page of those slots holds (`dictionary_by_length` decodes with them). */
  def nonNullLengths(offsets: Array[Int], valid: Bits, first: Int, n: Int): Array[Int] = {
    if (valid.nulls == 0) {
      val out = new Array[Int](n)
      var s = 0
      while (s < n) { out(s) = offsets(first + s + 1) - offsets(first + s); s += 1 }
      out
    } else nonNullLengths(offsets(_), valid.isSet, first, n)
  }

  def nonNullLengths(offsets: Int => Int, valid: Int => Boolean, first: Int, n: Int): Array[Int] = {
    var m = 0
    var s = first
    while (s < first + n) { if (valid(s)) m += 1; s += 1 }
    val out = new Array[Int](m)
    m = 0
    s = first
    while (s < first + n) { if (valid(s)) { out(m) = offsets(s + 1) - offsets(s); m += 1 }; s += 1 }
    out
  }

  /** A vector of `field`'s type holding `rows` nulls (owned by the caller). */
  def nullVector(field: io.fermion.core.schema.FermionField, rows: Int, allocator: BufferAllocator): FieldVector = {
    val v = ArrowSchemaMapping.toArrowField(field).createVector(allocator)
    try { fillNulls(v, rows); v }
    catch { case t: Throwable => v.close(); throw t }
  }

  private def fillNulls(v: FieldVector, rows: Int): Unit = {
    v match {
      case vw: BaseVariableWidthVector => vw.allocateNew(0L, rows)
      case other => other.setInitialCapacity(rows); other.allocateNew()
    }
    v.getValidityBuffer.setZero(0, v.getValidityBuffer.capacity())
    v match {
      case l: ListVector => l.getOffsetBuffer.setZero(0, l.getOffsetBuffer.capacity()); l.setLastSet(rows - 1)
      case _ =>
    }
    v.setValueCount(rows)
  }

  /** Child `i` of `s`, the vector of a struct's fields or of a map's key and value, which `node`
    * has `children` of. Arrow keeps one child per name, so a struct whose fields share a name
    * (legal in a file, where names SHOULD be unique) cannot be read into Arrow: refused, naming
    * the column. */
  def childVector(s: StructVector, i: Int, node: FermionField, children: Int, path: String, at: Long): FieldVector = {
    if (s.size != children)
      throw new InvalidFermionFileException(
        path,
        at,
        s"`${node.name}` has $children fields but ${s.size} distinct names: fields of one struct that share a name cannot be read into Arrow"
      )
    s.getChildByOrdinal(i).asInstanceOf[FieldVector]
  }

  /** Writes `values(0 until n)` little-endian at the start of `buf` (which must hold them), one
    * store per value: as fast as bulk copies through a heap buffer, without their second copy. */
  def putInts(buf: ArrowBuf, values: Array[Int], n: Int): Unit = {
    if (n <= 0) return
    if (n.toLong * 4 > buf.capacity())
      throw new IndexOutOfBoundsException(s"$n ints do not fit a buffer of ${buf.capacity()} bytes")
    val address = buf.memoryAddress()
    if (MemoryUtil.LITTLE_ENDIAN) {
      var i = 0
      while (i < n) { MemoryUtil.putInt(address + 4L * i, values(i)); i += 1 }
    } else {
      var i = 0
      while (i < n) { buf.setInt(4L * i, values(i)); i += 1 }
    }
  }

  /** Allocates `v`'s own buffers for `slots` values: a zeroed validity bitmap; offsets (lists, maps,
    * strings, binary) and values (fixed width) left as the allocator hands them over (reused memory
    * holds old values); for strings and binary a one-byte value buffer, grown by the caller once it
    * knows their length; nothing for a struct's, list's or map's children. Arrow's `allocateNew`
    * zeroes every buffer (7 % of a TPC-H Q6 profile's task samples) and also allocates and zeroes
    * every child at a guessed size (five elements per list slot) that the child's own fill then
    * replaces (7 % of a list<bigint> scan's decode). For vectors whose every offset and value slot
    * is written next; `loadFieldBuffers` takes the buffers as they are. */
  def allocateUnzeroed(v: FieldVector, slots: Int, allocator: BufferAllocator): Unit = {
    val sizes: Seq[Long] = v match {
      case f: BaseFixedWidthVector if !f.isInstanceOf[BitVector] => Seq(slots.toLong * f.getTypeWidth)
      case _: BaseVariableWidthVector => Seq((slots + 1L) * BaseVariableWidthVector.OFFSET_WIDTH, 1L)
      case _: ListVector => Seq((slots + 1L) * BaseRepeatedValueVector.OFFSET_WIDTH)
      case _: StructVector => Seq.empty
      case other => throw new IllegalArgumentException(s"no unzeroed allocation for ${other.getField}")
    }
    val buffers = new java.util.ArrayList[ArrowBuf](1 + sizes.size)
    try {
      val validity = allocator.buffer(BitVectorHelper.getValidityBufferSizeFromCount(slots).toLong)
      buffers.add(validity)
      validity.setZero(0, validity.capacity())
      sizes.foreach(size => buffers.add(allocator.buffer(size)))
      v.loadFieldBuffers(new ArrowFieldNode(slots, 0), buffers)
    } finally buffers.forEach(_.close())
  }

  /** `v.getNullCount`, counted on the validity buffer's memory directly: Arrow's count reads each
    * word through the buffer's bounds and reference checks, which made the `IS NOT NULL` leaves of a
    * filter over 65,536-row stripes a tenth of TPC-H Q6's scan. */
  def nullCount(v: ValueVector): Int = v match {
    case f: FieldVector
        if f.getValueCount > 0 && (f.isInstanceOf[BaseFixedWidthVector] || f.isInstanceOf[BaseVariableWidthVector]) =>
      val n = f.getValueCount
      val at = f.getValidityBufferAddress
      var set = 0L
      var i = 0
      val words = n >>> 6
      while (i < words) { set += java.lang.Long.bitCount(MemoryUtil.getLong(at + 8L * i)); i += 1 }
      var r = words << 6
      while (r < n) { set += (MemoryUtil.getByte(at + (r >>> 3)) >> (r & 7)) & 1; r += 1 }
      (n - set).toInt
    case other => other.getNullCount
  }

  def setAllValid(buf: ArrowBuf, bytes: Int): Unit = {
    var i = 0
    while (i + 8 <= bytes) { buf.setLong(i.toLong, -1L); i += 8 }
    while (i < bytes) { buf.setByte(i.toLong, 0xff); i += 1 }
  }

}

/** A node's validity in one stripe, as the cross-checks read it: all valid, all null, or a bitmap. */
final private[core] class Bits private (val slots: Int, val nulls: Int, bits: Array[Byte]) {
  def isSet(i: Int): Boolean = if (bits == null) nulls == 0 else ((bits(i >>> 3) >>> (i & 7)) & 1) != 0

  /** Set bits among [from, from + n). */
  def count(from: Int, n: Int): Int =
    if (bits == null) (if (nulls == 0) n else 0)
    else {
      var c = 0
      var i = from
      val end = from + n
      while (i < end && (i & 7) != 0) { if (isSet(i)) c += 1; i += 1 }
      while (i + 8 <= end) { c += Integer.bitCount(bits(i >>> 3) & 0xff); i += 8 }
      while (i < end) { if (isSet(i)) c += 1; i += 1 }
      c
    }
}

private[core] object Bits {
  def allValid(slots: Int): Bits = new Bits(slots, 0, null)
  def allNull(slots: Int): Bits = new Bits(slots, slots, null)
  def of(bits: Array[Byte], slots: Int): Bits = {
    var set = 0L
    var i = 0
    while (i < bits.length) { set += Integer.bitCount(bits(i) & 0xff); i += 1 }
    new Bits(slots, (slots - set).toInt, bits)
  }
}
