package io.fermion.core

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.core.{JsonFactory, JsonToken}
import io.fermion.core.dataset._
import io.fermion.core.inspect._
import io.fermion.core.schema.ArrowSchemaMapping
import io.fermion.core.write.{FermionFileWriter, WriterOptions}
import org.apache.arrow.vector.types.pojo.{ArrowType, Field, FieldType, Schema}
import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.roaringbitmap.RoaringBitmap
import org.scalatest.funsuite.AnyFunSuite

/** `fermion inspect` against files and datasets whose content is known: every figure it reports
  * (rows, stripes, statistics, null counts, pages, encodings, bloom filters, sizes, versions,
  * fragments, deletions, tags) is compared with what was written. */
class InspectSuite extends AnyFunSuite {
  private val conf = new Configuration()
  private def f(name: String, t: ArrowType, children: Field*): Field =
    new Field(name, FieldType.nullable(t), children.asJava)
  private val fields = Seq(
    new Field("id", FieldType.notNullable(new ArrowType.Int(64, true)), java.util.List.of()),
    f("name", ArrowType.Utf8.INSTANCE),
    f("nothing", new ArrowType.Int(32, true)),
    f("tags", ArrowType.List.INSTANCE, f("element", new ArrowType.Int(32, true))),
    f("price", new ArrowType.Decimal(9, 2, 128))
  )
  private val rows = 2500
  private def row(i: Int): IndexedSeq[Any] = IndexedSeq(
    i.toLong,
    if (i % 10 == 0) null else f"name-$i%05d",
    null,
    if (i % 7 == 0) null else Seq.tabulate(i % 3)(k => i * 10 + k),
    new java.math.BigDecimal(java.math.BigInteger.valueOf(i.toLong * 3), 2)
  )
  private val options = WriterOptions(stripeMaxRows = 1000, pageRows = 256, bloomFilterColumns = Set("id"))

  private def writeFile(path: Path, ids: Range = 0 until rows): Unit = {
    val schema = ArrowSchemaMapping.toFermion(new Schema(fields.asJava))
    val w = FermionFileWriter.create(path, conf, schema, options)
    val root = NestedData.root(fields, ids.map(row))
    try w.write(root)
    finally { root.close(); w.close() }
  }

  private lazy val file: String = {
    val p = new Path(TestFiles.tempDir("fermion-inspect").resolve("f.fermion").toUri)
    writeFile(p)
    p.toString
  }

  private def column(i: FileInspection, name: String): ColumnInfo = i.columns.find(_.name == name).get
  private def data(c: ColumnInfo, node: String): StreamInfo =
    c.streams.find(s => s.node == node && s.streamType == "DATA").get

  test("a file: footer, schema with field ids, stripes") {
    val i = FileInspector.inspect(file, conf)
    assert(i.formatVersion == "1.7" && i.rows == rows && i.numStripes == 3)
    assert(i.stripes.map(_.rows) == Seq(1000, 1000, 500) && i.stripes.map(_.firstRow) == Seq(0L, 1000L, 2000L))
    assert(i.pageCrc32 && !i.batchMode)
    assert(i.schema.map(_.name) == Seq("id", "name", "nothing", "tags", "price"))
    assert(i.schema.map(_.fieldId) == Seq(0, 1, 2, 3, 5), "ids in preorder: tags.element is 4")
    assert(i.schema(3).children.head.fieldId == 4)
    assert(i.fileBytes == new java.io.File(new Path(file).toUri).length())
  }

