package io.fermion.core.write

import io.fermion.core.codec.PageCodec

/** Knobs of the file writer. Defaults are sized for one Spark task: a stripe buffers at most
  * 64 MiB or 262,144 rows (the seed's 512 MB suits a dedicated HDFS writer, not a task among many
  * in one executor). */
final case class WriterOptions(
    pageSize: Int = WriterOptions.DefaultPageSize,
    stripeMaxRows: Int = 262144,
    stripeMaxBytes: Long = 64L << 20,
    compression: Int = PageCodec.Zstd,
    compressionLevel: Int = 3,
    pageChecksums: Boolean = true
) {
  require(pageSize >= 1024 && pageSize <= (64 << 20), s"pageSize must be between 1 KiB and 64 MiB, got $pageSize")
  require(stripeMaxRows >= 1, s"stripeRows must be positive, got $stripeMaxRows")
  require(stripeMaxBytes >= 1024, s"stripeBytes must be at least 1 KiB, got $stripeMaxBytes")
  require(compressionLevel >= -7 && compressionLevel <= 22, s"compressionLevel must be within -7..22, got $compressionLevel")
}

object WriterOptions {
  val DefaultPageSize: Int = 512 << 10

  /** Option names as users write them (Spark writer options, case-insensitive). */
  object Keys {
    val PageSize = "pageSize"
    val StripeRows = "stripeRows"
    val StripeBytes = "stripeBytes"
    val Compression = "compression"
    val CompressionLevel = "compressionLevel"
    val Checksum = "checksum"
    val all: Seq[String] = Seq(PageSize, StripeRows, StripeBytes, Compression, CompressionLevel, Checksum)
  }

  /** Builds options from user strings; each bad value fails with the option's name. Keys not
    * listed in [[Keys]] are ignored here (the caller decides whether they are errors). */
  def parse(options: Map[String, String]): WriterOptions = {
    val lower = options.map { case (k, v) => k.toLowerCase(java.util.Locale.ROOT) -> v }
    def get(key: String): Option[String] = lower.get(key.toLowerCase(java.util.Locale.ROOT))
    val d = WriterOptions()
    try {
      WriterOptions(
        pageSize = get(Keys.PageSize).map(v => OptionValues.bytes(Keys.PageSize, v, Int.MaxValue).toInt).getOrElse(d.pageSize),
        stripeMaxRows = get(Keys.StripeRows).map(v => OptionValues.int(Keys.StripeRows, v)).getOrElse(d.stripeMaxRows),
        stripeMaxBytes = get(Keys.StripeBytes).map(v => OptionValues.bytes(Keys.StripeBytes, v, Long.MaxValue)).getOrElse(d.stripeMaxBytes),
        compression = get(Keys.Compression).map(v => OptionValues.wrap(Keys.Compression, v)(PageCodec.parse(v))).getOrElse(d.compression),
        compressionLevel = get(Keys.CompressionLevel).map(v => OptionValues.int(Keys.CompressionLevel, v)).getOrElse(d.compressionLevel),
        pageChecksums = get(Keys.Checksum).map(v => OptionValues.bool(Keys.Checksum, v)).getOrElse(d.pageChecksums)
      )
    } catch {
      case e: IllegalArgumentException if !e.getMessage.startsWith("Invalid value") =>
        throw new IllegalArgumentException(s"Invalid Fermion write option: ${e.getMessage.stripPrefix("requirement failed: ")}")
    }
  }
}

/** Parsing of option values with errors that name the option. */
object OptionValues {
  def wrap[T](key: String, value: String)(f: => T): T =
    try f
    catch {
      case e: IllegalArgumentException => throw new IllegalArgumentException(s"Invalid value '$value' for option '$key': ${e.getMessage}")
    }

  def int(key: String, value: String): Int =
    wrap(key, value)(value.trim.toIntOption.getOrElse(throw new IllegalArgumentException("expected an integer")))

  def bool(key: String, value: String): Boolean = wrap(key, value) {
    value.trim.toLowerCase(java.util.Locale.ROOT) match {
      case "true" => true
      case "false" => false
      case _ => throw new IllegalArgumentException("expected true or false")
    }
  }

  /** A byte count: digits with an optional k, m or g suffix (binary units). */
  def bytes(key: String, value: String, max: Long): Long = wrap(key, value) {
    val v = value.trim.toLowerCase(java.util.Locale.ROOT)
    val (digits, mult) =
      if (v.endsWith("k") || v.endsWith("kb")) (v.takeWhile(_.isDigit), 1L << 10)
      else if (v.endsWith("m") || v.endsWith("mb")) (v.takeWhile(_.isDigit), 1L << 20)
      else if (v.endsWith("g") || v.endsWith("gb")) (v.takeWhile(_.isDigit), 1L << 30)
      else (v, 1L)
    val n = digits.toLongOption.getOrElse(throw new IllegalArgumentException("expected a byte size such as 524288, 512k or 64m"))
    if (n <= 0 || n > max / mult) throw new IllegalArgumentException(s"must be between 1 and $max bytes")
    n * mult
  }
}
