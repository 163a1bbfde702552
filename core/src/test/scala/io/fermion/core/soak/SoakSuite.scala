package io.fermion.core.soak

import java.nio.file.Files

import org.scalatest.funsuite.AnyFunSuite

/** Short versions of the soak tests (the long ones are `dev/soak crash` and `dev/soak concurrency`):
  * worker JVMs killed with SIGKILL in the middle of dataset operations, and several worker JVMs
  * committing at once; the dataset must always open at a committed version with exactly its rows. */
class SoakSuite extends AnyFunSuite {
  private val kills = sys.props.get("fermion.soak.kills").map(_.toInt).getOrElse(6)
  private val seconds = sys.props.get("fermion.soak.seconds").map(_.toInt).getOrElse(8)

  test(s"crash soak: $kills workers killed mid-operation lose no commit and leave no partial version") {
    val dir = Files.createTempDirectory("fermion-crash-soak").toFile
    val r = SoakMain.crash(kills, dir, seed = 20261123L, maxWaitMillis = 2500, log = info(_))
    assert(r.ok, r.report)
  }

  test(s"concurrency soak: 4 workers for $seconds s, the final content is the sum of the reported commits") {
    val dir = Files.createTempDirectory("fermion-concurrency-soak").toFile
    val r = SoakMain.concurrency(4, seconds, dir, seed = 20261123L, log = info(_))
    assert(r.ok, r.report)
    assert(r.report.contains("append"), r.report)
  }
}
