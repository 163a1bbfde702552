package io.fermion.core.options

import java.util.Locale

import io.fermion.core.codec.PageCodec
import io.fermion.core.encoding.EncodingSet

/** Every option Fermion accepts, in one place. Readers (`read.ReaderOptions`),
  * writers (`write.WriterOptions`), the unknown-key check ([[checkKnown]]) and the
  * README's option tables ([[markdownTable]]) are all derived from this list; a test keeps the
  * README equal to the tables generated from it. */
object OptionRegistry {
  import OptionScope._

  private def spec[T](
      key: String,
      scope: OptionScope,
      default: String,
      doc: String,
      perColumn: Boolean = false,
      columnOnly: Boolean = false
  )(parse: String => T): OptionSpec[T] = new OptionSpec(key, scope, perColumn, columnOnly, default, doc, parse)

  private def bytes(max: Long)(v: String): Long = OptionValues.bytes(v, max)
  private def int(v: String): Int =
    v.trim.toIntOption.getOrElse(throw new IllegalArgumentException("expected an integer"))
  private def long(v: String): Long =
    v.trim.toLongOption.getOrElse(throw new IllegalArgumentException("expected an integer"))
  private def bool(v: String): Boolean = v.trim.toLowerCase(Locale.ROOT) match {
    case "true" => true
    case "false" => false
    case _ => throw new IllegalArgumentException("expected true or false")
  }
  private def within[T](ok: Boolean, what: String)(v: T): T = { if (!ok) throw new IllegalArgumentException(what); v }
  private def fpp(v: String): Double = {
    val d = v.trim.toDoubleOption.getOrElse(throw new IllegalArgumentException("expected a number"))
    within(d >= 1e-6 && d < 1, "must be at least 0.000001 and below 1")(d)
  }

  // ---- write options ----

  val Compression: OptionSpec[Int] = spec(
    "compression",
    Write,
    "`zstd`",
    "page codec applied after the page encoding: `zstd` or `none`; a page stays uncompressed when zstd saves less than 1/8",
    perColumn = true
  )(v => PageCodec.parse(v.trim))
  val CompressionLevel: OptionSpec[Int] =
    spec("compressionLevel", Write, "`3`", "zstd level, -7..22", perColumn = true) { v =>
      val n = int(v); within(n >= -7 && n <= 22, "must be within -7..22")(n)
    }
  val CompressionBlockSize: OptionSpec[Int] = spec(
    "compressionBlockSize",
    Write,
    "`16k`",
    "zstd pages with more raw bytes than this are compressed in independent blocks of this size, so that a take " +
      "decompresses only the blocks holding its values (`1k`..`64m`, or `0`: one zstd frame per page)",
    perColumn = true
  ) { v =>
    val n = if (v.trim == "0") 0L else bytes(Int.MaxValue)(v)
    within(n == 0 || (n >= 1024 && n <= (64 << 20)), "must be 0 or between 1 KiB and 64 MiB")(n.toInt)
  }
  val CompressionBlockPrime: OptionSpec[Boolean] = spec(
    "compressionBlockPrime",
    Write,
    "`true`",
    "blocks after a page's first are compressed with the first block's bytes as a zstd dictionary " +
      "(`zstd-primed-blocks`, 10-20 % smaller on text); a take then decompresses the first block beside its own. " +
      "`false`: each block alone",
    perColumn = true
  )(bool)
  val Encodings: OptionSpec[EncodingSet] = spec(
    "encodings",
    Write,
    "`all`",
    "page encodings the writer may choose from, per page: `all`, or a comma-separated list of `plain`, `constant`, " +
      "`rle`, `bitpack`, `for`, `delta`, `delta_for`, `dictionary`, `dictionary_by_length`, `huffman`, `delta_huffman` (PLAIN stays the fallback where " +
      "none of them applies)",
    perColumn = true
  )(EncodingSet.parse)
  val PageSize: OptionSpec[Int] =
    spec(
      "pageSize",
      Write,
      "`512k`",
      "raw bytes per page (`1k`..`64m`); `32k` unless given when a `batchKey` is set",
      perColumn = true
    ) { v =>
      val n = bytes(Int.MaxValue)(v);
      within(n >= 1024 && n <= (64 << 20), "must be between 1 KiB and 64 MiB")(n.toInt)
    }
  val PageRows: OptionSpec[Int] = spec(
    "pageRows",
    Write,
    "`8192`",
    "values per DATA page at most (a positive multiple of 8): the unit that page statistics skip within a stripe",
    perColumn = true
  ) { v =>
    val n = int(v); within(n >= 8 && n % 8 == 0, "must be a positive multiple of 8")(n)
  }
  val StripeRows: OptionSpec[Int] = spec(
    "stripeRows",
    Write,
    "`65536`",
    "rows per stripe at most: the unit statistics and bloom filters skip (smaller stripes make selective reads " +
      "cheaper, larger ones the metadata smaller)"
  ) { v =>
    val n = int(v); within(n >= 1, "must be positive")(n)
  }
  val StripeBytes: OptionSpec[Long] = spec(
    "stripeBytes",
    Write,
    "`64m`",
    "buffered bytes per stripe at most: a writer's memory is bounded by this, not by the file"
  ) { v =>
    val n = bytes(Long.MaxValue)(v); within(n >= 1024, "must be at least 1 KiB")(n)
  }
  val Checksum: OptionSpec[Boolean] = spec("checksum", Write, "`true`", "CRC32 per page")(bool)
  val BloomFilterColumns: OptionSpec[Set[String]] = spec(
    "bloomFilterColumns",
    Write,
    "",
    "comma-separated top-level columns that get a split-block bloom filter per stripe: `=` and `IN` skip stripes " +
      "whose filter rules the value out (any type but boolean and decimals over 18 digits)"
  )(v => v.split(",").map(_.trim.toLowerCase(Locale.ROOT)).filter(_.nonEmpty).toSet)
  val BloomFilterFpp: OptionSpec[Double] = spec(
    "bloomFilterFpp",
    Write,
    "`0.01`",
    "the bloom filters' false-positive rate (filters are sized for each stripe's distinct values)",
    perColumn = true
  )(fpp)
  val BloomFilter: OptionSpec[Boolean] = spec(
    "bloomFilter",
    Write,
    "",
    "per top-level column only: add (`true`) or remove (`false`) its bloom filter",
    perColumn = true,
    columnOnly = true
  )(bool)

