package io.fermion.core.write

import io.fermion.core.options.OptionValues
import io.fermion.core.codec.PageCodec
import io.fermion.core.encoding.EncodingSet

/** Knobs of the file writer. Defaults are sized for one Spark task: a stripe buffers at most
  * 64 MiB or 65,536 rows (the seed's 512 MB suits a dedicated HDFS writer, not a task among many
  * in one executor). `compression`, `compressionLevel`, `encodings` and `pageSize` are table-wide
  * defaults; `columns` overrides them per column path (see [[forColumn]]). */
final case class WriterOptions(
    pageSize: Int = WriterOptions.DefaultPageSize,
    /** At most this many slots per DATA page: the granularity of page skipping (docs/format.md 5.5). */
    pageRows: Int = WriterOptions.DefaultPageRows,
    stripeMaxRows: Int = 65536,
    stripeMaxBytes: Long = 64L << 20,
    compression: Int = PageCodec.Zstd,
    compressionLevel: Int = 3,
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
    encodings: Option[EncodingSet] = None,
    pageSize: Option[Int] = None,
    pageRows: Option[Int] = None,
    /** A bloom filter per stripe for this (top-level) column, whatever `bloomFilterColumns` says. */
    bloomFilter: Option[Boolean] = None,
    bloomFilterFpp: Option[Double] = None
) {
  bloomFilterFpp.foreach(WriterOptions.checkFpp)
  compressionLevel.foreach(WriterOptions.checkLevel)
  pageSize.foreach(WriterOptions.checkPageSize)
  pageRows.foreach(WriterOptions.checkPageRows)
  def orElse(other: ColumnOverrides): ColumnOverrides = ColumnOverrides(
    compression.orElse(other.compression),
    compressionLevel.orElse(other.compressionLevel),
    encodings.orElse(other.encodings),
    pageSize.orElse(other.pageSize),
    pageRows.orElse(other.pageRows),
    bloomFilter.orElse(other.bloomFilter),
    bloomFilterFpp.orElse(other.bloomFilterFpp)
  )
}

object WriterOptions {
  val DefaultPageSize: Int = 512 << 10

  /** Small enough that a selective filter reads a few KiB-to-100-KiB pages of each column instead of
    * whole stripes, large enough that page headers and PageMetas stay below 0.1 % of an int64 page. */
  val DefaultPageRows: Int = 8192

  private[write] def checkPageSize(pageSize: Int): Unit =
    require(pageSize >= 1024 && pageSize <= (64 << 20), s"pageSize must be between 1 KiB and 64 MiB, got $pageSize")
  private[write] def checkFpp(fpp: Double): Unit =
    require(fpp >= 1e-6 && fpp < 1, s"bloomFilterFpp must be at least 0.000001 and below 1, got $fpp")
  private[write] def checkPageRows(rows: Int): Unit =
    require(rows >= 8 && rows % 8 == 0, s"pageRows must be a positive multiple of 8, got $rows")
  private[write] def checkLevel(level: Int): Unit =
    require(level >= -7 && level <= 22, s"compressionLevel must be within -7..22, got $level")

  /** Option names as users write them (Spark writer options, case-insensitive). */
  object Keys {
    val PageSize = "pageSize"
    val PageRows = "pageRows"
    val StripeRows = "stripeRows"
    val StripeBytes = "stripeBytes"
    val Compression = "compression"
    val CompressionLevel = "compressionLevel"
    val Checksum = "checksum"
    val Encodings = "encodings"
    val BloomFilterColumns = "bloomFilterColumns"
    val BloomFilterFpp = "bloomFilterFpp"

    /** Per column only: `column.<name>.bloomFilter` = true / false. */
    val BloomFilter = "bloomFilter"

    /** `column.<path>.<setting>` overrides one of [[ColumnKeys]] for one column. */
    val ColumnPrefix = "column."
    val all: Seq[String] = Seq(
      PageSize,
      PageRows,
      StripeRows,
      StripeBytes,
      Compression,
      CompressionLevel,
      Checksum,
      Encodings,
      BloomFilterColumns,
      BloomFilterFpp
    )

    /** The settings a column may override. */
    val ColumnKeys: Seq[String] =
      Seq(Compression, CompressionLevel, Encodings, PageSize, PageRows, BloomFilter, BloomFilterFpp)
    def isKnown(key: String): Boolean = {
      val k = key.toLowerCase(java.util.Locale.ROOT)
      all.exists(_.equalsIgnoreCase(k)) || (k.startsWith(ColumnPrefix) && ColumnKeys.exists(c =>
        k.endsWith("." + c.toLowerCase(java.util.Locale.ROOT))
      ))
    }
  }

