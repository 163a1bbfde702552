package io.fermion.spark.read

import org.apache.arrow.vector.FieldVector
import org.apache.arrow.vector.complex.{ListVector, MapVector, StructVector}
import org.apache.spark.sql.types.{ArrayType, DataType, MapType, StructType}
import org.apache.spark.sql.vectorized.{ColumnVector, ColumnarArray, ColumnarMap}
import org.apache.spark.unsafe.Platform

/** A list, map or struct Arrow vector read by Spark through raw memory addresses, over
  * [[DirectArrowColumnVector]] views of its children (a list's elements, a map's keys and values, a
  * struct's fields). Spark's ArrowColumnVector reads every element through ArrowBuf's bounds and
  * reference-count checks; here the validity bit and the offsets are read directly, and the
  * elements by their own direct views. The Arrow vector is owned and closed by the partition
  * reader. */
final class DirectNestedColumnVector private (v: FieldVector, t: DataType, children: Array[ColumnVector])
    extends DirectValidityColumnVector(v, t)
    with NoScalarValues {
  private val offsets = v match {
    case l: ListVector => l.getOffsetBufferAddress
    case _ => 0L
  }

  private def start(rowId: Int): Int = Platform.getInt(null, offsets + 4L * rowId)
  private def length(rowId: Int): Int = Platform.getInt(null, offsets + 4L * rowId + 4) - start(rowId)

  override def getArray(rowId: Int): ColumnarArray =
    if (offsets == 0L || children.length != 1) unsupported
    else if (isNullAt(rowId)) null
    else new ColumnarArray(children(0), start(rowId), length(rowId))
  override def getMap(rowId: Int): ColumnarMap =
    if (offsets == 0L || children.length != 2) unsupported
    else if (isNullAt(rowId)) null
    else new ColumnarMap(children(0), children(1), start(rowId), length(rowId))
  override def getChild(ordinal: Int): ColumnVector =
    if (offsets == 0L && ordinal >= 0 && ordinal < children.length) children(ordinal) else unsupported
}

object DirectNestedColumnVector {

  /** A direct view of a list, map or struct vector of Spark type `t`, with direct views of its
    * children (`DirectArrowColumnVector.of`); None for any other pairing. */
  def of(v: FieldVector, t: DataType): Option[ColumnVector] = (t, v) match {
    case (m: MapType, mv: MapVector) =>
      val entries = mv.getDataVector.asInstanceOf[StructVector]
      val keys = DirectArrowColumnVector.of(childOf(entries, 0), m.keyType)
      Some(new DirectNestedColumnVector(
        v,
        t,
        Array(keys, DirectArrowColumnVector.of(childOf(entries, 1), m.valueType))
      ))
    case (a: ArrayType, l: ListVector) if !l.isInstanceOf[MapVector] =>
      Some(new DirectNestedColumnVector(v, t, Array(DirectArrowColumnVector.of(l.getDataVector, a.elementType))))
    case (s: StructType, sv: StructVector) if sv.size == s.length =>
      val fields = s.fields.indices.map(i => DirectArrowColumnVector.of(childOf(sv, i), s(i).dataType))
      Some(new DirectNestedColumnVector(v, t, fields.toArray))
    case _ => None
  }

  private def childOf(s: StructVector, i: Int): FieldVector = s.getChildByOrdinal(i).asInstanceOf[FieldVector]
}
