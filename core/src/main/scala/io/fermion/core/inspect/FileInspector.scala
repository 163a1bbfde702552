package io.fermion.core.inspect

import java.nio.ByteOrder
import java.nio.charset.{CodingErrorAction, StandardCharsets}

import io.fermion.core.codec.PageCodec
import io.fermion.core.layout._
import io.fermion.core.read.{FermionFileReader, ReaderOptions}
import io.fermion.core.schema.{FermionField, FermionType}
import io.fermion.core.storage.ByteRange
import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path

/** What to inspect: some top-level columns (by name, case-insensitive) and stripes, and whether
  * to read page headers (20 bytes per page, for encodings and codecs). */
final case class InspectSelection(
    columns: Option[Seq[String]] = None,
    stripes: Option[Seq[Int]] = None,
    pageHeaders: Boolean = true
)

/** Builds a [[FileInspection]] from a file's metadata only: footer, schema, stripe directory and
  * CIT (one tail read), the CMBs of the selected columns, and, unless turned off, the 20-byte
  * header of every page of the selected chunks (where encodings and codecs are recorded). No page
  * payload is read (a small file's payloads may come along with the tail read). */
object FileInspector {

  def inspect(path: String, conf: Configuration, selection: InspectSelection = InspectSelection()): FileInspection = {
    val reader = FermionFileReader.open(new Path(path), conf, ReaderOptions(decodeThreads = 1))
    try inspect(reader, selection)
    finally reader.close()
  }

  def inspect(reader: FermionFileReader, selection: InspectSelection): FileInspection = {
    val footer = reader.footer
    val schema = reader.schema
    val columns = selection.columns match {
      case None => schema.fields.indices
      case Some(names) =>
        names.map(n =>
          schema.indexOf(n).getOrElse(throw new IllegalArgumentException(
            s"no column `$n` in ${reader.path} (columns: ${schema.fields.map(_.name).mkString(", ")})"
          ))
        ).distinct.toIndexedSeq
    }
    val stripes = selection.stripes match {
      case None => 0 until footer.numStripes
      case Some(ss) =>
        ss.foreach(s =>
          if (s < 0 || s >= footer.numStripes)
            throw new IllegalArgumentException(
              s"no stripe $s in ${reader.path} (stripes: 0..${footer.numStripes - 1})"
            )
        )
        ss.distinct.sorted.toIndexedSeq
    }
    reader.loadColumnMetadata(columns)
    val fileBytes = reader.input.length
    val cit = reader.columnIndexTable
    val columnInfos = columns.map { c =>
      val field = schema.fields(c)
      val cmb = reader.columnMetadata(c)
      val streams =
        cmb.map(m => inspectStreams(reader, field, m, stripes, selection.pageHeaders)).getOrElse(IndexedSeq.empty)
      val bytes = cit.cmbLength(c) + streams.map(s => s.bytes + s.bloomFilterBytes).sum
      ColumnInfo(
        c,
        field.name,
        field.fieldId,
        typeName(field),
        cit.cmbOffset(c),
        cit.cmbLength(c),
        bytes,
        if (fileBytes > 0) bytes.toDouble / fileBytes else 0.0,
        streams
      )
    }
    val stripeInfos = stripes.map { s =>
      StripeInfo(
        s,
        reader.stripes.firstRows(s),
        reader.stripes.rowCount(s),
        reader.stripes.dataOffset(s),
        reader.stripes.dataLength(s)
      )
    }
    FileInspection(
      path = reader.path,
      fileBytes = fileBytes,
      formatMajor = footer.major,
      formatMinor = footer.minor,
      rows = footer.numRows,
      settings = footer.settings,
      defaultPageSize = footer.defaultPageSize,
      schemaOffset = footer.schemaOffset,
      schemaBytes = footer.schemaLength,
      stripeDirectoryOffset = footer.stripeDirOffset,
      citOffset = footer.citOffset,
      cmbAreaBytes = cit.cmbAreaEnd - cit.cmbAreaStart,
      columnDirectoryBytes = cit.cmbAreaStart - reader.dataAreaEnd,
      metadataBytes = fileBytes - reader.dataAreaEnd,
      schema = schema.fields,
      numStripes = footer.numStripes,
      stripes = stripeInfos,
      columns = columnInfos,
      pageHeadersRead = selection.pageHeaders,
      bytesRead = reader.bytesRead
    )
  }

  /** `struct<a:int32,...>`-style type text of a field tree. */
  def typeName(f: FermionField): String = f.dataType match {
    case FermionType.Struct => f.children.map(c => s"${c.name}:${typeName(c)}").mkString("struct<", ",", ">")
    case FermionType.List => s"list<${typeName(f.children(0))}>"
    case FermionType.Map => s"map<${typeName(f.children(0))},${typeName(f.children(1))}>"
    case t => t.name
  }

