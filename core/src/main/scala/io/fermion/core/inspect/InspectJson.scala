package io.fermion.core.inspect

import java.io.StringWriter

import com.fasterxml.jackson.core.{JsonFactory, JsonGenerator}
import io.fermion.core.schema.FermionField

/** Renders an [[Inspection]] as JSON (Jackson's streaming generator, which Spark ships). The
  * shape is documented in section 2 of docs/migration.md and checked by docs/inspect.schema.json. Keys are
  * snake_case; sizes are bytes; a file report has `kind = "file"`, a dataset report
  * `kind = "dataset"`. */
object InspectJson {
  val SchemaVersion = 1

  def render(i: Inspection, pretty: Boolean = true): String = {
    val out = new StringWriter()
    val g = new JsonFactory().createGenerator(out)
    if (pretty) g.useDefaultPrettyPrinter()
    i match {
      case f: FileInspection => file(g, f)
      case d: DatasetInspection => dataset(g, d)
    }
    g.close()
    out.toString
  }

  private def file(g: JsonGenerator, f: FileInspection): Unit = {
    g.writeStartObject()
    g.writeNumberField("inspect_version", SchemaVersion)
    g.writeStringField("kind", "file")
    g.writeStringField("path", f.path)
    g.writeNumberField("file_bytes", f.fileBytes)
    g.writeStringField("format_version", f.formatVersion)
    g.writeNumberField("rows", f.rows)
    g.writeObjectFieldStart("settings")
    g.writeNumberField("bits", f.settings)
    g.writeBooleanField("page_crc32", f.pageCrc32)
    g.writeBooleanField("batch_mode", f.batchMode)
    g.writeBooleanField("column_directory", f.columnDirectory)
    g.writeNumberField("default_page_size", f.defaultPageSize)
    g.writeEndObject()
    g.writeObjectFieldStart("metadata")
    g.writeNumberField("bytes", f.metadataBytes)
    g.writeNumberField("cmb_area_bytes", f.cmbAreaBytes)
    g.writeNumberField("column_directory_bytes", f.columnDirectoryBytes)
    g.writeNumberField("schema_offset", f.schemaOffset)
    g.writeNumberField("schema_bytes", f.schemaBytes)
    g.writeNumberField("stripe_directory_offset", f.stripeDirectoryOffset)
    g.writeNumberField("cit_offset", f.citOffset)
    g.writeEndObject()
    g.writeArrayFieldStart("schema")
    f.schema.foreach(field(g, _))
    g.writeEndArray()
    g.writeNumberField("num_stripes", f.numStripes)
    g.writeArrayFieldStart("stripes")
    f.stripes.foreach { s =>
      g.writeStartObject()
      g.writeNumberField("index", s.index)
      g.writeNumberField("first_row", s.firstRow)
      g.writeNumberField("rows", s.rows)
      g.writeNumberField("offset", s.dataOffset)
      g.writeNumberField("bytes", s.dataBytes)
      g.writeEndObject()
    }
    g.writeEndArray()
    g.writeArrayFieldStart("columns")
    f.columns.foreach(column(g, _))
    g.writeEndArray()
    g.writeBooleanField("page_headers_read", f.pageHeadersRead)
    g.writeNumberField("bytes_read", f.bytesRead)
    g.writeEndObject()
  }

  private def field(g: JsonGenerator, f: FermionField): Unit = {
    g.writeStartObject()
    g.writeStringField("name", f.name)
    g.writeNumberField("field_id", f.fieldId)
    g.writeStringField("type", f.dataType.name)
    g.writeBooleanField("nullable", f.nullable)
    if (f.children.nonEmpty) {
      g.writeArrayFieldStart("children")
      f.children.foreach(field(g, _))
      g.writeEndArray()
    }
    g.writeEndObject()
  }

  private def column(g: JsonGenerator, c: ColumnInfo): Unit = {
    g.writeStartObject()
    g.writeNumberField("index", c.index)
    g.writeStringField("name", c.name)
    g.writeNumberField("field_id", c.fieldId)
    g.writeStringField("type", c.dataType)
    g.writeBooleanField("all_null", c.allNull)
    g.writeObjectFieldStart("cmb")
    g.writeNumberField("offset", c.cmbOffset)
    g.writeNumberField("bytes", c.cmbBytes)
    g.writeEndObject()
    g.writeNumberField("bytes", c.bytes)
    g.writeNumberField("share", c.share)
    g.writeArrayFieldStart("streams")
    c.streams.foreach(stream(g, _))
    g.writeEndArray()
    g.writeEndObject()
  }

  private def counts(g: JsonGenerator, name: String, m: Map[String, Int]): Unit = {
    g.writeObjectFieldStart(name)
    m.toSeq.sortBy(_._1).foreach { case (k, v) => g.writeNumberField(k, v) }
    g.writeEndObject()
  }

  private def optInt(g: JsonGenerator, name: String, v: Option[Long]): Unit = v match {
    case Some(n) => g.writeNumberField(name, n)
    case None => g.writeNullField(name)
  }

  private def stream(g: JsonGenerator, s: StreamInfo): Unit = {
    g.writeStartObject()
    g.writeNumberField("index", s.index)
    g.writeStringField("node", s.node)
    g.writeNumberField("field_id", s.fieldId)
    g.writeStringField("stream_type", s.streamType)
    g.writeStringField("desc_type", s.descType)
    g.writeNumberField("bytes", s.bytes)
    g.writeNumberField("pages", s.pages)
    counts(g, "encodings", s.encodings)
    counts(g, "codecs", s.codecs)
    optInt(g, "null_count", s.nullCount)
    stats(g, s.stats)
    g.writeNumberField("bloom_filter_bytes", s.bloomFilterBytes)
    g.writeArrayFieldStart("chunks")
    s.chunks.foreach(chunk(g, _))
    g.writeEndArray()
    g.writeEndObject()
  }

