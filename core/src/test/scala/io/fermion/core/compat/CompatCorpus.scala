package io.fermion.core.compat

import java.io.File
import java.nio.charset.StandardCharsets
import java.nio.file.{Files, Path => JPath, Paths}

import scala.collection.mutable
import scala.jdk.CollectionConverters._
import scala.util.Random

import io.fermion.core.{ArrowTestData, NestedData, TestFiles}
import io.fermion.core.codec.PageCodec
import io.fermion.core.dataset._
import io.fermion.core.encoding.EncodingSet
import io.fermion.core.layout.FormatVersion
import io.fermion.core.read.{FermionFileReader, ReaderOptions}
import io.fermion.core.schema.{ArrowSchemaMapping, FermionField, FermionSchema}
import io.fermion.core.write.{FermionFileWriter, WriterOptions}
import org.apache.arrow.memory.BufferAllocator
import org.apache.arrow.vector.{FieldVector, VectorSchemaRoot}
import org.apache.arrow.vector.types.pojo.{ArrowType, Field, FieldType, Schema}
import org.apache.hadoop.fs.Path
import org.roaringbitmap.RoaringBitmap

/** Values rendered as canonical JSON text, the independent form of a corpus file's contents:
  * integers in decimal, floats by their bit pattern, strings escaped, binary in hex, decimals as
  * plain text, lists as arrays, structs as objects in field order, maps as arrays of [key, value].
  * The expected files are rendered from the vectors given to the writer, when the corpus is made;
  * the test renders what the reader returns the same way. */
object Render {
  def value(o: Any): String = o match {
    case null => "null"
    case b: java.lang.Boolean => b.toString
    case n @ (_: java.lang.Byte | _: java.lang.Short | _: java.lang.Integer | _: java.lang.Long) => n.toString
    case f: java.lang.Float => f"\"f32:${java.lang.Float.floatToRawIntBits(f)}%08x\""
    case d: java.lang.Double => f"\"f64:${java.lang.Double.doubleToRawLongBits(d)}%016x\""
    case t: org.apache.arrow.vector.util.Text => string(t.toString)
    case s: String => string(s)
    case b: Array[Byte] => "\"hex:" + b.map(x => f"${x & 0xff}%02x").mkString + "\""
    case d: java.math.BigDecimal => "\"dec:" + d.toPlainString + "\""
    case t: java.time.LocalDateTime => "\"ldt:" + t + "\""
    case m: java.util.Map[_, _] =>
      m.asScala.map { case (k, v) => string(k.toString) + ":" + value(v) }.mkString("{", ",", "}")
    case l: java.util.List[_] => l.asScala.map(value).mkString("[", ",", "]")
    case other => throw new IllegalArgumentException(s"cannot render ${other.getClass}")
  }

  def string(s: String): String = {
    val b = new StringBuilder("\"")
    s.foreach {
      case '"' => b ++= "\\\""
      case '\\' => b ++= "\\\\"
      case c if c < 0x20 || c > 0x7e => b ++= f"\\u${c.toInt}%04x"
      case c => b += c
    }
    b += '"'
    b.toString
  }

  /** Row `i` of `vectors` as one line. */
  def row(vectors: Seq[FieldVector], i: Int): String = vectors.map(v => value(v.getObject(i))).mkString("[", ",", "]")

  /** Every row of a file, read through the current reader. */
  def fileRows(
      path: JPath,
      options: ReaderOptions = ReaderOptions(),
      columns: Option[IndexedSeq[Int]] = None
  ): IndexedSeq[String] = {
    val r = FermionFileReader.open(new Path(path.toUri), TestFiles.conf, options)
    try {
      val cols = columns.getOrElse(r.schema.fields.indices)
      (0 until r.numStripes).flatMap { s =>
        val vs = r.readStripe(s, cols, TestFiles.allocator)
        try (0 until r.stripes.rowCount(s)).map(i => row(vs, i))
        finally vs.foreach(_.close())
      }
    } finally r.close()
  }

