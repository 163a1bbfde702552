package io.fermion.core.scan

import java.nio.charset.StandardCharsets
import java.time.{LocalDate, LocalDateTime, ZoneId}
import java.util.Locale

import scala.util.Try

import io.fermion.core.dataset.InvalidFermionDatasetException
import io.fermion.core.expr.FilterValue
import io.fermion.core.schema.{FermionField, FermionType}
import org.apache.hadoop.fs.{FileStatus, FileSystem, Path}

/** How the partition columns of loose files in Hive-style directories (`k=v/.../part.fermion`) are
  * typed: inferred from the values as Spark's file sources infer them (`inferTypes`, Spark's
  * `spark.sql.sources.partitionColumnTypeInference.enabled`), or as `declared` (a catalog table's
  * columns, by name). Timestamps are read in `timeZone` (Spark's session time zone). */
final case class LoosePartitioning(
    inferTypes: Boolean = true,
    timeZone: String = "UTC",
    declared: Seq[FermionField] = Nil
)

/** Loose Fermion files in Hive-style partition directories: a directory tree `k1=v1/k2=v2/f.fermion`
  * without a dataset. Files directly under the root and files under `name=value` directories (names
  * and values `%XX`-escaped as Spark and Hive escape them; `__HIVE_DEFAULT_PARTITION__` is null)
  * are listed; every file must sit at the same depth under the same column names. Types follow
  * Spark's partition value inference: int, then bigint, then double, then timestamp
  * (`yyyy-MM-dd HH:mm:ss[.fraction]`), then date (`yyyy-MM-dd`), else string; the values of a
  * column are widened to one type (int and bigint to bigint, int and double to double, date and
  * timestamp to timestamp, any other mix to string). Spark would infer integers beyond bigint as
  * decimals; here they are strings. */
