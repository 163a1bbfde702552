package io.fermion.spark

import java.util.Locale

import io.fermion.core.read.ReaderOptions
import io.fermion.core.write.WriterOptions

/** The options a Fermion read or write accepts. Unknown keys are errors, raised while planning, so
  * a typo ("compresion") never silently falls back to a default. */
object FermionOptions {
  val Path = "path"

  /** Keys Spark itself puts into the option maps of path-based and catalog tables. */
  private val SparkKeys =
    Set("path", "paths", "location", "provider", "owner", "external", "is_managed_location", "comment")

  private def check(kind: String, options: Map[String, String], known: Seq[String]): Unit = {
    val allowed = known.map(_.toLowerCase(Locale.ROOT)).toSet ++ SparkKeys
    val columnSettings = known.exists(_ == WriterOptions.Keys.Compression)
    def isAllowed(k: String) = allowed.contains(k.toLowerCase(Locale.ROOT)) || k.startsWith(
      "__"
    ) || (columnSettings && WriterOptions.Keys.isKnown(k))
    options.keys.find(k => !isAllowed(k)).foreach { k =>
      val perColumn = if (columnSettings)
        s", and per column ${WriterOptions.Keys.ColumnPrefix}<column>.{${WriterOptions.Keys.ColumnKeys.mkString(",")}}"
      else ""
      throw new IllegalArgumentException(
        s"Unknown Fermion $kind option '$k'. Known $kind options: ${known.mkString(", ")}$perColumn"
      )
    }
  }

  /** Rejects keys that are neither read nor write options; called where Spark first hands over the
    * options of a DataFrame read or write, before anything is created; bad values fail here too. */
  def checkKnown(options: Map[String, String]): Unit = {
    check("read or write", options, ReaderOptions.Keys.all ++ TimeTravelKeys ++ WriterOptions.Keys.all :+ StableRowIds)
    datasetConfig(options)
    timeTravel(options)
    ReaderOptions.parse(options)
    WriterOptions.parse(options)
  }

  private def lowerSet(keys: Seq[String]): Set[String] = keys.map(_.toLowerCase(Locale.ROOT)).toSet
  private def isReadKey(k: String): Boolean = lowerSet(ReaderOptions.Keys.all).contains(k.toLowerCase(Locale.ROOT))
  private def isWriteKey(k: String): Boolean =
    lowerSet(WriterOptions.Keys.all :+ StableRowIds).contains(k.toLowerCase(Locale.ROOT)) || WriterOptions.Keys.isKnown(
      k
    )

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
  val VersionAsOf = "versionAsOf"
  val TimestampAsOf = "timestampAsOf"
  val Tag = "tag"
  val TimeTravelKeys: Seq[String] = Seq(VersionAsOf, TimestampAsOf, Tag)

  /** Write option, used when a write creates (or overwrites) a dataset: assign stable row ids. */
  val StableRowIds = "stableRowIds"

  /** The manifest config a write asks for. */
  def datasetConfig(options: Map[String, String]): Map[String, String] =
    options.find(_._1.equalsIgnoreCase(StableRowIds)).map { case (k, v) =>
      io.fermion.core.dataset.FermionDataset.StableRowIdsConfig -> io.fermion.core.options.OptionValues.bool(k, v).toString
    }.toMap

  sealed trait TimeTravel
  final case class AtVersion(version: Long) extends TimeTravel
  final case class AtTimestamp(timestamp: String) extends TimeTravel
  final case class AtTag(tag: String) extends TimeTravel

  def timeTravel(options: Map[String, String]): Option[TimeTravel] = {
    val lower = options.map { case (k, v) => k.toLowerCase(Locale.ROOT) -> v }
    val given = TimeTravelKeys.flatMap(k => lower.get(k.toLowerCase(Locale.ROOT)).map(k -> _))
    if (given.size > 1) throw new IllegalArgumentException(
      s"Give at most one of ${TimeTravelKeys.mkString(", ")}; got ${given.map(_._1).mkString(", ")}"
    )
    given.headOption.map {
      case (VersionAsOf, v) => AtVersion(v.trim.toLongOption.filter(_ >= 1).getOrElse(
          throw new IllegalArgumentException(
            s"Invalid value '$v' for option '$VersionAsOf': expected a version number (1, 2, ...)"
          )
        ))
      case (TimestampAsOf, v) => AtTimestamp(v)
      case (_, v) => AtTag(v)
    }
  }

  def readerOptions(options: Map[String, String]): ReaderOptions = {
    check("read", options, ReaderOptions.Keys.all ++ TimeTravelKeys)
    ReaderOptions.parse(options)
  }

  def writerOptions(options: Map[String, String]): WriterOptions = {
    check("write", options, WriterOptions.Keys.all :+ StableRowIds)
    WriterOptions.parse(options)
  }

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
