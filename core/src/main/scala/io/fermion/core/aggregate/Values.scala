package io.fermion.core.aggregate

import java.math.BigInteger

import io.fermion.core.schema.FermionType
import org.apache.arrow.memory.util.MemoryUtil
import org.apache.arrow.vector._

/** The values of one [[ValueExpr]] over the rows of a batch, in the form the core computes with:
  * integers, dates, timestamps, booleans (0/1) and unscaled decimals in [[longs]] — a decimal that
  * needs more than 64 bits in [[wide]] instead —, floating point in [[doubles]], strings and binary
  * left in their Arrow vector ([[bytes]]). [[nulls]] is null when no row is null. */
final private[aggregate] class Values(val dataType: FermionType, val rows: Int) {
  var longs: Array[Long] = _
  var wide: Array[BigInteger] = _
  var doubles: Array[Double] = _
  var bytes: BaseVariableWidthVector = _

  /** The row of [[bytes]] holding value r: `rowOf(r)` (null: r itself). */
  var rowOf: Array[Int] = _
  var nulls: Array[Boolean] = _

  /** Rows (also null) whose value overflowed under [[OverflowRule.Raise]], here or in an input
    * that was evaluated; null when none did. [[errorNote]] says where the first one was. */
  var errors: Array[Boolean] = _
  var errorNote: String = _

  def isNull(r: Int): Boolean = nulls != null && nulls(r)
  def isError(r: Int): Boolean = errors != null && errors(r)

  def setNull(r: Int): Unit = {
    if (nulls == null) nulls = new Array[Boolean](rows)
    nulls(r) = true
  }

  def setError(r: Int, note: => String): Unit = {
    setNull(r)
    if (errors == null) { errors = new Array[Boolean](rows); errorNote = note }
    errors(r) = true
  }

  /** Row `r`'s value as an exact integer (integers and unscaled decimals). */
  def bigAt(r: Int): BigInteger =
    if (wide != null && wide(r) != null) wide(r) else BigInteger.valueOf(longs(r))

  /** Stores an exact integer: in [[longs]] when it fits 64 bits. */
  def setBig(r: Int, v: BigInteger): Unit =
    if (v.bitLength < 64) { longs(r) = v.longValue; if (wide != null) wide(r) = null }
    else { if (wide == null) wide = new Array[BigInteger](rows); wide(r) = v }

  def isWide(r: Int): Boolean = wide != null && wide(r) != null
}

private[aggregate] object Values {

  /** The values of the rows `selection` (sorted rows of `v`; null: all `rows` of them) of an Arrow
    * vector of a flat column of type `t`, gathered: value i is that of row `selection(i)`. */
  def of(v: FieldVector, t: FermionType, rows: Int, selection: Array[Int]): Values = {
    val n = if (selection == null) rows else selection.length
    val out = new Values(t, n)
    // Row i's slot in the vector.
    @inline def at(i: Int): Int = if (selection == null) i else selection(i)
    if (v.getNullCount > 0) {
      out.nulls = new Array[Boolean](n)
      var i = 0
      while (i < n) { out.nulls(i) = v.isNull(at(i)); i += 1 }
    }
    v match {
      case vw: BaseVariableWidthVector => out.bytes = vw; out.rowOf = selection
      case f: Float4Vector =>
        out.doubles = new Array[Double](n)
        val a = f.getDataBufferAddress
        var i = 0
        while (i < n) {
          out.doubles(i) = java.lang.Float.intBitsToFloat(MemoryUtil.getInt(a + 4L * at(i))).toDouble; i += 1
        }
      case f: Float8Vector =>
        out.doubles = new Array[Double](n)
        val a = f.getDataBufferAddress
        var i = 0
        while (i < n) { out.doubles(i) = java.lang.Double.longBitsToDouble(MemoryUtil.getLong(a + 8L * at(i))); i += 1 }
      case b: BitVector =>
        out.longs = new Array[Long](n)
        val a = b.getDataBufferAddress
        var i = 0
        while (i < n) {
          val r = at(i); out.longs(i) = ((MemoryUtil.getByte(a + (r >>> 3)) >> (r & 7)) & 1).toLong; i += 1
        }
      case d: DecimalVector =>
        out.longs = new Array[Long](n)
        val a = d.getDataBufferAddress
        var i = 0
        while (i < n) {
          val r = at(i)
          val lo = MemoryUtil.getLong(a + 16L * r)
          val hi = MemoryUtil.getLong(a + 16L * r + 8)
          // Unscaled values are 16-byte little-endian two's complement; most fit the low word.
          if (hi == (lo >> 63)) out.longs(i) = lo
          else if (!out.isNull(i)) out.setBig(i, BigInteger.valueOf(hi).shiftLeft(64).add(unsigned(lo)))
          i += 1
        }
      case fixed: BaseFixedWidthVector =>
        out.longs = new Array[Long](n)
        val a = fixed.getDataBufferAddress
        var i = 0
        fixed.getTypeWidth match {
          case 8 => while (i < n) { out.longs(i) = MemoryUtil.getLong(a + 8L * at(i)); i += 1 }
          case 4 => while (i < n) { out.longs(i) = MemoryUtil.getInt(a + 4L * at(i)).toLong; i += 1 }
          case 2 => while (i < n) { out.longs(i) = MemoryUtil.getShort(a + 2L * at(i)).toLong; i += 1 }
          case 1 => while (i < n) { out.longs(i) = MemoryUtil.getByte(a + at(i)).toLong; i += 1 }
          case w => throw new IllegalArgumentException(s"cannot aggregate values of $w bytes (${v.getField})")
        }
      case other => throw new IllegalArgumentException(s"cannot aggregate a ${other.getClass.getSimpleName}")
    }
    out
  }

  /** `v` read as an unsigned 64-bit integer. */
  def unsigned(v: Long): BigInteger = {
    val b = BigInteger.valueOf(v & Long.MaxValue)
    if (v < 0) b.setBit(63) else b
  }

  /** Every row `value` (a literal) — or null. */
  def constant(value: Any, t: FermionType, rows: Int): Values = {
    val out = new Values(t, rows)
    value match {
      case null =>
        out.nulls = Array.fill(rows)(true)
        if (t == FermionType.Float64 || t == FermionType.Float32) out.doubles = new Array[Double](rows)
        else out.longs = new Array[Long](rows)
      case d: java.lang.Double => out.doubles = Array.fill(rows)(d.doubleValue)
      case l: java.lang.Long => out.longs = Array.fill(rows)(l.longValue)
      case d: java.math.BigDecimal =>
        val unscaled = d.setScale(t.asInstanceOf[FermionType.Decimal].scale).unscaledValue
        out.longs = new Array[Long](rows)
        var r = 0
        while (r < rows) { out.setBig(r, unscaled); r += 1 }
      case other => throw new IllegalArgumentException(s"a literal $other of $t")
    }
    out
  }
}
