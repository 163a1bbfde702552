package io.fermion.core.fuzz

import java.nio.file.Paths

import org.scalatest.funsuite.AnyFunSuite

/** The reader fuzzer in CI: a fixed seed for a short budget (the long run is `dev/fuzz`), and a
  * replay of the regression corpus of every case that ever failed. Every case must end in a typed
  * Fermion exception or return exactly the original data (or, where the damage is invisible to
  * every checksum the read verifies, some data), within the time and memory bound, with its Arrow
  * memory released. */
class FuzzSuite extends AnyFunSuite {
  private val budgetMillis = sys.props.get("fermion.fuzz.millis").map(_.toLong).getOrElse(40000L)
  private val maxCases = sys.props.get("fermion.fuzz.cases").map(_.toLong).getOrElse(20000L)

  test("fixed-seed fuzz: no untyped exception, wrong result, hang or leak") {
    val runner = new FuzzRunner(seed = 20261123L)
    val summary = new FuzzRunner.Summary
    val deadline = System.currentTimeMillis() + budgetMillis
    try {
      var i = 0L
      while (i < maxCases && System.currentTimeMillis() < deadline) {
        val c = runner.generate(i)
        summary.add(c, runner.run(c))
        i += 1
      }
    } finally runner.close()
    info(s"${summary.cases} cases:\n${summary.render}")
    assert(summary.cases >= 500, "the budget ran at least 500 cases")
    assert(summary.counts.keys.exists(_.startsWith("typed ")), "damage was detected at all")
    assert(summary.counts.getOrElse("exact", 0L) > 0, "some damage was harmless")
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
