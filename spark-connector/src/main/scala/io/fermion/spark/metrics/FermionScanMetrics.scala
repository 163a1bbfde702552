package io.fermion.spark.metrics

import org.apache.spark.sql.connector.metric.{CustomSumMetric, CustomTaskMetric}

/** A summed scan metric shown in the Spark UI and in the plan's metrics. Spark instantiates each
  * metric class by reflection (no-argument constructor), hence one small class per metric. */
sealed abstract class FermionSumMetric(metricName: String, text: String) extends CustomSumMetric {
  override def name(): String = metricName
  override def description(): String = text
}

final class StripesReadMetric extends FermionSumMetric(FermionScanMetrics.StripesRead, "Fermion stripes read")
final class StripesSkippedMetric
    extends FermionSumMetric(FermionScanMetrics.StripesSkipped, "Fermion stripes skipped by statistics")
final class BytesReadMetric extends FermionSumMetric(FermionScanMetrics.BytesRead, "Fermion bytes read")
final class MetadataBytesReadMetric
    extends FermionSumMetric(FermionScanMetrics.MetadataBytesRead, "Fermion metadata bytes read")
final class PagesDecodedMetric extends FermionSumMetric(FermionScanMetrics.PagesDecoded, "Fermion pages decoded")
final class PagesSkippedMetric
    extends FermionSumMetric(FermionScanMetrics.PagesSkipped, "Fermion pages skipped by statistics")
final class DecodeTimeMetric extends FermionSumMetric(FermionScanMetrics.DecodeTimeMs, "Fermion page decode time (ms)")

object FermionScanMetrics {
  val StripesRead = "stripesRead"
  val StripesSkipped = "stripesSkipped"
  val BytesRead = "fermionBytesRead"
  val MetadataBytesRead = "fermionMetadataBytesRead"
  val PagesDecoded = "pagesDecoded"
  val PagesSkipped = "pagesSkipped"
  val DecodeTimeMs = "decodeTimeMs"

  def all = Array(
    new StripesReadMetric,
    new StripesSkippedMetric,
    new BytesReadMetric,
    new MetadataBytesReadMetric,
    new PagesDecodedMetric,
    new PagesSkippedMetric,
    new DecodeTimeMetric
  )

  def task(metricName: String, v: Long): CustomTaskMetric = new CustomTaskMetric {
    override def name(): String = metricName
    override def value(): Long = v
  }
}
