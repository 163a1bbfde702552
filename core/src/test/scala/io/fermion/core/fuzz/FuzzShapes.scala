package io.fermion.core.fuzz

import java.nio.file.Files

import scala.jdk.CollectionConverters._
import scala.util.Random

import io.fermion.core.{ArrowTestData, NestedData, TestFiles}
import io.fermion.core.codec.PageCodec
import io.fermion.core.dataset._
import io.fermion.core.encoding.EncodingSet
import io.fermion.core.layout.PageEncoding
import io.fermion.core.schema.{FermionField, FermionSchema, FermionType}
import io.fermion.core.write.WriterOptions
import org.apache.arrow.vector._
import org.apache.arrow.vector.types.TimeUnit
import org.apache.arrow.vector.types.pojo.{ArrowType, Field, Schema}
import org.roaringbitmap.RoaringBitmap

/** A valid file the fuzzer damages. */
final case class Shape(name: String, bytes: Array[Byte]) {
  lazy val map: FileMap = new FileMap(bytes)
  def hash: String = java.util.Arrays.hashCode(bytes).toHexString
}

/** A valid dataset metadata file the fuzzer damages: `kind` is manifest, transaction,
  * deletion-arrow or deletion-roaring. */
final case class MetaShape(name: String, kind: String, bytes: Array[Byte])

/** The valid inputs of the fuzzer, all written by the current writer from seeded data: flat columns
  * of every type under every encoding and both codecs, with and without page CRCs; nested columns;
  * bloom filters; many stripes and pages; all-null and empty-string columns; a file of no rows;
  * batch-mode files;
  * and manifests, transactions (every operation) and deletion files (both kinds). */
object FuzzShapes {
  private def written(name: String, root: VectorSchemaRoot, options: WriterOptions): Shape = {
    val f = TestFiles.tempDir("fermion-fuzz-shape").resolve(s"$name.fermion")
    try TestFiles.write(f, root, options)
    finally root.close()
    val bytes = Files.readAllBytes(f)
    Files.delete(f); Files.delete(f.getParent)
    Shape(name, bytes)
  }

  private val flat = ArrowTestData.allTypes

  private def flatRoot(rows: Int, seed: Long, nullRate: Double = 0.2, pool: Int = 0): VectorSchemaRoot =
    ArrowTestData.randomRoot(flat, rows, seed, nullRate, pool)

  /** Sorted keys and timestamps (delta and FOR territory) with a few nulls. */
  private def sortedRoot(rows: Int): VectorSchemaRoot = {
    val schema = new Schema(Seq(
      ArrowTestData.field("k", new ArrowType.Int(64, true), nullable = false),
      ArrowTestData.field("ts", new ArrowType.Timestamp(TimeUnit.MICROSECOND, null)),
      ArrowTestData.field("small", new ArrowType.Int(16, true))
    ).asJava)
    val root = VectorSchemaRoot.create(schema, TestFiles.allocator)
    root.allocateNew()
    val rnd = new Random(7)
    val k = root.getVector(0).asInstanceOf[BigIntVector]
    val ts = root.getVector(1).asInstanceOf[TimeStampMicroVector]
    val small = root.getVector(2).asInstanceOf[SmallIntVector]
    for (i <- 0 until rows) {
      k.setSafe(i, 1000L + 3L * i)
      if (i % 97 == 5) ts.setNull(i) else ts.setSafe(i, 1700000000000000L + i * 1000L + rnd.nextInt(10))
      small.setSafe(i, (i / 50).toShort)
    }
    root.setRowCount(rows)
    root
  }

  private def nestedRoot(seed: Long, rows: Int, columns: Int, depth: Int): VectorSchemaRoot = {
    val rnd = new Random(seed)
    val fields = (0 until columns).map(i => NestedData.randomField(rnd, s"n$i", 1 + rnd.nextInt(depth)))
    val values = IndexedSeq.fill(rows)(fields.map(f => NestedData.randomValue(rnd, f, 0.2)).toIndexedSeq)
    NestedData.root(fields, values)
  }

