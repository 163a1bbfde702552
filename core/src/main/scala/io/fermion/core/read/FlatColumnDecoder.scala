package io.fermion.core.read

import java.nio.ByteBuffer

import io.fermion.core.errors.InvalidFermionFileException
import io.fermion.core.layout.{ColumnMetadataBlock, DescType, FileLayout}
import io.fermion.core.schema.{ArrowSchemaMapping, FermionField, FermionType}
import org.apache.arrow.memory.BufferAllocator
import org.apache.arrow.vector._

/** Decodes one flat column of one stripe into an Arrow vector: the VALIDITY chunk into the
  * validity bitmap, OFFSETS (value lengths) into Arrow offsets by prefix sum, and DATA pages
  * copied into the value buffer at their row position — no per-value state machine. */
final class FlatColumnDecoder(path: String, pages: PageDecoder) {

  /** `chunk(stream)` returns the bytes of that stream's chunk in this stripe. A missing CMB means
    * the column is null in every row. */
  def decode(field: FermionField, cmb: Option[ColumnMetadataBlock], stripe: Int, rows: Int,
             chunk: (Int, Long, Long) => ByteBuffer, allocator: BufferAllocator): FieldVector = {
    val vector = ArrowSchemaMapping.toArrowField(field).createVector(allocator)
    try {
      cmb match {
        case None => allocateNulls(vector, rows)
        case Some(m) => fill(field, m, stripe, rows, chunk, vector)
      }
      vector
    } catch { case t: Throwable => vector.close(); throw t }
  }

  /** A page's plain payload has exactly the size its value count implies. */
  private def expectLength(p: DecodedPage, expected: Long, chunkOffset: Long, stream: String): Unit =
    if (p.len != expected)
      throw new InvalidFermionFileException(path, chunkOffset, s"$stream page of ${p.valueCount} values has ${p.len} bytes, expected $expected")

  private def allocateNulls(v: FieldVector, rows: Int): Unit = {
    v match {
      case vw: BaseVariableWidthVector => vw.allocateNew(0L, rows)
      case other => other.setInitialCapacity(rows); other.allocateNew()
    }
    v.getValidityBuffer.setZero(0, v.getValidityBuffer.capacity())
    v.setValueCount(rows)
  }

