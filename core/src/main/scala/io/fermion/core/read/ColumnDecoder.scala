package io.fermion.core.read

import java.nio.{ByteBuffer, ByteOrder}

import io.fermion.core.encoding.PageValues
import io.fermion.core.errors.InvalidFermionFileException
import io.fermion.core.layout.{ColumnMetadataBlock, DescType, FileLayout}
import io.fermion.core.schema.{ArrowSchemaMapping, FermionType}
import io.fermion.core.stats.PageStatistics
import org.apache.arrow.memory.{ArrowBuf, BufferAllocator}
import org.apache.arrow.vector._
import org.apache.arrow.vector.complex.{ListVector, MapVector, StructVector}

/** Decodes one column of one stripe into an Arrow vector (for a projection without elements, an
  * int vector of lengths), node by node: each VALIDITY chunk into
  * the node's validity bitmap, OFFSETS (slot lengths) into Arrow offsets by prefix sum (which also
  * gives a list's child its slot count), DATA pages copied into the value buffer at their slot
  * position. Reading is buffer copying, never a repetition/definition-level state machine. */
final class ColumnDecoder(path: String, val pages: PageDecoder) {

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
          new StripeColumn(m, stripe, chunk, None).fillLengths(node, vector.asInstanceOf[IntVector], rows)
        case Some(m) => new StripeColumn(m, stripe, chunk, dataPages).fill(node, vector, rows)
      }
      vector
    } catch { case t: Throwable => vector.close(); throw t }
  }

  private def allocateNulls(v: FieldVector, rows: Int): Unit = ColumnDecoder.fillNulls(v, rows)

  /** One column's chunks in one stripe; `dataPages`, for a flat column, the only DATA pages to
    * decode (the slots of the others keep whatever the fresh vector holds). */
  final private class StripeColumn(
      m: ColumnMetadataBlock,
      stripe: Int,
      chunk: (Long, Long) => ByteBuffer,
      dataPages: Option[IndexedSeq[SelectedPage]]
  ) {

    /** Calls `f(firstSlot, page)` for each decoded DATA page of `stream`: every page of the chunk,
      * or only the selected ones, each checked to hold the slots its PageMeta gives. */
    private def foreachDataPage(
        stream: Int,
        kind: PageValues,
        slots: Int,
        maxBytes: Long
    )(f: (Int, DecodedPage) => Unit): Unit =
      dataPages match {
        case None =>
          bytesOf(stream).foreach { case (buf, off) =>
            var row = 0
            pages.foreachPage(buf, off, kind, slots, maxBytes) { p => f(row, p); row += p.valueCount }
            if (row != slots)
              throw new InvalidFermionFileException(path, off, s"DATA chunk holds $row values for $slots slots")
          }
        case Some(selected) =>
          selected.foreach { sp =>
            var seen = 0
            pages.foreachPage(chunk(sp.offset, sp.length), sp.offset, kind, sp.slots, maxBytes) { p =>
              f(sp.firstSlot, p); seen += p.valueCount
            }
            if (seen != sp.slots) throw new InvalidFermionFileException(
              path,
              sp.offset,
              s"DATA page holds $seen values, its PageMeta says ${sp.slots}"
            )
          }
      }

    private def bytesOf(stream: Int): Option[(ByteBuffer, Long)] = {
      val len = m.chunkLength(stream, stripe)
      if (len == 0 || (m.descType(stream) == DescType.Simple && len == FileLayout.AllNullChunkLength)) None
      else { val off = m.chunkOffset(stream, stripe); Some((chunk(off, len), off)) }
    }

    def fill(node: ProjectedNode, v: FieldVector, slots: Int): Unit = {
      v match {
        case s: StructVector =>
          s.setInitialCapacity(slots)
          s.allocateNew()
          node.children.zipWithIndex.foreach { case (c, i) =>
            fill(c, s.getChildByOrdinal(i).asInstanceOf[FieldVector], slots)
          }
        case l: ListVector =>
          l.setInitialCapacity(slots)
          l.allocateNew()
          val offsets = lengthsToOffsets(node, node.streamOf(1), slots)
          ColumnDecoder.putInts(l.getOffsetBuffer, offsets, slots + 1)
          val elements = offsets(slots)
          l match {
            case mv: MapVector =>
              val entries = mv.getDataVector.asInstanceOf[StructVector]
              entries.setInitialCapacity(elements)
              entries.allocateNew()
              ColumnDecoder.setAllValid(entries.getValidityBuffer, (elements + 7) >>> 3)
              node.children.zipWithIndex.foreach { case (c, k) =>
                fill(c, entries.getChildByOrdinal(k).asInstanceOf[FieldVector], elements)
              }
              entries.setValueCount(elements)
            case _ => fill(node.children.head, l.getDataVector, elements)
          }
          l.setLastSet(slots - 1)
        case vw: BaseVariableWidthVector => fillVariable(node, vw, slots)
        case other => fillFixed(node, other, slots)
      }
      fillValidity(node, v.getValidityBuffer, slots)
      v.setValueCount(slots)
    }

    /** A list or map read without its elements: an int vector of its lengths, with its validity. */
    def fillLengths(node: ProjectedNode, v: IntVector, slots: Int): Unit = {
      val offsets = lengthsToOffsets(node, node.streamOf(1), slots)
      v.allocateNew(slots)
      val lens = new Array[Int](slots)
      var i = 0
      while (i < slots) { lens(i) = offsets(i + 1) - offsets(i); i += 1 }
      ColumnDecoder.putInts(v.getDataBuffer, lens, slots)
      fillValidity(node, v.getValidityBuffer, slots)
      v.setValueCount(slots)
    }

    /** Slot lengths of an OFFSETS stream turned into Arrow's slots + 1 offsets. */
    private def lengthsToOffsets(node: ProjectedNode, stream: Int, slots: Int): Array[Int] = {
      val offsets = new Array[Int](slots + 1)
      bytesOf(stream).foreach { case (buf, off) =>
        var row = 0
        pages.foreachPage(buf, off, PageValues.Fixed(4), slots) { p =>
          expectLength(p, p.valueCount.toLong * 4, off, "OFFSETS")
          val lens = ByteBuffer.wrap(p.bytes, p.off, p.len).order(ByteOrder.LITTLE_ENDIAN).asIntBuffer()
          var k = 0
          var acc = offsets(row).toLong
          while (k < p.valueCount) {
            val n = lens.get(k)
            acc += n
            if (n < 0 || acc > Int.MaxValue)
              throw new InvalidFermionFileException(
                path,
                off,
                s"lengths of `${node.field.name}` exceed 2^31 in one stripe"
              )
            offsets(row + k + 1) = acc.toInt
            k += 1
          }
          row += p.valueCount
        }
        if (row != slots) throw new InvalidFermionFileException(
          path,
          off,
          s"OFFSETS chunk of `${node.field.name}` holds $row values for $slots slots"
        )
      }
      offsets
    }

    private def fillVariable(node: ProjectedNode, vw: BaseVariableWidthVector, slots: Int): Unit = {
      val offsets = lengthsToOffsets(node, node.streamOf(1), slots)
      vw.allocateNew(math.max(offsets(slots).toLong, 1L), slots)
      ColumnDecoder.putInts(vw.getOffsetBuffer, offsets, slots + 1)
      val dataStream = node.streamOf(2)
      var written = 0L
      foreachDataPage(dataStream, PageValues.Variable, slots, offsets(slots).toLong) { (first, p) =>
        val at = offsets(first).toLong
        if (first + p.valueCount > slots || at + p.len != offsets(first + p.valueCount))
          throw new InvalidFermionFileException(
            path,
            m.chunkOffset(dataStream, stripe),
            "DATA page bytes do not match its OFFSETS"
          )
        vw.getDataBuffer.setBytes(at, p.bytes, p.off, p.len)
        written += p.len
      }
      if (dataPages.isEmpty && written != offsets(slots))
        throw new InvalidFermionFileException(
          path,
          m.chunkOffset(dataStream, stripe),
          s"DATA chunk has $written bytes, OFFSETS say ${offsets(slots)}"
        )
      vw.setLastSet(slots - 1)
    }

    private def fillFixed(node: ProjectedNode, v: FieldVector, slots: Int): Unit = {
      v.setInitialCapacity(slots)
      v.allocateNew()
      val t = node.field.dataType
      val width = FermionType.fixedWidth(t)
      val data = v.getDataBuffer
      // Pages cover every slot (checked); only a stripe without DATA bytes needs zeros.
      if (m.chunkLength(node.streamOf(1), stripe) == 0) data.setZero(0, data.capacity())
      val off = m.chunkOffset(node.streamOf(1), stripe)
      val kind = if (t == FermionType.Bool) PageValues.Bitmap else PageValues.Fixed(width)
      foreachDataPage(node.streamOf(1), kind, slots, Long.MaxValue) { (row, p) =>
        t match {
          case FermionType.Bool =>
            if ((row & 7) != 0) throw new InvalidFermionFileException(
              path,
              off,
              "boolean DATA page does not start on a multiple of 8 slots"
            )
            expectLength(p, (p.valueCount + 7L) >>> 3, off, "DATA")
            data.setBytes((row >>> 3).toLong, p.bytes, p.off, (p.valueCount + 7) >>> 3)
          case d: FermionType.Decimal if d.storedWidth == 8 =>
            expectLength(p, p.valueCount * 8L, off, "DATA")
            var k = 0
            while (k < p.valueCount) {
              val unscaled = PageStatistics.readSigned(p.bytes, p.off + k * 8, 8)
              data.setLong((row + k).toLong * 16, unscaled)
              data.setLong((row + k).toLong * 16 + 8, if (unscaled < 0) -1L else 0L)
              k += 1
            }
          case _ =>
            expectLength(p, p.valueCount.toLong * width, off, "DATA")
            data.setBytes(row.toLong * width, p.bytes, p.off, p.valueCount.toLong * width)
        }
      }
    }

    private def fillValidity(node: ProjectedNode, validity: ArrowBuf, slots: Int): Unit = {
      val stream = node.firstStream
      val bytes = (slots + 7) >>> 3
      m.descType(stream) match {
        case DescType.UseDefault => ColumnDecoder.setAllValid(validity, bytes)
        case DescType.ForceNull => validity.setZero(0, validity.capacity())
        case _ =>
          val len = m.simpleLength(stream, stripe)
          if (len == 0) ColumnDecoder.setAllValid(validity, bytes)
          else if (len == FileLayout.AllNullChunkLength) validity.setZero(0, validity.capacity())
          else {
            val off = m.simpleOffset(stream, stripe)
            var row = 0
            pages.foreachPage(chunk(off, len), off, PageValues.Bitmap, slots) { p =>
              if ((row & 7) != 0)
                throw new InvalidFermionFileException(
                  path,
                  off,
                  s"VALIDITY pages of `${node.field.name}` do not match its slots"
                )
              expectLength(p, (p.valueCount + 7L) >>> 3, off, "VALIDITY")
              validity.setBytes((row >>> 3).toLong, p.bytes, p.off, (p.valueCount + 7) >>> 3)
              row += p.valueCount
            }
            if (row != slots) throw new InvalidFermionFileException(
              path,
              off,
              s"VALIDITY chunk of `${node.field.name}` covers $row of $slots slots"
            )
          }
      }
    }
  }

  /** A page's plain payload has exactly the size its value count implies. */
  private def expectLength(p: DecodedPage, expected: Long, chunkOffset: Long, stream: String): Unit =
    if (p.len != expected)
      throw new InvalidFermionFileException(
        path,
        chunkOffset,
        s"$stream page of ${p.valueCount} values has ${p.len} bytes, expected $expected"
      )
}

object ColumnDecoder {

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

  /** Writes `values(0 until n)` little-endian at the start of `buf` in one bulk copy. */
  def putInts(buf: ArrowBuf, values: Array[Int], n: Int): Unit = {
    val bytes = ByteBuffer.allocate(n * 4).order(ByteOrder.LITTLE_ENDIAN)
    bytes.asIntBuffer().put(values, 0, n)
    buf.setBytes(0, bytes)
  }

  def setAllValid(buf: ArrowBuf, bytes: Int): Unit = {
    var i = 0
    while (i + 8 <= bytes) { buf.setLong(i.toLong, -1L); i += 8 }
    while (i < bytes) { buf.setByte(i.toLong, 0xff); i += 1 }
  }
}
