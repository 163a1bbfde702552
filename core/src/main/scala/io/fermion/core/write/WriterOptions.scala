package io.fermion.core.write

import io.fermion.core.codec.PageCodec
import io.fermion.core.encoding.EncodingSet

/** Knobs of the file writer. Defaults are sized for one Spark task: a stripe buffers at most
  * 64 MiB or 65,536 rows (a stripe of 512 MB would suit a dedicated HDFS writer, not a task among many
  * in one executor). `compression`, `compressionLevel`, `encodings` and `pageSize` are table-wide
  * defaults; `columns` overrides them per column path (see [[forColumn]]). */
final case class WriterOptions(
    pageSize: Int = WriterOptions.DefaultPageSize,
    /** At most this many slots per DATA page: the granularity of page skipping (docs/implementation.md 2.4). */
    pageRows: Int = WriterOptions.DefaultPageRows,
    stripeMaxRows: Int = 65536,
    stripeMaxBytes: Long = 64L << 20,
    compression: Int = PageCodec.Zstd,
    compressionLevel: Int = 3,
    /** zstd pages larger than this are compressed in independent blocks of this many bytes, so that
      * a take decompresses one block instead of the page (0: one zstd frame per page). */
    compressionBlockSize: Int = WriterOptions.DefaultCompressionBlockSize,
    /** Blocks after a page's first are compressed with the first block's bytes as a zstd dictionary
      * (`zstd-primed-blocks`): pages nearly as small as one frame, and a take decompresses the
      * first block beside its own (false: each block alone, `zstd-blocks`). */
    compressionBlockPrime: Boolean = true,
    pageChecksums: Boolean = true,
    encodings: EncodingSet = EncodingSet.All,
    columns: Map[String, ColumnOverrides] = Map.empty,
    /** Top-level columns that get a bloom filter per stripe (lower-case names). */
    bloomFilterColumns: Set[String] = Set.empty,
    bloomFilterFpp: Double = 0.01
) {
  WriterOptions.checkFpp(bloomFilterFpp)
  WriterOptions.checkPageSize(pageSize)
  WriterOptions.checkPageRows(pageRows)
  require(stripeMaxRows >= 1, s"stripeRows must be positive, got $stripeMaxRows")
  require(stripeMaxBytes >= 1024, s"stripeBytes must be at least 1 KiB, got $stripeMaxBytes")
  WriterOptions.checkLevel(compressionLevel)
  WriterOptions.checkBlockSize(compressionBlockSize)

  private val byPath: Map[String, ColumnOverrides] = columns.map { case (k, v) =>
    k.toLowerCase(java.util.Locale.ROOT) -> v
  }

  /** The settings of the schema node at `path` (names joined by dots, matched case-insensitively):
    * each setting comes from the most specific override on the path or its ancestors, else from
    * the table-wide default. A list's element is `list.element`, a map's `map.key` / `map.value`. */
  def forColumn(path: String): ColumnWriteOptions = {
    val parts = path.toLowerCase(java.util.Locale.ROOT).split('.')
    val chain = (parts.length to 1 by -1).flatMap(n => byPath.get(parts.take(n).mkString(".")))
    def pick[T](f: ColumnOverrides => Option[T]): Option[T] = chain.iterator.flatMap(f(_)).nextOption()
    // A bloom filter belongs to one top-level column: its own setting, not an ancestor's.
    val own = byPath.get(path.toLowerCase(java.util.Locale.ROOT))
    ColumnWriteOptions(
      compression = pick(_.compression).getOrElse(compression),
      compressionLevel = pick(_.compressionLevel).getOrElse(compressionLevel),
      compressionBlockSize = pick(_.compressionBlockSize).getOrElse(compressionBlockSize),
      compressionBlockPrime = pick(_.compressionBlockPrime).getOrElse(compressionBlockPrime),
      encodings = pick(_.encodings).getOrElse(encodings),
      pageSize = pick(_.pageSize).getOrElse(pageSize),
      pageRows = pick(_.pageRows).getOrElse(pageRows),
      pageChecksums = pageChecksums,
      bloomFilter =
        own.flatMap(_.bloomFilter).getOrElse(bloomFilterColumns.contains(path.toLowerCase(java.util.Locale.ROOT))),
      bloomFilterFpp = own.flatMap(_.bloomFilterFpp).getOrElse(bloomFilterFpp)
    )
  }

  /** The column paths that carry overrides (the writer checks that each names a schema node). */
  def overriddenPaths: Iterable[String] = columns.keys
}