  private def fill(field: FermionField, m: ColumnMetadataBlock, stripe: Int, rows: Int,
                   chunk: (Int, Long, Long) => ByteBuffer, v: FieldVector): Unit = {
    def bytesOf(stream: Int): Option[(ByteBuffer, Long)] = {
      val len = m.chunkLength(stream, stripe)
      if (len == 0 || (m.descType(stream) == DescType.Simple && len == FileLayout.AllNullChunkLength)) None
      else { val off = m.chunkOffset(stream, stripe); Some((chunk(stream, off, len), off)) }
    }
    val validityBytes = (rows + 7) >>> 3

    // Lengths first: a variable-width vector is allocated with its exact byte size.
    val dataStream = if (FermionType.isVariableWidth(field.dataType)) 2 else 1
    v match {
      case vw: BaseVariableWidthVector =>
        val offsets = new Array[Int](rows + 1)
        bytesOf(1).foreach { case (buf, off) =>
          var row = 0
          pages.foreachPage(buf, off) { p =>
            if (row + p.valueCount > rows) throw new InvalidFermionFileException(path, off, "OFFSETS chunk holds more values than the stripe has rows")
            expectLength(p, p.valueCount.toLong * 4, off, "OFFSETS")
            var k = 0
            var at = p.off
            while (k < p.valueCount) {
              val n = (p.bytes(at) & 0xFF) | ((p.bytes(at + 1) & 0xFF) << 8) | ((p.bytes(at + 2) & 0xFF) << 16) | (p.bytes(at + 3) << 24)
              val end = offsets(row + k).toLong + n
              if (n < 0 || end > Int.MaxValue)
                throw new InvalidFermionFileException(path, off, s"value lengths of column `${field.name}` exceed 2 GiB in one stripe")
              offsets(row + k + 1) = end.toInt
              k += 1; at += 4
            }
            row += p.valueCount
          }
          if (row != rows) throw new InvalidFermionFileException(path, off, s"OFFSETS chunk holds $row values for $rows rows")
        }
        vw.allocateNew(math.max(offsets(rows).toLong, 1L), rows)
        val ob = vw.getOffsetBuffer
        var i = 0
        while (i <= rows) { ob.setInt(i.toLong * 4, offsets(i)); i += 1 }
        var written = 0L
        bytesOf(dataStream).foreach { case (buf, off) =>
          pages.foreachPage(buf, off) { p =>
            if (written + p.len > offsets(rows)) throw new InvalidFermionFileException(path, off, "DATA chunk is longer than its OFFSETS say")
            vw.getDataBuffer.setBytes(written, p.bytes, p.off, p.len)
            written += p.len
          }
        }
        if (written != offsets(rows)) throw new InvalidFermionFileException(path, m.chunkOffset(dataStream, stripe), s"DATA chunk has $written bytes, OFFSETS say ${offsets(rows)}")
        vw.setLastSet(rows - 1)
      case other =>
        other.setInitialCapacity(rows)
        other.allocateNew()
        val width = FermionType.fixedWidth(field.dataType)
        val data = other.getDataBuffer
        data.setZero(0, data.capacity())
        bytesOf(dataStream).foreach { case (buf, off) =>
          var row = 0
          pages.foreachPage(buf, off) { p =>
            if (row + p.valueCount > rows) throw new InvalidFermionFileException(path, off, "DATA chunk holds more values than the stripe has rows")
            field.dataType match {
              case FermionType.Bool =>
                if ((row & 7) != 0) throw new InvalidFermionFileException(path, off, "boolean DATA page does not start on a multiple of 8 rows")
                expectLength(p, (p.valueCount + 7L) >>> 3, off, "DATA")
                data.setBytes((row >>> 3).toLong, p.bytes, p.off, (p.valueCount + 7) >>> 3)
              case d: FermionType.Decimal if d.storedWidth == 8 =>
                expectLength(p, p.valueCount * 8L, off, "DATA")
                var k = 0
                while (k < p.valueCount) {
                  val unscaled = io.fermion.core.write.PageStatistics.readSigned(p.bytes, p.off + k * 8, 8)
                  data.setLong((row + k).toLong * 16, unscaled)
                  data.setLong((row + k).toLong * 16 + 8, if (unscaled < 0) -1L else 0L)
                  k += 1
                }
              case _ =>
                expectLength(p, p.valueCount.toLong * width, off, "DATA")
                data.setBytes(row.toLong * width, p.bytes, p.off, p.valueCount.toLong * width)
            }
            row += p.valueCount
          }
          if (row != rows) throw new InvalidFermionFileException(path, off, s"DATA chunk holds $row values for $rows rows")
        }
    }

    val validity = v.getValidityBuffer
    m.descType(0) match {
      case DescType.UseDefault => FlatColumnDecoder.setAllValid(validity, validityBytes)
      case DescType.ForceNull => validity.setZero(0, validity.capacity())
      case _ =>
        val len = m.simpleLength(0, stripe)
        if (len == 0) FlatColumnDecoder.setAllValid(validity, validityBytes)
        else if (len == FileLayout.AllNullChunkLength) validity.setZero(0, validity.capacity())
        else {
          val off = m.simpleOffset(0, stripe)
          var row = 0
          pages.foreachPage(chunk(0, off, len), off) { p =>
            if (row + p.valueCount > rows || (row & 7) != 0) throw new InvalidFermionFileException(path, off, "VALIDITY pages do not match the stripe's rows")
            expectLength(p, (p.valueCount + 7L) >>> 3, off, "VALIDITY")
            validity.setBytes((row >>> 3).toLong, p.bytes, p.off, (p.valueCount + 7) >>> 3)
            row += p.valueCount
          }
          if (row != rows) throw new InvalidFermionFileException(path, off, s"VALIDITY chunk covers $row of $rows rows")
        }
    }
    v.setValueCount(rows)
  }
}

object FlatColumnDecoder {
  def setAllValid(buf: org.apache.arrow.memory.ArrowBuf, bytes: Int): Unit = {
    var i = 0
    while (i + 8 <= bytes) { buf.setLong(i.toLong, -1L); i += 8 }
    while (i < bytes) { buf.setByte(i.toLong, 0xFF); i += 1 }
  }
}
