package io.fermion.spark.read

import io.fermion.core.scan.{ScanBatch, ScanColumn}
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.execution.vectorized.ConstantColumnVector
import org.apache.spark.sql.types.{ArrayType, DataType, MapType, StructType}
import org.apache.spark.sql.vectorized.{ColumnVector, ColumnarBatch}

/** Spark's views of the core's batch columns, over the same Arrow memory. */
object SparkColumns {
  def of(c: ScanColumn, t: DataType, rows: Int): ColumnVector = c match {
    case ScanColumn.Values(v) => DirectArrowColumnVector.of(v, t)
    case ScanColumn.Nulls(_) => nulls(t, rows)
    case l: ScanColumn.Lengths if t.isInstanceOf[ArrayType] || t.isInstanceOf[MapType] =>
      new DeferredElementsColumnVector(t, l.lengths, () => l.elements)
    case l: ScanColumn.Lengths => DirectArrowColumnVector.of(l.elements, t)
  }

  def nulls(t: DataType, rows: Int): ColumnVector = {
    val v = new ConstantColumnVector(rows, t)
    v.setNull()
    v
  }

  /** The rows of a core batch as Spark rows (copied: they outlive the batch). Copied through an
    * unsafe projection, which asks each array element whether it is null before reading it
    * (`ColumnarRow.copy` reads every element of an array, and Arrow refuses to read a null one). */
  def rows(batch: ScanBatch, schema: StructType): IndexedSeq[InternalRow] = {
    val columns: Array[ColumnVector] =
      schema.fields.indices.map(i => of(batch.columns(i), schema(i).dataType, batch.numRows)).toArray
    rows(new ColumnarBatch(columns, batch.numRows), schema)
  }

  /** The rows of Spark columns of `schema`, copied (see above). */
  def rows(b: ColumnarBatch, schema: StructType): IndexedSeq[InternalRow] = {
    val project = org.apache.spark.sql.catalyst.expressions.UnsafeProjection.create(schema)
    val out = IndexedSeq.newBuilder[InternalRow]
    val it = b.rowIterator()
    while (it.hasNext) out += project(it.next()).copy()
    out.result()
  }
}