private[core] object HivePartitions {
  val NullValue = "__HIVE_DEFAULT_PARTITION__"

  /** One listed file and its directories' (column, raw value) pairs, root first. */
  final case class Listed(status: FileStatus, directories: IndexedSeq[(String, String)])

  /** The data files under `dir` (recursively through `k=v` directories), sorted by path. */
  def list(fs: FileSystem, dir: Path): IndexedSeq[Listed] = {
    def walk(d: Path, prefix: IndexedSeq[(String, String)]): Iterator[Listed] = {
      val statuses = fs.listStatus(d).sortBy(_.getPath.getName)
      statuses.iterator.flatMap { s =>
        val name = s.getPath.getName
        if (s.isFile) { if (LooseFiles.isDataFile(name)) Iterator(Listed(s, prefix)) else Iterator.empty }
        else if (s.isDirectory && isPartitionDirectory(name)) {
          val i = name.indexOf('=')
          walk(s.getPath, prefix :+ (unescape(name.substring(0, i)) -> name.substring(i + 1)))
        } else Iterator.empty
      }
    }
    walk(dir, IndexedSeq.empty).toIndexedSeq
  }

  /** `k=v` with a non-empty name and value, not hidden (Spark skips `.x` and `_x` without `=`). */
  def isPartitionDirectory(name: String): Boolean = {
    val i = name.indexOf('=')
    i > 0 && i < name.length - 1 && !name.startsWith(".")
  }

  /** The partition columns of `files` and each file's values, or no columns when no file is in a
    * partition directory. Fails, naming the directories, when files sit at different depths or
    * under different column names. */
  def resolve(
      root: String,
      files: IndexedSeq[Listed],
      how: LoosePartitioning
  ): (IndexedSeq[FermionField], IndexedSeq[IndexedSeq[Option[FilterValue]]]) = {
    if (files.forall(_.directories.isEmpty)) return (IndexedSeq.empty, files.map(_ => IndexedSeq.empty))
    val shapes = files.map(_.directories.map(_._1.toLowerCase(Locale.ROOT))).distinct
    if (shapes.size > 1) {
      val examples = shapes.map(s => files.find(_.directories.map(_._1.toLowerCase(Locale.ROOT)) == s).get)
      throw new InvalidFermionDatasetException(
        root,
        examples.head.status.getPath.toString,
        "conflicting partition directories: files must all sit under directories of the same partition columns " +
          s"(found ${shapes.map(s => if (s.isEmpty) "none" else s.mkString("/")).mkString(" and ")}, e.g. " +
          s"${examples.map(_.status.getPath.getParent).mkString(", ")})"
      )
    }
    val names = files.head.directories.map(_._1)
    val zone = ZoneId.of(how.timeZone, ZoneId.SHORT_IDS)
    val types = names.indices.map { i =>
      how.declared.find(_.name.equalsIgnoreCase(names(i))).map(_.dataType).getOrElse {
        if (!how.inferTypes) FermionType.Utf8
        else files.map(f => infer(f.directories(i)._2, zone)).reduce(wider).getOrElse(FermionType.Utf8)
      }
    }
    val fields = names.indices.map { i =>
      val name = how.declared.find(_.name.equalsIgnoreCase(names(i))).map(_.name).getOrElse(names(i))
      FermionField(name, -1, types(i), nullable = true)
    }
    val values = files.map { f =>
      names.indices.map { i =>
        val raw = f.directories(i)._2
        try value(raw, types(i), zone)
        catch {
          case e: RuntimeException =>
            throw new InvalidFermionDatasetException(
              root,
              f.status.getPath.toString,
              s"partition value '$raw' of `${fields(i).name}` is not a ${types(i)}",
              e
            )
        }
      }
    }
    (fields, values)
  }

  /** The type Spark infers for one raw value (None: the null value, which fits any type). */
  def infer(raw: String, zone: ZoneId): Option[FermionType] =
    if (raw == NullValue) None
    else if (Try(Integer.parseInt(raw)).isSuccess) Some(FermionType.Int32)
    else if (Try(java.lang.Long.parseLong(raw)).isSuccess) Some(FermionType.Int64)
    else if (!looksLikeDecimalInteger(raw) && Try(java.lang.Double.parseDouble(raw)).isSuccess)
      Some(FermionType.Float64)
    else if (timestamp(unescape(raw), zone).nonEmpty) Some(FermionType.Timestamp(utcAdjusted = true))
    else if (date(raw).nonEmpty) Some(FermionType.Date32)
    else Some(FermionType.Utf8)

  /** An integer too large for bigint: Spark types it decimal(p, 0); here it is a string. */
  private def looksLikeDecimalInteger(raw: String): Boolean =
    Try(new java.math.BigDecimal(raw)).toOption.exists(_.scale == 0)

  /** Spark's widening of partition column types (None: only nulls so far). */
  def wider(a: Option[FermionType], b: Option[FermionType]): Option[FermionType] = (a, b) match {
    case (None, x) => x
    case (x, None) => x
    case (Some(x), Some(y)) if x == y => Some(x)
    case (Some(x), Some(y)) =>
      Some(Set(x, y) match {
        case s if s == Set(FermionType.Int32, FermionType.Int64) => FermionType.Int64
        case s if s == Set(FermionType.Int32, FermionType.Float64) => FermionType.Float64
        case s if s == Set[FermionType](FermionType.Date32, FermionType.Timestamp(true)) => FermionType.Timestamp(true)
        case _ => FermionType.Utf8
      })
  }

  /** A raw directory value as a value of type `t` (an exception when it is not one). */
  def value(raw: String, t: FermionType, zone: ZoneId): Option[FilterValue] =
    if (raw == NullValue) None
    else
      Some(t match {
        case FermionType.Utf8 => FilterValue.Bytes(unescape(raw).getBytes(StandardCharsets.UTF_8))
        case FermionType.Bool =>
          FilterValue.Integral(unescape(raw).toLowerCase(Locale.ROOT) match {
            case "true" => 1L; case "false" => 0L; case other => throw new IllegalArgumentException(other)
          })
        case FermionType.Int8 => FilterValue.Integral(Integer.parseInt(raw).toByte.toLong)
        case FermionType.Int16 => FilterValue.Integral(Integer.parseInt(raw).toShort.toLong)
        case FermionType.Int32 => FilterValue.Integral(Integer.parseInt(raw).toLong)
        case FermionType.Int64 => FilterValue.Integral(java.lang.Long.parseLong(raw))
        case FermionType.Float32 => FilterValue.Floating(java.lang.Double.parseDouble(raw).toFloat.toDouble)
        case FermionType.Float64 => FilterValue.Floating(java.lang.Double.parseDouble(raw))
        case FermionType.Date32 =>
          FilterValue.Integral(date(raw).getOrElse(throw new IllegalArgumentException(raw)).toEpochDay)
        case FermionType.Timestamp(utc) =>
          val text = unescape(raw)
          val parsed = timestamp(text, if (utc) zone else java.time.ZoneOffset.UTC)
            .orElse(date(text).map(d => micros(d.atStartOfDay(if (utc) zone else java.time.ZoneOffset.UTC).toInstant)))
          FilterValue.Integral(parsed.getOrElse(throw new IllegalArgumentException(raw)))
        case d: FermionType.Decimal if d.precision <= 18 =>
          FilterValue.Integral(new java.math.BigDecimal(raw).setScale(d.scale).unscaledValue.longValueExact)
        case other => throw new IllegalArgumentException(s"cannot partition by $other")
      })

  private val TimestampPattern = """(\d{4}-\d{2}-\d{2}) (\d{2}:\d{2}:\d{2})(\.\d{1,9})?""".r
  private val DatePattern = """\d{4}-\d{2}-\d{2}""".r

  private def micros(i: java.time.Instant): Long =
    Math.addExact(Math.multiplyExact(i.getEpochSecond, 1000000L), i.getNano / 1000L)

  /** `yyyy-MM-dd HH:mm:ss[.fraction]` in `zone`, as microseconds since the epoch. */
  def timestamp(text: String, zone: ZoneId): Option[Long] = text match {
    case TimestampPattern(d, t, f) =>
      Try(LocalDateTime.parse(s"${d}T$t${Option(f).getOrElse("")}")).toOption.map(l => micros(l.atZone(zone).toInstant))
    case _ => None
  }

  def date(text: String): Option[LocalDate] = text match {
    case DatePattern() => Try(LocalDate.parse(text)).toOption
    case _ => None
  }

  /** `%XX` escapes decoded, as Spark's `unescapePathName`. */
  def unescape(s: String): String = {
    if (s.indexOf('%') < 0) return s
    val out = new StringBuilder
    var i = 0
    while (i < s.length) {
      val c = s.charAt(i)
      val hi = if (c == '%' && i + 2 < s.length) Character.digit(s.charAt(i + 1), 16) else -1
      val lo = if (hi >= 0) Character.digit(s.charAt(i + 2), 16) else -1
      if (lo >= 0) { out.append((hi * 16 + lo).toChar); i += 3 }
      else { out.append(c); i += 1 }
    }
    out.toString
  }
}