  /** Parses the per-column settings in `settings` (keys from [[Keys.ColumnKeys]]; `what` names the
    * source in errors). */
  def parseColumnOverrides(settings: Map[String, String], what: String => String): ColumnOverrides = {
    val lower = settings.map { case (k, v) => k.toLowerCase(java.util.Locale.ROOT) -> v }
    def get(key: String): Option[String] = lower.get(key.toLowerCase(java.util.Locale.ROOT))
    guard {
      ColumnOverrides(
        compression = get(Keys.Compression).map(v => OptionValues.wrap(what(Keys.Compression), v)(PageCodec.parse(v))),
        compressionLevel = get(Keys.CompressionLevel).map { v =>
          val level = OptionValues.int(what(Keys.CompressionLevel), v)
          OptionValues.wrap(what(Keys.CompressionLevel), v)(checkLevel(level))
          level
        },
        encodings = get(Keys.Encodings).map(v => OptionValues.wrap(what(Keys.Encodings), v)(EncodingSet.parse(v))),
        pageSize = get(Keys.PageSize).map { v =>
          val size = OptionValues.bytes(what(Keys.PageSize), v, Int.MaxValue).toInt
          OptionValues.wrap(what(Keys.PageSize), v)(checkPageSize(size))
          size
        },
        pageRows = get(Keys.PageRows).map { v =>
          val rows = OptionValues.int(what(Keys.PageRows), v)
          OptionValues.wrap(what(Keys.PageRows), v)(checkPageRows(rows))
          rows
        },
        bloomFilter = get(Keys.BloomFilter).map(v => OptionValues.bool(what(Keys.BloomFilter), v)),
        bloomFilterFpp = get(Keys.BloomFilterFpp).map { v =>
          val fpp = OptionValues.wrap(what(Keys.BloomFilterFpp), v)(v.trim.toDouble)
          OptionValues.wrap(what(Keys.BloomFilterFpp), v)(checkFpp(fpp))
          fpp
        }
      )
    }
  }

  private def guard[T](f: => T): T =
    try f
    catch {
      case e: IllegalArgumentException if !e.getMessage.startsWith("Invalid value") =>
        throw new IllegalArgumentException(
          s"Invalid Fermion write option: ${e.getMessage.stripPrefix("requirement failed: ")}"
        )
    }

  /** Builds options from user strings; each bad value fails with the option's name. Keys neither
    * listed in [[Keys]] nor of the `column.<path>.<setting>` form are ignored here (the caller
    * decides whether they are errors). */
  def parse(options: Map[String, String]): WriterOptions = {
    val lower = options.map { case (k, v) => k.toLowerCase(java.util.Locale.ROOT) -> v }
    def get(key: String): Option[String] = lower.get(key.toLowerCase(java.util.Locale.ROOT))
    val d = WriterOptions()
    val columnSettings = lower.keys.filter(_.startsWith(Keys.ColumnPrefix)).toSeq.flatMap { k =>
      Keys.ColumnKeys.map(_.toLowerCase(java.util.Locale.ROOT)).find(c => k.endsWith("." + c)).map { c =>
        (
          k.stripPrefix(Keys.ColumnPrefix).dropRight(c.length + 1),
          c,
          options.find(_._1.equalsIgnoreCase(k)).get._1,
          lower(k)
        )
      }
    }
    val columns = columnSettings.groupBy(_._1).map { case (path, settings) =>
      val byKey = settings.map(s => s._2 -> s._4).toMap
      val original = settings.map(s => s._2 -> s._3).toMap
      path -> parseColumnOverrides(byKey, k => original(k.toLowerCase(java.util.Locale.ROOT)))
    }
    guard {
      WriterOptions(
        pageSize =
          get(Keys.PageSize).map(v => OptionValues.bytes(Keys.PageSize, v, Int.MaxValue).toInt).getOrElse(d.pageSize),
        pageRows = get(Keys.PageRows).map(v => OptionValues.int(Keys.PageRows, v)).getOrElse(d.pageRows),
        stripeMaxRows = get(Keys.StripeRows).map(v => OptionValues.int(Keys.StripeRows, v)).getOrElse(d.stripeMaxRows),
        stripeMaxBytes =
          get(Keys.StripeBytes).map(v => OptionValues.bytes(Keys.StripeBytes, v, Long.MaxValue)).getOrElse(
            d.stripeMaxBytes
          ),
        compression =
          get(Keys.Compression).map(v => OptionValues.wrap(Keys.Compression, v)(PageCodec.parse(v))).getOrElse(
            d.compression
          ),
        compressionLevel =
          get(Keys.CompressionLevel).map(v => OptionValues.int(Keys.CompressionLevel, v)).getOrElse(d.compressionLevel),
        pageChecksums = get(Keys.Checksum).map(v => OptionValues.bool(Keys.Checksum, v)).getOrElse(d.pageChecksums),
        encodings = get(Keys.Encodings).map(v => OptionValues.wrap(Keys.Encodings, v)(EncodingSet.parse(v))).getOrElse(
          d.encodings
        ),
        columns = columns,
        bloomFilterColumns = get(Keys.BloomFilterColumns).map(
          _.split(",").map(_.trim.toLowerCase(java.util.Locale.ROOT)).filter(_.nonEmpty).toSet
        )
          .getOrElse(d.bloomFilterColumns),
        bloomFilterFpp =
          get(Keys.BloomFilterFpp).map(v => OptionValues.wrap(Keys.BloomFilterFpp, v)(v.trim.toDouble)).getOrElse(
            d.bloomFilterFpp
          )
      )
    }
  }
}
