package io.fermion.spark.read

import io.fermion.core.expr.{FilterExpr, FilterValue}
import org.apache.spark.sql.connector.expressions.{Literal, NamedReference}
import org.apache.spark.sql.connector.expressions.filter.Predicate
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.types.UTF8String

/** Spark's V2 predicates -> core [[FilterExpr]] for stripe skipping. Only predicates on top-level
  * flat columns against literals translate; inside AND an untranslatable side becomes "unknown"
  * (still sound), inside OR it makes the whole OR unknown. */
object SparkPredicateTranslation {
  import FilterExpr._

  def translate(p: Predicate, schema: StructType): Option[FilterExpr] = {
    val e = toExpr(p, schema)
    if (e == Unknown) None else Some(e)
  }

  private def toExpr(p: Predicate, schema: StructType): FilterExpr = {
    val kids = p.children()
    def sub(i: Int): FilterExpr = kids(i) match {
      case q: Predicate => toExpr(q, schema)
      case _ => Unknown
    }
    p.name() match {
      case "AND" => (sub(0), sub(1)) match {
          case (Unknown, Unknown) => Unknown
          case (l, r) => And(l, r)
        }
      case "OR" => (sub(0), sub(1)) match {
          case (Unknown, _) | (_, Unknown) => Unknown
          case (l, r) => Or(l, r)
        }
      case "NOT" => sub(0) match { case Unknown => Unknown; case c => Not(c) }
      case "IS_NULL" => column(kids(0), schema).map(f => IsNull(f.name): FilterExpr).getOrElse(Unknown)
      case "IS_NOT_NULL" => column(kids(0), schema).map(f => IsNotNull(f.name): FilterExpr).getOrElse(Unknown)
      case name @ ("STARTS_WITH" | "ENDS_WITH" | "CONTAINS") =>
        val matching: (String, Array[Byte]) => FilterExpr =
          name match { case "STARTS_WITH" => StartsWith; case "ENDS_WITH" => EndsWith; case _ => Contains }
        (for { f <- column(kids(0), schema); v <- literal(kids(1), f.dataType) } yield v match {
          case FilterValue.Bytes(b) => matching(f.name, b)
          case _ => Unknown
        }).getOrElse(Unknown)
      case "BOOLEAN_EXPRESSION" => likeOf(kids(0), schema).getOrElse(Unknown)
      case "IN" if prefixOf(kids(0), schema).nonEmpty =>
        prefixes(kids(0), kids.drop(1).toSeq, schema).getOrElse(Unknown)
      case "=" if prefixOf(kids(0), schema).nonEmpty => prefixes(kids(0), Seq(kids(1)), schema).getOrElse(Unknown)
      case "=" if prefixOf(kids(1), schema).nonEmpty => prefixes(kids(1), Seq(kids(0)), schema).getOrElse(Unknown)
      case "IN" =>
        column(kids(0), schema).flatMap { f =>
          val vs = kids.drop(1).map(k => literal(k, f.dataType))
          if (vs.forall(_.isDefined)) Some(In(f.name, vs.flatten.toIndexedSeq)) else None
        }.getOrElse(Unknown)
      case op @ ("=" | "<>" | "<" | "<=" | ">" | ">=" | "<=>") =>
        // `c <=> v` is false, never null, where `c` is null: it is `c IS NOT NULL AND c = v`, so
        // that NOT keeps those rows (NOT of a plain `c = v` drops them, as its negation `c <> v` does).
        def cmp(ref: Int, lit: Int, flip: Boolean): Option[FilterExpr] = for {
          f <- column(kids(ref), schema)
          v <- literal(kids(lit), f.dataType)
        } yield {
          val c = Compare(f.name, opOf(op, flip), v)
          if (op == "<=>") And(IsNotNull(f.name), c) else c
        }
        cmp(0, 1, flip = false).orElse(cmp(1, 0, flip = true)).getOrElse(Unknown)
      case _ => Unknown
    }
  }

  /** A [[LikeFunction]] of a string column and its pattern, as Spark hands it (in a
    * `BOOLEAN_EXPRESSION`): the pattern's [[Like]], negated for `NOT LIKE`. */
  private def likeOf(e: org.apache.spark.sql.connector.expressions.Expression, schema: StructType): Option[FilterExpr] =
    e match {
      case u: org.apache.spark.sql.connector.expressions.UserDefinedScalarFunc
          if (u.name() == LikeFunction.LikeName || u.name() == LikeFunction.NotLikeName) && u.children().length == 2 =>
        (column(u.children()(0), schema), u.children()(1)) match {
          case (Some(f), p: Literal[_]) if f.dataType == StringType && p.value().isInstanceOf[UTF8String] =>
            val like = Like(f.name, p.value().asInstanceOf[UTF8String].getBytes)
            scala.util.Try(like.parts).toOption.map(_ => if (u.name() == LikeFunction.NotLikeName) Not(like) else like)
          case _ => None
        }
      case _ => None
    }

