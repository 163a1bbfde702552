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
}