  private def chunk(g: JsonGenerator, c: ChunkInfo): Unit = {
    g.writeStartObject()
    g.writeNumberField("stripe", c.stripe)
    g.writeNumberField("offset", c.offset)
    g.writeNumberField("bytes", c.bytes)
    g.writeBooleanField("all_null", c.allNull)
    optInt(g, "pages", c.numPages.map(_.toLong))
    optInt(g, "null_count", c.nullCount.map(_.toLong))
    stats(g, c.stats)
    g.writeNumberField("bloom_filter_bytes", c.bloomFilterBytes)
    g.writeArrayFieldStart("page_list")
    c.pages.foreach { p =>
      g.writeStartObject()
      g.writeNumberField("offset", p.offset)
      g.writeNumberField("bytes", p.bytes)
      p.header match {
        case Some(h) =>
          g.writeNumberField("values", h.values)
          g.writeStringField("encoding", h.encoding)
          g.writeStringField("codec", h.codec)
          g.writeNumberField("stored_bytes", h.storedBytes)
          g.writeNumberField("uncompressed_bytes", h.uncompressedBytes)
        case None =>
      }
      optInt(g, "rows", p.rows.map(_.toLong))
      optInt(g, "null_count", p.nullCount.map(_.toLong))
      stats(g, p.stats)
      g.writeEndObject()
    }
    g.writeEndArray()
    g.writeEndObject()
  }

  private def stats(g: JsonGenerator, s: Option[StatsInfo]): Unit = s match {
    case None => g.writeNullField("stats")
    case Some(st) =>
      g.writeObjectFieldStart("stats")
      g.writeArrayFieldStart("flags")
      st.flagNames.foreach(g.writeString)
      g.writeEndArray()
      value(g, "min", st.min)
      value(g, "max", st.max)
      g.writeEndObject()
  }

  private def value(g: JsonGenerator, name: String, v: Option[StatValue]): Unit = v match {
    case None => g.writeNullField(name)
    case Some(StatValue.Integral(n)) => g.writeNumberField(name, n)
    case Some(StatValue.Floating(d)) if d.isNaN || d.isInfinite => g.writeStringField(name, d.toString)
    case Some(StatValue.Floating(d)) => g.writeNumberField(name, d)
    case Some(StatValue.Bool(b)) => g.writeBooleanField(name, b)
    case Some(StatValue.Text(t)) => g.writeStringField(name, t)
  }

  private def dataset(g: JsonGenerator, d: DatasetInspection): Unit = {
    g.writeStartObject()
    g.writeNumberField("inspect_version", SchemaVersion)
    g.writeStringField("kind", "dataset")
    g.writeStringField("path", d.root)
    g.writeNumberField("version", d.version)
    g.writeNumberField("latest_version", d.latestVersion)
    g.writeStringField("timestamp", java.time.Instant.ofEpochMilli(d.timestampMillis).toString)
    g.writeStringField("operation", d.operation)
    g.writeNumberField("rows", d.rows)
    g.writeNumberField("data_bytes", d.dataBytes)
    g.writeNumberField("reader_features", d.readerFeatures)
    g.writeNumberField("writer_features", d.writerFeatures)
    g.writeArrayFieldStart("schema")
    d.schema.foreach(field(g, _))
    g.writeEndArray()
    g.writeArrayFieldStart("versions")
    d.versions.foreach { v =>
      g.writeStartObject()
      g.writeNumberField("version", v.version)
      g.writeStringField("timestamp", java.time.Instant.ofEpochMilli(v.timestampMillis).toString)
      g.writeStringField("operation", v.operation)
      v.detail match { case Some(t) => g.writeStringField("detail", t); case None => g.writeNullField("detail") }
      g.writeNumberField("fragments", v.fragments)
      g.writeNumberField("rows", v.rows)
      g.writeArrayFieldStart("tags")
      v.tags.foreach(g.writeString)
      g.writeEndArray()
      g.writeEndObject()
    }
    g.writeEndArray()
    g.writeArrayFieldStart("fragments")
    d.fragments.foreach { f =>
      g.writeStartObject()
      g.writeNumberField("id", f.id)
      g.writeNumberField("physical_rows", f.physicalRows)
      g.writeNumberField("rows", f.rows)
      optInt(g, "row_id_start", f.rowIdStart)
      f.rowIdList.foreach(g.writeStringField("row_id_list", _))
      g.writeArrayFieldStart("files")
      f.files.foreach { file =>
        g.writeStartObject()
        g.writeStringField("path", file.path)
        g.writeArrayFieldStart("field_ids")
        file.fieldIds.foreach(i => g.writeNumber(i))
        g.writeEndArray()
        optInt(g, "bytes", file.bytes)
        g.writeEndObject()
      }
      g.writeEndArray()
      f.deletion match {
        case None => g.writeNullField("deletion")
        case Some(del) =>
          g.writeObjectFieldStart("deletion")
          g.writeStringField("path", del.path)
          g.writeStringField("kind", del.kind)
          g.writeNumberField("deleted_rows", del.deletedRows)
          g.writeEndObject()
      }
      g.writeEndObject()
    }
    g.writeEndArray()
    g.writeObjectFieldStart("tags")
    d.tags.toSeq.sortBy(_._1).foreach { case (k, v) => g.writeNumberField(k, v) }
    g.writeEndObject()
    g.writeObjectFieldStart("config")
    d.config.toSeq.sortBy(_._1).foreach { case (k, v) => g.writeStringField(k, v) }
    g.writeEndObject()
    g.writeNumberField("bytes_read", d.bytesRead)
    g.writeEndObject()
  }
}
