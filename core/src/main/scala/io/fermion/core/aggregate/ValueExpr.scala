package io.fermion.core.aggregate

import io.fermion.core.schema.FermionType

/** A value computed for each row from a scan's flat top-level columns: what an aggregation that a
  * scan answers itself sums, counts or takes the minimum of. Every node carries its result type,
  * which the engine chooses by its own typing rules (Spark's for decimals, say); the core computes
  * each node exactly in that type:
  *
  *   - integers (`int8`..`int64`) as 64-bit integers, checked against the node's range;
  *   - decimals as exact unscaled integers at the node's scale: adding aligns the scales (the
  *     node's scale must be the larger of its inputs'), multiplying adds them (the node's scale
  *     must be their sum), so no value is ever rounded — a node that would need rounding is
  *     refused by [[Aggregation.check]];
  *   - `float64` by IEEE arithmetic (no overflow; `float32` values are read as doubles, never
  *     computed with).
  *
  * A node is null where one of its inputs is. A value that does not fit its node's type overflows,
  * and [[OverflowRule]] says what follows. */
sealed trait ValueExpr extends Serializable {
  def dataType: FermionType

  /** The columns the value reads. */
  def columns: Set[String] = this match {
    case ValueExpr.Column(name, _) => Set(name)
    case _: ValueExpr.Literal => Set.empty
    case ValueExpr.Arithmetic(_, l, r, _) => l.columns ++ r.columns
    case ValueExpr.Negate(c, _) => c.columns
    case ValueExpr.Cast(c, _) => c.columns
  }
}

object ValueExpr {

  /** A flat top-level column of the scan, by name (resolved as the scan resolves its columns). */
  final case class Column(name: String, dataType: FermionType) extends ValueExpr

  /** A constant: a `Long` for integer types, `java.math.BigDecimal` for decimals (at most the
    * type's scale), a `Double` for `float64`; null for the type's null. */
  final case class Literal(value: Any, dataType: FermionType) extends ValueExpr

  sealed trait Op extends Serializable
  case object Add extends Op
  case object Subtract extends Op
  case object Multiply extends Op

  final case class Arithmetic(op: Op, left: ValueExpr, right: ValueExpr, dataType: FermionType) extends ValueExpr

  final case class Negate(child: ValueExpr, dataType: FermionType) extends ValueExpr

  /** A conversion that keeps every value: to a wider integer, from an integer or a decimal to a
    * decimal with at least its scale (which may overflow the target's precision), from a number to
    * `float64`. */
  final case class Cast(child: ValueExpr, dataType: FermionType) extends ValueExpr
}

/** What happens to a value that does not fit its type: [[OverflowRule.Raise]] fails the read with
  * an [[ArithmeticOverflowException]] (Spark's ANSI mode); [[OverflowRule.WrapOrNull]] wraps
  * integers around (two's complement) and makes decimals null (Spark's legacy arithmetic). */
sealed trait OverflowRule extends Serializable
object OverflowRule {
  case object Raise extends OverflowRule
  case object WrapOrNull extends OverflowRule
}

/** A value of an aggregated expression does not fit its type, under [[OverflowRule.Raise]]. */
final class ArithmeticOverflowException(message: String) extends ArithmeticException(message)
