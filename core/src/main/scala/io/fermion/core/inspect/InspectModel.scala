package io.fermion.core.inspect

import io.fermion.core.schema.FermionField

/** What `fermion inspect` reports, as plain values: built from metadata only by [[FileInspector]]
  * and [[DatasetInspector]], rendered by [[InspectText]] (people) and [[InspectJson]] (machines,
  * docs/inspect.schema.json). Sizes are bytes; offsets are file offsets. */
sealed trait Inspection {

  /** Bytes fetched from storage to build this report. */
  def bytesRead: Long
}

/** Min/max of a page or chunk as the writer recorded them (docs/format.md, section 7), decoded for
  * the column's type: numbers, `true`/`false`, ISO dates and timestamps, decimals as text, and
  * the 8-byte prefixes of strings (as text) and binary values (as hex). */
final case class StatsInfo(flags: Int, min: Option[StatValue], max: Option[StatValue]) {
  def hasMinMax: Boolean = min.nonEmpty
  def flagNames: Seq[String] = StatsInfo.flagNames(flags)
}

object StatsInfo {
  def flagNames(flags: Int): Seq[String] =
    Seq(1 -> "has_min_max", 2 -> "has_nan", 4 -> "prefix_bounds", 8 -> "double_bits").collect {
      case (bit, n) if (flags & bit) != 0 => n
    } ++ (if ((flags & ~15) != 0) Seq(f"unknown_0x${flags & ~15}%x") else Nil)
}

/** A decoded statistics value: a JSON number, boolean or string. */
sealed trait StatValue { def text: String }
object StatValue {
  final case class Integral(v: Long) extends StatValue { def text: String = v.toString }
  final case class Floating(v: Double) extends StatValue { def text: String = v.toString }
  final case class Bool(v: Boolean) extends StatValue { def text: String = v.toString }
  final case class Text(v: String) extends StatValue { def text: String = v }
}

/** One page: where it is, its header (when read) and its PageMeta (DATA pages of multi-page
  * chunks). */
final case class PageInfo(
    offset: Long,
    /** On-disk size, header included. */
    bytes: Long,
    header: Option[PageHeaderInfo],
    /** Rows (slots) from PageMeta, for DATA pages of multi-page chunks. */
    rows: Option[Int],
    nullCount: Option[Int],
    stats: Option[StatsInfo]
)

final case class PageHeaderInfo(values: Int, encoding: String, codec: String, storedBytes: Int, uncompressedBytes: Int)

/** One stream in one stripe. */
final case class ChunkInfo(
    stripe: Int,
    offset: Long,
    /** Bytes of its pages (bloom filter not included). */
    bytes: Long,
    /** VALIDITY: every slot of the stripe is null (no bytes stored). */
    allNull: Boolean,
    /** None for a VALIDITY or OFFSETS chunk whose page headers were not read. */
    numPages: Option[Int],
    nullCount: Option[Int],
    stats: Option[StatsInfo],
    bloomFilterBytes: Int,
    pages: IndexedSeq[PageInfo]
)

/** One stream of a column: which node it belongs to, its kind, how its chunks are described, and
  * totals over the stripes inspected. */
final case class StreamInfo(
    index: Int,
    /** Dotted path of the node (`s.x`, `arr.element`, `m.key`). */
    node: String,
    fieldId: Int,
    streamType: String,
    descType: String,
    bytes: Long,
    pages: Int,
    /** Pages per encoding and per codec (from page headers; empty when they were not read). */
    encodings: Map[String, Int],
    codecs: Map[String, Int],
    nullCount: Option[Long],
    stats: Option[StatsInfo],
    bloomFilterBytes: Long,
    chunks: IndexedSeq[ChunkInfo]
)

/** One top-level column: its CMB (none when the column is null in every row) and streams. */
final case class ColumnInfo(
    index: Int,
    name: String,
    fieldId: Int,
    dataType: String,
    cmbOffset: Long,
    cmbBytes: Long,
    /** CMB, chunks and bloom filters of the stripes inspected. */
    bytes: Long,
    share: Double,
    streams: IndexedSeq[StreamInfo]
) {
  def allNull: Boolean = cmbBytes == 0
}

final case class StripeInfo(index: Int, firstRow: Long, rows: Int, dataOffset: Long, dataBytes: Long)

/** A Fermion file's metadata (docs/format.md). */
final case class FileInspection(
    path: String,
    fileBytes: Long,
    formatMajor: Int,
    formatMinor: Int,
    rows: Long,
    settings: Int,
    defaultPageSize: Int,
    schemaOffset: Long,
    schemaBytes: Int,
    stripeDirectoryOffset: Long,
    citOffset: Long,
    cmbAreaBytes: Long,
    /** Bytes of the column directory (format 1.5; 0 when the file has none). */
    columnDirectoryBytes: Long,
    /** Footer, schema, stripe directory, CIT, CMBs and column directory: what a reader needs
      * before any page. */
    metadataBytes: Long,
    schema: IndexedSeq[FermionField],
    numStripes: Int,
    stripes: IndexedSeq[StripeInfo],
    columns: IndexedSeq[ColumnInfo],
    pageHeadersRead: Boolean,
    bytesRead: Long
) extends Inspection {
  def formatVersion: String = s"$formatMajor.$formatMinor"
  def pageCrc32: Boolean = (settings & 1) != 0
  def batchMode: Boolean = (settings & 2) != 0
  def columnDirectory: Boolean = (settings & 4) != 0
}

/** One dataset version's totals (`DatasetInspector.summary`). `bytes`: its data and deletion
  * files. `rows`: live rows (deleted ones deducted). */
final case class DatasetSummary(
    version: Long,
    /** The first version still stored. */
    createdMillis: Option[Long],
    modifiedMillis: Long,
    partitionColumns: Seq[String],
    fragments: Int,
    dataFiles: Int,
    deletionFiles: Int,
    bytes: Long,
    rows: Long,
    deletedRows: Long,
    readerFeatures: Seq[String]
)

final case class VersionInfo(
    version: Long,
    timestampMillis: Long,
    operation: String,
    /** What the transaction file says beyond the operation (a delete's predicate, a schema change). */
    detail: Option[String],
    fragments: Int,
    rows: Long,
    tags: Seq[String]
)

final case class DataFileInfo(path: String, fieldIds: IndexedSeq[Int], bytes: Option[Long])
final case class DeletionInfo(path: String, kind: String, deletedRows: Long)

final case class FragmentInfo(
    id: Long,
    physicalRows: Long,
    rows: Long,
    rowIdStart: Option[Long],
    /** Where the fragment's listed row ids are: "manifest" or a row id file. */
    rowIdList: Option[String],
    files: IndexedSeq[DataFileInfo],
    deletion: Option[DeletionInfo]
)

/** A dataset (docs/table-format.md): its history and one version's fragments. */
final case class DatasetInspection(
    root: String,
    version: Long,
    latestVersion: Long,
    timestampMillis: Long,
    operation: String,
    rows: Long,
    readerFeatures: Long,
    writerFeatures: Long,
    schema: IndexedSeq[FermionField],
    versions: IndexedSeq[VersionInfo],
    fragments: IndexedSeq[FragmentInfo],
    tags: Map[String, Long],
    config: Map[String, String],
    bytesRead: Long
) extends Inspection {
  def dataBytes: Long = fragments.flatMap(_.files.flatMap(_.bytes)).sum
}
