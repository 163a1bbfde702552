package io.fermion.core.scan

import io.fermion.core.expr.FilterValue
import io.fermion.core.read.ColumnDecoder
import io.fermion.core.schema.{ArrowSchemaMapping, FermionField}
import org.apache.arrow.memory.BufferAllocator
import org.apache.arrow.vector._

/** Partition columns as Arrow vectors: their values come from the manifest (or the `k=v`
  * directories of loose files), one per file, never from the data files. A scan batch holds rows
  * of one file, so its partition column repeats one value; a take gathers rows of several files. */
private[scan] object PartitionVectors {

  /** The column of `n` rows where every row holds `value`. */
  def constant(field: FermionField, value: Option[FilterValue], n: Int, allocator: BufferAllocator): ScanColumn =
    value match {
      case None => ScanColumn.Nulls(field)
      case v => ScanColumn.Values(vector(field, n, allocator)(_ => v))
    }

  /** The vector of `n` rows whose row `i` holds `value(i)` (None: null). */
  def vector(
      field: FermionField,
      n: Int,
      allocator: BufferAllocator
  )(value: Int => Option[FilterValue]): FieldVector = {
    if ((0 until n).forall(i => value(i).isEmpty)) return ColumnDecoder.nullVector(field, n, allocator)
    val v = ArrowSchemaMapping.toArrowField(field).createVector(allocator)
    try {
      v.setInitialCapacity(n)
      v.allocateNew()
      var i = 0
      while (i < n) {
        value(i) match {
          case None => setNull(v, i)
          case Some(x) => set(v, i, x)
        }
        i += 1
      }
      v.setValueCount(n)
      v
    } catch { case t: Throwable => v.close(); throw t }
  }

  private def setNull(v: FieldVector, i: Int): Unit = v match {
    case f: BaseFixedWidthVector => f.setNull(i)
    case w: BaseVariableWidthVector => w.setNull(i)
    case other => throw new IllegalStateException(s"partition column vector ${other.getClass.getSimpleName}")
  }

  private def set(v: FieldVector, i: Int, x: FilterValue): Unit = (v, x) match {
    case (b: BitVector, FilterValue.Integral(l)) => b.setSafe(i, if (l != 0) 1 else 0)
    case (t: TinyIntVector, FilterValue.Integral(l)) => t.setSafe(i, l.toByte)
    case (s: SmallIntVector, FilterValue.Integral(l)) => s.setSafe(i, l.toShort)
    case (n: IntVector, FilterValue.Integral(l)) => n.setSafe(i, l.toInt)
    case (b: BigIntVector, FilterValue.Integral(l)) => b.setSafe(i, l)
    case (d: DateDayVector, FilterValue.Integral(l)) => d.setSafe(i, l.toInt)
    case (t: TimeStampVector, FilterValue.Integral(l)) => t.setSafe(i, l)
    case (d: DecimalVector, FilterValue.Integral(l)) =>
      d.setSafe(i, new java.math.BigDecimal(java.math.BigInteger.valueOf(l), d.getScale))
    case (f: Float8Vector, FilterValue.Floating(d)) => f.setSafe(i, d)
    case (f: Float4Vector, FilterValue.Floating(d)) => f.setSafe(i, d.toFloat)
    case (s: BaseVariableWidthVector, FilterValue.Bytes(b)) => s.setSafe(i, b)
    case _ =>
      throw new IllegalStateException(s"partition value $x does not fit a ${v.getClass.getSimpleName} (`${v.getName}`)")
  }
}
