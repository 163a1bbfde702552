package io.fermion.spark.read

import org.apache.spark.rdd.RDD
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{And, Attribute}
import org.apache.spark.sql.catalyst.planning.PhysicalOperation
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.execution.{FilterExec, LeafExecNode, ProjectExec, SparkPlan, SparkStrategy}
import org.apache.spark.sql.execution.SQLExecution
import org.apache.spark.sql.execution.datasources.v2.DataSourceV2ScanRelation
import org.apache.spark.sql.execution.metric.{SQLMetric, SQLMetrics}

/** The rows of a [[FermionLocalTakeScan]], read on the driver when the query runs (not while it is
  * planned), and shown in EXPLAIN as the take they are: Spark's own plan of a local scan is a
  * `LocalTableScan` that says nothing of where its rows come from. A query that only collects them
  * runs no Spark job. */
final case class FermionLocalTakeExec(output: Seq[Attribute], @transient scan: FermionLocalTakeScan)
    extends LeafExecNode {
  override def nodeName: String = "FermionTake"
  override def simpleString(maxFields: Int): String = s"$nodeName ${scan.description()}"

  override lazy val metrics: Map[String, SQLMetric] =
    Map("numOutputRows" -> SQLMetrics.createMetric(sparkContext, "number of output rows"))

  @transient private lazy val rows: Array[InternalRow] = {
    val r = scan.rows()
    longMetric("numOutputRows").add(r.length)
    SQLMetrics.postDriverMetricUpdates(
      sparkContext,
      sparkContext.getLocalProperty(SQLExecution.EXECUTION_ID_KEY),
      metrics.values.toSeq
    )
    r
  }

  override protected def doExecute(): RDD[InternalRow] = sparkContext.parallelize(rows.toSeq, 1)
  override def executeCollect(): Array[InternalRow] = rows
  override def executeTake(limit: Int): Array[InternalRow] = rows.take(limit)
  override def executeTail(limit: Int): Array[InternalRow] = rows.takeRight(limit)
}

/** Plans a [[FermionLocalTakeScan]] as a [[FermionLocalTakeExec]], with Spark's filters and
  * projection above it (installed by the session extensions; without them Spark plans the scan as
  * a `LocalTableScan`). */
object FermionLocalTakeStrategy extends SparkStrategy {
  override def apply(plan: LogicalPlan): Seq[SparkPlan] = plan match {
    case PhysicalOperation(project, filters, r: DataSourceV2ScanRelation)
        if r.scan.isInstanceOf[FermionLocalTakeScan] =>
      val leaf = FermionLocalTakeExec(r.output, r.scan.asInstanceOf[FermionLocalTakeScan])
      val filtered = filters.reduceLeftOption(And).map(FilterExec(_, leaf)).getOrElse(leaf)
      val projected =
        if (project.map(_.toAttribute) == filtered.output) filtered else ProjectExec(project, filtered)
      Seq(projected)
    case _ => Nil
  }
}
