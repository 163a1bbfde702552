package io.fermion.core.fuzz

import java.nio.charset.StandardCharsets
import java.nio.file.{Files, Path}
import java.util.Properties

import scala.jdk.CollectionConverters._

/** The regression corpus: every fuzz case that ever failed, as the damaged bytes (`<name>.bin`) and
  * how they were made and read (`<name>.properties`), kept in
  * core/src/test/resources/fuzz-corpus/ and replayed by FuzzSuite with every operation and both
  * checksum settings. */
object FuzzCorpus {
  val ResourceDir = "fuzz-corpus"

  def save(dir: Path, c: FuzzCase, outcome: Outcome, seed: Long, shapeHash: String): Path = {
    Files.createDirectories(dir)
    val name = s"${c.target}-${c.shape}-s$seed-c${c.index}"
    Files.write(dir.resolve(s"$name.bin"), c.bytes)
    val p = new Properties()
    p.setProperty("target", c.target)
    p.setProperty("shape", c.shape)
    p.setProperty("shapeHash", shapeHash)
    p.setProperty("seed", seed.toString)
    p.setProperty("index", c.index.toString)
    p.setProperty("damage", c.damage)
    p.setProperty("fixedCrcs", c.fixedCrcs.toString)
    p.setProperty("protected", c.protectedDamage.toString)
    p.setProperty("readMode", c.mode.toString)
    p.setProperty("failure", s"${outcome.key}: ${outcome.detail.take(400)}")
    val out = Files.newBufferedWriter(dir.resolve(s"$name.properties"), StandardCharsets.UTF_8)
    try p.store(out, "fuzz case that failed once; replayed by FuzzSuite")
    finally out.close()
    dir.resolve(s"$name.bin")
  }

  final case class Entry(name: String, props: Map[String, String], bytes: Array[Byte])

  /** The entries of a corpus directory. */
  def load(dir: Path): IndexedSeq[Entry] =
    if (!Files.isDirectory(dir)) IndexedSeq.empty
    else
      Files.list(dir).iterator.asScala.filter(_.toString.endsWith(".properties")).toIndexedSeq.sortBy(_.toString).map {
        f =>
          val p = new Properties()
          val in = Files.newBufferedReader(f, StandardCharsets.UTF_8)
          try p.load(in)
          finally in.close()
          val name = f.getFileName.toString.stripSuffix(".properties")
          Entry(name, p.asScala.toMap, Files.readAllBytes(f.resolveSibling(s"$name.bin")))
      }

  /** The cases an entry is replayed as: every operation, checksums verified and not. Protection
    * (exact results required on success) holds only if the shape is still the one the entry was
    * damaged from. */
  /** Whether `damaged` differs from the shape's file in a page payload (any length change counts). */
  def touchesPayloads(s: Shape, damaged: Array[Byte]): Boolean =
    damaged.length != s.bytes.length ||
      s.map.payloads.exists(r => (r.start until r.end).exists(i => damaged(i) != s.bytes(i)))

  def replayCases(e: Entry): IndexedSeq[FuzzCase] = {
    val target = e.props("target")
    val index = e.props("index").toLong
    val fixed = e.props("fixedCrcs").toBoolean
    if (target == "file") {
      val shape = FuzzShapes.files.find(_.name == e.props("shape"))
      shape.toIndexedSeq.flatMap { s =>
        val sameShape = s.hash == e.props("shapeHash")
        val schema = FuzzShapes.schemaOf(s)
        val r = FuzzRunner.originalReader(s)
        val ops =
          try FuzzOp.all(schema, (0 until r.numStripes).map(r.stripes.rowCount))
          finally r.close()
        Seq(true, false).map { verify =>
          val mode = ReadMode.default.copy(verify = verify)
          FuzzCase(
            index,
            target,
            s.name,
            e.props("damage"),
            fixed,
            mode,
            ops,
            e.bytes,
            verify && sameShape && e.props("protected").toBoolean,
            FuzzCorpus.touchesPayloads(s, e.bytes)
          )
        }
      }
    } else {
      val shape = FuzzShapes.metadata.find(_.name == e.props("shape"))
      shape.toIndexedSeq.map { s =>
        FuzzCase(
          index,
          target,
          s.name,
          e.props("damage"),
          fixed,
          ReadMode.default,
          IndexedSeq.empty,
          e.bytes,
          java.util.Arrays.hashCode(s.bytes).toHexString == e.props("shapeHash") && e.props("protected").toBoolean
        )
      }
    }
  }
}