  /** The live rows of a dataset version, each as `[id, columns in schema order]`, sorted by id:
    * files of a fragment read side by side and matched by field id, deleted rows dropped. */
  def datasetRows(ds: FermionDataset, m: Manifest, allocator: BufferAllocator): IndexedSeq[String] = {
    val rows = mutable.ArrayBuffer.empty[(Long, String)]
    m.fragments.foreach { f =>
      val readers = f.files.map(d => FermionFileReader.open(ds.resolvePath(d.path), TestFiles.conf, ReaderOptions()))
      try {
        val deleted = f.deletion.map(ds.readDeletionFile).getOrElse(new RoaringBitmap())
        val where = m.schema.fields.map { field =>
          readers.indices.iterator.flatMap(k =>
            readers(k).schema.fields.indexWhere(_.fieldId == field.fieldId) match {
              case -1 => None; case c => Some((k, c))
            }
          ).nextOption()
        }
        var base = 0
        (0 until readers.head.numStripes).foreach { s =>
          val n = readers.head.stripes.rowCount(s)
          val vectors = readers.indices.map { k =>
            val cols = where.flatten.filter(_._1 == k).map(_._2)
            cols.zip(readers(k).readStripe(s, cols, allocator)).toMap
          }
          try (0 until n).foreach { i =>
              if (!deleted.contains(base + i)) {
                val cells = where.map {
                  case Some((k, c)) => value(vectors(k)(c).getObject(i))
                  case None => "null"
                }
                rows += ((cells.head.toLong, cells.mkString("[", ",", "]")))
              }
            }
          finally vectors.foreach(_.values.foreach(_.close()))
          base += n
        }
      } finally readers.foreach(_.close())
    }
    rows.sortBy(_._1).map(_._2).toIndexedSeq
  }
}

/** Generates the compatibility corpus of the current format version (`dev/compat-corpus`): files
  * of many shapes and a dataset of several versions, each with its expected contents rendered
  * from the writer's input ([[Render]]), under `<dir>/<major>.<minor>/`. A released version's
  * corpus is never regenerated (the program refuses an existing directory): every later build
  * must read it as it was written. */
object CompatCorpus {
  def main(args: Array[String]): Unit = {
    val root = Paths.get(args.headOption.getOrElse("core/src/test/resources/compat"))
    val dir = root.resolve(s"${FormatVersion.Major}.${FormatVersion.Minor}")
    if (Files.exists(dir)) {
      System.err.println(s"$dir exists: the corpus of a released format version is never rewritten")
      sys.exit(1)
    }
    Files.createDirectories(dir)
    files(dir.resolve("files"))
    dataset(dir.resolve("dataset"))
    println(s"wrote $dir")
  }

  private def writeLines(p: JPath, lines: Seq[String]): Unit =
    Files.write(p, (lines.mkString("\n") + "\n").getBytes(StandardCharsets.UTF_8))

  /** Writes `root` as `<name>.fermion` and its rows as `<name>.jsonl`. */
  private def file(dir: JPath, name: String, root: VectorSchemaRoot, options: WriterOptions): Unit = {
    Files.createDirectories(dir)
    try {
      TestFiles.write(dir.resolve(s"$name.fermion"), root, options)
      val vectors = (0 until root.getFieldVectors.size).map(root.getVector)
      writeLines(dir.resolve(s"$name.jsonl"), (0 until root.getRowCount).map(i => Render.row(vectors, i)))
    } finally root.close()
  }

