package io.fermion.spark.extensions

import io.fermion.core.expr.FilterExpr
import io.fermion.spark.FermionTable
import io.fermion.spark.read.{FermionScanBuilder, LikeFunction}
import org.apache.spark.sql.catalyst.expressions.{ApplyFunctionExpression, Attribute, Expression, Like, Literal, Not}
import org.apache.spark.sql.catalyst.plans.logical.{Filter, LogicalPlan}
import org.apache.spark.sql.catalyst.rules.Rule
import org.apache.spark.sql.execution.datasources.v2.DataSourceV2Relation
import org.apache.spark.sql.types.StringType
import org.apache.spark.unsafe.types.UTF8String

/** Lets a Fermion scan evaluate `LIKE` patterns Spark cannot push: Spark simplifies `'abc%'`,
  * `'%abc'`, `'%abc%'` and `'abc%def'` into predicates a scan is offered, but leaves any other
  * pattern (`o_comment NOT LIKE '%special%requests%'`, TPC-H Q13) as a regular expression it runs
  * on every row, a costly test the scan never sees. In a filter directly over a Fermion table, a
  * `LIKE` (or `NOT LIKE`) of a column of binary-collated strings with a literal pattern whose only
  * wildcard is `%` becomes [[LikeFunction]], which Spark offers the scan as a pushed predicate; the
  * scan tests its bytes (and takes it over, see `FermionScanBuilder.exactPays`). Other patterns
  * (`_`, a non-literal pattern, other collations) stay Spark's, and so does every `LIKE` over a
  * table small enough to be broadcast whole: Spark plans dynamic pruning of a join's other side
  * only from a filter it deems selective, which a `LIKE` is and a function is not, and such a
  * table's filters stay in Spark's `Filter` anyway. */
object PushLikePatterns extends Rule[LogicalPlan] {
  override def apply(plan: LogicalPlan): LogicalPlan = plan.transformUp {
    case f @ Filter(condition, DataSourceV2Relation(table: FermionTable, _, _, _, _, _))
        if condition.exists(_.isInstanceOf[Like]) && !FermionScanBuilder.broadcastWhole(table.snapshot) =>
      val rewritten = condition.transformDown {
        case Not(l: Like) => function(l, negated = true).getOrElse(Not(l))
        case l: Like => function(l, negated = false).getOrElse(l)
      }
      if (rewritten fastEquals condition) f else f.copy(condition = rewritten)
  }

  private def function(l: Like, negated: Boolean): Option[Expression] = (l.left, l.right) match {
    case (a: Attribute, Literal(p: UTF8String, StringType)) if binaryStrings(a) =>
      FilterExpr.Like.split(p.toString, l.escapeChar).filter(_.size >= 2).map { parts =>
        val like = FilterExpr.Like.of(a.name, parts)
        val pattern = new String(like.pattern, java.nio.charset.StandardCharsets.UTF_8)
        ApplyFunctionExpression(LikeFunction(like, negated), Seq(a, Literal(pattern)))
      }
    case _ => None
  }

  /** Spark's `StringType` equals only the default (UTF8_BINARY) collation's. */
  private def binaryStrings(a: Attribute): Boolean = a.dataType == StringType
}