  val BatchKey: OptionSpec[String] = spec(
    "batchKey",
    Write,
    "",
    "batch mode (docs/format.md 16.10): the integral, non-null column whose value is each row's batch id; each " +
      "task's rows are sorted by it and each key's rows appended as one batch (never split across a page); a key " +
      "in two tasks of a write, or already in the dataset, is an error. Reads gain `batch_id` and `index_in_batch`, " +
      "and `=`, `IN` and ranges on the key find batches through the batch index"
  )(_.trim)

  val ReplaceWhere: OptionSpec[String] = spec(
    "replaceWhere",
    Write,
    "",
    "save mode overwrite of a partitioned dataset (docs/table-format.md 6.7): replace only the partitions this SQL " +
      "condition on partition columns selects (e.g. `day >= '2026-01-01'`); written rows outside it fail the write. " +
      "Applies to this write only"
  )(_.trim)
  val PartitionOverwriteMode: OptionSpec[String] = spec(
    "partitionOverwriteMode",
    Write,
    "Spark's `spark.sql.sources.partitionOverwriteMode`",
    "save mode overwrite of a partitioned dataset: `static` replaces every partition, `dynamic` only those the " +
      "written rows fall in. Applies to this write only"
  )(v =>
    within(
      Set("static", "dynamic").contains(v.trim.toLowerCase(Locale.ROOT)),
      s"partitionOverwriteMode is static or dynamic, not '$v'"
    )(
      v.trim.toLowerCase(Locale.ROOT)
    )
  )

  /** Write options that describe one write, never kept as a dataset's defaults. */
  def perWrite: Seq[OptionSpec[_]] = Seq(ReplaceWhere, PartitionOverwriteMode)

  // ---- dataset options ----

  val StableRowIds: OptionSpec[Boolean] = spec(
    "stableRowIds",
    Dataset,
    "`false`",
    "give every row a stable id (`_rowid`), kept through deletes, updates and compaction and never reused; chosen when the dataset is created"
  )(bool)

  // ---- read options ----