/** One schema node's page settings, resolved from [[WriterOptions]]. */
final case class ColumnWriteOptions(
    compression: Int,
    compressionLevel: Int,
    compressionBlockSize: Int,
    compressionBlockPrime: Boolean,
    encodings: EncodingSet,
    pageSize: Int,
    pageRows: Int,
    pageChecksums: Boolean,
    bloomFilter: Boolean = false,
    bloomFilterFpp: Double = 0.01
)

/** Per-column settings; `None` inherits from the enclosing column or the table. */
final case class ColumnOverrides(
    compression: Option[Int] = None,
    compressionLevel: Option[Int] = None,
    compressionBlockSize: Option[Int] = None,
    compressionBlockPrime: Option[Boolean] = None,
    encodings: Option[EncodingSet] = None,
    pageSize: Option[Int] = None,
    pageRows: Option[Int] = None,
    /** A bloom filter per stripe for this (top-level) column, whatever `bloomFilterColumns` says. */
    bloomFilter: Option[Boolean] = None,
    bloomFilterFpp: Option[Double] = None
) {
  bloomFilterFpp.foreach(WriterOptions.checkFpp)
  compressionLevel.foreach(WriterOptions.checkLevel)
  compressionBlockSize.foreach(WriterOptions.checkBlockSize)
  pageSize.foreach(WriterOptions.checkPageSize)
  pageRows.foreach(WriterOptions.checkPageRows)
  def orElse(other: ColumnOverrides): ColumnOverrides = ColumnOverrides(
    compression.orElse(other.compression),
    compressionLevel.orElse(other.compressionLevel),
    compressionBlockSize.orElse(other.compressionBlockSize),
    compressionBlockPrime.orElse(other.compressionBlockPrime),
    encodings.orElse(other.encodings),
    pageSize.orElse(other.pageSize),
    pageRows.orElse(other.pageRows),
    bloomFilter.orElse(other.bloomFilter),
    bloomFilterFpp.orElse(other.bloomFilterFpp)
  )
}

object WriterOptions {
  import io.fermion.core.options.OptionRegistry

  val DefaultPageSize: Int = 512 << 10

  /** The page size of batch-mode writes (a `batchKey`) unless `pageSize` is given: a batch lookup
    * decodes every page that holds one of its batches, whole, so a page of many small batches costs
    * each lookup all of them. 32 KiB pages cut a 1,000-batch lookup on the benchmark table (a
    * 20-character string beside a 128-float vector) from 78 to 31 ms in the core, at the same file
    * size and scan speed (docs/implementation.md). */
  val DefaultBatchPageSize: Int = 32 << 10

  /** Small enough that a selective filter reads a few KiB-to-100-KiB pages of each column instead of
    * whole stripes, large enough that page headers and PageMetas stay below 0.1 % of an int64 page. */
  val DefaultPageRows: Int = 8192

  private[write] def checkPageSize(pageSize: Int): Unit =
    require(pageSize >= 1024 && pageSize <= (64 << 20), s"pageSize must be between 1 KiB and 64 MiB, got $pageSize")
  private[write] def checkFpp(fpp: Double): Unit =
    require(fpp >= 1e-6 && fpp < 1, s"bloomFilterFpp must be at least 0.000001 and below 1, got $fpp")
  private[write] def checkPageRows(rows: Int): Unit =
    require(rows >= 8 && rows % 8 == 0, s"pageRows must be a positive multiple of 8, got $rows")

