package io.fermion.core.dataset

import java.nio.charset.StandardCharsets

/** The stable row ids of a fragment's rows, in physical row order (docs/table-format.md 6.5): a
  * range from a first id, or a [[RowIdSequence]] listed in the manifest or in a row id file. */
sealed trait RowIds

object RowIds {

  /** `rowIdKind` 1: the rows have the ids `first, first + 1, ...`. */
  final case class Start(first: Long) extends RowIds

  /** `rowIdKind` 2: the ids listed in the manifest. */
  final case class Listed(sequence: RowIdSequence) extends RowIds

  /** `rowIdKind` 3: `count` ids listed in a row id file (`path` relative to the dataset root). */
  final case class External(path: String, count: Long) extends RowIds

  /** The ids `ids` of a fragment's rows in the most compact kind: a range when they are one. */
  def of(ids: Array[Long]): RowIds = {
    val sequence = RowIdSequence.of(ids)
    sequence.segments match {
      case IndexedSeq(RowIdSegment.Run(first, _)) => Start(first)
      case _ => Listed(sequence)
    }
  }

  /** A sequence whose encoding is larger than this goes to a row id file rather than the manifest. */
  val InlineLimitBytes: Int = 4096

  /** Row id files: `_rowids/<uuid>.rowids`, framed like the other metadata files (5). */
  val FileMagic: Array[Byte] = "FRRI".getBytes(StandardCharsets.US_ASCII)
  val FileSuffix = ".rowids"
}

/** One run of a [[RowIdSequence]]. */
sealed trait RowIdSegment {
  def length: Long
  def idAt(i: Long): Long
}

object RowIdSegment {

  /** Kind 1: `length` consecutive ids from `first`. */
  final case class Run(first: Long, length: Long) extends RowIdSegment {
    def idAt(i: Long): Long = first + i
  }

  /** Kind 2: ids listed one by one. */
  final case class Values(ids: Array[Long]) extends RowIdSegment {
    def length: Long = ids.length.toLong
    def idAt(i: Long): Long = ids(i.toInt)
    override def equals(o: Any): Boolean = o match {
      case Values(other) => java.util.Arrays.equals(ids, other)
      case _ => false
    }
    override def hashCode(): Int = java.util.Arrays.hashCode(ids)
    override def toString: String = ids.mkString("Values(", ", ", ")")
  }
}

/** Row ids in row order as runs of consecutive ids and lists of the others: what a fragment holds
  * whose rows came from elsewhere (updated rows keep their ids, compaction carries them). */
final case class RowIdSequence(segments: IndexedSeq[RowIdSegment]) {

  /** The first row of each segment, and the total at the end. */
  private val starts: Array[Long] = segments.scanLeft(0L)(_ + _.length).toArray

  def length: Long = starts(starts.length - 1)

  /** The row at which segment `s` starts. */
  def segmentStart(s: Int): Long = starts(s)

  /** The id of row `row` (0 <= row < length). */
  def apply(row: Long): Long = {
    val s = java.util.Arrays.binarySearch(starts, row) match {
      case k if k >= 0 => k
      case k => -k - 2
    }
    // Empty segments are never written, so a row at a boundary belongs to the segment starting there.
    segments(s).idAt(row - starts(s))
  }

  /** Encoded size in bytes (6.5). */
  def encodedBytes: Long = 4L + segments.iterator.map {
    case _: RowIdSegment.Run => 17L
    case v: RowIdSegment.Values => 5L + 8L * v.ids.length
  }.sum
}

object RowIdSequence {

  /** Consecutive ids at least this many become a run; shorter stretches are listed. */
  val MinRun = 4

  def of(ids: Array[Long]): RowIdSequence = {
    val segments = IndexedSeq.newBuilder[RowIdSegment]
    val listed = Array.newBuilder[Long]
    var listedCount = 0
    def flushListed(): Unit = if (listedCount > 0) {
      segments += RowIdSegment.Values(listed.result()); listed.clear(); listedCount = 0
    }
    var i = 0
    while (i < ids.length) {
      var j = i + 1
      while (j < ids.length && ids(j) == ids(j - 1) + 1) j += 1
      if (j - i >= MinRun) { flushListed(); segments += RowIdSegment.Run(ids(i), (j - i).toLong) }
      else { var k = i; while (k < j) { listed += ids(k); k += 1 }; listedCount += j - i }
      i = j
    }
    flushListed()
    RowIdSequence(segments.result())
  }

  private val RunKind = 1
  private val ValuesKind = 2

  private[core] def write(w: MetadataWriter, s: RowIdSequence): Unit = {
    w.u32(s.segments.size)
    s.segments.foreach {
      case RowIdSegment.Run(first, length) => w.u8(RunKind).i64(first).i64(length)
      case RowIdSegment.Values(ids) => w.u8(ValuesKind).u32(ids.length); ids.foreach(w.i64)
    }
  }

  /** Reads a sequence that must hold `rows` ids, all non-negative. */
  private[core] def read(r: MetadataReader, rows: Long, what: String): RowIdSequence = {
    val segments = (0 until r.count(s"$what segments", 5)).map { _ =>
      r.u8(s"$what segment kind") match {
        case RunKind =>
          val first = r.i64("first row id of a run")
          val length = r.i64("row id run length")
          r.check(first >= 0 && length >= 1 && first + length > first, s"$what: run of $length ids from $first")
          RowIdSegment.Run(first, length)
        case ValuesKind =>
          val n = r.count("listed row ids", 8)
          r.check(n >= 1, s"$what: empty list of row ids")
          val ids = Array.fill(n)(r.i64("row id"))
          r.check(ids.forall(_ >= 0), s"$what: negative row id")
          RowIdSegment.Values(ids)
        case k => r.check(false, s"$what: unknown row id segment kind $k"); null
      }
    }
    val s = RowIdSequence(segments)
    r.check(s.length == rows, s"$what holds ${s.length} row ids for $rows rows")
    s
  }
}