  val TailPrefetchBytes: OptionSpec[Long] = spec(
    "tailPrefetchBytes",
    Read,
    "by file system",
    "bytes read from the file end on open (footer, schema, CIT and often the CMBs in one read): 64 KiB on a local " +
      "disk, 1 MiB on HDFS and object stores (a dataset read opening a wide file for some columns: 4 KiB on a local disk)"
  )(bytes(1L << 30))
  val CmbEagerLoadThreshold: OptionSpec[Long] = spec(
    "cmbEagerLoadThreshold",
    Read,
    "`1m`",
    "read all CMBs at once when the CMB area is at most this large, else only the selected columns'"
  )(bytes(Long.MaxValue))
  val CoalesceGapBytes: OptionSpec[Long] = spec(
    "coalesceGapBytes",
    Read,
    "by file system",
    "merge reads of chunks and pages closer than this (16 KiB on a local disk, 1 MiB on HDFS and object stores)"
  )(bytes(Long.MaxValue))
  val MaxCoalescedBytes: OptionSpec[Long] =
    spec("maxCoalescedBytes", Read, "`64m`", "largest merged read")(bytes(1L << 30))
  val VerifyChecksums: OptionSpec[Boolean] =
    spec("verifyChecksums", Read, "`true`", "verify page, CMB and metadata CRC32s")(bool)
  val DecodeThreads: OptionSpec[Int] = spec(
    "decodeThreads",
    Read,
    "`min(4, cores)`",
    "threads, the task's own included, that decode the columns of one stripe at once (`1`: the task's thread only)"
  ) { v =>
    val n = int(v); within(n >= 1 && n <= 64, "must be between 1 and 64")(n)
  }
  val FilterPushdown: OptionSpec[Boolean] = spec(
    "filterPushdown",
    Read,
    "`true`",
    "skip stripes and pages whose statistics rule out the query's predicates, answer aggregates from metadata"
  )(bool)
  val AggregatePushdown: OptionSpec[Boolean] = spec(
    "aggregatePushdown",
    Read,
    "`true`",
    "compute COUNT, SUM, MIN, MAX and AVG (with GROUP BY columns and WHERE predicates the scan evaluates exactly) in " +
      "the scan's tasks, which return one partial result per group instead of the rows (EXPLAIN: `Aggregates:`)"
  )(bool)
  val RuntimeFilters: OptionSpec[Boolean] = spec(
    "runtimeFilters",
    Read,
    "`false`",
    "joins on stored columns: Spark sends the scan the keys of the other side of a join (dynamic pruning), and " +
      "stripes and pages holding none of them are skipped. Only for integer, date, timestamp and decimal columns " +
      "whose stripes each hold a narrow slice of the values (sorted or clustered keys), and for lists of at most " +
      "65,536 keys. Off by default: the scan then waits for the other side, which costs more than it saves when few " +
      "stripes are skipped. Joins on partition columns prune fragments this way whatever the option"
  )(bool)
  val FilterEstimate: OptionSpec[Boolean] = spec(
    "filterEstimate",
    Read,
    "`true`",
    "the size the scan reports to Spark's planner is at most that of the rows its pushed predicates keep, in " +
      "memory, estimated on a sample (statistics, then the first rows of a few stripes of up to 8 files; only the " +
      "predicates' columns are read): a filtered side of a join small enough is broadcast. The same sample decides " +
      "whether the scan returns exactly the rows its predicates keep when they keep at most 1 row in 16 or all of " +
      "them (a LIKE pattern of % wildcards, whatever it keeps), so that Spark drops its own filter and the columns " +
      "only that filter reads"
  )(bool)
  val TakeWholePages: OptionSpec[Boolean] = spec(
    "takeWholePages",
    Read,
    "`false`",
    "random access (take, `_rowid`/`_rowaddr` lookups) reads whole pages, so that their CRC32 is checked, instead of " +
      "only the requested values of pages stored PLAIN and uncompressed"
  )(bool)
  val LocalTakeMaxRows: OptionSpec[Int] = spec(
    "localTakeMaxRows",
    Read,
    "`1000`",
    "Spark queries that name at most this many rows by `_rowid` or `_rowaddr` (`=`, `IN`) read them on the driver, " +
      "without a Spark job (EXPLAIN: `FermionTake`); more rows are read by tasks (`BatchScan ... Take:`); `0`: " +
      "always by tasks"
  ) { v =>
    val n = int(v); within(n >= 0, "must be 0 or more")(n)
  }
  val MergeSchema: OptionSpec[Boolean] = spec(
    "mergeSchema",
    Read,
    "`false`",
    "reads of loose Fermion files (a directory without a dataset): the table's columns are those of every file, not " +
      "only the first file's (a column a file lacks reads null there; one name with two types is an error). Also a " +
      "write option of appends to a dataset (DataFrame `save` by path): columns the data has and the dataset lacks " +
      "are added at the end (earlier rows read null), and types are widened where the data's are wider " +
      "(byte -> short -> int -> long, float -> double, decimal precision up keeping integer digits, " +
      "date -> timestamp_ntz), in the version that adds the rows; a column the data lacks reads null"
  )(bool)
  val VersionAsOf: OptionSpec[Long] = spec(
    "versionAsOf",
    Read,
    "latest",
    "read this version of a dataset (at most one of `versionAsOf`, `timestampAsOf`, `tag`)"
  ) { v =>
    val n = long(v); within(n >= 1, "expected a version number (1, 2, ...)")(n)
  }
  val TimestampAsOf: OptionSpec[String] = spec(
    "timestampAsOf",
    Read,
    "",
    "read the version current at this time (a timestamp in the session time zone, e.g. `2026-01-31 12:00:00`)"
  )(_.trim)
  val Tag: OptionSpec[String] = spec("tag", Read, "", "read the version a tag names")(_.trim)