  /** `substring(c, 1, k)` of a string column `c` (default collation): the column and `k`. */
  private def prefixOf(
      e: org.apache.spark.sql.connector.expressions.Expression,
      schema: StructType
  ): Option[(StructField, Int)] =
    e match {
      case g: org.apache.spark.sql.connector.expressions.GeneralScalarExpression
          if g.name() == "SUBSTRING" && g.children().length == 3 =>
        (column(g.children()(0), schema), g.children()(1), g.children()(2)) match {
          case (Some(f), p: Literal[_], n: Literal[_]) if f.dataType == StringType =>
            (p.value(), n.value()) match {
              case (1, k: java.lang.Integer) if k > 0 => Some(f -> k.intValue)
              case _ => None
            }
          case _ => None
        }
      case _ => None
    }

  /** `substring(c, 1, k) IN (v1, ...)` (or `= v`) where every `v` has exactly `k` ASCII characters:
    * `c` starts with one of them (an ASCII byte is a whole character in UTF-8, so the first `k`
    * characters are those `k` bytes). Other literals: None. */
  private def prefixes(
      e: org.apache.spark.sql.connector.expressions.Expression,
      literals: Seq[org.apache.spark.sql.connector.expressions.Expression],
      schema: StructType
  ): Option[FilterExpr] = {
    val (f, k) = prefixOf(e, schema).get
    val values = literals.map {
      case l: Literal[_] if l.dataType() == StringType && l.value() != null =>
        val b = l.value().asInstanceOf[UTF8String].getBytes
        if (b.length == k && b.forall(_ >= 0)) Some(b) else None
      case _ => None
    }
    if (values.isEmpty || values.exists(_.isEmpty)) None
    else Some(values.flatten.map(b => StartsWith(f.name, b): FilterExpr).reduce(Or))
  }

  private def opOf(name: String, flip: Boolean): Op = (name, flip) match {
    case ("=" | "<=>", _) => Eq
    case ("<>", _) => NotEq
    case ("<", false) | (">", true) => Lt
    case ("<=", false) | (">=", true) => LtEq
    case (">", false) | ("<", true) => Gt
    case (">=", false) | ("<=", true) => GtEq
    case other => throw new IllegalArgumentException(s"not a comparison: $other")
  }

  private def column(
      e: org.apache.spark.sql.connector.expressions.Expression,
      schema: StructType
  ): Option[StructField] = e match {
    case r: NamedReference if r.fieldNames().length == 1 =>
      schema.fields.find(_.name.equalsIgnoreCase(r.fieldNames()(0)))
    case _ => None
  }

  /** A non-null literal in the column's statistics domain. */
  private def literal(e: org.apache.spark.sql.connector.expressions.Expression, t: DataType): Option[FilterValue] =
    e match {
      case l: Literal[_] if l.value() != null && l.dataType() == t => value(l.value(), t)
      case _ => None
    }

  /** A value in Spark's internal representation (a literal's, or an `InternalRow`'s: boxed
    * numbers, `UTF8String`, `Decimal`) in the column's statistics domain; None for other types. */
  def value(v: Any, t: DataType): Option[FilterValue] = (t, v) match {
    case (
          ByteType | ShortType | IntegerType | LongType | DateType | TimestampType | TimestampNTZType,
          n: java.lang.Number
        ) =>
      Some(FilterValue.Integral(n.longValue()))
    case (BooleanType, b: java.lang.Boolean) => Some(FilterValue.Integral(if (b) 1L else 0L))
    case (FloatType | DoubleType, n: java.lang.Number) => Some(FilterValue.Floating(n.doubleValue()))
    case (StringType, s: UTF8String) => Some(FilterValue.Bytes(s.getBytes))
    case (BinaryType, b: Array[Byte]) => Some(FilterValue.Bytes(b))
    case (d: DecimalType, v: Decimal) if d.precision <= 18 =>
      scala.util.Try(v.toJavaBigDecimal.setScale(d.scale).unscaledValue().longValueExact()).toOption.map(
        FilterValue.Integral
      )
    case _ => None
  }
}
