package io.fermion.spark.extensions

import io.fermion.spark.FermionTable
import org.apache.spark.sql.catalyst.expressions.{Alias, Attribute, Expression, Literal, NamedExpression}
import org.apache.spark.sql.catalyst.expressions.aggregate.AggregateExpression
import org.apache.spark.sql.catalyst.plans.logical.{Aggregate, LogicalPlan, Project}
import org.apache.spark.sql.catalyst.rules.Rule
import org.apache.spark.sql.execution.datasources.v2.DataSourceV2Relation

/** Moves the computed inputs of aggregates over a Fermion table (`count_if(x = 300)`,
  * `sum(a * b)`) into a projection below the aggregate.
  *
  * Spark translates a query's aggregates before it offers them to a V2 table that can answer
  * aggregates itself, and some shapes fail inside that translation with an internal error (a
  * comparison of a tinyint column with an out-of-range literal, which the optimizer turns into
  * `x IS NULL AND NULL`, trips an assertion). Fermion answers only COUNT, MIN and MAX of plain
  * columns from metadata, so nothing is lost by keeping computed inputs away from that
  * translation: Spark does not offer aggregates over a computed projection. */
object IsolateComputedAggregateInputs extends Rule[LogicalPlan] {
  private def readsFermion(plan: LogicalPlan): Boolean =
    plan.exists {
      case r: DataSourceV2Relation => r.table.isInstanceOf[FermionTable]
      case _ => false
    }

  private def computed(e: Expression): Boolean = !e.isInstanceOf[Attribute] && !e.isInstanceOf[Literal]

  private def computedInputs(results: Seq[NamedExpression]): Seq[Expression] =
    results.flatMap(_.collect { case a: AggregateExpression => a.aggregateFunction.children.filter(computed) }.flatten)
      .distinct

  override def apply(plan: LogicalPlan): LogicalPlan = plan.transformUp {
    case agg: Aggregate if computedInputs(agg.aggregateExpressions).nonEmpty && readsFermion(agg.child) =>
      val inputs = computedInputs(agg.aggregateExpressions)
      val aliases = inputs.zipWithIndex.map { case (e, i) => Alias(e, s"_fermion_agg_input_$i")() }
      val byInput = inputs.zip(aliases.map(_.toAttribute)).toMap
      val rewritten = agg.aggregateExpressions.map(_.transformDown {
        case a: AggregateExpression =>
          a.copy(aggregateFunction =
            a.aggregateFunction.mapChildren(c => byInput.getOrElse(c, c))
              .asInstanceOf[org.apache.spark.sql.catalyst.expressions.aggregate.AggregateFunction]
          )
      }.asInstanceOf[NamedExpression])
      agg.copy(aggregateExpressions = rewritten, child = Project(agg.child.output ++ aliases, agg.child))
  }
}