  // ---- streaming reads (`readStream`) ----

  val StartingVersion: OptionSpec[Option[Long]] = spec(
    "startingVersion",
    Read,
    "the latest version, read whole",
    "streaming reads: start with the changes of this version (a number), or `latest` for only versions committed " +
      "after the query starts; without it the first micro-batch is the whole latest version"
  ) { v =>
    if (v.trim.equalsIgnoreCase("latest")) None
    else { val n = long(v); within(n >= 1, "expected a version number (1, 2, ...) or `latest`")(Some(n)) }
  }
  val MaxFilesPerTrigger: OptionSpec[Int] = spec(
    "maxFilesPerTrigger",
    Read,
    "`1000`",
    "streaming reads: at most this many fragments (data files) per micro-batch"
  ) { v =>
    val n = int(v); within(n >= 1, "must be positive")(n)
  }
  val MaxRowsPerTrigger: OptionSpec[Long] = spec(
    "maxRowsPerTrigger",
    Read,
    "no limit",
    "streaming reads: fragments per micro-batch stop once they hold this many rows (at least one fragment)"
  ) { v =>
    val n = long(v); within(n >= 1, "must be positive")(n)
  }
  val IgnoreDeletes: OptionSpec[Boolean] = spec(
    "ignoreDeletes",
    Read,
    "`false`",
    "streaming reads: skip versions that only deleted rows (otherwise the stream fails on them)"
  )(bool)
  val IgnoreChanges: OptionSpec[Boolean] = spec(
    "ignoreChanges",
    Read,
    "`false`",
    "streaming reads: for versions that changed rows (update, merge, overwrite, restore), emit the rows they wrote " +
      "(changed rows again, so downstream sees duplicates) and skip deletes, instead of failing"
  )(bool)

  // ---- storage settings (Hadoop configuration keys) ----

  /** The values of `fermion.commitStore` (the dataset layer's CommitStores checks it lists them all). */
  val CommitStoreKinds: Seq[String] = Seq("auto", "link", "rename", "conditionalPut", "external")

  val CommitStore: OptionSpec[String] = spec(
    "fermion.commitStore",
    Storage,
    "`auto`",
    "how commits publish a version atomically: `auto` (by file system: `link` on a local disk, `rename` on HDFS, " +
      "`conditionalPut` on stores whose Hadoop connector offers a conditional create, such as S3A; anything else " +
      "fails with `FermionCommitStoreException`), `link`, `rename`, `conditionalPut`, or `external` (an external " +
      "manifest store, for stores without an atomic create)"
  )(v =>
    within(
      CommitStoreKinds.exists(_.equalsIgnoreCase(v.trim)),
      "expected one of " + CommitStoreKinds.mkString(", ")
    )(v.trim)
  )
  val CommitStoreVerify: OptionSpec[Boolean] = spec(
    "fermion.commitStore.verify",
    Storage,
    "`true`",
    "`conditionalPut`: before the first commit to a store in a JVM, check with a probe object that the store " +
      "refuses a second conditional create (some S3-compatible servers ignore `If-None-Match`)"
  )(bool)
  val ExternalStoreDir: OptionSpec[String] = spec(
    "fermion.externalStore.dir",
    Storage,
    "",
    "`external`: the directory of the file-system manifest store, on a file system with an atomic create " +
      "(local, HDFS) that every writer and reader of the dataset reaches"
  )(_.trim)
  val ExternalStoreClass: OptionSpec[String] = spec(
    "fermion.externalStore.class",
    Storage,
    "the file-system store",
    "`external`: the class name of another `ExternalManifestStore` implementation (with a Hadoop `Configuration` " +
      "constructor) than the file-system one, `FileSystemManifestStore` (both in the core's `dataset` package)"
  )(_.trim)
  val LatestVersion: OptionSpec[String] = spec(
    "fermion.latestVersion",
    Storage,
    "`auto`",
    "how a reader finds the latest version: `list` (one listing of `_versions/`), `hint` (the `_versions/_latest` " +
      "hint checked by probing the next names, no listing) or `auto` (`list` on a local disk and HDFS, `hint` on " +
      "object stores); with `external`, the store says"
  ) { v =>
    val t = v.trim.toLowerCase(Locale.ROOT);
    within(Set("auto", "list", "hint").contains(t), "expected auto, list or hint")(t)
  }

