package io.fermion.core.expr

/** A [[FilterExpr]] evaluated where some columns are constants (a fragment's partition values) and
  * the others are unknown (data columns, which vary from row to row). The result is the set of
  * SQL truth values the filter can take on the rows: TRUE, FALSE and NULL (three-valued logic:
  * a comparison with a null is NULL, `NULL AND FALSE` is FALSE, `NULL OR TRUE` is TRUE, `NOT NULL`
  * is NULL). Rows can match only when TRUE is possible, which is what partition pruning asks
  * ([[mayMatch]]); a filter on constants alone has exactly one outcome ([[isTrue]]), which is what
  * replacing partitions asks.
  *
  * Sound by construction: an unknown column, an [[FilterExpr.Unknown]] part, a literal of another
  * kind than the value and any NaN all count as "any outcome", and AND, OR and NOT combine every
  * pair of possible outcomes. */
private[core] object ConstantFilter {
  val True = 1
  val False = 2
  val Null = 4
  val Any: Int = True | False | Null

  /** What `lookup` knows of a column: its constant value (None: SQL NULL), or nothing. */
  sealed trait Column
  final case class Constant(value: Option[FilterValue]) extends Column
  case object Varies extends Column

  /** The possible outcomes of `e` (a bit set of [[True]], [[False]], [[Null]]). */
  def outcomes(e: FilterExpr, lookup: String => Column): Int = {
    import FilterExpr._
    def leaf(column: String)(f: FilterValue => Int): Int = lookup(column) match {
      case Varies => Any
      case Constant(None) => Null
      case Constant(Some(v)) => f(v)
    }
    e match {
      case Compare(c, op, lit) =>
        leaf(c)(v =>
          compare(v, lit) match {
            case None => Any
            case Some(k) =>
              val holds = op match {
                case Eq => k == 0; case NotEq => k != 0; case Lt => k < 0; case LtEq => k <= 0; case Gt => k > 0;
                case GtEq => k >= 0
              }
              if (holds) True else False
          }
        )
      case In(c, values) =>
        leaf(c) { v =>
          val ks = values.map(compare(v, _))
          if (ks.exists(_.isEmpty)) Any else if (ks.contains(Some(0))) True else False
        }
      case m: BytesMatch =>
        leaf(m.column) {
          case FilterValue.Bytes(b) => if (m.matches(b)) True else False
          case _ => Any
        }
      case IsNull(c) => lookup(c) match { case Varies => Any; case Constant(v) => if (v.isEmpty) True else False }
      case IsNotNull(c) => lookup(c) match { case Varies => Any; case Constant(v) => if (v.isEmpty) False else True }
      case And(l, r) => combine(outcomes(l, lookup), outcomes(r, lookup), and)
      case Or(l, r) => combine(outcomes(l, lookup), outcomes(r, lookup), or)
      case Not(c) => map(outcomes(c, lookup), not)
      case Unknown => Any
    }
  }

  /** Whether some row could satisfy `e`: false only when TRUE is impossible. */
  def mayMatch(e: FilterExpr, lookup: String => Column): Boolean = (outcomes(e, lookup) & True) != 0

  /** Whether `e` is certainly TRUE (Some(true)), certainly not TRUE (Some(false)), or undecided. */
  def isTrue(e: FilterExpr, lookup: String => Column): Option[Boolean] = outcomes(e, lookup) match {
    case True => Some(true)
    case o if (o & True) == 0 => Some(false)
    case _ => None
  }

  /** Whether `e` refers only to columns `lookup` knows and has no [[FilterExpr.Unknown]] part, so
    * that its outcome on constants is exact (a single value). */
  def isExact(e: FilterExpr, known: String => Boolean): Boolean = {
    import FilterExpr._
    e match {
      case Unknown => false
      case And(l, r) => isExact(l, known) && isExact(r, known)
      case Or(l, r) => isExact(l, known) && isExact(r, known)
      case Not(c) => isExact(c, known)
      case other => FilterExpr.columns(other).forall(known)
    }
  }

  /** `e` on the rows of a file whose columns known to `lookup` are constants (a partition's
    * values): the leaves on those columns decided, AND and OR simplified. None: TRUE on every row
    * (no filter left). A filter FALSE on every row keeps only [[FilterExpr.Unknown]] (a scan prunes
    * such files with [[mayMatch]] before reading them). `e` is normalized first (no NOT left but over
    * a string match or IN, whose outcome is decided as a leaf's; so a NULL leaf rejects a row as FALSE
    * does). */
  def bind(e: FilterExpr, lookup: String => Column): Option[FilterExpr] = {
    import FilterExpr._
    def known(c: String) = lookup(c) != Varies
    def go(e: FilterExpr): Either[Boolean, FilterExpr] = e match {
      case And(l, r) =>
        (go(l), go(r)) match {
          case (Left(false), _) | (_, Left(false)) => Left(false)
          case (Left(true), x) => x
          case (x, Left(true)) => x
          case (Right(a), Right(b)) => Right(And(a, b))
        }
      case Or(l, r) =>
        (go(l), go(r)) match {
          case (Left(true), _) | (_, Left(true)) => Left(true)
          case (Left(false), x) => x
          case (x, Left(false)) => x
          case (Right(a), Right(b)) => Right(Or(a, b))
        }
      case Unknown => Right(Unknown)
      case leaf if FilterExpr.columns(leaf).nonEmpty && FilterExpr.columns(leaf).forall(known) =>
        isTrue(leaf, lookup).map(Left(_)).getOrElse(Right(Unknown))
      case other => Right(other)
    }
    go(FilterExpr.normalize(e)) match {
      case Left(true) => None
      case Left(false) => Some(Unknown)
      case Right(f) => Some(f)
    }
  }

  /** `v` compared with `lit` (negative, zero, positive), None when they are of different kinds or
    * either is NaN (SQL engines order NaN in ways a constant comparison should not guess). */
  def compare(v: FilterValue, lit: FilterValue): Option[Int] = (v, lit) match {
    case (FilterValue.Integral(a), FilterValue.Integral(b)) => Some(java.lang.Long.compare(a, b))
    case (FilterValue.Floating(a), FilterValue.Floating(b)) =>
      if (a.isNaN || b.isNaN) None else Some(if (a < b) -1 else if (a > b) 1 else 0) // -0.0 = 0.0
    case (FilterValue.Bytes(a), FilterValue.Bytes(b)) => Some(java.util.Arrays.compareUnsigned(a, b))
    case _ => None
  }

  private def and(a: Int, b: Int): Int =
    if (a == False || b == False) False else if (a == Null || b == Null) Null else True
  private def or(a: Int, b: Int): Int =
    if (a == True || b == True) True else if (a == Null || b == Null) Null else False
  private def not(a: Int): Int = if (a == True) False else if (a == False) True else Null

  private val singles = Seq(True, False, Null)
  private def combine(x: Int, y: Int, f: (Int, Int) => Int): Int =
    (for { a <- singles if (x & a) != 0; b <- singles if (y & b) != 0 } yield f(a, b)).foldLeft(0)(_ | _)
  private def map(x: Int, f: Int => Int): Int = singles.filter(a => (x & a) != 0).map(f).foldLeft(0)(_ | _)
}
