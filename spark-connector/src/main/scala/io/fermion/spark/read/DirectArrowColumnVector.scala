package io.fermion.spark.read

import org.apache.arrow.vector._
import org.apache.spark.sql.types._
import org.apache.spark.sql.vectorized.{ArrowColumnVector, ColumnVector, ColumnarArray, ColumnarMap}
import org.apache.spark.unsafe.Platform
import org.apache.spark.unsafe.types.UTF8String

/** A flat Arrow vector read by Spark through raw memory addresses, as Spark reads its own
  * off-heap vectors. ArrowColumnVector goes through ArrowBuf's reference-count and bounds checks on
  * every value (the top of a scan's profile), and builds a java.math.BigDecimal per decimal; this
  * reads the validity bit and the value directly, and decimals of up to 18 digits as longs.
  * Addresses are taken once: the buffers live, unchanged, as long as the batch. The Arrow vector is
  * owned and closed by the partition reader. */
final class DirectArrowColumnVector private (v: FieldVector, t: DataType) extends DirectValidityColumnVector(v, t) {
  private val data = v.getDataBufferAddress
  private val offsets = v match {
    case _: BaseVariableWidthVector => v.getOffsetBufferAddress
    case _ => 0L
  }

  override def getBoolean(rowId: Int): Boolean =
    ((Platform.getByte(null, data + (rowId >>> 3)) >> (rowId & 7)) & 1) != 0
  override def getByte(rowId: Int): Byte = Platform.getByte(null, data + rowId)
  override def getShort(rowId: Int): Short = Platform.getShort(null, data + 2L * rowId)
  override def getInt(rowId: Int): Int = Platform.getInt(null, data + 4L * rowId)
  override def getLong(rowId: Int): Long = Platform.getLong(null, data + 8L * rowId)
  override def getFloat(rowId: Int): Float = Platform.getFloat(null, data + 4L * rowId)
  override def getDouble(rowId: Int): Double = Platform.getDouble(null, data + 8L * rowId)

  override def getDecimal(rowId: Int, precision: Int, scale: Int): Decimal =
    if (isNullAt(rowId)) null
    else Decimal.createUnsafe(Platform.getLong(null, data + DecimalVector.TYPE_WIDTH.toLong * rowId), precision, scale)

  override def getUTF8String(rowId: Int): UTF8String = {
    if (isNullAt(rowId)) return null
    val start = Platform.getInt(null, offsets + 4L * rowId)
    val end = Platform.getInt(null, offsets + 4L * rowId + 4)
    UTF8String.fromAddress(null, data + start, end - start)
  }

  override def getBinary(rowId: Int): Array[Byte] = {
    if (isNullAt(rowId)) return null
    val start = Platform.getInt(null, offsets + 4L * rowId)
    val end = Platform.getInt(null, offsets + 4L * rowId + 4)
    val out = new Array[Byte](end - start)
    Platform.copyMemory(null, data + start, out, Platform.BYTE_ARRAY_OFFSET, end - start)
    out
  }

  private def unsupported = throw new UnsupportedOperationException(s"a $t column has no nested values")
  override def getArray(rowId: Int): ColumnarArray = unsupported
  override def getMap(ordinal: Int): ColumnarMap = unsupported
  override def getChild(ordinal: Int): ColumnVector = unsupported
}

object DirectArrowColumnVector {

  /** The fastest Spark view of `v`: direct for flat types (decimals up to 18 digits), and for lists,
    * maps and structs a [[DirectNestedColumnVector]] over such views of their children; Spark's
    * ArrowColumnVector for wide decimals and any other pairing. */
  def of(v: FieldVector, t: DataType): ColumnVector = (t, v) match {
    case (d: DecimalType, _: DecimalVector) if d.precision <= Decimal.MAX_LONG_DIGITS =>
      new DirectArrowColumnVector(v, t)
    case (_: DecimalType, _) => new ArrowColumnVector(v)
    case (
          BooleanType | ByteType | ShortType | IntegerType | LongType | FloatType | DoubleType | DateType | TimestampType |
          TimestampNTZType | StringType | BinaryType,
          _: BaseFixedWidthVector | _: BaseVariableWidthVector
        ) => new DirectArrowColumnVector(v, t)
    case (_: StringType, _: BaseVariableWidthVector) => new DirectArrowColumnVector(v, t) // collated strings
    case _ => DirectNestedColumnVector.of(v, t).getOrElse(new ArrowColumnVector(v))
  }
}
