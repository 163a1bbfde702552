package io.fermion.core

import io.fermion.core.options.OptionRegistry
import io.fermion.core.codec.PageCodec
import io.fermion.core.encoding.EncodingSet
import io.fermion.core.layout.PageEncoding
import io.fermion.core.write.{ColumnOverrides, WriterOptions}
import org.apache.arrow.vector.types.pojo.ArrowType
import org.scalatest.funsuite.AnyFunSuite

/** Table-wide and per-column write settings: parsing, inheritance along column paths, errors that
  * name the option, and their effect on the pages written. */
class WriterOptionsSuite extends AnyFunSuite {
  import TestFiles._

  test("column settings inherit from ancestors and the table, the most specific winning") {
    val o = WriterOptions.parse(Map(
      "compression" -> "none",
      "encodings" -> "plain,dictionary",
      "compressionLevel" -> "5",
      "column.s.compression" -> "zstd",
      "column.s.inner.encodings" -> "delta_for",
      "COLUMN.S.Inner.PageSize" -> "4k"
    ))
    val table = o.forColumn("other")
    assert(table.compression == PageCodec.None && table.compressionLevel == 5 && table.encodings == EncodingSet(Set(
      PageEncoding.Plain,
      PageEncoding.Dictionary
    )))
    val s = o.forColumn("s")
    assert(s.compression == PageCodec.Zstd && s.encodings == table.encodings)
    val inner = o.forColumn("s.inner.element")
    assert(inner.compression == PageCodec.Zstd && inner.encodings == EncodingSet(Set(PageEncoding.DeltaFor)) && inner
      .pageSize == 4096)
  }

  test("batch-mode writes default to 32 KiB pages; a given pageSize wins") {
    assert(WriterOptions.parse(Map.empty).pageSize == 512 * 1024)
    assert(WriterOptions.parse(Map("batchKey" -> "sample")).pageSize == 32 * 1024)
    assert(WriterOptions.parse(Map("batchKey" -> " ")).pageSize == 512 * 1024)
    assert(WriterOptions.parse(Map("batchKey" -> "sample", "pageSize" -> "1m")).pageSize == 1024 * 1024)
  }

  test("compressionBlockSize: table-wide and per column, 0 turns blocks off, other sizes below 1 KiB are refused") {
    assert(WriterOptions.parse(Map.empty).forColumn("a").compressionBlockSize == 16 * 1024)
    val o = WriterOptions.parse(Map("compressionBlockSize" -> "4k", "column.b.compressionBlockSize" -> "0"))
    assert(o.forColumn("a").compressionBlockSize == 4096 && o.forColumn("b").compressionBlockSize == 0)
    val e = intercept[IllegalArgumentException](WriterOptions.parse(Map("compressionBlockSize" -> "100")))
    assert(e.getMessage.contains("compressionBlockSize"), e.getMessage)
  }

  test("bad values name the option") {
    def err(opts: (String, String)*): String =
      intercept[IllegalArgumentException](WriterOptions.parse(opts.toMap)).getMessage
    assert(
      err("encodings" -> "zip").contains("'encodings'") && err("encodings" -> "zip").contains("unknown encoding 'zip'")
    )
    assert(err("column.a.compression" -> "lz9").contains("'column.a.compression'"))
    assert(err("column.a.compressionLevel" -> "99").contains("compressionLevel"))
    assert(err("column.a.pageSize" -> "12").contains("pageSize"))
    assert(OptionRegistry.columnSetting("column.a.b.encodings").map(_._1).contains("a.b"))
    assert(OptionRegistry.columnSetting("column.a.b.colour").isEmpty)
  }

  test("an override naming no column is rejected when the writer opens") {
    val root = ArrowTestData.randomRoot(Seq(ArrowTestData.field("x", new ArrowType.Int(64, true))), 10, 1)
    try {
      val e = intercept[IllegalArgumentException](write(
        tempDir("fermion-opt").resolve("t.fermion"),
        root,
        WriterOptions(columns = Map("y" -> ColumnOverrides(compression = Some(PageCodec.None))))
      ))
      assert(e.getMessage.contains("column.y") && e.getMessage.contains("x"))
    } finally root.close()
  }

