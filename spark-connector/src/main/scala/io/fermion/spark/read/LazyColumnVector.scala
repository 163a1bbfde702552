package io.fermion.spark.read

import org.apache.spark.sql.types.{DataType, Decimal}
import org.apache.spark.sql.vectorized.{ColumnVector, ColumnarArray, ColumnarMap}
import org.apache.spark.unsafe.types.UTF8String

/** A column vector whose values are decoded on first access. Used for the elements of lists and
  * maps, so that a query that only needs their sizes (`size(col)`, null checks) never decodes them.
  * Closing it does not close the target: the owner of the loaded vector does. Like every column
  * vector it is read by one task thread. */
final class LazyColumnVector(dataType: DataType, load: () => ColumnVector) extends ColumnVector(dataType) {
  private var loaded: ColumnVector = null
  private def target: ColumnVector = { if (loaded == null) loaded = load(); loaded }

  /** The loaded vector, or null before anything asked for a value: a caller that hands out views
    * of the elements passes the loaded vector itself once there is one, saving this indirection on
    * every element read. */
  def loadedOrNull: ColumnVector = loaded

  override def close(): Unit = ()
  override def hasNull(): Boolean = target.hasNull()
  override def numNulls(): Int = target.numNulls()
  override def isNullAt(rowId: Int): Boolean = target.isNullAt(rowId)
  override def getBoolean(rowId: Int): Boolean = target.getBoolean(rowId)
  override def getByte(rowId: Int): Byte = target.getByte(rowId)
  override def getShort(rowId: Int): Short = target.getShort(rowId)
  override def getInt(rowId: Int): Int = target.getInt(rowId)
  override def getLong(rowId: Int): Long = target.getLong(rowId)
  override def getFloat(rowId: Int): Float = target.getFloat(rowId)
  override def getDouble(rowId: Int): Double = target.getDouble(rowId)
  override def getArray(rowId: Int): ColumnarArray = target.getArray(rowId)
  override def getMap(ordinal: Int): ColumnarMap = target.getMap(ordinal)
  override def getDecimal(rowId: Int, precision: Int, scale: Int): Decimal = target.getDecimal(rowId, precision, scale)
  override def getUTF8String(rowId: Int): UTF8String = target.getUTF8String(rowId)
  override def getBinary(rowId: Int): Array[Byte] = target.getBinary(rowId)
  override def getChild(ordinal: Int): ColumnVector = target.getChild(ordinal)
}