  test("per column: streams, DescTypes, statistics, null counts, pages, encodings, bloom filters") {
    val i = FileInspector.inspect(file, conf)
    val id = column(i, "id")
    assert(id.streams.map(s => (s.streamType, s.descType)) == Seq("VALIDITY" -> "USE_DEFAULT", "DATA" -> "FULL"))
    val idData = data(id, "id")
    assert(idData.stats.get.min.contains(StatValue.Integral(0)) && idData.stats.get.max.contains(
      StatValue.Integral(rows - 1)
    ))
    assert(idData.chunks.map(_.stats.get.min.get) == Seq(0L, 1000L, 2000L).map(StatValue.Integral))
    assert(idData.chunks.map(_.stats.get.max.get) == Seq(999L, 1999L, 2499L).map(StatValue.Integral))
    assert(idData.nullCount.contains(0L))
    // 256 rows per page: 4 + 4 + 2 pages, each page's rows and bounds from its PageMeta.
    assert(idData.chunks.map(_.numPages.get) == Seq(4, 4, 2) && idData.pages == 10)
    assert(idData.chunks.head.pages.map(_.rows.get) == Seq(256, 256, 256, 232))
    assert(idData.chunks.head.pages(1).stats.get.min.contains(StatValue.Integral(256)))
    assert(idData.encodings.values.sum == 10 && idData.codecs.values.sum == 10)
    assert(idData.encodings.keySet.subsetOf(
      io.fermion.core.layout.PageEncoding.all.map(io.fermion.core.layout.PageEncoding.name).toSet
    ))
    assert(idData.bloomFilterBytes > 0 && idData.chunks.forall(_.bloomFilterBytes > 0))
    // Page sizes add up to the chunk; chunks and bloom filters and the CMB to the column.
    idData.chunks.foreach(c => assert(c.pages.map(_.bytes).sum == c.bytes))
    assert(id.bytes == id.cmbBytes + id.streams.map(s => s.bytes + s.bloomFilterBytes).sum)

    val name = data(column(i, "name"), "name")
    assert(name.nullCount.contains(250L))
    assert(name.stats.get.flagNames.contains("prefix_bounds"))
    assert(
      name.stats.get.min.contains(StatValue.Text("name-000")) && name.stats.get.max.contains(StatValue.Text("name-024"))
    )
    val validity = column(i, "name").streams.head
    assert(validity.descType == "SIMPLE" && validity.pages >= 3, "VALIDITY pages found by walking their headers")

    val nothing = column(i, "nothing")
    assert(nothing.allNull && nothing.streams.isEmpty && nothing.cmbBytes == 0)

    val tags = column(i, "tags")
    assert(tags.streams.map(s => s.node -> s.streamType) == Seq(
      "tags" -> "VALIDITY",
      "tags" -> "OFFSETS",
      "tags.element" -> "VALIDITY",
      "tags.element" -> "DATA"
    ))
    val elements = (0 until rows).filter(_ % 7 != 0).flatMap(r => Seq.tabulate(r % 3)(k => r * 10 + k))
    val el = data(tags, "tags.element")
    assert(el.stats.get.min.contains(StatValue.Integral(elements.min)) && el.stats.get.max.contains(
      StatValue.Integral(elements.max)
    ))
    assert(el.bloomFilterBytes == 0)

    val price = data(column(i, "price"), "price")
    assert(price.stats.get.max.contains(StatValue.Text("74.97")))
    assert(i.columns.map(_.share).sum < 1.0 && i.columns.map(_.share).sum > 0.5)
  }

  test("--column and --stripe narrow the report; unknown ones are errors") {
    val i = FileInspector.inspect(file, conf, InspectSelection(Some(Seq("ID", "price")), Some(Seq(2))))
    assert(i.columns.map(_.name) == Seq("id", "price") && i.stripes.map(_.index) == Seq(2))
    assert(data(column(i, "id"), "id").chunks.map(_.stripe) == Seq(2))
    assert(data(column(i, "id"), "id").stats.get.min.contains(StatValue.Integral(2000)))
    assert(intercept[IllegalArgumentException](FileInspector.inspect(file, conf, InspectSelection(Some(Seq("nope")))))
      .getMessage.contains("no column `nope`"))
    assert(intercept[IllegalArgumentException](FileInspector.inspect(
      file,
      conf,
      InspectSelection(stripes = Some(Seq(3)))
    ))
      .getMessage.contains("no stripe 3"))
  }

