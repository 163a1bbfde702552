package io.fermion.spark.read

import io.fermion.core.expr.FilterExpr
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.catalog.functions.ScalarFunction
import org.apache.spark.sql.types.{BooleanType, DataType, StringType}

/** SQL's `column LIKE pattern` (or `NOT LIKE`, `negated`) for a pattern whose only wildcard is `%`,
  * as a function Spark hands a scan in its pushed predicates: Spark's own `LIKE` has no V2 form, so
  * [[io.fermion.spark.extensions.PushLikePatterns]] puts this in its place over Fermion tables.
  * Its arguments are the string column and the pattern in [[FilterExpr.Like]]'s form (escape `\`),
  * which [[SparkPredicateTranslation]] reads; where Spark evaluates it itself (a scan that left it to
  * Spark), it matches as the scan does. A null value gives null, as `LIKE` does. */
final case class LikeFunction(like: FilterExpr.Like, negated: Boolean) extends ScalarFunction[java.lang.Boolean] {
  override def inputTypes(): Array[DataType] = Array(StringType, StringType)
  override def resultType(): DataType = BooleanType
  override def name(): String = if (negated) LikeFunction.NotLikeName else LikeFunction.LikeName
  override def canonicalName(): String = s"fermion.${name()}"
  // How EXPLAIN shows it, beside its arguments (the column and the pattern).
  override def toString: String = name()
  override def produceResult(input: InternalRow): java.lang.Boolean =
    if (input.isNullAt(0)) null
    else java.lang.Boolean.valueOf(like.matches(input.getUTF8String(0).getBytes) != negated)
}

object LikeFunction {
  val LikeName = "fermion_like"
  val NotLikeName = "fermion_not_like"
}
