package io.fermion.spark.metrics

import org.apache.spark.sql.connector.metric.{CustomSumMetric, CustomTaskMetric}

/** Scan metrics shown in the Spark UI and in the plan's metrics. */
final class StripesReadMetric extends CustomSumMetric {
  override def name(): String = FermionScanMetrics.StripesRead
  override def description(): String = "Fermion stripes read"
}

final class StripesSkippedMetric extends CustomSumMetric {
  override def name(): String = FermionScanMetrics.StripesSkipped
  override def description(): String = "Fermion stripes skipped by statistics"
}

final class BytesReadMetric extends CustomSumMetric {
  override def name(): String = FermionScanMetrics.BytesRead
  override def description(): String = "Fermion bytes read"
}

object FermionScanMetrics {
  val StripesRead = "stripesRead"
  val StripesSkipped = "stripesSkipped"
  val BytesRead = "fermionBytesRead"

  def all = Array(new StripesReadMetric, new StripesSkippedMetric, new BytesReadMetric)

  def task(metricName: String, v: Long): CustomTaskMetric = new CustomTaskMetric {
    override def name(): String = metricName
    override def value(): Long = v
  }
}