  /** The column's nodes in stream order: (dotted path, node) per stream. */
  private def streamNodes(field: FermionField): IndexedSeq[(String, FermionField, Int)] = {
    def walk(f: FermionField, path: String): IndexedSeq[(String, FermionField, Int)] =
      f.ownStreamTypes.map(t => (path, f, t)) ++ f.children.flatMap(c => walk(c, s"$path.${c.name}"))
    walk(field, field.name)
  }

  private def streamTypeName(t: Int): String = t match {
    case StreamType.Validity => "VALIDITY"; case StreamType.Offsets => "OFFSETS"; case StreamType.Data => "DATA"
    case StreamType.BatchMeta => "BATCH_META"; case other => s"UNKNOWN($other)"
  }

  private def inspectStreams(
      reader: FermionFileReader,
      field: FermionField,
      m: ColumnMetadataBlock,
      stripes: IndexedSeq[Int],
      readHeaders: Boolean
  ): IndexedSeq[StreamInfo] = {
    val nodes = streamNodes(field)
    val input = reader.input
    // Page positions known from the CMB (DATA chunks); VALIDITY and OFFSETS chunks are walked.
    val chunks = nodes.indices.map { s =>
      val (_, node, st) = nodes(s)
      val desc = m.descType(s)
      stripes.map { stripe =>
        desc match {
          case DescType.Full =>
            val off = m.fullOffset(s, stripe)
            val len = m.fullLength(s, stripe)
            val flags = m.fullStatsFlags(s, stripe)
            val stats = statsOf(node.dataType, flags, m.fullMin(s, stripe), m.fullMax(s, stripe))
            val n = m.fullNumPages(s, stripe)
            val pages =
              if (len == 0) IndexedSeq.empty
              else if (n <= 1) IndexedSeq(PageInfo(off, len, None, None, Some(m.fullNullCount(s, stripe)), Some(stats)))
              else {
                val pool = m.fullPageMetaOffset(s, stripe)
                var at = off
                (0 until n).map { p =>
                  val size = m.pageSize(pool, p) & 0xffffffffL
                  val page = PageInfo(
                    at,
                    size,
                    None,
                    Some(m.pageRowCount(pool, p)),
                    Some(m.pageNullCount(pool, p)),
                    Some(statsOf(node.dataType, m.pageStatsFlags(pool, p), m.pageMin(pool, p), m.pageMax(pool, p)))
                  )
                  at += size
                  page
                }
              }
            ChunkInfo(
              stripe,
              off,
              len,
              allNull = false,
              Some(if (len == 0) 0 else math.max(n, 1)),
              Some(m.fullNullCount(s, stripe)),
              Some(stats),
              m.fullBloomLength(s, stripe),
              pages
            )
          case DescType.Simple =>
            val off = m.simpleOffset(s, stripe)
            val len = m.simpleLength(s, stripe)
            val allNull = st == StreamType.Validity && len == FileLayout.AllNullChunkLength
            val empty = allNull || len == 0
            ChunkInfo(
              stripe,
              off,
              if (empty) 0 else len,
              allNull,
              if (empty) Some(0) else None,
              None,
              None,
              0,
              IndexedSeq.empty
            )
          case _ => // USE_DEFAULT / FORCE_NULL: nothing stored
            ChunkInfo(stripe, 0, 0, allNull = desc == DescType.ForceNull, Some(0), None, None, 0, IndexedSeq.empty)
        }
      }
    }
    val withHeaders =
      if (!readHeaders) chunks
      else {
        // DATA pages: one batch of 20-byte reads.
        // DATA pages: headers already in the tail read on open are taken from it, the others
        // fetched in one batch of 20-byte reads.
        val (cached, known) =
          chunks.flatMap(_.flatMap(_.pages.map(_.offset))).partition(o => reader.inTail(o, PageHeader.Size))
        val headers = (input.readScattered(known.map(o => ByteRange(o, PageHeader.Size)))
          .zip(known).map { case (f, o) => o -> PageHeader.decode(f.join().order(ByteOrder.LITTLE_ENDIAN), 0) } ++
          cached.map(o => o -> PageHeader.decode(reader.readBytes(o, PageHeader.Size), 0))).toMap
        chunks.map(_.map { c =>
          if (c.pages.nonEmpty) c.copy(pages = c.pages.map(p => p.copy(header = headers.get(p.offset).map(headerInfo))))
          else if (c.numPages.isEmpty) {
            // Walk the chunk: header, skip the payload, next header.
            val pages = IndexedSeq.newBuilder[PageInfo]
            var at = c.offset
            while (at < c.offset + c.bytes) {
              val h = PageHeader.decode(reader.readBytes(at, PageHeader.Size), 0)
              val size = PageHeader.Size + (h.storedLength & 0xffffffffL)
              pages += PageInfo(at, size, Some(headerInfo(h)), None, None, None)
              at += size
            }
            val ps = pages.result()
            c.copy(numPages = Some(ps.size), pages = ps)
          } else c
        })
      }
    nodes.indices.map { s =>
      val (path, node, st) = nodes(s)
      val cs = withHeaders(s)
      val allPages = cs.flatMap(_.pages).filter(_.header.nonEmpty).map(_.header.get)
      val stats = cs.flatMap(_.stats)
      StreamInfo(
        index = s,
        node = path,
        fieldId = node.fieldId,
        streamType = streamTypeName(st),
        descType = DescType.name(m.descType(s)),
        bytes = cs.map(_.bytes).sum,
        pages = cs.map(_.numPages.getOrElse(0)).sum,
        encodings = allPages.groupBy(_.encoding).map { case (k, v) => k -> v.size },
        codecs = allPages.groupBy(_.codec).map { case (k, v) => k -> v.size },
        nullCount = if (cs.forall(_.nullCount.nonEmpty) && m.descType(s) == DescType.Full)
          Some(cs.map(_.nullCount.get.toLong).sum)
        else None,
        stats = if (stats.isEmpty) None else Some(mergeStats(node.dataType, cs, m, s)),
        bloomFilterBytes = cs.map(_.bloomFilterBytes.toLong).sum,
        chunks = cs
      )
    }
  }