  /** A string column of only empty strings and nulls, a binary one, an all-null int column, an
    * entirely null struct, and an id. */
  private def emptyAndNullRoot(rows: Int): VectorSchemaRoot = {
    val fields = Seq(
      ArrowTestData.field("id", new ArrowType.Int(64, true)),
      ArrowTestData.field("s", ArrowType.Utf8.INSTANCE),
      ArrowTestData.field("b", ArrowType.Binary.INSTANCE),
      ArrowTestData.field("nothing", new ArrowType.Int(32, true))
    )
    val root = VectorSchemaRoot.create(new Schema(fields.asJava), TestFiles.allocator)
    root.allocateNew()
    for (i <- 0 until rows) {
      root.getVector(0).asInstanceOf[BigIntVector].setSafe(i, i.toLong)
      if (i % 3 == 0) root.getVector(1).asInstanceOf[VarCharVector].setNull(i)
      else root.getVector(1).asInstanceOf[VarCharVector].setSafe(i, Array.emptyByteArray)
      if (i % 4 == 1) root.getVector(2).asInstanceOf[VarBinaryVector].setNull(i)
      else root.getVector(2).asInstanceOf[VarBinaryVector].setSafe(i, Array.emptyByteArray)
      root.getVector(3).asInstanceOf[IntVector].setNull(i)
    }
    fields.indices.foreach(c => root.getVector(c).setValueCount(rows))
    root.setRowCount(rows)
    root
  }

  private def only(encoding: Int): EncodingSet = EncodingSet(Set(encoding))

  /** A batch-mode file (format 1.3): batches of 1 to 200 rows with increasing ids, so that pages are
    * cut at batch ends and stripes hold BATCH_META chunks and the file a batch index. */
  private def batched(name: String, root: VectorSchemaRoot, options: WriterOptions): Shape = {
    val f = TestFiles.tempDir("fermion-fuzz-shape").resolve(s"$name.fermion")
    try {
      val schema = io.fermion.core.schema.ArrowSchemaMapping.toFermion(root.getSchema)
      val w = io.fermion.core.write.FermionFileWriter
        .createBatched(new org.apache.hadoop.fs.Path(f.toUri), TestFiles.conf, schema, options)
      val vectors = root.getFieldVectors.asScala.toIndexedSeq
      val sizes = Iterator.continually(Seq(1, 7, 64, 200, 3, 31)).flatten
      var from = 0
      var id = 10L
      try
        while (from < root.getRowCount) {
          val n = math.min(sizes.next(), root.getRowCount - from)
          w.startBatch(id)
          w.write(vectors, from, n)
          w.endBatch()
          from += n
          id += 1 + (id % 3)
        }
      finally w.close()
    } finally root.close()
    val bytes = Files.readAllBytes(f)
    Files.delete(f); Files.delete(f.getParent)
    Shape(name, bytes)
  }

