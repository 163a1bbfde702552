package io.fermion.spark.extensions

import scala.jdk.CollectionConverters._

import io.fermion.spark.FermionTable
import org.apache.spark.sql.catalyst.expressions._
import org.apache.spark.sql.catalyst.expressions.aggregate.AggregateExpression
import org.apache.spark.sql.catalyst.planning.PhysicalOperation
import org.apache.spark.sql.catalyst.plans.logical.{Aggregate, LogicalPlan, Project}
import org.apache.spark.sql.catalyst.rules.Rule
import org.apache.spark.sql.execution.datasources.v2.DataSourceV2Relation
import org.apache.spark.sql.util.CaseInsensitiveStringMap

/** Readies aggregates over a Fermion table for the scan to compute them
  * ([[io.fermion.spark.read.AggregatePushdown]]), before Spark's own push-down runs:
  *
  *   - Spark offers a scan the aggregates above it only when no predicate is left for Spark to
  *     evaluate after the scan. A filtered Fermion scan normally leaves every predicate to Spark
  *     (statistics only skip data), so the table under an aggregate is read with
  *     [[ExactFiltersKey]]: its scan then takes over the predicates it evaluates exactly.
  *   - Computed inputs other than arithmetic on columns and literals (`count_if(x = 300)`,
  *     `sum(if(...))`) are moved into a projection below the aggregate, so that Spark does not
  *     offer them: some shapes fail inside Spark's translation with an internal error (a comparison
  *     of a tinyint column with an out-of-range literal, which the optimizer turns into `x IS NULL
  *     AND NULL`, trips an assertion), and the scan would not compute them anyway. */
object PrepareAggregatePushdown extends Rule[LogicalPlan] {

  /** The read option that asks a scan to take over the predicates it evaluates exactly. */
  val ExactFiltersKey = "__fermion_exact_filters"

  private def fermion(r: DataSourceV2Relation): Boolean = r.table.isInstanceOf[FermionTable]

  private def readsFermion(plan: LogicalPlan): Boolean =
    plan.exists { case r: DataSourceV2Relation => fermion(r); case _ => false }

  /** Expressions the scan may compute: arithmetic, casts, columns and literals. */
  private def arithmetic(e: Expression): Boolean = e match {
    case _: Attribute | _: Literal => true
    case _: Add | _: Subtract | _: Multiply | _: UnaryMinus | _: Cast => e.children.forall(arithmetic)
    case _ => false
  }

  private def computed(e: Expression): Boolean = !e.isInstanceOf[Attribute] && !e.isInstanceOf[Literal]

  private def isolated(results: Seq[NamedExpression]): Seq[Expression] =
    results.flatMap(_.collect { case a: AggregateExpression =>
      a.aggregateFunction.children.filter(c => computed(c) && !arithmetic(c))
    }.flatten).distinct

  override def apply(plan: LogicalPlan): LogicalPlan = plan.transformUp {
    case agg: Aggregate if isolated(agg.aggregateExpressions).nonEmpty && readsFermion(agg.child) =>
      val inputs = isolated(agg.aggregateExpressions)
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
    case agg @ Aggregate(_, _, PhysicalOperation(_, filters, r: DataSourceV2Relation), _)
        if filters.nonEmpty && fermion(r) && !r.options.containsKey(ExactFiltersKey) =>
      val options = new CaseInsensitiveStringMap((r.options.asScala.toMap + (ExactFiltersKey -> "true")).asJava)
      agg.transformDown { case rel: DataSourceV2Relation if rel eq r => rel.copy(options = options) }
  }
}
