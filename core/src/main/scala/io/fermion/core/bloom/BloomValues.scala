package io.fermion.core.bloom

import io.fermion.core.expr.FilterValue
import io.fermion.core.schema.FermionType

/** What a bloom filter hashes for each type (docs/format.md, "Bloom filters"): integer-backed
  * values (integers, dates, timestamps, decimals up to 18 digits) as the XXH64 of their value as an
  * 8-byte little-endian long; floats and doubles as that of the double's bits (float widened,
  * -0.0 as 0.0, NaN canonical); strings and binary as that of their bytes. Booleans and wide
  * decimals have no bloom filter. */
private[core] object BloomValues {
  def supports(t: FermionType): Boolean = t match {
    case FermionType.Bool | FermionType.Struct | FermionType.List | FermionType.Map => false
    case d: FermionType.Decimal => d.storedWidth == 8
    case _ => true
  }

  def isFloating(t: FermionType): Boolean = t == FermionType.Float32 || t == FermionType.Float64

  def hashDouble(d: Double): Long = XxHash64.hashLong(java.lang.Double.doubleToLongBits(if (d == 0.0) 0.0 else d))

  /** The hash of a filter literal compared to a column of type `t`, if the literal can be hashed
    * as the column's values are. */
  def hashOf(t: FermionType, v: FilterValue): Option[Long] = (t, v) match {
    case (_, FilterValue.Bytes(b)) if t == FermionType.Utf8 || t == FermionType.Binary =>
      Some(XxHash64.hash(b, 0, b.length))
    case (_, FilterValue.Floating(d)) if isFloating(t) =>
      Some(hashDouble(if (t == FermionType.Float32) d.toFloat.toDouble else d))
    case (_, FilterValue.Integral(l)) if isFloating(t) =>
      Some(hashDouble(if (t == FermionType.Float32) l.toFloat.toDouble else l.toDouble))
    case (_, FilterValue.Integral(l))
        if supports(t) && !isFloating(t) && t != FermionType.Utf8 && t != FermionType.Binary =>
      Some(XxHash64.hashLong(l))
    case _ => None
  }
}
