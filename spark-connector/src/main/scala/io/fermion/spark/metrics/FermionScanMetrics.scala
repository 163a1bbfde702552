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

final class MetadataBytesReadMetric extends CustomSumMetric {
  override def name(): String = FermionScanMetrics.MetadataBytesRead
  override def description(): String = "Fermion metadata bytes read"
}

final class PagesDecodedMetric extends CustomSumMetric {
  override def name(): String = FermionScanMetrics.PagesDecoded
  override def description(): String = "Fermion pages decoded"
}

final class PagesSkippedMetric extends CustomSumMetric {
  override def name(): String = FermionScanMetrics.PagesSkipped
  override def description(): String = "Fermion pages skipped by statistics"
}

final class DecodeTimeMetric extends CustomSumMetric {
  override def name(): String = FermionScanMetrics.DecodeTimeMs
  override def description(): String = "Fermion page decode time (ms)"
}

object FermionScanMetrics {
  val StripesRead = "stripesRead"
  val StripesSkipped = "stripesSkipped"
  val BytesRead = "fermionBytesRead"
  val MetadataBytesRead = "fermionMetadataBytesRead"
  val PagesDecoded = "pagesDecoded"
  val PagesSkipped = "pagesSkipped"
  val DecodeTimeMs = "decodeTimeMs"

  def all = Array(new StripesReadMetric, new StripesSkippedMetric, new BytesReadMetric, new MetadataBytesReadMetric,
    new PagesDecodedMetric, new PagesSkippedMetric, new DecodeTimeMetric)

  def task(metricName: String, v: Long): CustomTaskMetric = new CustomTaskMetric {
    override def name(): String = metricName
    override def value(): Long = v
  }
}