  /** A take of a PLAIN value decompresses one block: 16 KiB blocks cut a 1,000-row take of a string
    * column from 35.7 to 15.4 ms against one frame per page, for files 2.8 % larger on lineitem
    * (8 KiB: 11.3 ms, +4.5 %; docs/implementation.md 2.6). */
  val DefaultCompressionBlockSize: Int = 16 << 10

  private[write] def checkBlockSize(size: Int): Unit =
    require(
      size == 0 || (size >= 1024 && size <= (64 << 20)),
      s"compressionBlockSize must be 0 or between 1 KiB and 64 MiB, got $size"
    )
  private[write] def checkLevel(level: Int): Unit =
    require(level >= -7 && level <= 22, s"compressionLevel must be within -7..22, got $level")

  /** Parses the per-column settings in `settings` (keys of per-column options; `what` names the
    * source of a key in errors). */
  def parseColumnOverrides(settings: Map[String, String], what: String => String): ColumnOverrides = {
    import OptionRegistry._
    def get[T](spec: io.fermion.core.options.OptionSpec[T]): Option[T] =
      settings.collectFirst { case (k, v) if spec.matches(k) => spec.parse(v, what(k)) }
    ColumnOverrides(
      compression = get(Compression),
      compressionLevel = get(CompressionLevel),
      compressionBlockSize = get(CompressionBlockSize),
      compressionBlockPrime = get(CompressionBlockPrime),
      encodings = get(Encodings),
      pageSize = get(PageSize),
      pageRows = get(PageRows),
      bloomFilter = get(BloomFilter),
      bloomFilterFpp = get(BloomFilterFpp)
    )
  }

  /** Builds options from user strings; each bad value fails with the option's name. Keys of other
    * scopes are ignored here ([[OptionRegistry.checkKnown]] decides whether they are errors). */
  def parse(options: Map[String, String]): WriterOptions = {
    import OptionRegistry._
    val columns = options.toSeq.flatMap { case (k, v) => columnSetting(k).map { case (path, spec) => (path, k, v) } }
      .groupBy(_._1.toLowerCase(java.util.Locale.ROOT)).map { case (path, settings) =>
        val byKey = settings.map { case (_, k, v) => columnSetting(k).get._2.key -> v }.toMap
        val original = settings.map { case (_, k, _) =>
          columnSetting(k).get._2.key.toLowerCase(java.util.Locale.ROOT) -> k
        }.toMap
        path -> parseColumnOverrides(byKey, k => original(k.toLowerCase(java.util.Locale.ROOT)))
      }
    val d = WriterOptions()
    val batched = BatchKey.in(options).exists(_.nonEmpty)
    WriterOptions(
      pageSize = PageSize.in(options).getOrElse(if (batched) DefaultBatchPageSize else d.pageSize),
      pageRows = PageRows.in(options).getOrElse(d.pageRows),
      stripeMaxRows = StripeRows.in(options).getOrElse(d.stripeMaxRows),
      stripeMaxBytes = StripeBytes.in(options).getOrElse(d.stripeMaxBytes),
      compression = Compression.in(options).getOrElse(d.compression),
      compressionLevel = CompressionLevel.in(options).getOrElse(d.compressionLevel),
      compressionBlockSize = CompressionBlockSize.in(options).getOrElse(d.compressionBlockSize),
      compressionBlockPrime = CompressionBlockPrime.in(options).getOrElse(d.compressionBlockPrime),
      pageChecksums = Checksum.in(options).getOrElse(d.pageChecksums),
      encodings = Encodings.in(options).getOrElse(d.encodings),
      columns = columns,
      bloomFilterColumns = BloomFilterColumns.in(options).getOrElse(d.bloomFilterColumns),
      bloomFilterFpp = BloomFilterFpp.in(options).getOrElse(d.bloomFilterFpp)
    )
  }
}