  lazy val files: IndexedSeq[Shape] = {
    val none = PageCodec.None
    val paged = WriterOptions(stripeMaxRows = 500, pageRows = 64)
    val blocks =
      WriterOptions(
        stripeMaxRows = 2000,
        pageRows = 1024,
        compressionBlockSize = 1024,
        encodings = EncodingSet.PlainOnly
      )
    val shapes = IndexedSeq(
      written("flat-zstd", flatRoot(1200, 1), paged),
      written("flat-none", flatRoot(1200, 2), paged.copy(compression = none)),
      written("flat-nocrc-zstd", flatRoot(900, 3), paged.copy(pageChecksums = false)),
      written("flat-nocrc-none", flatRoot(900, 4, pool = 5), paged.copy(pageChecksums = false, compression = none)),
      written(
        "flat-plain",
        flatRoot(800, 5),
        WriterOptions(stripeMaxRows = 300, pageRows = 128, compression = none, encodings = EncodingSet.PlainOnly)
      ),
      written(
        "low-entropy",
        flatRoot(1500, 6, nullRate = 0.5, pool = 4),
        WriterOptions(stripeMaxRows = 700, pageRows = 64, compression = none)
      ),
      written("sorted", sortedRoot(2000), WriterOptions(stripeMaxRows = 1000, pageRows = 8, compression = none)),
      written("sorted-zstd", sortedRoot(3000), WriterOptions(stripeMaxRows = 3000, pageRows = 512)),
      written(
        "nested-none",
        nestedRoot(11, 400, 4, 3),
        WriterOptions(stripeMaxRows = 150, pageSize = 1024, compression = none)
      ),
      written("nested-zstd", nestedRoot(12, 300, 3, 4), WriterOptions(stripeMaxRows = 120, pageSize = 1024)),
      written(
        "nested-deep",
        nestedRoot(13, 150, 2, 6),
        WriterOptions(stripeMaxRows = 64, pageSize = 1024, compression = none, pageChecksums = false)
      ),
      written(
        "bloom",
        flatRoot(900, 8),
        WriterOptions(
          stripeMaxRows = 300,
          pageRows = 128,
          compression = none,
          bloomFilterColumns = Set("i64", "s", "d", "f64")
        )
      ),
      written("empty-and-null", emptyAndNullRoot(3000), WriterOptions(stripeMaxRows = 1000)),
      written("zero-rows", flatRoot(0, 9), WriterOptions()),
      batched("batched", flatRoot(1200, 30, pool = 5), WriterOptions(stripeMaxRows = 400, pageRows = 64)),
      batched(
        "batched-none",
        nestedRoot(31, 300, 2, 3),
        WriterOptions(stripeMaxRows = 150, pageSize = 1024, compression = none)
      ),
      written(
        "many-pages",
        ArrowTestData.randomRoot(flat.filter(f => Set("b", "i8", "s").contains(f.getName)), 9000, 10, 0.3),
        WriterOptions(stripeMaxRows = 9000, pageSize = 1024, compression = none)
      ),
      // PLAIN pages of 8 KiB compressed in 1 KiB blocks, primed with the first (zstd-primed-blocks,
      // format 1.6) and alone (zstd-blocks, 1.4), with and without CRCs.
      written("blocks", flatRoot(2000, 40, pool = 60), blocks),
      written("blocks-nocrc", flatRoot(2000, 41, pool = 60), blocks.copy(pageChecksums = false)),
      written("blocks-unprimed", flatRoot(2000, 42, pool = 60), blocks.copy(compressionBlockPrime = false)),
      // Huffman blocks (format 1.7): HUFFMAN, DELTA_HUFFMAN and Huffman-coded dictionary codes.
      written(
        "huffman",
        io.fermion.core.compat.CompatCorpus.huffmanRoot(new scala.util.Random(43), 3000),
        WriterOptions(stripeMaxRows = 1500, pageRows = 256, compression = none)
      )
    ) ++ Seq(
      PageEncoding.Constant,
      PageEncoding.Rle,
      PageEncoding.BitPack,
      PageEncoding.For,
      PageEncoding.Delta,
      PageEncoding.DeltaFor,
      PageEncoding.Dictionary
    ).map { e =>
      written(
        s"only-${PageEncoding.name(e)}",
        flatRoot(600, 20 + e, nullRate = 0.3, pool = 6),
        WriterOptions(stripeMaxRows = 250, pageRows = 64, compression = none, encodings = only(e))
      )
    }
    shapes
  }

  private val schemas = new java.util.concurrent.ConcurrentHashMap[String, FermionSchema]()

  /** The schema of an undamaged shape. */
  def schemaOf(shape: Shape): FermionSchema = schemas.computeIfAbsent(
    shape.name,
    _ => {
      val r = FuzzRunner.originalReader(shape)
      try r.schema
      finally r.close()
    }
  )

