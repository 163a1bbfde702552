package io.fermion.spark.read

import org.apache.arrow.vector.{FieldVector, IntVector}
import org.apache.arrow.vector.complex.{ListVector, MapVector, StructVector}
import org.apache.spark.sql.types.{ArrayType, DataType, MapType}
import org.apache.spark.sql.vectorized.{ColumnVector, ColumnarArray, ColumnarMap}
import org.apache.spark.unsafe.Platform

/** A top-level array or map column decoded from VALIDITY and OFFSETS only (the core's
  * `ScanColumn.Lengths`): its lengths are known, its elements are decoded (by `loadFull`, which
  * reads the whole column of the stripe) the first time anything asks for one. `size(col)` and `col IS NULL` therefore read no element bytes. */
final class DeferredElementsColumnVector(dataType: DataType, lengths: IntVector, loadFull: () => FieldVector)
    extends DirectValidityColumnVector(lengths, dataType)
    with NoScalarValues {
  private val rows = lengths.getValueCount

  /** The lengths, read from the vector's memory (null slots hold 0). */
  private val lens = lengths.getDataBufferAddress
  private def lengthOf(rowId: Int): Int = Platform.getInt(null, lens + 4L * rowId)

  /** Where slot `rowId` starts. Rows are asked for in order (Spark's columnar-to-row loop), so the
    * start follows from the previous row's; a jump reads a running sum built once. `size(col)`
    * then costs no pass over the lengths of its own. */
  private def startOf(rowId: Int): Int = {
    val start =
      if (rowId == nextRow) nextStart
      else {
        if (starts == null) starts = DeferredElementsColumnVector.startsOf(lens, rows)
        starts(rowId)
      }
    nextRow = rowId + 1
    nextStart = start + lengthOf(rowId)
    start
  }
  private var nextRow = 0
  private var nextStart = 0
  private var starts: Array[Int] = null
  private lazy val loaded: FieldVector = loadFull()

  // Plain vals (the vectors themselves are lazy): these are read once per row.
  private val elements: LazyColumnVector = dataType match {
    case a: ArrayType =>
      new LazyColumnVector(
        a.elementType,
        () => DirectArrowColumnVector.of(loaded.asInstanceOf[ListVector].getDataVector, a.elementType)
      )
    case _ => null
  }
  private def entriesChild(i: Int, t: DataType): ColumnVector =
    DirectArrowColumnVector.of(
      loaded.asInstanceOf[MapVector].getDataVector.asInstanceOf[StructVector].getChildByOrdinal(i).asInstanceOf[
        FieldVector
      ],
      t
    )
  private val (keys, values): (LazyColumnVector, LazyColumnVector) = dataType match {
    case m: MapType =>
      (
        new LazyColumnVector(m.keyType, () => entriesChild(0, m.keyType)),
        new LazyColumnVector(m.valueType, () => entriesChild(1, m.valueType))
      )
    case _ => (null, null)
  }

  override def getArray(rowId: Int): ColumnarArray =
    if (isNullAt(rowId)) null else new ColumnarArray(current(elements), startOf(rowId), lengthOf(rowId))
  override def getMap(rowId: Int): ColumnarMap =
    if (isNullAt(rowId)) null else new ColumnarMap(current(keys), current(values), startOf(rowId), lengthOf(rowId))

  /** Once the elements are loaded, rows hand out views of them directly, not through the lazy vector. */
  private def current(v: LazyColumnVector): ColumnVector = { val l = v.loadedOrNull; if (l != null) l else v }

}

/** Loops live here rather than in the constructor, where the JIT compiles them poorly. */
object DeferredElementsColumnVector {

  /** Where each of `rows` slots starts: the running sum of the `int32` lengths at `address`. */
  def startsOf(address: Long, rows: Int): Array[Int] = {
    val s = new Array[Int](rows)
    var acc = 0
    var i = 0
    while (i < rows) { s(i) = acc; acc += Platform.getInt(null, address + 4L * i); i += 1 }
    s
  }
}
