package io.fermion.core.scan

/** What a scan read and skipped, counted by its readers. Names and descriptions are the registry
  * engines report them from (Spark shows them in its UI). */
final case class ScanMetrics(
    stripesRead: Long = 0,
    stripesSkipped: Long = 0,
    bytesRead: Long = 0,
    metadataBytesRead: Long = 0,
    pagesDecoded: Long = 0,
    pagesSkipped: Long = 0,
    decodeNanos: Long = 0
) {
  def +(o: ScanMetrics): ScanMetrics = ScanMetrics(
    stripesRead + o.stripesRead,
    stripesSkipped + o.stripesSkipped,
    bytesRead + o.bytesRead,
    metadataBytesRead + o.metadataBytesRead,
    pagesDecoded + o.pagesDecoded,
    pagesSkipped + o.pagesSkipped,
    decodeNanos + o.decodeNanos
  )

  /** The values in the order of [[ScanMetrics.all]]. */
  def values: IndexedSeq[Long] =
    IndexedSeq(
      stripesRead,
      stripesSkipped,
      bytesRead,
      metadataBytesRead,
      pagesDecoded,
      pagesSkipped,
      decodeNanos / 1000000L
    )
}

object ScanMetrics {

  /** One reported metric: its name and what it counts. */
  final case class Metric(name: String, description: String)

  val all: IndexedSeq[Metric] = IndexedSeq(
    Metric("stripesRead", "Fermion stripes read"),
    Metric("stripesSkipped", "Fermion stripes skipped by statistics"),
    Metric("fermionBytesRead", "Fermion bytes read"),
    Metric("fermionMetadataBytesRead", "Fermion metadata bytes read"),
    Metric("pagesDecoded", "Fermion pages decoded"),
    Metric("pagesSkipped", "Fermion pages skipped by statistics"),
    Metric("decodeTimeMs", "Fermion page decode time (ms)")
  )
}
