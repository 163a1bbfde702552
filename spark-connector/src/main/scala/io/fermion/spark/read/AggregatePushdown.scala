package io.fermion.spark.read

import io.fermion.core.aggregate.{AggregateFunction, Aggregation, OverflowRule, ValueExpr}
import io.fermion.spark.SparkTypeMapping
import org.apache.spark.sql.catalyst.{expressions => catalyst}
import org.apache.spark.sql.connector.expressions.{
  Cast => V2Cast, Expression, GeneralScalarExpression, Literal, NamedReference
}
import org.apache.spark.sql.connector.expressions.aggregate.{AggregateFunc, Count, CountStar, Max, Min, Sum}
import org.apache.spark.sql.connector.expressions.aggregate.{Aggregation => SparkAggregation}
import org.apache.spark.sql.internal.SQLConf
import org.apache.spark.sql.types._

/** Spark's pushed aggregation (GROUP BY columns; COUNT, SUM, MIN, MAX — Spark offers AVG as SUM and
  * COUNT — over columns and arithmetic on them) as a core [[Aggregation]] that the scan computes.
  * Each arithmetic node gets the type Spark's own expression gives it (built as a Catalyst
  * expression over typed columns and literals, so the session's decimal settings apply), and the
  * core refuses what it would have to round. Only plain columns of types whose order and equality
  * are byte-wise (strings with the default collation) are grouped or ordered. */
object AggregatePushdown {

  /** The core aggregation and the Spark types of its output (group columns, then one per
    * function), or None when some part cannot be computed exactly in the scan. */
  def translate(agg: SparkAggregation, schema: StructType): Option[(Aggregation, StructType)] = {
    val groups = agg.groupByExpressions().toIndexedSeq.map {
      case r: NamedReference if r.fieldNames().length == 1 =>
        field(r, schema).filter(f => groupable(f.dataType)).map(f => f -> ValueExpr.Column(f.name, fermion(f.dataType)))
      case _ => None
    }
    val functions = agg.aggregateExpressions().toIndexedSeq.map(function(_, schema))
    if (groups.exists(_.isEmpty) || functions.exists(_.isEmpty)) return None
    val overflow = if (SQLConf.get.ansiEnabled) OverflowRule.Raise else OverflowRule.WrapOrNull
    val aggregation = Aggregation(groups.flatten.map(_._2), functions.flatten.map(_._1), overflow)
    if (Aggregation.check(aggregation).nonEmpty) return None
    val output = groups.flatten.zipWithIndex.map { case ((f, _), i) => StructField(s"group_$i", f.dataType) } ++
      functions.flatten.zipWithIndex.map { case ((_, t), i) => StructField(s"agg_$i", t) }
    Some(aggregation -> StructType(output))
  }

  // Spark names a column as the table does, so the exact name is tried first. Not `schema(name)`:
  // the schema is new each query, and the map of every field's name it builds on first use cost a
  // 10,000-column query more (2.7 ms) than these few passes over the fields (0.5 ms).
  private def field(r: NamedReference, schema: StructType): Option[StructField] = {
    val name = r.fieldNames()(0)
    schema.fields.find(_.name == name).orElse(schema.fields.find(_.name.equalsIgnoreCase(name)))
  }

  private def fermion(t: DataType): io.fermion.core.schema.FermionType =
    SparkTypeMapping.toFermionField(StructField("v", t)).dataType

  /** Types the core groups, orders and sums as Spark does: strings only byte-wise (a collation
    * compares otherwise), no floating point (Spark's NaN and -0.0 rules are its own). */
  private def groupable(t: DataType): Boolean = t match {
    case s: StringType => s == StringType // the default collation, UTF8_BINARY
    case BooleanType | ByteType | ShortType | IntegerType | LongType | DateType | TimestampType | TimestampNTZType |
        BinaryType | _: DecimalType => true
    case _ => false
  }