  private def headerInfo(h: PageHeader): PageHeaderInfo =
    PageHeaderInfo(
      h.valueCount,
      PageEncoding.name(h.encoding),
      PageCodec.name(h.codec),
      h.storedLength,
      h.uncompressedLength
    )

  /** Statistics of the inspected stripes of a FULL stream, merged as the format merges them. */
  private def mergeStats(t: FermionType, cs: IndexedSeq[ChunkInfo], m: ColumnMetadataBlock, s: Int): StatsInfo = {
    val merged = cs.map(c => ValueStats(m.fullStatsFlags(s, c.stripe), m.fullMin(s, c.stripe), m.fullMax(s, c.stripe)))
      .reduce(_ merge _)
    statsOf(t, merged.flags, merged.min, merged.max)
  }

  /** Decodes the two i64 statistics slots for a type (docs/format.md, section 7). */
  def statsOf(t: FermionType, flags: Int, min: Long, max: Long): StatsInfo = {
    val vs = ValueStats(flags, min, max)
    if (!vs.usableBounds) StatsInfo(flags, None, None)
    else StatsInfo(flags, Some(value(t, flags, min)), Some(value(t, flags, max)))
  }

  private def value(t: FermionType, flags: Int, v: Long): StatValue = {
    if ((flags & ValueStats.DoubleBits) != 0) StatValue.Floating(java.lang.Double.longBitsToDouble(v))
    else if ((flags & ValueStats.PrefixBounds) != 0) {
      val bytes = java.nio.ByteBuffer.allocate(8).putLong(v).array()
      var n = 8
      while (n > 0 && bytes(n - 1) == 0) n -= 1
      if (t == FermionType.Utf8) {
        val decoder = StandardCharsets.UTF_8.newDecoder()
          .onMalformedInput(CodingErrorAction.REPLACE).onUnmappableCharacter(CodingErrorAction.REPLACE)
        StatValue.Text(decoder.decode(java.nio.ByteBuffer.wrap(bytes, 0, n)).toString)
      } else StatValue.Text(bytes.take(n).map(b => f"${b & 0xff}%02x").mkString)
    } else
      t match {
        case FermionType.Bool => StatValue.Bool(v != 0)
        case FermionType.Date32 => StatValue.Text(java.time.LocalDate.ofEpochDay(v).toString)
        case FermionType.Timestamp(true) =>
          StatValue.Text(java.time.Instant.EPOCH.plus(v, java.time.temporal.ChronoUnit.MICROS).toString)
        case FermionType.Timestamp(false) =>
          StatValue.Text(
            java.time.LocalDateTime.ofEpochSecond(
              Math.floorDiv(v, 1000000L),
              (Math.floorMod(v, 1000000L) * 1000).toInt,
              java.time.ZoneOffset.UTC
            ).toString
          )
        case FermionType.Decimal(_, scale) => StatValue.Text(java.math.BigDecimal.valueOf(v, scale).toPlainString)
        case _ => StatValue.Integral(v)
      }
  }
}
