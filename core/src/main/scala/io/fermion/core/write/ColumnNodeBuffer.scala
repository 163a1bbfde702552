package io.fermion.core.write

import io.fermion.core.bytes.{Bits, GrowableBits, GrowableBytes}
import io.fermion.core.schema.{FermionField, FermionType}
import org.apache.arrow.vector._
import org.apache.arrow.vector.complex.{LargeListVector, ListVector, MapVector, StructVector}

/** Accumulates one schema node's values for the current stripe, in stream form, with one child
  * buffer per child node. Each node has `slotCount` slots: a top-level column has one per row, a
  * struct's children as many as the struct, a list's (or map's) child one per element.
  *
  *  - VALIDITY: one bit per slot.
  *  - OFFSETS (lists, maps, strings, binary): the length of each slot (0 for null slots).
  *  - DATA (leaves): fixed-width values keep a slot for every row (nulls as zeros) so DATA pages
  *    cover the same slots as VALIDITY; variable-width DATA holds only the bytes of non-null values.
  *
  * Nothing is stored for the elements of null lists, whatever the input vector holds there. */
final private[core] class ColumnNodeBuffer(val field: FermionField, val path: String) {
  def this(field: FermionField) = this(field, field.name)

  val validity = new GrowableBits
  val lengths = new GrowableBytes(1024)
  val data = new GrowableBytes(4096)

  /** Booleans are bit-packed: their DATA is a bitmap. */
  val dataBits = new GrowableBits
  val children: IndexedSeq[ColumnNodeBuffer] = field.children.map(c => new ColumnNodeBuffer(c, path + "." + c.name))
  private var slots = 0
  private var nulls = 0

  val width: Int = FermionType.fixedWidth(field.dataType)
  val isBool: Boolean = field.dataType == FermionType.Bool
  val isVariable: Boolean = FermionType.isVariableWidth(field.dataType)
  val isLeaf: Boolean = !FermionType.isNested(field.dataType)

  def rowCount: Int = slots
  def nullCount: Int = nulls

  def bufferedBytes: Long =
    validity.byteLength.toLong + lengths.length + data.length + dataBits.byteLength + children.iterator.map(
      _.bufferedBytes
    ).sum

  def clear(): Unit = {
    validity.clear(); lengths.clear(); data.clear(); dataBits.clear(); slots = 0; nulls = 0
    children.foreach(_.clear())
  }

  /** Appends slots [from, from + count) of `v`, the Arrow vector of this node's type. */
  def append(v: FieldVector, from: Int, count: Int): Unit = {
    var i = from
    val end = from + count
    while (i < end) {
      val isNull = v.isNull(i)
      validity.append(!isNull)
      if (isNull) nulls += 1
      i += 1
    }
    v match {
      case s: StructVector =>
        var c = 0
        while (c < children.size) {
          children(c).append(s.getChildByOrdinal(c).asInstanceOf[FieldVector], from, count); c += 1
        }
      case l: ListVector =>
        val offsets = l.getOffsetBuffer
        appendList(l, from, end, listElements(l), row => offsets.getInt(row.toLong * 4).toLong)
      case l: LargeListVector =>
        val offsets = l.getOffsetBuffer
        appendList(l, from, end, IndexedSeq(l.getDataVector), row => offsets.getLong(row.toLong * 8))
      case b: BitVector =>
        i = from
        while (i < end) { dataBits.append(!b.isNull(i) && b.get(i) != 0); i += 1 }
      case d: DecimalVector if width == 8 =>
        val buf = d.getDataBuffer
        i = from
        while (i < end) { data.putLong(if (d.isNull(i)) 0L else buf.getLong(i.toLong * 16)); i += 1 }
      case f: BaseFixedWidthVector =>
        val at = data.extend(count * width)
        f.getDataBuffer.getBytes(from.toLong * width, data.array, at, count * width)
        if (v.getNullCount > 0) {
          i = from
          while (i < end) {
            if (f.isNull(i))
              java.util.Arrays.fill(data.array, at + (i - from) * width, at + (i - from + 1) * width, 0.toByte)
            i += 1
          }
        }
      case vw: BaseVariableWidthVector =>
        val offsets = vw.getOffsetBuffer
        appendVariable(vw, vw.getDataBuffer, from, end, row => offsets.getInt(row.toLong * 4).toLong)
      case lw: BaseLargeVariableWidthVector =>
        val offsets = lw.getOffsetBuffer
        appendVariable(lw, lw.getDataBuffer, from, end, row => offsets.getLong(row.toLong * 8))
      case other =>
        throw new IllegalArgumentException(
          s"column `${field.name}` (${field.dataType}) cannot be written from ${other.getClass.getSimpleName}"
        )
    }
    slots += count
  }

  /** Lengths, then the children's element ranges, appended in runs of adjacent elements. A map's
    * elements are its entries struct, whose key and value vectors feed the two child buffers. */
  private def listElements(l: ListVector): IndexedSeq[FieldVector] = l match {
    case m: MapVector =>
      val entries = m.getDataVector.asInstanceOf[StructVector]
      IndexedSeq(
        entries.getChildByOrdinal(0).asInstanceOf[FieldVector],
        entries.getChildByOrdinal(1).asInstanceOf[FieldVector]
      )
    case _ => IndexedSeq(l.getDataVector)
  }

  private def appendList(
      l: FieldVector,
      from: Int,
      end: Int,
      elements: IndexedSeq[FieldVector],
      offset: Int => Long
  ): Unit = {
    var runStart = -1
    var runEnd = -1
    def flush(): Unit = if (runEnd > runStart) {
      var c = 0
      while (c < children.size) { children(c).append(elements(c), runStart, runEnd - runStart); c += 1 }
    }
    var i = from
    while (i < end) {
      if (l.isNull(i)) lengths.putInt(0)
      else {
        val s = Math.toIntExact(offset(i))
        val e = Math.toIntExact(offset(i + 1))
        lengths.putInt(e - s)
        if (e > s) {
          if (s != runEnd) { flush(); runStart = s }
          runEnd = e
        }
      }
      i += 1
    }
    flush()
  }

  private def appendVariable(
      v: FieldVector,
      bytes: org.apache.arrow.memory.ArrowBuf,
      from: Int,
      end: Int,
      offset: Int => Long
  ): Unit = {
    var i = from
    while (i < end) {
      if (v.isNull(i)) lengths.putInt(0)
      else {
        val s = offset(i)
        val n = Math.toIntExact(offset(i + 1) - s)
        lengths.putInt(n)
        val at = data.extend(n)
        bytes.getBytes(s, data.array, at, n)
      }
      i += 1
    }
  }
}