  test("per-column encodings and codecs decide what is written, and the file reads back") {
    val fields =
      Seq(ArrowTestData.field("a", new ArrowType.Int(64, true)), ArrowTestData.field("b", new ArrowType.Int(64, true)))
    val root = ArrowTestData.randomRoot(fields, 4000, 2, nullRate = 0.0, pool = 5)
    try {
      def sizeOf(o: WriterOptions): (Long, Map[String, Long]) = {
        val f = tempDir("fermion-opt").resolve("t.fermion")
        val w = write(f, root, o)
        assert(readAll(f) == IndexedSeq(column(root.getVector(0)), column(root.getVector(1))))
        (w.bytesWritten, w.pagesByEncoding)
      }
      val (plainSize, plainPages) =
        sizeOf(WriterOptions(encodings = EncodingSet.PlainOnly, compression = PageCodec.None))
      assert(plainPages.keySet == Set("plain"))
      val (mixedSize, mixedPages) = sizeOf(WriterOptions(
        encodings = EncodingSet.PlainOnly,
        compression = PageCodec.None,
        columns = Map("b" -> ColumnOverrides(encodings = Some(EncodingSet.All)))
      ))
      assert(
        mixedPages.getOrElse("dictionary", 0L) > 0 && mixedSize < plainSize,
        s"$mixedPages $mixedSize vs $plainSize"
      )
      val (autoSize, _) = sizeOf(WriterOptions())
      assert(autoSize < mixedSize)
    } finally root.close()
  }

  test(
    "sorted keys with duplicates get DELTA pages compressed with zstd when that stores 1/8 less than the chosen encoding"
  ) {
    // Keys as TPC-H's l_orderkey: each repeated 1 to 7 times, increasing by 1 or, every 8th key, by 25.
    val rnd = new scala.util.Random(4)
    val keys =
      Iterator.iterate(1L)(k => if (k % 8 == 0) k + 25 else k + 1).flatMap(k => Iterator.fill(1 + rnd.nextInt(7))(k))
        .take(40000).toIndexedSeq
    val fields = Seq(
      ArrowTestData.field("key", new ArrowType.Int(64, true)),
      ArrowTestData.field("noise", new ArrowType.Int(64, true))
    )
    val rows = keys.map(k => IndexedSeq[Any](k, rnd.nextInt(1 << 20).toLong))
    def columnsOf(o: WriterOptions) = dataStreams(fields, rows, o)
    // The DELTA alternative among the lightweight encodings (no Huffman blocks).
    val lightweight = "plain,constant,rle,bitpack,for,delta,delta_for,dictionary"
    val auto = columnsOf(WriterOptions(pageRows = 8192, encodings = EncodingSet.parse(lightweight)))
    val noDelta = columnsOf(WriterOptions(pageRows = 8192, encodings = EncodingSet.parse("rle,bitpack,for,dictionary")))
    val uncompressed =
      columnsOf(WriterOptions(
        pageRows = 8192,
        compression = PageCodec.None,
        encodings = EncodingSet.parse(lightweight)
      ))
    assert(auto("key")._2.keySet == Set("delta") && auto("key")._3.keySet == Set("zstd"), auto("key"))
    assert(auto("key")._1 * 8 <= noDelta("key")._1 * 7, s"${auto("key")} vs ${noDelta("key")}")
    // Without compression the DELTA body is larger than RLE's, so RLE stays.
    assert(uncompressed("key")._2.keySet == Set("rle"), uncompressed("key"))
    // Values that do not repeat keep their encoding.
    assert(!auto("noise")._2.contains("delta") && auto("noise") == noDelta("noise"), auto("noise"))
    // With every encoding allowed, the differences (mostly 0 and 1) as a Huffman block beat them.
    val all = columnsOf(WriterOptions(pageRows = 8192))
    assert(all("key")._2.keySet == Set("delta_huffman") && all("key")._1 < auto("key")._1, all("key"))
  }

