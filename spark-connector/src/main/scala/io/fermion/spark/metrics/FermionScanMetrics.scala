package io.fermion.spark.metrics

import io.fermion.core.scan.ScanMetrics
import org.apache.spark.sql.connector.metric.{CustomSumMetric, CustomTaskMetric}

/** A summed scan metric shown in the Spark UI and in the plan's metrics, one per entry of the
  * core's [[ScanMetrics.all]]. Spark instantiates each metric class by reflection (no-argument
  * constructor), hence one small class per metric. */
sealed abstract class FermionSumMetric(index: Int) extends CustomSumMetric {
  override def name(): String = ScanMetrics.all(index).name
  override def description(): String = ScanMetrics.all(index).description
}

final class StripesReadMetric extends FermionSumMetric(0)
final class StripesSkippedMetric extends FermionSumMetric(1)
final class BytesReadMetric extends FermionSumMetric(2)
final class MetadataBytesReadMetric extends FermionSumMetric(3)
final class PagesDecodedMetric extends FermionSumMetric(4)
final class PagesSkippedMetric extends FermionSumMetric(5)
final class DecodeTimeMetric extends FermionSumMetric(6)

/** Driver-side: fragments (files) partition pruning dropped before any task opened them. */
final class FragmentsPrunedMetric extends CustomSumMetric {
  override def name(): String = FermionScanMetrics.FragmentsPruned
  override def description(): String = "fragments pruned by partition values"
}

object FermionScanMetrics {
  val FragmentsPruned = "fragmentsPrunedByPartition"

  /** The driver's value of [[FragmentsPrunedMetric]]. */
  def fragmentsPruned(n: Long): CustomTaskMetric = new CustomTaskMetric {
    override def name(): String = FragmentsPruned
    override def value(): Long = n
  }

  def all: Array[FermionSumMetric] = Array(
    new StripesReadMetric,
    new StripesSkippedMetric,
    new BytesReadMetric,
    new MetadataBytesReadMetric,
    new PagesDecodedMetric,
    new PagesSkippedMetric,
    new DecodeTimeMetric
  )
  require(all.length == ScanMetrics.all.size, "one Spark metric class per core scan metric")

  def taskValues(m: ScanMetrics): Array[CustomTaskMetric] = ScanMetrics.all.zip(m.values).map { case (metric, v) =>
    new CustomTaskMetric {
      override def name(): String = metric.name
      override def value(): Long = v
    }: CustomTaskMetric
  }.toArray
}
