package io.fermion.core.dataset

import java.nio.ByteBuffer
import java.nio.charset.StandardCharsets

import io.fermion.core.schema.SchemaCodec

/** The manifest's bytes (docs/table-format.md, "Manifest file"): one sequential little-endian
  * record, read in one go and parsed in one pass, so opening a dataset of many fragments is one
  * read. Fragments are also the payload of transaction files (same encoding). */
object ManifestCodec {
  val Magic: Array[Byte] = "FRMM".getBytes(StandardCharsets.US_ASCII)
  val Major = 1
  val Minor = 0

  def encode(m: Manifest): Array[Byte] = {
    val w = new MetadataWriter(Magic).u16(Major).u16(Minor)
    w.i64(m.version).i64(m.timestampMillis).i64(m.readerFeatures).i64(m.writerFeatures)
    w.i64(m.maxFragmentId).i64(m.nextRowId)
    w.string(m.transactionFile).string(m.operation).string(m.tag)
    w.u32(m.config.size)
    m.config.toSeq.sortBy(_._1).foreach { case (k, v) => w.string(k).string(v) }
    w.bytes(SchemaCodec.encode(m.schema))
    writeFragments(w, m.fragments)
    w.finish()
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
      f.rowIdStart match {
        case None => w.u8(0)
        case Some(start) => w.u8(1).i64(start)
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
    val fragments = readFragments(r)
    if (minor <= Minor) r.done() // a newer minor version may append fields this reader skips
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
      config
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
        case 1 => Some(r.i64("first row id"))
        case k => r.check(false, s"unknown row id kind $k"); None
      }
      Fragment(id, rows, files, deletion, rowIds)
    }
}
