package io.fermion.core.schema

/** The logical types a Fermion column can have. Each has a stable one-byte id written into the
  * schema (docs/format.md, "Schema"); ids are never reused. */
sealed abstract class FermionType(val id: Int, val name: String) extends Serializable {
  override def toString: String = name
}

object FermionType {
  case object Bool extends FermionType(0, "bool")
  case object Int8 extends FermionType(1, "int8")
  case object Int16 extends FermionType(2, "int16")
  case object Int32 extends FermionType(3, "int32")
  case object Int64 extends FermionType(4, "int64")
  case object Float32 extends FermionType(5, "float32")
  case object Float64 extends FermionType(6, "float64")
  case object Utf8 extends FermionType(7, "string")
  case object Binary extends FermionType(8, "binary")

  /** Days since 1970-01-01. */
  case object Date32 extends FermionType(9, "date32")

  /** Microseconds since the epoch; `utcAdjusted` is an instant (Spark TIMESTAMP), otherwise a
    * local date-time (Spark TIMESTAMP_NTZ). */
  final case class Timestamp(utcAdjusted: Boolean)
      extends FermionType(10, if (utcAdjusted) "timestamp" else "timestamp_ntz")
  final case class Decimal(precision: Int, scale: Int) extends FermionType(11, s"decimal($precision,$scale)") {
    require(precision >= 1 && precision <= 38, s"decimal precision $precision is outside 1..38")

    /** Unscaled values up to 18 digits are stored as int64, wider ones as 16-byte integers. */
    def storedWidth: Int = if (precision <= 18) 8 else 16
  }
  case object Struct extends FermionType(12, "struct")
  case object List extends FermionType(13, "list")
  case object Map extends FermionType(14, "map")

  /** Bytes per value in a DATA stream for fixed-width types; 0 for booleans (bit-packed),
    * variable-width and nested types. */
  def fixedWidth(t: FermionType): Int = t match {
    case Int8 => 1
    case Int16 => 2
    case Int32 | Date32 | Float32 => 4
    case Int64 | Float64 | Timestamp(_) => 8
    case d: Decimal => d.storedWidth
    case _ => 0
  }

  def isVariableWidth(t: FermionType): Boolean = t == Utf8 || t == Binary
  def isNested(t: FermionType): Boolean = t == Struct || t == List || t == Map
}
