package io.fermion.core.dataset

import java.nio.ByteBuffer
import java.nio.charset.StandardCharsets

import io.fermion.core.expr.FilterValue
import io.fermion.core.schema.{FermionSchema, FermionType, SchemaCodec}

/** The manifest's bytes (docs/table-format.md, "Manifest file"): one sequential little-endian
  * record, read in one go and parsed in one pass, so opening a dataset of many fragments is one
  * read. Fragments are also the payload of transaction files (same encoding). */
private[core] object ManifestCodec {
  val Magic: Array[Byte] = "FRMM".getBytes(StandardCharsets.US_ASCII)
  val Major = 1

  /** The newest minor version this code reads and writes. Minor 1 adds a list of sections after the
    * fragments (the partitioning, 6.7; column sizes, 6.8); manifests without a section are still
    * written as minor 0, byte for byte as before. */
  val Minor = 1

  /** Section kinds (6.7). */
  val PartitioningSection = 1
  val ColumnSizesSection = 2

  /** The sections of `m`: its partitioning when it is partitioned, its files' column sizes when
    * some file records them. */
  private def sections(m: Manifest): Seq[(Int, Array[Byte])] =
    (if (m.partitionSpec.isEmpty) Nil
     else Seq(PartitioningSection -> partitioningBody(m.partitionSpec, m.fragments))) ++
      (if (!m.fragments.exists(_.files.exists(_.fieldBytes.nonEmpty))) Nil
       else Seq(ColumnSizesSection -> columnSizesBody(m.fragments)))

  def encode(m: Manifest): Array[Byte] = {
    val extra = sections(m)
    val w = new MetadataWriter(Magic).u16(Major).u16(if (extra.isEmpty) 0 else 1)
    w.i64(m.version).i64(m.timestampMillis).i64(m.readerFeatures).i64(m.writerFeatures)
    w.i64(m.maxFragmentId).i64(m.nextRowId)
    w.string(m.transactionFile).string(m.operation).string(m.tag)
    w.u32(m.config.size)
    m.config.toSeq.sortBy(_._1).foreach { case (k, v) => w.string(k).string(v) }
    w.bytes(SchemaCodec.encode(m.schema))
    writeFragments(w, m.fragments)
    if (extra.nonEmpty) writeSections(w, extra)
    w.finish()
  }

  /** `u32 count`, then per section `u16 kind` and its body as `bytes` (u32 length + body). */
  def writeSections(w: MetadataWriter, sections: Seq[(Int, Array[Byte])]): Unit = {
    w.u32(sections.size)
    sections.foreach { case (kind, body) => w.u16(kind).bytes(body) }
  }

  /** Reads a section list, handing each section of a kind `known` to it (which must consume
    * exactly the body) and skipping the others. */
  def readSections(r: MetadataReader)(known: PartialFunction[Int, MetadataReader => Unit]): Unit = {
    (0 until r.count("sections", 6)).foreach { _ =>
      val kind = r.u16("section kind")
      val length = r.u32("section length")
      val start = r.position
      r.skip(length, s"section $kind") // checks the body is inside the file
      if (known.isDefinedAt(kind)) {
        val end = r.position
        r.seek(start)
        known(kind)(r)
        r.check(r.position == end, s"section $kind holds ${end - r.position} bytes more than its fields")
      }
    }
  }

  /** The partitioning section: the spec, then for each fragment its partition values. */
  def partitioningBody(spec: IndexedSeq[Int], fragments: Seq[Fragment]): Array[Byte] = {
    val b = new MetadataWriter(Array.emptyByteArray)
    b.u32(spec.size); spec.foreach(b.u32)
    b.u32(fragments.size)
    fragments.foreach { f => b.u32(f.partition.size); f.partition.foreach(writeValue(b, _)) }
    b.written
  }

  /** The column sizes section: per fragment, per data file, the sizes of its fields (none when
    * the file records none). */
  def columnSizesBody(fragments: Seq[Fragment]): Array[Byte] = {
    val b = new MetadataWriter(Array.emptyByteArray)
    b.u32(fragments.size)
    fragments.foreach { f =>
      b.u32(f.files.size)
      f.files.foreach { d => b.u32(d.fieldBytes.size); d.fieldBytes.foreach(b.i64) }
    }
    b.written
  }

  /** `fragments` with the sizes a column sizes section gives their files. */
  def readColumnSizes(r: MetadataReader, fragments: IndexedSeq[Fragment]): IndexedSeq[Fragment] = {
    val n = r.count("sized fragments", 4)
    r.check(n == fragments.size, s"column sizes are given for $n fragments, not for the ${fragments.size} listed")
    fragments.map { f =>
      val files = r.count("sized files", 4)
      r.check(files == f.files.size, s"fragment ${f.id} has column sizes for $files files, not for its ${f.files.size}")
      f.copy(files = f.files.map { d =>
        val k = r.count("column sizes", 8)
        r.check(
          k == 0 || k == d.fieldIds.size,
          s"data file ${d.path} has $k column sizes for its ${d.fieldIds.size} field ids"
        )
        val sizes = (0 until k).map(_ => r.i64("column size"))
        r.check(sizes.forall(_ >= 0), s"data file ${d.path} has a negative column size")
        d.copy(fieldBytes = sizes)
      })
    }
  }

  /** Reads a partitioning section: (spec, values of each of `fragments` fragments). */
  def readPartitioning(
      r: MetadataReader,
      fragments: Int
  ): (IndexedSeq[Int], IndexedSeq[IndexedSeq[Option[FilterValue]]]) = {
    val spec = (0 until r.count("partition fields", 4)).map(_ => r.u32("partition field id"))
    r.check(spec.distinct.size == spec.size, s"partition field ids repeat (${spec.mkString(", ")})")
    val n = r.count("partitioned fragments", 4)
    r.check(n == fragments, s"partition values are given for $n fragments, not for the $fragments listed")
    val values = (0 until n).map(_ => (0 until r.count("partition values", 1)).map(_ => readValue(r)))
    (spec, values)
  }

  /** A partition value: `u8` kind (0 null, 1 integral i64, 2 floating f64, 3 bytes) and its bytes. */
  def writeValue(w: MetadataWriter, v: Option[FilterValue]): Unit = v match {
    case None => w.u8(0)
    case Some(FilterValue.Integral(x)) => w.u8(1).i64(x)
    case Some(FilterValue.Floating(x)) => w.u8(2).f64(x)
    case Some(FilterValue.Bytes(b)) => w.u8(3).bytes(b)
  }

  def readValue(r: MetadataReader): Option[FilterValue] = r.u8("partition value kind") match {
    case 0 => None
    case 1 => Some(FilterValue.Integral(r.i64("partition value")))
    case 2 => Some(FilterValue.Floating(r.f64("partition value")))
    case 3 => Some(FilterValue.Bytes(r.bytes("partition value")))
    case k => r.check(false, s"unknown partition value kind $k"); None
  }

  /** Checks a manifest's partitioning against its schema: top-level fields of supported types,
    * one value per field and fragment, of the field's kind. */
  private def checkPartitioning(
      r: MetadataReader,
      schema: FermionSchema,
      spec: IndexedSeq[Int],
      fragments: Seq[Fragment]
  ): Unit = {
    val fields = spec.map { id =>
      val f = schema.fields.find(_.fieldId == id)
      r.check(f.nonEmpty, s"partition field id $id is not a top-level field of the schema")
      r.check(
        Partitioning.supportedType(f.get.dataType),
        s"partition column `${f.get.name}` has type ${f.get.dataType}"
      )
      f.get
    }
    fragments.foreach { frag =>
      r.check(
        frag.partition.size == spec.size,
        s"fragment ${frag.id} has ${frag.partition.size} partition values, not ${spec.size}"
      )
      frag.partition.zip(fields).foreach { case (v, f) =>
        val ok = (v, f.dataType) match {
          case (None, _) => true
          case (Some(FilterValue.Bytes(_)), FermionType.Utf8) => true
          case (Some(FilterValue.Integral(_)), t) => t != FermionType.Utf8
          case _ => false
        }
        r.check(ok, s"fragment ${frag.id}: partition value $v does not fit column `${f.name}` of type ${f.dataType}")
      }
    }
  }

  def writeFragments(w: MetadataWriter, fragments: Seq[Fragment]): Unit = {
    w.u32(fragments.size)
    fragments.foreach { f =>
      w.i64(f.id).i64(f.physicalRows)
      w.u32(f.files.size)
      f.files.foreach { d => w.string(d.path).u32(d.fieldIds.size); d.fieldIds.foreach(w.u32) }
      f.deletion match {
        case None => w.u8(0)
        case Some(d) => w.u8(d.kind).string(d.path).i64(d.deletedRows)
      }
      f.rowIds match {
        case None => w.u8(0)
        case Some(RowIds.Start(first)) => w.u8(1).i64(first)
        case Some(RowIds.Listed(sequence)) => w.u8(2); RowIdSequence.write(w, sequence)
        case Some(RowIds.External(path, count)) => w.u8(3).string(path).i64(count)
      }
    }
  }

  def decode(bytes: Array[Byte], dataset: String, file: String): Manifest = {
    val r = new MetadataReader(bytes, Magic, dataset, file)
    val major = r.u16("major version")
    val minor = r.u16("minor version")
    r.check(major == Major, s"manifest format major version $major is not supported (this reader reads $Major)")
    val version = r.i64("version")
    val ts = r.i64("timestamp")
    val readerFeatures = r.i64("reader features")
    val writerFeatures = r.i64("writer features")
    r.check(
      (readerFeatures & ~Manifest.KnownReaderFeatures) == 0,
      f"the dataset needs reader features 0x${readerFeatures & ~Manifest.KnownReaderFeatures}%x this version of Fermion does not know; upgrade it"
    )
    val maxFragmentId = r.i64("max fragment id")
    val nextRowId = r.i64("next row id")
    val txn = r.string("transaction file")
    val op = r.string("operation")
    val tag = r.string("tag")
    val config =
      (0 until r.count("config entries", 8)).map(_ => r.string("config key") -> r.string("config value")).toMap
    val schema =
      try SchemaCodec.decode(ByteBuffer.wrap(r.bytes("schema")))
      catch {
        case e: RuntimeException =>
          throw new InvalidFermionDatasetException(dataset, file, s"schema does not decode: ${e.getMessage}", e)
      }
    val listed = readFragments(r)
    var spec = IndexedSeq.empty[Int]
    var fragments = listed
    if (minor >= 1) readSections(r) {
      case PartitioningSection =>
        rd =>
          val (s, values) = readPartitioning(rd, listed.size)
          spec = s
          fragments = fragments.zip(values).map { case (f, v) => f.copy(partition = v) }
      case ColumnSizesSection => rd => fragments = readColumnSizes(rd, fragments)
    }
    if (minor <= Minor) r.done() else r.skipRest() // a newer minor version may append fields this reader skips
    r.check(
      spec.nonEmpty == ((readerFeatures & Manifest.FeaturePartitions) != 0),
      s"reader feature 0x${Manifest.FeaturePartitions.toHexString} and the partitioning section must come together"
    )
    checkPartitioning(r, schema, spec, fragments)
    Manifest(
      version,
      ts,
      readerFeatures,
      writerFeatures,
      schema,
      fragments,
      maxFragmentId,
      nextRowId,
      txn,
      op,
      tag,
      config,
      spec
    )
  }

  def readFragments(r: MetadataReader): IndexedSeq[Fragment] =
    (0 until r.count("fragments", 22)).map { _ =>
      val id = r.i64("fragment id")
      val rows = r.i64("fragment rows")
      r.check(id >= 0 && rows >= 0, s"fragment $id has $rows rows")
      val files = (0 until r.count("data files", 8)).map { _ =>
        val path = r.string("data file path")
        DataFile(path, (0 until r.count("field ids", 4)).map(_ => r.u32("field id")))
      }
      val deletion = r.u8("deletion kind") match {
        case 0 => None
        case k @ (DeletionFile.ArrowArray | DeletionFile.RoaringBitmap) =>
          val d = DeletionFile(r.string("deletion file path"), k, r.i64("deleted rows"))
          r.check(d.deletedRows >= 0 && d.deletedRows <= rows, s"fragment $id deletes ${d.deletedRows} of $rows rows")
          Some(d)
        case k => r.check(false, s"unknown deletion file kind $k"); None
      }
      val rowIds = r.u8("row id kind") match {
        case 0 => None
        case 1 =>
          val first = r.i64("first row id")
          r.check(first >= 0, s"fragment $id has first row id $first")
          Some(RowIds.Start(first))
        case 2 => Some(RowIds.Listed(RowIdSequence.read(r, rows, s"row ids of fragment $id")))
        case 3 =>
          val e = RowIds.External(r.string("row id file path"), r.i64("row id count"))
          r.check(e.count == rows, s"fragment $id has ${e.count} row ids in ${e.path} for $rows rows")
          Some(e)
        case k => r.check(false, s"unknown row id kind $k"); None
      }
      Fragment(id, rows, files, deletion, rowIds)
    }
}
