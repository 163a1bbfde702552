package io.fermion.core.inspect

import io.fermion.core.schema.FermionField

/** Renders an [[Inspection]] for people: a summary, the schema with field ids, the stripes, and per
  * column its CMB, share of the file and streams (DescType, pages, encodings and codecs, nulls,
  * min/max, bloom filters). `chunks` adds a line per stream and stripe, `pages` one per page. */
object InspectText {
  private val MaxStripeLines = 40

  def render(i: Inspection, chunks: Boolean = false, pages: Boolean = false): String = i match {
    case f: FileInspection => file(f, chunks || pages, pages)
    case d: DatasetInspection => dataset(d)
  }

  /** 1536 -> "1.5 KiB". */
  def bytes(n: Long): String = {
    val units = Seq("B", "KiB", "MiB", "GiB", "TiB")
    var v = n.toDouble
    var u = 0
    while (math.abs(v) >= 1024 && u < units.size - 1) { v /= 1024; u += 1 }
    if (u == 0) s"$n B" else f"$v%.1f ${units(u)}"
  }

  private def count(n: Long): String = f"$n%,d"

  private def typeLine(f: FermionField): String =
    s"${f.dataType.name}${if (f.nullable) "" else " not null"}"

  private def schemaLines(fields: Seq[FermionField], sb: StringBuilder): Unit = {
    def node(f: FermionField, depth: Int): Unit = {
      sb ++= s"${"  " * (depth + 1)}${f.name}: ${typeLine(f)}  (field id ${f.fieldId})\n"
      f.children.foreach(node(_, depth + 1))
    }
    fields.foreach(node(_, 0))
  }

  private def statsText(s: Option[StatsInfo]): String = s match {
    case Some(st) if st.hasMinMax =>
      val prefix = if (st.flagNames.contains("prefix_bounds")) " (8-byte prefixes)" else ""
      val nan = if (st.flagNames.contains("has_nan")) ", NaN seen" else ""
      s"  min ${st.min.get.text}  max ${st.max.get.text}$prefix$nan"
    case Some(st) if st.flagNames.contains("has_nan") => "  only NaN"
    case Some(_) => "  no min/max"
    case None => ""
  }

  private def countsText(m: Map[String, Int]): String =
    m.toSeq.sortBy { case (k, v) => (-v, k) }.map { case (k, v) => s"$k $v" }.mkString(", ")

