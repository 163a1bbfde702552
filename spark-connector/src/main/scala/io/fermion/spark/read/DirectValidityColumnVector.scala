package io.fermion.spark.read

import org.apache.arrow.vector.FieldVector
import org.apache.spark.sql.types.{DataType, Decimal}
import org.apache.spark.sql.vectorized.{ColumnVector, ColumnarArray, ColumnarMap}
import org.apache.spark.unsafe.Platform
import org.apache.spark.unsafe.types.UTF8String

/** A Spark column over an Arrow vector whose null bits are read straight from its validity
  * bitmap's memory (Spark asks per row; Arrow's `isNull` checks bounds and reference counts each
  * time). The address is taken once: the buffers live, unchanged, as long as the batch. The Arrow
  * vector is owned and closed by the partition reader, not by this view. */
abstract class DirectValidityColumnVector(v: FieldVector, t: DataType) extends ColumnVector(t) {
  private val nulls = v.getNullCount
  private val validity = v.getValidityBufferAddress

  override def close(): Unit = ()
  override def hasNull: Boolean = nulls > 0
  override def numNulls(): Int = nulls
  override def isNullAt(rowId: Int): Boolean =
    nulls > 0 && ((Platform.getByte(null, validity + (rowId >>> 3)) >> (rowId & 7)) & 1) == 0
}

/** A list, map or struct column: it has no values of its own to hand out. */
trait NoScalarValues extends ColumnVector {
  protected def unsupported: Nothing =
    throw new UnsupportedOperationException(s"not a value of a ${dataType.simpleString} column")
  override def getBoolean(rowId: Int): Boolean = unsupported
  override def getByte(rowId: Int): Byte = unsupported
  override def getShort(rowId: Int): Short = unsupported
  override def getInt(rowId: Int): Int = unsupported
  override def getLong(rowId: Int): Long = unsupported
  override def getFloat(rowId: Int): Float = unsupported
  override def getDouble(rowId: Int): Double = unsupported
  override def getDecimal(rowId: Int, precision: Int, scale: Int): Decimal = unsupported
  override def getUTF8String(rowId: Int): UTF8String = unsupported
  override def getBinary(rowId: Int): Array[Byte] = unsupported
  override def getArray(rowId: Int): ColumnarArray = unsupported
  override def getMap(ordinal: Int): ColumnarMap = unsupported
  override def getChild(ordinal: Int): ColumnVector = unsupported
}
