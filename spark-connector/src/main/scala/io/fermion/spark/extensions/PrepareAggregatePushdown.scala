package io.fermion.spark.extensions

import scala.jdk.CollectionConverters._

import io.fermion.spark.FermionTable
import org.apache.spark.sql.catalyst.expressions._
import org.apache.spark.sql.catalyst.expressions.aggregate.AggregateExpression
import org.apache.spark.sql.catalyst.planning.PhysicalOperation
import org.apache.spark.sql.catalyst.plans.logical.{Aggregate, LogicalPlan, Project}
import org.apache.spark.sql.catalyst.rules.Rule
import io.fermion.spark.read.FermionScan
import org.apache.spark.sql.execution.datasources.v2.{DataSourceV2Relation, DataSourceV2ScanRelation}
import org.apache.spark.sql.util.CaseInsensitiveStringMap

/** Readies aggregates over a Fermion table for the scan to compute them
  * ([[io.fermion.spark.read.AggregatePushdown]]), before Spark's own push-down runs:
  *
  *   - Spark offers a scan the aggregates above it only when no predicate is left for Spark to
  *     evaluate after the scan. A filtered Fermion scan normally leaves every predicate to Spark
  *     (statistics only skip data), so the table under an aggregate is read with
  *     [[ExactFiltersKey]]: its scan then takes over the predicates it evaluates exactly.
  *   - A subquery's aggregate that decorrelation joined into the query (TPC-H Q17's average per
  *     part) arrives over a scan Spark already built while it optimized the subquery alone, before
  *     the aggregate sat on it. Such a scan, which left its predicates to Spark, is put back as its
  *     table, so that Spark's push-down plans it again, aggregate and all.
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
      agg.transformDown { case rel: DataSourceV2Relation if rel eq r => marked(rel) }
    case agg @ Aggregate(_, _, PhysicalOperation(_, filters, s: DataSourceV2ScanRelation), _) if rebuildable(s) =>
      val table = if (filters.nonEmpty) marked(s.relation) else s.relation
      agg.transformDown { case x: DataSourceV2ScanRelation if x eq s => Project(s.output, table) }
  }

  private def marked(r: DataSourceV2Relation): DataSourceV2Relation =
    r.copy(options = new CaseInsensitiveStringMap((r.options.asScala.toMap + (ExactFiltersKey -> "true")).asJava))

  /** A Fermion scan Spark may plan again, whose columns are its table's (no nested field pruned). */
  private def rebuildable(s: DataSourceV2ScanRelation): Boolean = s.scan match {
    case f: FermionScan if f.replannable && fermion(s.relation) =>
      s.output.forall(a => s.relation.output.exists(b => b.exprId == a.exprId && b.dataType == a.dataType))
    case _ => false
  }
}