  test("metadata only: a large file is inspected by reading a small part of it") {
    val p = new Path(TestFiles.tempDir("fermion-inspect-big").resolve("big.fermion").toUri)
    val root = ArrowTestData.randomRoot(ArrowTestData.allTypes, 200000, seed = 5)
    val w = FermionFileWriter.create(
      p,
      conf,
      ArrowSchemaMapping.toFermion(root.getSchema),
      WriterOptions(stripeMaxRows = 50000)
    )
    try w.write(root)
    finally { root.close(); w.close() }
    val i = FileInspector.inspect(p.toString, conf)
    val pages = i.columns.flatMap(_.streams.map(_.pages)).sum
    assert(i.fileBytes > 4L * 1024 * 1024)
    assert(i.bytesRead < i.metadataBytes + 64 * 1024 + pages * 20L, s"read ${i.bytesRead} of ${i.fileBytes}")
    assert(i.bytesRead * 20 < i.fileBytes)
    val noHeaders = FileInspector.inspect(p.toString, conf, InspectSelection(pageHeaders = false))
    assert(noHeaders.bytesRead < i.bytesRead && noHeaders.columns.forall(_.streams.forall(_.encodings.isEmpty)))
  }

  test("JSON: valid, with the documented top-level keys, statistics typed") {
    val json = InspectJson.render(FileInspector.inspect(file, conf))
    val parser = new JsonFactory().createParser(json)
    var depth = 0
    val top = scala.collection.mutable.ArrayBuffer.empty[String]
    var token = parser.nextToken()
    while (token != null) {
      token match {
        case JsonToken.START_OBJECT | JsonToken.START_ARRAY => depth += 1
        case JsonToken.END_OBJECT | JsonToken.END_ARRAY => depth -= 1
        case JsonToken.FIELD_NAME if depth == 1 => top += parser.currentName()
        case _ =>
      }
      token = parser.nextToken()
    }
    assert(depth == 0)
    assert(
      Seq("kind", "format_version", "rows", "schema", "stripes", "columns", "bytes_read").forall(top.contains),
      top
    )
    assert(json.contains("\"format_version\" : \"1.7\"") && json.contains("\"min\" : 0") && json.contains(
      "\"max\" : \"74.97\""
    ))
  }

  test("text output names what matters") {
    val text = InspectText.render(FileInspector.inspect(file, conf), chunks = true, pages = true)
    Seq(
      "format version 1.7",
      "2,500 rows",
      "3 stripes",
      "id: int64 not null  (field id 0)",
      "element: int32  (field id 4)",
      "DATA",
      "FULL",
      "USE_DEFAULT",
      "bloom filters",
      "null in every row (no CMB)",
      "min 0  max 2499",
      "page 0 at",
      "Read "
    ).foreach(s => assert(text.contains(s), s"missing '$s' in\n$text"))
  }