  private val schema = FermionSchema(IndexedSeq(
    FermionField("id", 0, FermionType.Int64, nullable = false),
    FermionField(
      "s",
      1,
      FermionType.Struct,
      nullable = true,
      IndexedSeq(
        FermionField("x", 2, FermionType.Utf8, nullable = true),
        FermionField(
          "l",
          3,
          FermionType.List,
          nullable = true,
          IndexedSeq(FermionField("element", 4, FermionType.Decimal(20, 2), true))
        )
      )
    )
  ))

  private def fragments(rnd: Random, n: Int): IndexedSeq[Fragment] =
    (0 until n).map { i =>
      val rows = rnd.nextInt(100000).toLong
      Fragment(
        i + 1L,
        rows,
        (0 until 1 + rnd.nextInt(3)).map(k =>
          DataFile(s"data/${new java.util.UUID(rnd.nextLong(), rnd.nextLong())}.fermion", IndexedSeq(k))
        ),
        if (rnd.nextBoolean())
          Some(DeletionFile(s"_deletions/$i-3-${rnd.nextLong()}.bin", 1 + rnd.nextInt(2), rows / 3))
        else None,
        rnd.nextInt(4) match {
          case 0 | 1 => None
          case 2 => Some(RowIds.Start(rnd.nextInt(1 << 30).toLong))
          case _ if rows <= 64 => Some(RowIds.Listed(RowIdSequence.of(Array.tabulate(rows.toInt)(k => 3L * k + i))))
          case _ => Some(RowIds.External(s"_rowids/$i.rowids", rows))
        }
      )
    }

  lazy val metadata: IndexedSeq[MetaShape] = {
    val rnd = new Random(42)
    val manifests = (0 until 3).map { i =>
      val m = Manifest(
        3 + i,
        1700000000000L + i,
        1,
        1,
        schema,
        fragments(rnd, 1 + i * 3),
        20,
        1234,
        s"2-${new java.util.UUID(rnd.nextLong(), rnd.nextLong())}.txn",
        "append",
        "",
        Map(Manifest.LastFieldIdConfig -> "4", FermionDataset.StableRowIdsConfig -> "false")
      )
      MetaShape(s"manifest-$i", "manifest", ManifestCodec.encode(m))
    }
    val ops = Seq(
      Operation.Append(schema, fragments(rnd, 2)),
      Operation.Overwrite(schema, fragments(rnd, 3)),
      Operation.Delete(fragments(rnd, 2), Set(5L, 9L), "id > 3"),
      Operation.Project(schema, "add columns z"),
      Operation.Compact(Set(1L, 2L, 3L), fragments(rnd, 1)),
      Operation.AddColumnFiles(
        schema,
        Map(1L -> DataFile("data/a.fermion", IndexedSeq(7)), 4L -> DataFile("data/b.fermion", IndexedSeq(7, 8))),
        "add columns q"
      )
    )
    val txns = ops.zipWithIndex.map { case (op, i) =>
      MetaShape(
        s"txn-${op.name}",
        "transaction",
        TransactionCodec.encode(Transaction(i.toLong, java.util.UUID.randomUUID().toString.map(_ => 'a'), op))
      )
    }
    def bitmap(values: Iterable[Int]): RoaringBitmap = { val b = new RoaringBitmap(); values.foreach(b.add); b }
    val deletions = Seq(
      MetaShape(
        "deletion-arrow",
        "deletion-arrow",
        DeletionFiles.encode(bitmap(Seq(0, 3, 17, 1000, 65537)), DeletionFile.ArrowArray)
      ),
      MetaShape(
        "deletion-roaring-array",
        "deletion-roaring",
        DeletionFiles.encode(bitmap((0 until 3000 by 7)), DeletionFile.RoaringBitmap)
      ),
      MetaShape(
        "deletion-roaring-mixed",
        "deletion-roaring",
        DeletionFiles.encode(
          bitmap((0 until 9000 by 2) ++ (70000 until 80000) ++ (200000 until 200100 by 3)),
          DeletionFile.RoaringBitmap
        )
      )
    )
    manifests ++ txns ++ deletions
  }
}