  private def file(f: FileInspection, chunks: Boolean, pages: Boolean): String = {
    val sb = new StringBuilder
    sb ++= s"Fermion file ${f.path}\n"
    sb ++= s"  format version ${f.formatVersion}, ${bytes(f.fileBytes)} (${count(f.fileBytes)} bytes), ${count(f.rows)} rows, " +
      s"${count(f.numStripes)} stripes, ${count(f.schema.size)} columns\n"
    sb ++= s"  settings: page CRC32 ${if (f.pageCrc32) "on" else "off"}, batch mode ${if (f.batchMode) "on" else "off"}, " +
      s"column directory ${if (f.columnDirectory) "on" else "off"}, " +
      s"default page size ${bytes(f.defaultPageSize)}\n"
    sb ++= s"  metadata: ${bytes(f.metadataBytes)} (column directory ${bytes(f.columnDirectoryBytes)}, " +
      s"CMBs ${bytes(f.cmbAreaBytes)}, schema ${bytes(f.schemaBytes)}, " +
      s"stripe directory ${bytes(f.citOffset - f.stripeDirectoryOffset)}, CIT ${bytes(f.fileBytes - 64 - f.citOffset)}, footer 64 B)\n"
    sb ++= "\nSchema\n"
    schemaLines(f.schema, sb)
    sb ++= s"\nStripes${if (f.stripes.size < f.numStripes) s" (${f.stripes.size} of ${f.numStripes})" else ""}\n"
    sb ++= f"  ${"stripe"}%8s ${"first row"}%14s ${"rows"}%10s ${"offset"}%14s ${"bytes"}%12s\n"
    val shown = if (chunks || f.stripes.size <= MaxStripeLines) f.stripes else f.stripes.take(MaxStripeLines)
    shown.foreach { s =>
      sb ++= f"  ${s.index}%8d ${s.firstRow}%14d ${s.rows}%10d ${s.dataOffset}%14d ${bytes(s.dataBytes)}%12s\n"
    }
    if (shown.size < f.stripes.size) sb ++= s"  ... ${f.stripes.size - shown.size} more (--stripe N to pick)\n"
    sb ++= s"\nColumns${if (f.columns.size < f.schema.size) s" (${f.columns.size} of ${f.schema.size})" else ""}\n"
    f.columns.foreach { c =>
      sb ++= f"  ${c.name} (field id ${c.fieldId}, ${c.dataType}): ${bytes(c.bytes)}, ${c.share * 100}%.1f%% of the file"
      if (c.allNull) sb ++= ", null in every row (no CMB)\n"
      else sb ++= s", CMB ${bytes(c.cmbBytes)} at ${c.cmbOffset}\n"
      c.streams.foreach { s =>
        val nulls = s.nullCount.map(n => s"  nulls ${count(n)}").getOrElse("")
        val enc =
          if (s.encodings.nonEmpty) s"  encodings ${countsText(s.encodings)}  codecs ${countsText(s.codecs)}" else ""
        val bloom = if (s.bloomFilterBytes > 0) s"  bloom filters ${bytes(s.bloomFilterBytes)}" else ""
        val pagesText = if (f.pageHeadersRead || s.descType == "FULL") s"${count(s.pages)} pages" else "pages not read"
        sb ++= f"    ${s.index}%3d ${s.streamType}%-9s ${s.descType}%-11s ${s.node}  ${bytes(s.bytes)}, $pagesText$enc$nulls${statsText(s.stats)}$bloom\n"
        if (chunks) s.chunks.foreach { ch =>
          val what =
            if (ch.allNull) "all null"
            else s"${bytes(ch.bytes)} at ${ch.offset}, ${ch.numPages.map(n => s"$n pages").getOrElse("pages not read")}"
          val nulls = ch.nullCount.filter(_ => s.descType == "FULL").map(n => s", nulls ${count(n)}").getOrElse("")
          val bloom = if (ch.bloomFilterBytes > 0) s", bloom filter ${bytes(ch.bloomFilterBytes)}" else ""
          sb ++= s"        stripe ${ch.stripe}: $what$nulls${statsText(ch.stats)}$bloom\n"
          if (pages) ch.pages.zipWithIndex.foreach { case (p, i) =>
            val h = p.header.map(h =>
              s", ${h.values} values, ${h.encoding}, ${h.codec} (${count(h.storedBytes)} of ${count(h.uncompressedBytes)} bytes)"
            ).getOrElse("")
            val rows = p.rows.map(r => s", ${count(r)} rows").getOrElse("")
            val nulls = p.nullCount.filter(_ => p.rows.nonEmpty).map(n => s", nulls ${count(n)}").getOrElse("")
            sb ++= s"          page $i at ${p
                .offset}: ${count(p.bytes)} bytes$h$rows$nulls${if (p.rows.nonEmpty) statsText(p.stats) else ""}\n"
          }
        }
      }
    }
    sb ++= s"\nRead ${count(f.bytesRead)} bytes of ${count(f.fileBytes)} (footer, schema, stripe directory, CIT, " +
      s"CMBs${if (f.pageHeadersRead) ", page headers" else ""}; no page payload was decoded)\n"
    sb.toString
  }

  private def time(ms: Long): String = java.time.Instant.ofEpochMilli(ms).toString

  private def dataset(d: DatasetInspection): String = {
    val sb = new StringBuilder
    sb ++= s"Fermion dataset ${d.root}\n"
    sb ++= s"  version ${d.version}${if (d.version != d.latestVersion) s" (latest ${d.latestVersion})" else " (latest)"}, " +
      s"committed ${time(d.timestampMillis)} by ${d.operation}: ${count(d.rows)} rows in ${count(d.fragments.size)} fragments, " +
      s"${bytes(d.dataBytes)} of data files\n"
    sb ++= s"  features: reader ${d.readerFeatures}, writer ${d.writerFeatures}\n"
    sb ++= "\nSchema\n"
    schemaLines(d.schema, sb)
    sb ++= "\nVersions\n"
    sb ++= f"  ${"version"}%8s  ${"timestamp"}%-24s ${"operation"}%-12s ${"fragments"}%9s ${"rows"}%14s  tags / detail\n"
    d.versions.foreach { v =>
      val extra = (if (v.tags.nonEmpty) Seq(s"tags ${v.tags.mkString(", ")}") else Nil) ++ v.detail.toSeq
      sb ++= f"  ${v.version}%8d  ${time(v.timestampMillis)}%-24s ${v.operation}%-12s ${v.fragments}%9d ${v.rows}%14d  ${extra.mkString("; ")}\n"
    }
    sb ++= s"\nFragments of version ${d.version}\n"
    d.fragments.foreach { f =>
      val deleted = f.deletion.map(x => s", ${count(x.deletedRows)} deleted (${x.kind} ${x.path})").getOrElse("")
      val ids = f.rowIdStart.map(s => s", row ids from $s").orElse(f.rowIdList.map(l => s", row ids listed in $l"))
        .getOrElse("")
      sb ++= s"  fragment ${f.id}: ${count(f.rows)} rows of ${count(f.physicalRows)}$deleted$ids\n"
      f.files.foreach { file =>
        sb ++= s"    ${file.path}  ${file.bytes.map(bytes).getOrElse("missing")}  field ids ${file.fieldIds.mkString(",")}\n"
      }
    }
    sb ++= "\nTags\n"
    if (d.tags.isEmpty) sb ++= "  (none)\n"
    d.tags.toSeq.sortBy(_._1).foreach { case (k, v) => sb ++= s"  $k -> version $v\n" }
    sb ++= "\nConfig\n"
    if (d.config.isEmpty) sb ++= "  (none)\n"
    d.config.toSeq.sortBy(_._1).foreach { case (k, v) => sb ++= s"  $k = $v\n" }
    sb ++= s"\nRead ${count(d.bytesRead)} bytes (manifests, transaction files, tags; no data file was opened)\n"
    sb.toString
  }
}
