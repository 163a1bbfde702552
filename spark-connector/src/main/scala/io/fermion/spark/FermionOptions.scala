package io.fermion.spark

import java.util.Locale

import io.fermion.core.options.{OptionRegistry, OptionScope}
import io.fermion.core.read.ReaderOptions
import io.fermion.core.write.WriterOptions

/** The options of a Fermion read or write, parsed once where Spark hands them over. Keys and their
  * parsing come from the core's [[OptionRegistry]]; unknown keys are errors raised while planning,
  * so a typo ("compresion") never silently falls back to a default. */
object FermionOptions {
  val Path = "path"

  /** Keys Spark itself puts into the option maps of path-based and catalog tables. */
  val SparkKeys: Set[String] =
    Set(
      "path",
      "paths",
      "location",
      "provider",
      "owner",
      "external",
      "is_managed_location",
      "comment",
      "checkpointlocation",
      io.fermion.spark.extensions.PrepareAggregatePushdown.ExactFiltersKey
    )

  /** Rejects keys that are neither read, write nor dataset options (and bad values), before a
    * DataFrame read or write creates anything. */
  def checkKnown(options: Map[String, String]): Unit =
    OptionRegistry.checkKnown(options, Set(OptionScope.Read, OptionScope.Write, OptionScope.Dataset), SparkKeys)

  def readerOptions(options: Map[String, String]): ReaderOptions = {
    OptionRegistry.checkKnown(options, Set(OptionScope.Read), SparkKeys)
    ReaderOptions.parse(options)
  }

  def writerOptions(options: Map[String, String]): WriterOptions = {
    // `mergeSchema` is a read option that appends take too (checked where the write is planned).
    OptionRegistry.checkKnown(
      options,
      Set(OptionScope.Write, OptionScope.Dataset),
      SparkKeys + OptionRegistry.MergeSchema.key
    )
    WriterOptions.parse(options)
  }

  /** The write and dataset options of `options` (what a new dataset stores as its defaults). */
  def writeSettings(options: Map[String, String]): Map[String, String] = options.filter { case (k, _) =>
    OptionRegistry.all.exists(s => s.matches(k) && s.scope != OptionScope.Read) || OptionRegistry.columnSetting(k).nonEmpty
  }

  private def isReadKey(k: String): Boolean = OptionRegistry.forScope(OptionScope.Read).exists(_.matches(k))
  private def isWriteKey(k: String): Boolean = writeSettings(Map(k -> "")).nonEmpty

  /** The read options among a table's options (which hold read and write options). */
  def readKeys(options: Map[String, String]): Map[String, String] = options.filter { case (k, _) => isReadKey(k) }

  /** The write options among a table's options. */
  def writeKeys(options: Map[String, String]): Map[String, String] = options.filter { case (k, _) => isWriteKey(k) }

  /** TBLPROPERTIES keys with this prefix are Fermion options (`fermion.compression` = `compression`),
    * checked like table OPTIONS; other properties are the user's and are kept as they are. */
  val TablePropertyPrefix = "fermion."

  /** The options of a catalog table: its `OPTIONS (...)` (`option.`-prefixed catalog properties)
    * and its `fermion.*` TBLPROPERTIES, prefixes removed; OPTIONS win where both set a key. */
  def tableOptions(properties: Map[String, String]): Map[String, String] = {
    val fromProps = properties.collect {
      case (k, v) if k.regionMatches(true, 0, TablePropertyPrefix, 0, TablePropertyPrefix.length) =>
        k.substring(TablePropertyPrefix.length) -> v
    }
    val fromOptions = properties.collect {
      case (k, v) if k.startsWith("option.") && !SparkKeys.contains(k.substring(7).toLowerCase(Locale.ROOT)) =>
        k.substring(7) -> v
    }
    fromProps ++ fromOptions
  }

  /** Checks a table's options (CREATE TABLE ... OPTIONS / TBLPROPERTIES, ALTER TABLE SET
    * TBLPROPERTIES) as a DataFrame's read and write options are checked: unknown keys and bad
    * values fail, naming the option. Time travel is a query's choice, not a table setting. */
  def checkTableOptions(options: Map[String, String]): Unit = {
    options.keys.find(k => TimeTravelKeys.exists(_.equalsIgnoreCase(k))).foreach { k =>
      throw new IllegalArgumentException(
        s"'$k' is not a table option: time travel is chosen per query (VERSION AS OF / TIMESTAMP AS OF, or a read option)"
      )
    }
    checkKnown(options)
  }

  /** Time-travel read options: at most one of them. */
  val TimeTravelKeys: Seq[String] =
    Seq(OptionRegistry.VersionAsOf, OptionRegistry.TimestampAsOf, OptionRegistry.Tag).map(_.key)

  /** What a write that creates (or overwrites) a dataset stores in it: its dataset options and
    * its write options, which later writes use unless they set them. */
  def datasetConfig(options: Map[String, String]): Map[String, String] = {
    val rowIds = OptionRegistry.StableRowIds.in(options).map(v =>
      io.fermion.core.dataset.FermionDataset.StableRowIdsConfig -> v.toString
    )
    val write = writeSettings(options).filterNot { case (k, _) =>
      OptionRegistry.StableRowIds.matches(k) || OptionRegistry.perWrite.exists(_.matches(k))
    }
      .map { case (k, v) => io.fermion.core.dataset.FermionDataset.WriteOptionPrefix + k -> v }
    write ++ rowIds
  }

  sealed trait TimeTravel
  final case class AtVersion(version: Long) extends TimeTravel
  final case class AtTimestamp(timestamp: String) extends TimeTravel
  final case class AtTag(tag: String) extends TimeTravel

  /** `versionAsOf`, `timestampAsOf` or `tag`: at most one of them. */
  def timeTravel(options: Map[String, String]): Option[TimeTravel] = {
    import OptionRegistry.{Tag, TimestampAsOf, VersionAsOf}
    val asked = Seq(
      VersionAsOf.in(options).map(AtVersion),
      TimestampAsOf.in(options).map(AtTimestamp),
      Tag.in(options).map(AtTag)
    ).flatten
    if (asked.size > 1)
      throw new IllegalArgumentException(
        s"Give at most one of ${Seq(VersionAsOf, TimestampAsOf, Tag).mkString(", ")}; got ${asked.mkString(", ")}"
      )
    asked.headOption
  }

  def mergeSchema(options: Map[String, String]): Boolean = OptionRegistry.MergeSchema.in(options).getOrElse(false)

  /** The table path from `path` (DataFrame API) or `location` (catalog tables). */
  def tablePath(options: Map[String, String]): String = {
    val lower = options.map { case (k, v) => k.toLowerCase(Locale.ROOT) -> v }
    lower.get("path").orElse(lower.get("location")).filter(_.nonEmpty).getOrElse {
      if (lower.contains("paths"))
        throw new IllegalArgumentException("Fermion reads one table path at a time: load(path) with a single path")
      throw new IllegalArgumentException(
        "A Fermion table needs a path: use load(path)/save(path) or CREATE TABLE ... LOCATION '...'"
      )
    }
  }
}
