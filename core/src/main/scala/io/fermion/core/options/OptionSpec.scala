package io.fermion.core.options

import java.util.Locale

/** Where an option applies. */
sealed abstract class OptionScope(val title: String)

object OptionScope {

  /** A read of a dataset or of loose files. */
  case object Read extends OptionScope("read option")

  /** A write, for the whole table (and, for [[OptionSpec.perColumn]] options, the default of
    * every column). */
  case object Write extends OptionScope("write option")

  /** Chosen when a dataset is created (or overwritten) and kept by it. */
  case object Dataset extends OptionScope("dataset option")

  /** How a dataset's storage is used: Hadoop configuration keys (in Spark `spark.hadoop.<key>`,
    * or `core-site.xml`), the same for every reader and writer of a dataset, never read or write
    * options. */
  case object Storage extends OptionScope("storage setting (Hadoop configuration)")
}

/** One option users can set: its key (matched case-insensitively), where it applies, how its
  * text is parsed and checked, and its documentation. The single source of truth from which
  * readers' and writers' options, the unknown-key check, per-column overrides and the README's
  * option tables are derived ([[OptionRegistry]]). */
final class OptionSpec[T] private[options] (
    val key: String,
    val scope: OptionScope,
    /** Also settable per column as `column.<path>.<key>` (and as field metadata `fermion.<key>`). */
    val perColumn: Boolean,
    /** Only settable per column. */
    val columnOnly: Boolean,
    val defaultText: String,
    val doc: String,
    parser: String => T
) {

  /** `value` parsed and checked; an IllegalArgumentException naming `as` (the key by default). */
  def parse(value: String, as: String = key): T = OptionValues.wrap(as, value)(parser(value))

  /** The value `options` gives this option (keys matched case-insensitively), parsed. */
  def in(options: Map[String, String]): Option[T] =
    options.collectFirst { case (k, v) if k.equalsIgnoreCase(key) => parse(v) }

  def matches(k: String): Boolean = k.equalsIgnoreCase(key)
  private[options] def lowerKey: String = key.toLowerCase(Locale.ROOT)
  override def toString: String = key
}
