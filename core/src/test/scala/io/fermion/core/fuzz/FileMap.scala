package io.fermion.core.fuzz

import java.nio.{ByteBuffer, ByteOrder}

import scala.collection.mutable.ArrayBuffer

import io.fermion.core.layout.{ColumnMetadataBlock => C, DescType, Footer, PageHeader}

/** One integer field of a file's metadata: where it is, how wide (1, 2, 4 or 8 bytes), and what
  * it is (`group` names fields of the same kind, e.g. every FullChunkDesc.offset, so a mutation can
  * copy one from elsewhere). */
final case class FieldRef(offset: Int, width: Int, group: String)

/** A byte range of the file and what it holds. */
final case class Region(start: Int, end: Int, kind: String) {
  def length: Int = end - start
}

/** A page as the valid file has it: header position, payload range. */
final case class PageRef(header: Int, payload: Int, storedLength: Int)

/** The structure of a valid Fermion file, parsed independently of the reader (by the byte layout
  * of docs/format.md): every metadata field, every page header and payload, every bloom filter.
  * Structure-aware mutations pick their targets from it, and the CRC fixer finds what to
  * recompute. */
final class FileMap(val bytes: Array[Byte]) {
  private val b = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN)
  val length: Int = bytes.length
  val footerAt: Int = length - 64
  val footer: Footer = Footer.decode(b.duplicate().position(footerAt))
  val fields = ArrayBuffer.empty[FieldRef]
  val regions = ArrayBuffer.empty[Region]
  val pages = ArrayBuffer.empty[PageRef]
  val blooms = ArrayBuffer.empty[Region]

  /** Descriptors (16 or 48 bytes) by kind, for whole-descriptor copies. */
  val descriptors = ArrayBuffer.empty[Region]

  /** CMB of each column: (start, length); length 0 when the column has none. */
  val cmbs = ArrayBuffer.empty[(Int, Int)]

  private def field(at: Int, width: Int, group: String): Unit = fields += FieldRef(at, width, group)

  // Footer: every field, the CRC, the version and the magic.
  Seq(
    (0, 8, "footer.schemaOffset"),
    (8, 4, "footer.schemaLength"),
    (12, 4, "footer.numColumns"),
    (16, 8, "footer.stripeDirOffset"),
    (24, 4, "footer.numStripes"),
    (28, 4, "footer.settings"),
    (32, 8, "footer.citOffset"),
    (40, 8, "footer.numRows"),
    (48, 4, "footer.defaultPageSize"),
    (52, 4, "footer.metadataCrc32"),
    (56, 2, "footer.major"),
    (58, 2, "footer.minor")
  ).foreach { case (o, w, g) => field(footerAt + o, w, g) }
  regions += Region(0, 8, "header")
  regions += Region(footerAt, length, "footer")

  private val schemaAt = footer.schemaOffset.toInt
  regions += Region(schemaAt, schemaAt + footer.schemaLength, "schema")
  parseSchema()

  private val dirAt = footer.stripeDirOffset.toInt
  regions += Region(dirAt, dirAt + 24 * footer.numStripes, "stripeDirectory")
  (0 until footer.numStripes).foreach { i =>
    val at = dirAt + 24 * i
    field(at, 8, "dir.dataOffset"); field(at + 8, 8, "dir.dataLength"); field(at + 16, 4, "dir.rowCount")
    field(at + 20, 4, "dir.reserved")
  }

  private val citAt = footer.citOffset.toInt
  private val n = footer.numColumns
  regions += Region(citAt, citAt + 12 * n + 8, "cit")
  (0 to n).foreach(c => field(citAt + 8 * c, 8, "cit.offset"))
  (0 until n).foreach(c => field(citAt + 8 * (n + 1) + 4 * c, 4, "cit.crc"))
  (0 until n).foreach { c =>
    val start = b.getLong(citAt + 8 * c).toInt
    val end = b.getLong(citAt + 8 * (c + 1)).toInt
    cmbs += ((start, end - start))
    if (end > start) parseCmb(start, end)
  }

  // The column directory (format 1.5): entries, group CRCs, trailer; it ends at CIT.offset[0].
  if (footer.hasColumnDirectory) {
    val end = b.getLong(citAt).toInt
    val groups = (n + 31) / 32
    val start = end - (32 * n + 4 * groups + 24)
    regions += Region(start, end, "columnDirectory")
    (0 until n).foreach { c =>
      val at = start + (c / 32) * (32 * 32 + 4) + 32 * (c % 32)
      Seq(
        (0, 8, "coldir.cmbOffset"),
        (8, 4, "coldir.cmbLength"),
        (12, 4, "coldir.cmbCrc"),
        (16, 4, "coldir.nodeOffset"),
        (20, 4, "coldir.nodeLength"),
        (24, 4, "coldir.nodeCrc"),
        (28, 4, "coldir.reserved")
      ).foreach { case (o, w, g) => field(at + o, w, g) }
    }
    (0 until groups).foreach(g =>
      field(start + g * (32 * 32 + 4) + 32 * math.min(32, n - 32 * g), 4, "coldir.groupCrc")
    )
    val t = end - 24
    field(t, 8, "coldir.cmbAreaStart"); field(t + 8, 4, "coldir.numColumns"); field(t + 12, 4, "coldir.reserved")
    field(t + 16, 4, "coldir.trailerCrc")
  }

  def hasPageCrc: Boolean = footer.hasPageCrc

  /** Page payload ranges (what page CRCs protect). */
  lazy val payloads: IndexedSeq[Region] =
    pages.map(p => Region(p.payload, p.payload + p.storedLength, "payload")).toIndexedSeq

  private def parseSchema(): Unit = {
    var at = schemaAt
    field(at, 4, "schema.numFields")
    at += 4
    def node(): Unit = {
      val typeId = bytes(at) & 0xff
      field(at, 1, "schema.typeId"); field(at + 1, 1, "schema.flags"); field(at + 2, 2, "schema.nameLength")
      field(at + 4, 4, "schema.fieldId")
      val nameLen = b.getShort(at + 2) & 0xffff
      at += 8 + nameLen
      typeId match {
        case 10 => field(at, 1, "schema.utc"); at += 1
        case 11 => field(at, 1, "schema.precision"); field(at + 1, 1, "schema.scale"); at += 2
        case 12 =>
          field(at, 4, "schema.numChildren")
          val k = b.getInt(at); at += 4
          (0 until k).foreach(_ => node())
        case 13 => node()
        case 14 => node(); node()
        case _ =>
      }
    }
    val count = b.getInt(schemaAt)
    (0 until count).foreach(_ => node())
  }

  private def parseCmb(start: Int, end: Int): Unit = {
    regions += Region(start, end, "cmb")
    val streams = b.getInt(start)
    val stripes = b.getInt(start + 4)
    field(start, 4, "cmb.numStreams"); field(start + 4, 4, "cmb.numStripes")
    (0 until stripes).foreach(t => field(start + 8 + 4 * t, 4, "cmb.stripeRowCount"))
    val dir = start + 8 + 4 * stripes
    (0 until streams).foreach { s =>
      val at = dir + 8 * s
      field(at, 1, "cmb.descType"); field(at + 1, 1, "cmb.streamType"); field(at + 2, 2, "cmb.padding")
      field(at + 4, 4, "cmb.chunksOffset")
      val desc = bytes(at) & 0xff
      val chunks = start + b.getInt(at + 4)
      (0 until stripes).foreach { t =>
        desc match {
          case DescType.Simple =>
            val d = chunks + t * C.SimpleChunkDescSize
            descriptors += Region(d, d + C.SimpleChunkDescSize, "simple")
            field(d, 8, "simple.offset"); field(d + 8, 4, "simple.length"); field(d + 12, 4, "simple.reserved")
            val len = b.getInt(d + 8) & 0xffffffffL
            if (len != 0 && len != 0xffffffffL) walkPages(b.getLong(d).toInt, len.toInt)
          case DescType.Full =>
            val d = chunks + t * C.FullChunkDescSize
            descriptors += Region(d, d + C.FullChunkDescSize, "full")
            Seq(
              (0, 8, "full.offset"),
              (8, 4, "full.length"),
              (12, 4, "full.statsFlags"),
              (16, 8, "full.min"),
              (24, 8, "full.max"),
              (32, 4, "full.nullCount"),
              (36, 4, "full.numPages"),
              (40, 4, "full.pageMetaOffset"),
              (44, 4, "full.bloomLength")
            ).foreach { case (o, w, g) => field(d + o, w, g) }
            val off = b.getLong(d).toInt
            val len = b.getInt(d + 8)
            if (len != 0) walkPages(off, len)
            val bloom = b.getInt(d + 44)
            if (bloom > 0) blooms += Region(off + len, off + len + bloom, "bloom")
            val numPages = b.getInt(d + 36)
            if (numPages > 1) {
              val pm = start + b.getInt(d + 40)
              (0 until numPages).foreach { p =>
                val e = pm + p * C.PageMetaSize
                Seq(
                  (0, 4, "pageMeta.pageSize"),
                  (4, 4, "pageMeta.rowCount"),
                  (8, 8, "pageMeta.min"),
                  (16, 8, "pageMeta.max"),
                  (24, 4, "pageMeta.nullCount"),
                  (28, 4, "pageMeta.statsFlags")
                ).foreach { case (o, w, g) => field(e + o, w, g) }
              }
            }
          case _ =>
        }
      }
    }
  }

  private def walkPages(offset: Int, length: Int): Unit = {
    var at = offset
    while (at < offset + length) {
      val stored = b.getInt(at)
      Seq(
        (0, 4, "page.storedLength"),
        (4, 4, "page.uncompressedLength"),
        (8, 4, "page.valueCount"),
        (12, 4, "page.crc32"),
        (16, 1, "page.codec"),
        (17, 1, "page.encoding"),
        (18, 2, "page.reserved")
      ).foreach { case (o, w, g) => field(at + o, w, g) }
      regions += Region(at, at + PageHeader.Size, "pageHeader")
      pages += PageRef(at, at + PageHeader.Size, stored)
      // The first bytes of an uncompressed encoded body are counts and widths: hostile targets.
      if (bytes(at + 17) != 0 && bytes(at + 16) == 0) {
        val body = at + PageHeader.Size
        var k = 0
        while (k + 4 <= math.min(stored, 24)) { field(body + k, 4, "body.u32"); k += 1 }
        if (stored > 0) field(body, 1, "body.u8")
      }
      at += PageHeader.Size + stored
    }
  }
}
