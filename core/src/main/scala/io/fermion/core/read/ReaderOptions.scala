package io.fermion.core.read

import io.fermion.core.options.OptionValues

/** Knobs of the file reader (docs/format.md, "Reading"). */
final case class ReaderOptions(
    /** Bytes read from the end of the file on open; when footer, schema, stripe directory and CIT
      * fit (and often small files' CMBs too) opening costs one read (seed: "Footer 激进预读"). */
    tailPrefetchBytes: Int = -1,
    /** When the whole CMB area is at most this large, it is read at once instead of column by
      * column (seed: EAGER_LOAD_THRESHOLD). Lazy loading keeps metadata I/O proportional to the
      * columns read, so the default is lower than the seed's 8 MB. */
    cmbEagerLoadThreshold: Long = 1L << 20,
    /** Ranges closer than this are fetched in one read (seed: IO coalescing, "< 1MB"); negative:
      * the file system's own choice (16 KiB on a local disk, 1 MiB on HDFS and object stores). */
    coalesceGapBytes: Long = -1L,
    /** Upper bound of one coalesced read. */
    maxCoalescedBytes: Long = 64L << 20,
    verifyChecksums: Boolean = true,
    /** Threads (the caller included) that decode the columns of one stripe at once; 1 decodes on
      * the task's thread only. */
    decodeThreads: Int = math.min(4, Runtime.getRuntime.availableProcessors()),
    /** Skip stripes whose statistics prove a pushed filter false. Off only to compare results. */
    filterPushdown: Boolean = true
)

object ReaderOptions {
  object Keys {
    val TailPrefetch = "tailPrefetchBytes"
    val EagerLoadThreshold = "cmbEagerLoadThreshold"
    val CoalesceGap = "coalesceGapBytes"
    val MaxCoalesced = "maxCoalescedBytes"
    val VerifyChecksums = "verifyChecksums"
    val DecodeThreads = "decodeThreads"
    val FilterPushdown = "filterPushdown"
    val all: Seq[String] =
      Seq(TailPrefetch, EagerLoadThreshold, CoalesceGap, MaxCoalesced, VerifyChecksums, DecodeThreads, FilterPushdown)
  }

  def parse(options: Map[String, String]): ReaderOptions = {
    val lower = options.map { case (k, v) => k.toLowerCase(java.util.Locale.ROOT) -> v }
    def get(key: String): Option[String] = lower.get(key.toLowerCase(java.util.Locale.ROOT))
    val d = ReaderOptions()
    ReaderOptions(
      tailPrefetchBytes =
        get(Keys.TailPrefetch).map(v => OptionValues.bytes(Keys.TailPrefetch, v, 1L << 30).toInt).getOrElse(
          d.tailPrefetchBytes
        ),
      cmbEagerLoadThreshold = get(Keys.EagerLoadThreshold).map(v =>
        OptionValues.bytes(Keys.EagerLoadThreshold, v, Long.MaxValue)
      ).getOrElse(d.cmbEagerLoadThreshold),
      coalesceGapBytes =
        get(Keys.CoalesceGap).map(v => OptionValues.bytes(Keys.CoalesceGap, v, Long.MaxValue)).getOrElse(
          d.coalesceGapBytes
        ),
      maxCoalescedBytes = get(Keys.MaxCoalesced).map(v => OptionValues.bytes(Keys.MaxCoalesced, v, 1L << 30)).getOrElse(
        d.maxCoalescedBytes
      ),
      decodeThreads = get(Keys.DecodeThreads).map { v =>
        val n = OptionValues.int(Keys.DecodeThreads, v)
        OptionValues.wrap(Keys.DecodeThreads, v)(require(n >= 1 && n <= 64, "must be between 1 and 64"))
        n
      }.getOrElse(d.decodeThreads),
      verifyChecksums =
        get(Keys.VerifyChecksums).map(v => OptionValues.bool(Keys.VerifyChecksums, v)).getOrElse(d.verifyChecksums),
      filterPushdown =
        get(Keys.FilterPushdown).map(v => OptionValues.bool(Keys.FilterPushdown, v)).getOrElse(d.filterPushdown)
    )
  }
}
