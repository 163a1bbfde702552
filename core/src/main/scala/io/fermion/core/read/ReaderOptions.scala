package io.fermion.core.read

/** Knobs of the file reader (docs/implementation.md 3.10). */
final case class ReaderOptions(
    /** Bytes read from the end of the file on open; when footer, schema, stripe directory and CIT
      * fit (and often small files' CMBs too) opening costs one read. */
    tailPrefetchBytes: Int = -1,
    /** When the whole CMB area is at most this large, it is read at once instead of column by
      * column. Lazy loading keeps metadata I/O proportional to the
      * columns read, so the default is a low 1 MiB. */
    cmbEagerLoadThreshold: Long = 1L << 20,
    /** Ranges closer than this are fetched in one read; negative:
      * the file system's own choice (16 KiB on a local disk, 1 MiB on HDFS and object stores). */
    coalesceGapBytes: Long = -1L,
    /** Upper bound of one coalesced read. */
    maxCoalescedBytes: Long = 64L << 20,
    verifyChecksums: Boolean = true,
    /** Threads (the caller included) that decode the columns of one stripe at once; 1 decodes on
      * the task's thread only. */
    decodeThreads: Int = math.min(4, Runtime.getRuntime.availableProcessors()),
    /** Skip stripes whose statistics prove a pushed filter false. Off only to compare results. */
    filterPushdown: Boolean = true,
    /** Aggregates a scan can compute are computed by its tasks (an engine's choice: the Spark
      * connector offers them to the core's aggregation). */
    aggregatePushdown: Boolean = true,
    /** An engine may narrow a scan by the keys of the other side of a join, on columns whose
      * stripes hold narrow slices of their values (the Spark connector: dynamic pruning). */
    runtimeFilters: Boolean = false,
    /** An engine may size a filtered scan by the share of rows its filter keeps on a sample
      * ([[io.fermion.core.scan.Scan.filteredShare]]; the Spark connector: its size estimate). */
    filterEstimate: Boolean = true,
    /** Random access reads whole pages (their CRC32 checked) instead of only the requested values
      * of PLAIN pages stored uncompressed. */
    takeWholePages: Boolean = false,
    /** Lookups of at most this many rows are read where the query is planned (an engine's choice:
      * the Spark connector reads them on the driver, as a local table) rather than by tasks. */
    localTakeMaxRows: Int = 1000
)

object ReaderOptions {

  /** The reader options in `options` (keys of other scopes are ignored here; see
    * [[io.fermion.core.options.OptionRegistry.checkKnown]]). */
  def parse(options: Map[String, String]): ReaderOptions = {
    import io.fermion.core.options.OptionRegistry._
    val d = ReaderOptions()
    ReaderOptions(
      tailPrefetchBytes = TailPrefetchBytes.in(options).map(_.toInt).getOrElse(d.tailPrefetchBytes),
      cmbEagerLoadThreshold = CmbEagerLoadThreshold.in(options).getOrElse(d.cmbEagerLoadThreshold),
      coalesceGapBytes = CoalesceGapBytes.in(options).getOrElse(d.coalesceGapBytes),
      maxCoalescedBytes = MaxCoalescedBytes.in(options).getOrElse(d.maxCoalescedBytes),
      verifyChecksums = VerifyChecksums.in(options).getOrElse(d.verifyChecksums),
      decodeThreads = DecodeThreads.in(options).getOrElse(d.decodeThreads),
      filterPushdown = FilterPushdown.in(options).getOrElse(d.filterPushdown),
      aggregatePushdown = AggregatePushdown.in(options).getOrElse(d.aggregatePushdown),
      runtimeFilters = RuntimeFilters.in(options).getOrElse(d.runtimeFilters),
      filterEstimate = FilterEstimate.in(options).getOrElse(d.filterEstimate),
      takeWholePages = TakeWholePages.in(options).getOrElse(d.takeWholePages),
      localTakeMaxRows = LocalTakeMaxRows.in(options).getOrElse(d.localTakeMaxRows)
    )
  }
}