  val all: IndexedSeq[OptionSpec[_]] = IndexedSeq(
    Compression,
    CompressionLevel,
    CompressionBlockSize,
    CompressionBlockPrime,
    Encodings,
    PageSize,
    PageRows,
    BloomFilterColumns,
    BloomFilterFpp,
    BloomFilter,
    StripeRows,
    StripeBytes,
    Checksum,
    BatchKey,
    ReplaceWhere,
    PartitionOverwriteMode,
    StableRowIds,
    TailPrefetchBytes,
    CmbEagerLoadThreshold,
    CoalesceGapBytes,
    MaxCoalescedBytes,
    VerifyChecksums,
    DecodeThreads,
    FilterPushdown,
    AggregatePushdown,
    RuntimeFilters,
    FilterEstimate,
    TakeWholePages,
    LocalTakeMaxRows,
    MergeSchema,
    VersionAsOf,
    TimestampAsOf,
    Tag,
    StartingVersion,
    MaxFilesPerTrigger,
    MaxRowsPerTrigger,
    IgnoreDeletes,
    IgnoreChanges,
    CommitStore,
    CommitStoreVerify,
    ExternalStoreDir,
    ExternalStoreClass,
    LatestVersion
  )
  require(all.map(_.lowerKey).distinct.size == all.size, "option keys are unique")

  /** `column.<path>.<key>`: a per-column setting. */
  val ColumnPrefix = "column."

  def forScope(scope: OptionScope): IndexedSeq[OptionSpec[_]] = all.filter(_.scope == scope)

  /** The per-column form of `key` (`column.<path>.<setting>`), split into (path, spec). */
  def columnSetting(key: String): Option[(String, OptionSpec[_])] = {
    val k = key.toLowerCase(Locale.ROOT)
    if (!k.startsWith(ColumnPrefix)) None
    else all.filter(_.perColumn).collectFirst {
      case s if k.endsWith("." + s.lowerKey) && k.length > ColumnPrefix.length + s.lowerKey.length + 1 =>
        key.substring(ColumnPrefix.length, key.length - s.key.length - 1) -> s
    }
  }

  /** Fails on a key that is not an option of `scopes` (nor a per-column write setting when
    * `scopes` includes writes), listing the known ones, and on any value that does not parse.
    * `ignored` keys (what an engine itself puts into option maps) pass. */
  def checkKnown(options: Map[String, String], scopes: Set[OptionScope], ignored: Set[String] = Set.empty): Unit = {
    val specs = all.filter(s => scopes.contains(s.scope) && !s.columnOnly)
    val ignoredLower = ignored.map(_.toLowerCase(Locale.ROOT))
    options.foreach { case (k, v) =>
      specs.find(_.matches(k)) match {
        case Some(s) => s.parse(v)
        case None if scopes.contains(Write) && columnSetting(k).nonEmpty => columnSetting(k).get._2.parse(v, k)
        case None if ignoredLower.contains(k.toLowerCase(Locale.ROOT)) =>
        case None =>
          val kinds = scopes.toSeq.sortBy(_.title).map(_.title).mkString(" or ")
          val perColumn =
            if (scopes.contains(Write))
              s", and per column $ColumnPrefix<column>.{${all.filter(_.perColumn).map(_.key).mkString(",")}}"
            else ""
          throw new IllegalArgumentException(
            s"Unknown Fermion $kinds '$k'. Known: ${specs.map(_.key).mkString(", ")}$perColumn"
          )
      }
    }
  }

  /** The README table of one scope's options. */
  def markdownTable(scope: OptionScope): String = {
    val rows = forScope(scope).map { s =>
      val key = if (s.columnOnly) s"`$ColumnPrefix<name>.${s.key}`" else s"`${s.key}`"
      s"| $key | ${s.defaultText} | ${s.doc}${if (s.perColumn && !s.columnOnly) " (also per column)" else ""} |"
    }
    (s"| ${scope.title} | default | meaning |" +: "|---|---|---|" +: rows).mkString("\n")
  }
}