  /** Per column of `rows` written with `o` (and read back equal): its DATA streams' bytes, pages per
    * encoding and pages per codec. */
  private def dataStreams(
      fields: Seq[org.apache.arrow.vector.types.pojo.Field],
      rows: IndexedSeq[IndexedSeq[Any]],
      o: WriterOptions
  ): Map[String, (Long, Map[String, Int], Map[String, Int])] = {
    val root = NestedData.root(fields, rows)
    try {
      val f = tempDir("fermion-alternatives").resolve("t.fermion")
      write(f, root, o)
      assert(readAll(f) == fields.indices.map(i => column(root.getVector(i))))
      io.fermion.core.inspect.FileInspector.inspect(f.toString, new org.apache.hadoop.conf.Configuration())
        .columns.map { c =>
          val data = c.streams.filter(_.streamType == "DATA")
          c.name -> (data.map(_.bytes).sum, data.map(_.encodings).reduce(_ ++ _), data.map(_.codecs).reduce(_ ++ _))
        }.toMap
    } finally root.close()
  }

  test(
    "a bit-packed page over half, or a dictionary page over a quarter, of PLAIN's bytes is stored PLAIN when that compresses smaller"
  ) {
    // Doubles repeating with a period, as the wide benchmark's columns. A page of 8,000 of them with a
    // period of 1,000 is a dictionary of 1,000 entries at full width; pages of 512 with a period of
    // 300 (too many distinct values for a dictionary) are bit-packed at 63 of 64 bits, where their
    // bytes no longer line up. zstd finds the repeats in PLAIN bytes in both.
    val rnd = new scala.util.Random(9)
    val double = new ArrowType.FloatingPoint(org.apache.arrow.vector.types.FloatingPointPrecision.DOUBLE)
    val fields = Seq(ArrowTestData.field("periodic", double), ArrowTestData.field("small", new ArrowType.Int(64, true)))
    val lightweight = EncodingSet.parse("constant,rle,bitpack,for,delta,delta_for,dictionary")
    for ((period, pageRows, packed) <- Seq((1000L, 8192, "dictionary"), (300L, 512, "bitpack"))) {
      val rows = (0 until 8000).map(i => IndexedSeq[Any]((i * 7L % period) / 7.0, rnd.nextInt(64).toLong))
      val auto = dataStreams(fields, rows, WriterOptions(pageRows = pageRows))
      val noPlain = dataStreams(fields, rows, WriterOptions(pageRows = pageRows, encodings = lightweight))
      val uncompressed =
        dataStreams(fields, rows, WriterOptions(pageRows = pageRows, compression = PageCodec.None))
      assert(noPlain("periodic")._2.keySet == Set(packed), noPlain("periodic"))
      assert(
        auto("periodic")._2.keySet == Set("plain") && auto("periodic")._3.keySet.forall(_.startsWith("zstd")),
        auto("periodic")
      )
      assert(auto("periodic")._1 * 4 < noPlain("periodic")._1 * 3, s"${auto("periodic")} vs ${noPlain("periodic")}")
      // Uncompressed, the packed body is the smaller one and stays.
      assert(!uncompressed("periodic")._2.contains("plain"), uncompressed("periodic"))
      // Values packed at 6 of 64 bits are not tried as PLAIN.
      assert(auto("small")._2.keySet == Set("bitpack") && auto("small") == noPlain("small"), auto("small"))
    }
  }

  test("PLAIN is tried after the Huffman form, so a Huffman block that compresses well is not lost to it") {
    // TPC-H's p_retailprice over sorted keys: differences of 100 but at every 10th and 1,000th key.
    // Its DELTA_HUFFMAN block is larger before compression than the PLAIN page after, and zstd
    // compresses the block to a small fraction of either.
    val fields = Seq(ArrowTestData.field("price", new ArrowType.Int(64, true)))
    val rows = (1 to 100000).map(k => IndexedSeq[Any](90000L + ((k / 10) % 20001) + 100L * (k % 1000)))
    val auto = dataStreams(fields, rows, WriterOptions())("price")
    val plainOnly = dataStreams(fields, rows, WriterOptions(encodings = EncodingSet.PlainOnly))("price")
    assert(auto._2.keySet == Set("delta_huffman"), auto)
    assert(auto._1 * 10 < plainOnly._1, s"$auto vs $plainOnly")
  }
}
