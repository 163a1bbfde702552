package io.fermion.core.fuzz

import java.nio.file.Paths

import org.scalatest.funsuite.AnyFunSuite

/** The reader fuzzer in CI: a fixed seed for a short budget (the long run is `dev/fuzz`), and a
  * replay of the regression corpus of every case that ever failed. Every case must end in a typed
  * Fermion exception or return exactly the original data (or, where the damage is invisible to
  * every checksum the read verifies, some data), within the time and memory bound, with its Arrow
  * memory released. */
class FuzzSuite extends AnyFunSuite {
  private val budgetMillis = sys.props.get("fermion.fuzz.millis").map(_.toLong).getOrElse(20000L)
  private val maxCases = sys.props.get("fermion.fuzz.cases").map(_.toLong).getOrElse(20000L)
  // The first cases of the seed always run, however slow the machine (a budget alone ran 447 of
  // them on a loaded 2-core run and failed the floor): the same cases every run, the budget only
  // adding more.
  private val minCases = math.min(500L, maxCases)
  private val headerPages = sys.props.get("fermion.fuzz.headerPages").map(_.toInt).getOrElse(2)

  test("fixed-seed fuzz: no untyped exception, wrong result, hang or leak") {
    val runner = new FuzzRunner(seed = 20261123L)
    val summary = new FuzzRunner.Summary
    val deadline = System.currentTimeMillis() + budgetMillis
    try {
      var i = 0L
      while (i < maxCases && (i < minCases || System.currentTimeMillis() < deadline)) {
        val c = runner.generate(i)
        summary.add(c, runner.run(c))
        i += 1
      }
    } finally runner.close()
    info(s"${summary.cases} cases:\n${summary.render}")
    assert(summary.cases >= minCases, s"ran at least the first $minCases cases")
    assert(summary.counts.keys.exists(_.startsWith("typed ")), "damage was detected at all")
    assert(summary.counts.getOrElse("exact", 0L) > 0, "some damage was harmless")
    assert(
      summary.bad.isEmpty,
      summary.bad.take(20).map { case (c, o) => s"${c.describe}\n  -> ${o.key}: ${o.detail}" }.mkString("\n")
    )
  }

  test("page headers (no CRC covers them): every field of sampled headers of every shape damaged, typed or exact") {
    // Each header field set to values that keep it plausible: off by one or a word, another codec,
    // every other encoding. With checksums verified, a read that succeeds must return the original
    // data: the cross-checks against the CMB and the other streams have to catch the rest.
    val runner = new FuzzRunner(seed = 0L)
    val summary = new FuzzRunner.Summary
    try FuzzShapes.files.foreach { shape =>
        val map = shape.map
        val rnd = new scala.util.Random(shape.name.hashCode)
        val pages =
          if (map.pages.size <= headerPages) map.pages else rnd.shuffle(map.pages.toIndexedSeq).take(headerPages)
        val r = FuzzRunner.originalReader(shape)
        val ops =
          try IndexedSeq(FuzzOp.Describe, FuzzOp.FullRead) ++
              (if (r.numStripes == 0 || r.schema.fields.isEmpty) Nil
               else Seq(FuzzOp.takeOf(r.schema, 0, r.stripes.rowCount(0))))
          finally r.close()
        for (p <- pages) {
          val b = java.nio.ByteBuffer.wrap(shape.bytes).order(java.nio.ByteOrder.LITTLE_ENDIAN)
          def u32(at: Int) = b.getInt(p.header + at)
          val edits: Seq[(String, Array[Byte] => Unit)] =
            Seq(0, 4, 8).flatMap { at =>
              Seq(1, -1, 8, -8, -u32(at), 1 << 20).map { d =>
                (
                  s"u32 +$at ${d}",
                  (x: Array[Byte]) => {
                    java.nio.ByteBuffer.wrap(x).order(java.nio.ByteOrder.LITTLE_ENDIAN).putInt(
                      p.header + at,
                      u32(at) + d
                    ); ()
                  }
                )
              }
            } ++ Seq(("crc", (x: Array[Byte]) => { x(p.header + 12) = (x(p.header + 12) ^ 1).toByte })) ++
              (0 to 2).filter(_ != shape.bytes(p.header + 16)).map(c =>
                (s"codec $c", (x: Array[Byte]) => x(p.header + 16) = c.toByte)
              ) ++
              (0 to 8).filter(_ != shape.bytes(p.header + 17)).map(e =>
                (s"encoding $e", (x: Array[Byte]) => x(p.header + 17) = e.toByte)
              ) ++
              Seq(("reserved", (x: Array[Byte]) => x(p.header + 18) = 7))
          for ((what, edit) <- edits; verify <- Seq(true, false)) {
            val bytes = shape.bytes.clone()
            edit(bytes)
            val c = FuzzCase(
              -1,
              "file",
              shape.name,
              s"page header at ${p.header}: $what",
              false,
              ReadMode.default.copy(verify = verify),
              ops,
              bytes,
              verify
            )
            val o = runner.run(c)
            summary.add(c, o)
            if (o.bad && sys.props.contains("fermion.fuzz.dump")) {
              java.nio.file.Files.write(
                java.nio.file.Paths.get(s"/tmp/fermion-shape-${shape.name}.fermion"),
                shape.bytes
              )
            }
          }
        }
      }
    finally runner.close()
    info(s"${summary.cases} damaged page headers:\n${summary.render}")
    assert(summary.counts.getOrElse("exact", 0L) > 0 && summary.counts.keys.exists(_.startsWith("typed ")))
    assert(
      summary.bad.isEmpty,
      summary.bad.take(20).map { case (c, o) => s"${c.describe}\n  -> ${o.key}: ${o.detail}" }.mkString("\n")
    )
  }

  test("regression corpus: every case that ever failed now ends typed or exact") {
    val dir = Paths.get(getClass.getResource(s"/${FuzzCorpus.ResourceDir}/README.md").toURI).getParent
    val entries = FuzzCorpus.load(dir)
    val runner = new FuzzRunner(seed = 0L)
    val failures =
      try entries.flatMap { e =>
          FuzzCorpus.replayCases(e).map(c => (e.name, c, runner.run(c))).filter(_._3.bad)
        }
      finally runner.close()
    info(s"${entries.size} corpus entries replayed")
    assert(failures.isEmpty, failures.map { case (n, c, o) => s"$n (${c.mode}): ${o.key}: ${o.detail}" }.mkString("\n"))
  }
}