  def files(dir: JPath): Unit = {
    val flat = ArrowTestData.allTypes
    file(dir, "flat-zstd", ArrowTestData.randomRoot(flat, 700, 101), WriterOptions(stripeMaxRows = 300, pageRows = 128))
    file(
      dir,
      "flat-encodings",
      ArrowTestData.randomRoot(flat, 1500, 102, nullRate = 0.4, pool = 5),
      WriterOptions(stripeMaxRows = 600, pageRows = 128, compression = PageCodec.None)
    )
    file(
      dir,
      "plain-no-page-crc",
      ArrowTestData.randomRoot(flat, 300, 103),
      WriterOptions(encodings = EncodingSet.PlainOnly, pageChecksums = false, compression = PageCodec.None)
    )
    file(
      dir,
      "bloom",
      ArrowTestData.randomRoot(flat, 600, 104),
      WriterOptions(stripeMaxRows = 200, bloomFilterColumns = Set("i64", "s"))
    )
    val rnd = new Random(105)
    val nestedFields = (0 until 4).map(i => NestedData.randomField(rnd, s"n$i", 2 + rnd.nextInt(3)))
    val nestedRows = IndexedSeq.fill(600)(nestedFields.map(f => NestedData.randomValue(rnd, f, 0.2)).toIndexedSeq)
    file(dir, "nested", NestedData.root(nestedFields, nestedRows), WriterOptions(stripeMaxRows = 250, pageSize = 1024))
    val emptyAndNull = Seq(
      ArrowTestData.field("s", ArrowType.Utf8.INSTANCE),
      ArrowTestData.field("nothing", new ArrowType.Int(32, true))
    )
    val r = VectorSchemaRoot.create(new Schema(emptyAndNull.asJava), TestFiles.allocator)
    r.allocateNew()
    (0 until 3000).foreach { i =>
      val s = r.getVector(0).asInstanceOf[org.apache.arrow.vector.VarCharVector]
      if (i % 3 == 0) s.setNull(i) else s.setSafe(i, Array.emptyByteArray)
      r.getVector(1).asInstanceOf[org.apache.arrow.vector.IntVector].setNull(i)
    }
    r.getFieldVectors.asScala.foreach(_.setValueCount(3000)); r.setRowCount(3000)
    file(dir, "empty-strings-and-all-null", r, WriterOptions(stripeMaxRows = 1000))
    file(dir, "zero-rows", ArrowTestData.randomRoot(flat, 0, 106), WriterOptions())
    if (FormatVersion.Minor >= 3) batched(dir, ArrowTestData.randomRoot(flat, 900, 107, pool = 4))
    // 1.4: PLAIN pages of several KiB compressed in 1 KiB blocks (zstd-blocks), raw blocks among them.
    if (FormatVersion.Minor >= 4)
      file(
        dir,
        "zstd-blocks",
        ArrowTestData.randomRoot(flat, 5000, 108, pool = 50),
        WriterOptions(
          compressionBlockSize = 1024,
          encodings = EncodingSet.PlainOnly,
          stripeMaxRows = 2500,
          compressionBlockPrime = false
        )
      )
    // 1.6: the same pages with blocks primed by the page's first block (zstd-primed-blocks).
    if (FormatVersion.Minor >= 6)
      file(
        dir,
        "zstd-primed-blocks",
        ArrowTestData.randomRoot(flat, 5000, 110, pool = 50),
        WriterOptions(compressionBlockSize = 1024, encodings = EncodingSet.PlainOnly, stripeMaxRows = 2500)
      )
    // 1.7: Huffman blocks: dates of orders (DELTA_HUFFMAN), small counts (HUFFMAN), a few strings
    // (dictionary codes Huffman-coded), with nulls.
    if (FormatVersion.Minor >= 7)
      file(
        dir,
        "huffman",
        huffmanRoot(new Random(111), 6000),
        WriterOptions(pageRows = 1024, compression = PageCodec.None)
      )
    // 1.5: a file wide enough to be opened column by column through its column directory.
    if (FormatVersion.Minor >= 5) {
      val wide = (0 until 300).map(i => flat(i % flat.size)).zipWithIndex.map { case (f, i) =>
        new org.apache.arrow.vector.types.pojo.Field(s"${f.getName}_$i", f.getFieldType, f.getChildren)
      }
      file(dir, "wide", ArrowTestData.randomRoot(wide, 30, 109, pool = 3), WriterOptions(stripeMaxRows = 20))
    }
  }

  /** Columns whose pages the writer stores as Huffman blocks (1.7). */
  def huffmanRoot(rnd: Random, rows: Int): VectorSchemaRoot = {
    val fields = Seq(
      ArrowTestData.field("shipdate", new ArrowType.Date(org.apache.arrow.vector.types.DateUnit.DAY)),
      ArrowTestData.field("quantity", new ArrowType.Int(64, true)),
      ArrowTestData.field("mode", ArrowType.Utf8.INSTANCE)
    )
    val r = VectorSchemaRoot.create(new Schema(fields.asJava), TestFiles.allocator)
    r.allocateNew()
    val dates = r.getVector(0).asInstanceOf[org.apache.arrow.vector.DateDayVector]
    val quantity = r.getVector(1).asInstanceOf[org.apache.arrow.vector.BigIntVector]
    val mode = r.getVector(2).asInstanceOf[org.apache.arrow.vector.VarCharVector]
    val modes = Array("AIR", "FOB", "MAIL", "RAIL", "SHIP", "TRUCK", "REG AIR").map(_.getBytes(StandardCharsets.UTF_8))
    var i = 0
    while (i < rows) {
      val day = 8035 + rnd.nextInt(2406)
      val lines = 1 + rnd.nextInt(7)
      var l = 0
      while (l < lines && i < rows) {
        if (rnd.nextInt(50) == 0) dates.setNull(i) else dates.setSafe(i, day + 1 + rnd.nextInt(121))
        if (rnd.nextInt(50) == 0) quantity.setNull(i) else quantity.setSafe(i, 1L + rnd.nextInt(50))
        // skewed: AIR half the time
        if (rnd.nextInt(50) == 0) mode.setNull(i)
        else mode.setSafe(i, modes(if (rnd.nextBoolean()) 0 else rnd.nextInt(modes.length)))
        i += 1; l += 1
      }
    }
    r.getFieldVectors.asScala.foreach(_.setValueCount(rows)); r.setRowCount(rows)
    r
  }