  /** A function, and the Spark type of its partial results. */
  private def function(f: AggregateFunc, schema: StructType): Option[(AggregateFunction, DataType)] = f match {
    case _: CountStar => Some(AggregateFunction.CountRows -> LongType)
    case c: Count if !c.isDistinct => value(c.column, schema).map(v => AggregateFunction.Count(v._1) -> LongType)
    case s: Sum if !s.isDistinct =>
      value(s.column, schema).collect {
        case (v, t: NumericType) =>
          val sum = AggregateFunction.Sum(v)
          sum -> SparkTypeMapping.toSpark(io.fermion.core.schema.FermionField("v", -1, sum.resultType, nullable = true))
      }
    case m: Min => value(m.column, schema).filter(v => groupable(v._2)).map(v => AggregateFunction.Min(v._1) -> v._2)
    case m: Max => value(m.column, schema).filter(v => groupable(v._2)).map(v => AggregateFunction.Max(v._1) -> v._2)
    case _ => None
  }

  /** A pushed expression as a core value and its Spark type. */
  private def value(e: Expression, schema: StructType): Option[(ValueExpr, DataType)] =
    catalystOf(e, schema).flatMap { c =>
      val t = c.dataType
      valueOf(c).map(_ -> t)
    }

  /** The Catalyst expression Spark would evaluate for a pushed one (its type is Spark's). */
  private def catalystOf(e: Expression, schema: StructType): Option[catalyst.Expression] = e match {
    case r: NamedReference if r.fieldNames().length == 1 =>
      field(r, schema).filter(f => groupable(f.dataType) || f.dataType == DoubleType || f.dataType == FloatType)
        .map(f => catalyst.AttributeReference(f.name, f.dataType)())
    case l: Literal[_] => Some(catalyst.Literal(l.value(), l.dataType()))
    case c: V2Cast => catalystOf(c.expression(), schema).map(catalyst.Cast(_, c.dataType()))
    case g: GeneralScalarExpression =>
      val kids = g.children().toSeq.map(catalystOf(_, schema))
      if (kids.exists(_.isEmpty)) None
      else (g.name(), kids.flatten) match {
        case ("+", Seq(a, b)) => Some(catalyst.Add(a, b))
        case ("-", Seq(a, b)) => Some(catalyst.Subtract(a, b))
        case ("*", Seq(a, b)) => Some(catalyst.Multiply(a, b))
        case ("-", Seq(a)) => Some(catalyst.UnaryMinus(a))
        case _ => None
      }
    case _ => None
  }

  private def valueOf(e: catalyst.Expression): Option[ValueExpr] = {
    val t = e.dataType
    def typed = if (t == FloatType) None else Some(fermion(t))
    e match {
      case a: catalyst.AttributeReference => Some(ValueExpr.Column(a.name, fermion(t)))
      case catalyst.Literal(v, lt) =>
        val value: Option[Any] = (v, lt) match {
          case (null, _) => Some(null)
          case (d: Decimal, _: DecimalType) => Some(d.toJavaBigDecimal)
          case (n: java.lang.Byte, _) => Some(n.longValue)
          case (n: java.lang.Short, _) => Some(n.longValue)
          case (n: java.lang.Integer, IntegerType) => Some(n.longValue)
          case (n: java.lang.Long, LongType) => Some(n.longValue)
          case (d: java.lang.Double, DoubleType) => Some(d)
          case _ => None
        }
        for { x <- value; ft <- typed } yield ValueExpr.Literal(x, ft)
      case c: catalyst.Cast => for { child <- valueOf(c.child); ft <- typed } yield ValueExpr.Cast(child, ft)
      case b: catalyst.BinaryArithmetic =>
        val op = b match {
          case _: catalyst.Add => Some(ValueExpr.Add)
          case _: catalyst.Subtract => Some(ValueExpr.Subtract)
          case _: catalyst.Multiply => Some(ValueExpr.Multiply)
          case _ => None
        }
        for { o <- op; l <- valueOf(b.left); r <- valueOf(b.right); ft <- typed } yield ValueExpr.Arithmetic(
          o,
          l,
          r,
          ft
        )
      case catalyst.UnaryMinus(c, _) => for { child <- valueOf(c); ft <- typed } yield ValueExpr.Negate(child, ft)
      case _ => None
    }
  }
}
