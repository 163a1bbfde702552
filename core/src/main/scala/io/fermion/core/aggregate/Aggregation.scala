package io.fermion.core.aggregate

import io.fermion.core.schema.FermionType

/** An aggregate function a scan computes over the rows it reads. Each task of the scan returns
  * partial results — one or more rows per group — that the engine combines: counts and sums by
  * summing, minimums and maximums by taking theirs. */
sealed trait AggregateFunction extends Serializable {

  /** The type of the partial results. */
  def resultType: FermionType
}

object AggregateFunction {

  /** Rows. */
  case object CountRows extends AggregateFunction { def resultType: FermionType = FermionType.Int64 }

  /** Rows where `input` is not null. */
  final case class Count(input: ValueExpr) extends AggregateFunction {
    def resultType: FermionType = FermionType.Int64
  }

  /** The sum of the non-null values of `input` (null when there is none): `int64` for integers,
    * `float64` for floating point, and for decimals the input's own type: a group whose sum does
    * not fit it is returned as several rows whose sums do (an engine that casts partial sums to the
    * input's type, as Spark does, never overflows on them; combining them gives the exact sum).
    * Integer sums are exact too: one that leaves `int64` is returned in parts. */
  final case class Sum(input: ValueExpr) extends AggregateFunction {
    def resultType: FermionType = input.dataType match {
      case d: FermionType.Decimal => d
      case FermionType.Float32 | FermionType.Float64 => FermionType.Float64
      case _ => FermionType.Int64
    }
  }

  /** The smallest non-null value of `input` (null when there is none), in its type. */
  final case class Min(input: ValueExpr) extends AggregateFunction { def resultType: FermionType = input.dataType }

  /** The largest non-null value of `input`. */
  final case class Max(input: ValueExpr) extends AggregateFunction { def resultType: FermionType = input.dataType }
}

/** Aggregates computed by a scan: rows grouped by the values of flat columns (nulls form a group
  * of their own; strings and binary by their bytes), then each function over each group's rows.
  * Partial results come back as Arrow vectors, the group columns first, then one per function
  * (see [[PartialAggregator]]).
  * {{{
  * import io.fermion.core.aggregate._, ValueExpr._, AggregateFunction._
  * val price = Column("price", FermionType.Decimal(15, 2))
  * val agg = Aggregation(IndexedSeq(Column("flag", FermionType.Utf8)), IndexedSeq(CountRows, Sum(price)))
  * }}} */
final case class Aggregation(
    groupBy: IndexedSeq[ValueExpr.Column],
    functions: IndexedSeq[AggregateFunction],
    overflow: OverflowRule = OverflowRule.Raise
) {

  /** The output's types: the group columns', then each function's result type. */
  def outputTypes: IndexedSeq[FermionType] = groupBy.map(_.dataType) ++ functions.map(_.resultType)

  /** The columns read. */
  def columns: Set[String] = groupBy.map(_.name).toSet ++ functions.flatMap {
    case AggregateFunction.CountRows => Set.empty[String]
    case AggregateFunction.Count(e) => e.columns
    case AggregateFunction.Sum(e) => e.columns
    case AggregateFunction.Min(e) => e.columns
    case AggregateFunction.Max(e) => e.columns
  }
}

object Aggregation {
  import FermionType._

  /** Why the core cannot compute `a` exactly, or None when it can. */
  def check(a: Aggregation): Option[String] = {
    val groups =
      a.groupBy.collectFirst { case c if !groupable(c.dataType) => s"cannot group by ${c.name} (${c.dataType})" }
    groups.orElse(a.functions.iterator.map(checkFunction).collectFirst { case Some(why) => why })
  }

  private def groupable(t: FermionType): Boolean = t match {
    case Bool | Int8 | Int16 | Int32 | Int64 | Date32 | Utf8 | Binary | _: Timestamp | _: Decimal => true
    case _ => false
  }

  private def checkFunction(f: AggregateFunction): Option[String] = f match {
    case AggregateFunction.CountRows => None
    case AggregateFunction.Count(e) => checkValue(e)
    case AggregateFunction.Sum(e) =>
      if (!numeric(e.dataType)) Some(s"cannot sum $e") else checkValue(e)
    case AggregateFunction.Min(e) => if (!ordered(e.dataType)) Some(s"cannot order $e") else checkValue(e)
    case AggregateFunction.Max(e) => if (!ordered(e.dataType)) Some(s"cannot order $e") else checkValue(e)
  }

  private def integer(t: FermionType): Boolean = t == Int8 || t == Int16 || t == Int32 || t == Int64
  private def numeric(t: FermionType): Boolean =
    integer(t) || t == Float32 || t == Float64 || t.isInstanceOf[Decimal]

  /** Types whose minimum and maximum the core takes (floating point is left to the engine, whose
    * order of NaN and -0.0 is its own). */
  private def ordered(t: FermionType): Boolean = groupable(t)

  private def checkValue(e: ValueExpr): Option[String] = {
    import ValueExpr._
    def bad(why: String) = Some(s"$why in $e")
    e match {
      case Column(_, t) => if (groupable(t) || numeric(t)) None else bad(s"column type $t")
      case Literal(v, t) =>
        (t, v) match {
          case (_, null) => None
          case (_: Decimal, d: java.math.BigDecimal) if d.scale <= t.asInstanceOf[Decimal].scale => None
          case (Float64, _: java.lang.Double) => None
          case (it, _: java.lang.Long) if integer(it) => None
          case _ => bad(s"literal $v of $t")
        }
      case Arithmetic(op, l, r, t) =>
        checkValue(l).orElse(checkValue(r)).orElse {
          (l.dataType, r.dataType, t) match {
            case (Float64, Float64, Float64) => None
            case (a, b, c) if integer(a) && a == b && a == c => None
            case (Decimal(_, sl), Decimal(_, sr), Decimal(_, s)) =>
              val exact = if (op == Multiply) sl + sr else math.max(sl, sr)
              if (s == exact) None else bad(s"a result scale $s other than the exact $exact")
            case (a, b, c) => bad(s"$op of $a and $b as $c")
          }
        }
      case Negate(c, t) =>
        checkValue(c).orElse(if (c.dataType == t && (numeric(t) && t != Float32)) None else bad(s"negation as $t"))
      case Cast(c, t) =>
        checkValue(c).orElse {
          (c.dataType, t) match {
            case (a, b) if integer(a) && integer(b) && width(a) <= width(b) => None
            case (a, _: Decimal) if integer(a) => None
            case (Decimal(_, s1), Decimal(_, s2)) if s2 >= s1 => None
            case (a, Float64) if integer(a) || a == Float32 || a == Float64 => None
            case (a, b) => bad(s"a cast from $a to $b")
          }
        }
    }
  }

  private def width(t: FermionType): Int = t match {
    case Int8 => 1; case Int16 => 2; case Int32 => 4; case _ => 8
  }
}