  /** A batch-mode file (1.3): `batched.fermion`, its rows in `batched.jsonl` and its batches (id and
    * row count, in file order) in `batched.batches`, from the ids and sizes written. */
  private def batched(dir: JPath, root: VectorSchemaRoot): Unit = {
    try {
      val schema = ArrowSchemaMapping.toFermion(root.getSchema)
      val w = FermionFileWriter.createBatched(
        new Path(dir.resolve("batched.fermion").toUri),
        TestFiles.conf,
        schema,
        WriterOptions(stripeMaxRows = 300, pageRows = 64)
      )
      val vectors = root.getFieldVectors.asScala.toIndexedSeq
      val sizes = Iterator.continually(Seq(1, 9, 64, 130, 2)).flatten
      val batches = IndexedSeq.newBuilder[String]
      var from = 0
      var id = 100L
      try
        while (from < root.getRowCount) {
          val n = math.min(sizes.next(), root.getRowCount - from)
          w.startBatch(id); w.write(vectors, from, n); w.endBatch()
          batches += s"$id $n"
          from += n
          id += 7
        }
      finally w.close()
      writeLines(dir.resolve("batched.jsonl"), (0 until root.getRowCount).map(i => Render.row(vectors, i)))
      writeLines(dir.resolve("batched.batches"), batches.result())
    } finally root.close()
  }

  private val datasetFields: Seq[Field] = Seq(
    ArrowTestData.field("id", new ArrowType.Int(64, true), nullable = false),
    ArrowTestData.field("name", ArrowType.Utf8.INSTANCE),
    ArrowTestData.field(
      "score",
      new ArrowType.FloatingPoint(org.apache.arrow.vector.types.FloatingPointPrecision.DOUBLE)
    ),
    new Field(
      "tags",
      new FieldType(true, ArrowType.List.INSTANCE, null),
      java.util.Arrays.asList(ArrowTestData.field("element", ArrowType.Utf8.INSTANCE))
    )
  )