  test("a dataset: versions, operations, fragments, deletions, tags, config") {
    val root = new Path(TestFiles.tempDir("fermion-inspect-ds").resolve("t").toUri)
    val ds = new FermionDataset(root, conf)
    val schema = ArrowSchemaMapping.toFermion(new Schema(fields.asJava))
    def append(ids: Range, readVersion: Long): Manifest = {
      val (rel, path) = ds.newDataFile()
      writeFile(path, ids)
      ds.commit(
        readVersion,
        Operation.Append(
          schema,
          IndexedSeq(Fragment(0, ids.size, IndexedSeq(DataFile(rel, schema.fields.map(_.fieldId))), None))
        ),
        Map("fermion.write.compression" -> "zstd")
      )
    }
    append(0 until 1000, 0)
    val v2 = append(1000 until 1500, 1)
    val frag = v2.fragments.head
    val gone = new RoaringBitmap()
    (0 until 1000 by 4).foreach(gone.add)
    ds.commit(
      2,
      Operation.Delete(
        IndexedSeq(frag.copy(deletion = Some(ds.writeDeletionFile(frag.id, 2, gone)))),
        Set.empty,
        "id % 4 = 0"
      )
    )
    ds.createTag("before-rename", 3)
    ds.updateSchema().renameColumn("name", "label").commit()

    val i = DatasetInspector.inspect(root.toString, conf)
    assert(i.version == 4 && i.latestVersion == 4 && i.rows == 1250)
    assert(i.versions.map(_.operation) == Seq("append", "append", "delete", "project"))
    assert(i.versions.map(_.rows) == Seq(1000L, 1500L, 1250L, 1250L))
    assert(i.versions(2).detail.exists(_.contains("id % 4 = 0")) && i.versions(2).tags == Seq("before-rename"))
    assert(i.schema.map(_.name).contains("label"))
    assert(i.fragments.map(_.physicalRows) == Seq(1000L, 500L))
    assert(i.fragments.head.deletion.map(_.deletedRows).contains(250L) && i.fragments(1).deletion.isEmpty)
    assert(i.fragments.forall(_.files.forall(_.bytes.exists(_ > 0))))
    assert(i.tags == Map("before-rename" -> 3L) && i.config.get("fermion.write.compression").contains("zstd"))
    assert(i.bytesRead > 0)
    val v1 = DatasetInspector.inspect(root.toString, conf, Some(1))
    assert(v1.version == 1 && v1.fragments.size == 1 && v1.versions.size == 4)
    val json = InspectJson.render(i)
    Seq("\"kind\" : \"dataset\"", "\"versions\"", "\"fragments\"", "\"deleted_rows\" : 250", "\"before-rename\" : 3")
      .foreach(s => assert(json.contains(s), s))
    val text = InspectText.render(i)
    Seq(
      "Fermion dataset",
      "version 4 (latest)",
      "delete",
      "tags before-rename",
      "250 deleted",
      "fermion.write.compression = zstd"
    )
      .foreach(s => assert(text.contains(s), s"missing '$s' in\n$text"))
  }

  test("the command: text, --json, usage and errors as exit codes") {
    def run(args: String*): (Int, String, String) = {
      val out = new java.io.ByteArrayOutputStream()
      val err = new java.io.ByteArrayOutputStream()
      val code = InspectCommand.run(args, new java.io.PrintStream(out, true), new java.io.PrintStream(err, true), conf)
      (code, out.toString("UTF-8"), err.toString("UTF-8"))
    }
    val (c1, text, _) = run(file, "--column", "id")
    assert(c1 == 0 && text.contains("Columns (1 of 5)"))
    val (c2, json, _) = run(file, "--json", "--stripe", "0,1")
    assert(c2 == 0 && json.trim.startsWith("{") && json.contains("\"num_stripes\" : 3"))
    assert(run()._1 == 2 && run("--bogus", file)._1 == 2)
    val (c3, _, err) = run(file + ".missing")
    assert(c3 == 1 && err.contains("does not exist"))
  }

  test("the JSON schema names every page encoding and codec this reader knows") {
    val schema = Seq(
      java.nio.file.Paths.get("docs/inspect.schema.json"),
      java.nio.file.Paths.get("../docs/inspect.schema.json")
    ).find(java.nio.file.Files.exists(_)).map(java.nio.file.Files.readString(_))
      .getOrElse(fail("docs/inspect.schema.json not found"))
    def enumOf(key: String): Set[String] = {
      val m = ("\"" + key + "\": \\{\"enum\": \\[([^\\]]*)\\]").r.findFirstMatchIn(schema)
        .getOrElse(fail(s"no enum for $key"))
      m.group(1).split(",").map(_.trim.stripPrefix("\"").stripSuffix("\"")).toSet
    }
    import io.fermion.core.layout.PageEncoding
    import io.fermion.core.codec.PageCodec
    assert(enumOf("encoding") == PageEncoding.all.map(PageEncoding.name).toSet)
    assert(enumOf("codec") == Set(PageCodec.None, PageCodec.Zstd, PageCodec.ZstdBlocks, PageCodec.ZstdPrimedBlocks)
      .map(PageCodec.name))
  }
}