  /** A dataset through eight versions — two appends, a delete of 3 rows (Arrow deletion file) and
    * of 1,200 (Roaring bitmap: more than 1,024), a column added with data, a rename, a compaction, an append with
    * every column — and a tag; `expected/v<N>.jsonl` holds each version's rows (sorted by id),
    * computed from what was written and deleted, not by reading the dataset. */
  def dataset(dir: JPath): Unit = {
    val ds = new FermionDataset(new Path(dir.toUri), TestFiles.conf)
    val expectedDir = dir.getParent.resolve("dataset-expected")
    Files.createDirectories(expectedDir)
    val rnd = new Random(107)
    val model = mutable.LinkedHashMap.empty[Long, mutable.LinkedHashMap[String, String]]
    var schema: FermionSchema = null
    def snapshot(v: Long): Unit = {
      val names = schema.fields.map(_.name)
      val lines = model.toSeq.sortBy(_._1).map { case (_, cols) =>
        names.map(n => cols.getOrElse(n, "null")).mkString("[", ",", "]")
      }
      writeLines(expectedDir.resolve(s"v$v.jsonl"), s"# ${names.mkString(",")}" +: lines)
    }
    def rowsRoot(ids: Seq[Long]): VectorSchemaRoot = {
      val values = ids.map { id =>
        IndexedSeq(
          id,
          if (id % 11 == 0) null else s"name-$id-${rnd.alphanumeric.take(rnd.nextInt(6)).mkString}",
          if (id % 13 == 0) null else rnd.nextGaussian(),
          if (id % 17 == 0) null else Seq.fill(rnd.nextInt(3))(s"t${rnd.nextInt(9)}")
        )
      }
      val fields = datasetFields
      val root = VectorSchemaRoot.create(new Schema(fields.asJava), TestFiles.allocator)
      fields.indices.foreach(c => NestedData.fill(root.getVector(c), values.map(_(c)).toIndexedSeq))
      root.setRowCount(values.size)
      root
    }
    def record(root: VectorSchemaRoot): Unit = {
      val vectors = (0 until root.getFieldVectors.size).map(root.getVector)
      (0 until root.getRowCount).foreach { i =>
        val cols = mutable.LinkedHashMap.empty[String, String]
        vectors.foreach(v => cols(v.getName) = Render.value(v.getObject(i)))
        model(cols("id").toLong) = cols
      }
    }
    def append(readVersion: Long, ids: Seq[Long], options: WriterOptions): Manifest = {
      val root = rowsRoot(ids)
      try {
        val fileSchema = if (schema == null) ArrowSchemaMapping.toFermion(root.getSchema)
        else SchemaIds.assignFrom(schema, ArrowSchemaMapping.toFermion(root.getSchema))
        val (rel, abs) = ds.newDataFile()
        val w = FermionFileWriter.create(abs, TestFiles.conf, fileSchema, options)
        w.write(root); w.close()
        record(root)
        val m = ds.commit(
          readVersion,
          Operation.Append(
            fileSchema,
            IndexedSeq(Fragment(0, ids.size.toLong, IndexedSeq(DataFile(rel, fileSchema.fields.map(_.fieldId))), None))
          )
        )
        schema = m.schema
        m
      } finally root.close()
    }
    val v1 = append(0, 0L until 400L, WriterOptions(stripeMaxRows = 150)); snapshot(1)
    append(1, 1000L until 2400L, WriterOptions(stripeMaxRows = 500, compression = PageCodec.None)); snapshot(2)
    def delete(readVersion: Long, fragment: Fragment, offsets: Seq[Int], ids: Seq[Long]): Manifest = {
      val rows = new RoaringBitmap(); offsets.foreach(rows.add)
      fragment.deletion.foreach(d => rows.or(ds.readDeletionFile(d)))
      val d = ds.writeDeletionFile(fragment.id, readVersion, rows)
      ids.foreach(model.remove)
      ds.commit(
        readVersion,
        Operation.Delete(IndexedSeq(fragment.copy(deletion = Some(d))), Set.empty, s"${ids.size} rows")
      )
    }
    val m3 = delete(2, v1.fragments.head, Seq(3, 10, 300), Seq(3L, 10L, 300L)); snapshot(3)
    val fragB = m3.fragments(1)
    val m4 = delete(3, fragB, 0 until 1200, (1000L until 2200L)); snapshot(4)
    // v5: a column `bucket` = id % 7 written as one new aligned file per fragment.
    val bucketId = m4.lastFieldId + 1
    val bucket = FermionField("bucket", bucketId, io.fermion.core.schema.FermionType.Int32, nullable = true)
    val files = m4.fragments.map { fr =>
      val r = FermionFileReader.open(ds.resolvePath(fr.files.head.path), TestFiles.conf, ReaderOptions())
      val (layout, ids) =
        try {
          val idCol = r.schema.fields.indexWhere(_.fieldId == 0)
          (
            (0 until r.numStripes).map(r.stripes.rowCount),
            (0 until r.numStripes).flatMap { s =>
              val v = r.readStripe(s, IndexedSeq(idCol), TestFiles.allocator).head
              try (0 until v.getValueCount).map(i => v.getObject(i).asInstanceOf[java.lang.Long].longValue)
              finally v.close()
            }
          )
        } finally r.close()
      val (rel, abs) = ds.newDataFile()
      val w =
        FermionFileWriter.createAligned(abs, TestFiles.conf, FermionSchema(IndexedSeq(bucket)), WriterOptions(), layout)
      val vec = new org.apache.arrow.vector.IntVector("bucket", TestFiles.allocator)
      try {
        vec.allocateNew(ids.size)
        ids.indices.foreach(i => vec.set(i, (ids(i) % 7).toInt))
        vec.setValueCount(ids.size)
        w.write(IndexedSeq(vec), ids.size); w.close()
      } finally vec.close()
      ids.foreach(id => model.get(id).foreach(_("bucket") = (id % 7).toString))
      fr.id -> DataFile(rel, IndexedSeq(bucketId))
    }.toMap
    val m5 =
      ds.commit(4, Operation.AddColumnFiles(FermionSchema(m4.schema.fields :+ bucket), files, "add columns bucket"))
    schema = m5.schema; snapshot(5)
    ds.createTag("with-bucket", 5)
    // v6: rename score -> p (same field id).
    val renamed = FermionSchema(m5.schema.fields.map(f => if (f.name == "score") f.copy(name = "p") else f))
    model.values.foreach { cols => cols("p") = cols.remove("score").get }
    val m6 = ds.commit(5, Operation.Project(renamed, "rename column score to p"))
    schema = m6.schema; snapshot(6)
    // v7: both fragments compacted into one, deleted rows dropped, every column in one file.
    val live = Render.datasetRows(ds, m6, TestFiles.allocator)
    val liveIds = model.keys.toSeq.sorted
    require(live.size == liveIds.size, "the dataset reads back before compaction")
    // Rebuild the live rows' vectors from the files (the compaction's read), then write them.
    val readBack = m6.fragments.flatMap { fr =>
      val readers = fr.files.map(d => FermionFileReader.open(ds.resolvePath(d.path), TestFiles.conf, ReaderOptions()))
      try {
        val deleted = fr.deletion.map(ds.readDeletionFile).getOrElse(new RoaringBitmap())
        var base = 0
        (0 until readers.head.numStripes).flatMap { s =>
          val n = readers.head.stripes.rowCount(s)
          val byField = readers.flatMap { r =>
            val vs = r.readStripe(s, r.schema.fields.indices, TestFiles.allocator)
            r.schema.fields.map(_.fieldId).zip(vs)
          }.toMap
          try {
            val out = (0 until n).filterNot(i => deleted.contains(base + i)).map { i =>
              m6.schema.fields.map(f => byField.get(f.fieldId).map(v => v.getObject(i)).orNull)
            }
            base += n
            out
          } finally byField.values.foreach(_.close())
        }
      } finally readers.foreach(_.close())
    }
    val compactFields = ArrowSchemaMapping.toArrow(m6.schema).getFields.asScala.toSeq
    val cr = VectorSchemaRoot.create(new Schema(compactFields.asJava), TestFiles.allocator)
    try {
      compactFields.indices.foreach { c =>
        val col = readBack.map(_(c)).map {
          case t: org.apache.arrow.vector.util.Text => t.toString
          case l: java.util.List[_] => l.asScala.map(x => if (x == null) null else x.toString).toSeq
          case other => other
        }
        NestedData.fill(cr.getVector(c), col.map(x => x: Any).toIndexedSeq)
      }
      cr.setRowCount(readBack.size)
      val (rel, abs) = ds.newDataFile()
      val w = FermionFileWriter.create(abs, TestFiles.conf, m6.schema, WriterOptions(stripeMaxRows = 512))
      w.write(cr); w.close()
      val m7 = ds.commit(
        6,
        Operation.Compact(
          m6.fragments.map(_.id).toSet,
          IndexedSeq(Fragment(
            0,
            readBack.size.toLong,
            IndexedSeq(DataFile(rel, m6.schema.fields.map(_.fieldId))),
            None
          ))
        )
      )
      schema = m7.schema; snapshot(7)
    } finally cr.close()
    // v8: an append that brings every column of the schema (bucket included).
    val ids8 = 5000L until 5100L
    val root8 = rowsRoot(ids8)
    try {
      val b = new org.apache.arrow.vector.IntVector("bucket", TestFiles.allocator)
      b.allocateNew(ids8.size); ids8.indices.foreach(i => b.set(i, (ids8(i) % 7).toInt)); b.setValueCount(ids8.size)
      val vectors = (0 until root8.getFieldVectors.size).map(root8.getVector) :+ b
      val fileSchema = SchemaIds.assignFrom(
        schema,
        ArrowSchemaMapping.toFermion(new Schema((datasetFields.map(f =>
          if (f.getName == "score") new Field("p", f.getFieldType, f.getChildren) else f
        ) :+ b.getField).asJava))
      )
      val (rel, abs) = ds.newDataFile()
      val w = FermionFileWriter.create(abs, TestFiles.conf, fileSchema, WriterOptions())
      w.write(vectors, ids8.size); w.close()
      (0 until ids8.size).foreach { i =>
        val cols = mutable.LinkedHashMap.empty[String, String]
        vectors.foreach(v => cols(if (v.getName == "score") "p" else v.getName) = Render.value(v.getObject(i)))
        model(ids8(i)) = cols
      }
      ds.commit(
        7,
        Operation.Append(
          fileSchema,
          IndexedSeq(Fragment(0, ids8.size.toLong, IndexedSeq(DataFile(rel, fileSchema.fields.map(_.fieldId))), None))
        )
      )
      snapshot(8)
      b.close()
    } finally root8.close()
  }
}
