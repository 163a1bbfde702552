package io.fermion.core.fuzz

import java.io.{BufferedReader, InputStreamReader}
import java.nio.file.{Path, Paths}

import scala.jdk.CollectionConverters._

/** The long fuzz run (`dev/fuzz [--cases N] [--seed S] [--save DIR]`): a supervisor that runs the
  * cases in a child JVM, so that a JVM crash (which no code inside the JVM can observe) is seen,
  * recorded against the case that was running, and the run resumes after it. The child prints
  * `S <index>` before and `R <index> <bad> <key>\t<detail>` after each case. At the end the
  * supervisor prints the count of every outcome (typed exception classes, exact reads, ...),
  * lists the bad cases, and saves each to the regression corpus directory given by `--save`. */
object FuzzMain {
  final private case class Args(
      cases: Long = 100000,
      seed: Long = 1,
      from: Long = 0,
      child: Boolean = false,
      save: Option[Path] = None,
      timeoutMillis: Long = 20000,
      heap: String = "1g",
      only: Seq[Long] = Nil
  )

  private def parse(args: List[String], a: Args = Args()): Args = args match {
    case Nil => a
    case "--cases" :: n :: rest => parse(rest, a.copy(cases = n.replace("_", "").toLong))
    case "--seed" :: n :: rest => parse(rest, a.copy(seed = n.toLong))
    case "--from" :: n :: rest => parse(rest, a.copy(from = n.toLong))
    case "--child" :: rest => parse(rest, a.copy(child = true))
    case "--save" :: d :: rest => parse(rest, a.copy(save = Some(Paths.get(d))))
    case "--timeout-ms" :: n :: rest => parse(rest, a.copy(timeoutMillis = n.toLong))
    case "--heap" :: h :: rest => parse(rest, a.copy(heap = h))
    case "--only" :: list :: rest => parse(rest, a.copy(only = list.split(",").map(_.trim.toLong).toSeq))
    case other :: _ =>
      System.err.println(
        s"unknown argument $other; usage: --cases N --seed S [--save DIR] [--timeout-ms T] [--heap 1g]"
      )
      sys.exit(2)
  }

  def main(argv: Array[String]): Unit = {
    val a = parse(argv.toList)
    if (a.child) child(a) else if (a.only.nonEmpty) only(a) else supervise(a)
  }

  /** Runs the listed cases in this JVM and, with --save, adds every one of them to the corpus
    * whatever its outcome now (to record cases that failed before a fix). */
  private def only(a: Args): Unit = {
    val runner = new FuzzRunner(a.seed, a.timeoutMillis)
    a.only.foreach { i =>
      val c = runner.generate(i)
      val o = runner.run(c)
      println(s"${c.describe}\n  -> ${o.key} ${o.detail.take(300)}")
      a.save.foreach { dir =>
        val hash = FuzzShapes.files.find(_.name == c.shape).map(_.hash)
          .getOrElse(java.util.Arrays.hashCode(FuzzShapes.metadata.find(_.name == c.shape).get.bytes).toHexString)
        println(s"saved ${FuzzCorpus.save(dir, c, o, a.seed, hash)}")
      }
    }
    runner.close()
    sys.exit(0)
  }

  private def child(a: Args): Unit = {
    val runner = new FuzzRunner(a.seed, a.timeoutMillis)
    var i = a.from
    while (i < a.cases) {
      println(s"S $i")
      val o =
        try runner.run(runner.generate(i))
        catch {
          case t: Throwable => Outcome("HARNESS ERROR", bad = true, s"$t at ${t.getStackTrace.take(5).mkString(" < ")}")
        }
      val detail = o.detail.replace('\n', ' ').replace('\t', ' ').take(2000)
      if (runner.lastPeak > (8L << 20)) println(s"M $i ${runner.lastPeak}")
      runner.lastPeak = 0
      println(s"R $i ${o.bad} ${o.key}\t$detail")
      if (i % 1000 == 999) println(s"P ${runner.peakDamaged} ${runner.peakExact} ${runner.slowestMillis}")
      i += 1
    }
    println(s"P ${runner.peakDamaged} ${runner.peakExact} ${runner.slowestMillis}")
    System.out.flush()
    runner.close()
    sys.exit(0)
  }

  private def supervise(a: Args): Unit = {
    val start = System.nanoTime()
    val javaBin = Paths.get(System.getProperty("java.home"), "bin", "java").toString
    val cp = System.getProperty("java.class.path")
    val jvmFlags = java.lang.management.ManagementFactory.getRuntimeMXBean.getInputArguments.asScala
      .filter(f => f.startsWith("--add-opens") || f.startsWith("-Dio.netty"))
    val counts = scala.collection.mutable.TreeMap.empty[String, Long]
    val bad = scala.collection.mutable.ArrayBuffer.empty[(Long, String, String)]
    var peakDamaged = 0L
    var peakExact = 0L
    var slowest = 0L
    var largest = (-1L, 0L)
    var next = a.from
    var crashes = 0
    var done = 0L
    while (next < a.cases) {
      val cmd = Seq(javaBin, s"-Xmx${a.heap}", "-cp", cp) ++ jvmFlags ++
        Seq(
          "io.fermion.core.fuzz.FuzzMain",
          "--child",
          "--seed",
          a.seed.toString,
          "--from",
          next.toString,
          "--cases",
          a.cases.toString,
          "--timeout-ms",
          a.timeoutMillis.toString
        )
      val pb = new ProcessBuilder(cmd: _*).redirectError(ProcessBuilder.Redirect.INHERIT)
      val p = pb.start()
      val in = new BufferedReader(new InputStreamReader(p.getInputStream))
      var running = -1L
      var line = in.readLine()
      while (line != null) {
        line.split(" ", 2) match {
          case Array("S", i) => running = i.toLong
          case Array("R", rest) =>
            val Array(head, detail) = rest.split("\t", 2).padTo(2, "")
            val Array(i, isBad, key) = head.split(" ", 3)
            counts(key) = counts.getOrElse(key, 0L) + 1
            if (isBad.toBoolean) {
              bad += ((i.toLong, key, detail))
              System.err.println(s"[fuzz] case $i: $key: ${detail.take(300)}")
            }
            next = i.toLong + 1
            done += 1
            running = -1
            if (done % 10000 == 0)
              System.err.println(f"[fuzz] $done%,d cases, ${(System.nanoTime() - start) / 1e9}%.0f s")
          case Array("M", rest) =>
            val Array(i, peak) = rest.split(" ")
            if (peak.toLong > largest._2) largest = (i.toLong, peak.toLong)
          case Array("P", rest) =>
            val Array(d, e, t) = rest.split(" ")
            peakDamaged = math.max(peakDamaged, d.toLong); peakExact = math.max(peakExact, e.toLong)
            slowest = math.max(slowest, t.toLong)
          case _ => System.err.println(line)
        }
        line = in.readLine()
      }
      val code = p.waitFor()
      if (running >= 0 || (code != 0 && next < a.cases)) {
        val at = if (running >= 0) running else next
        crashes += 1
        counts("JVM CRASH") = counts.getOrElse("JVM CRASH", 0L) + 1
        bad += ((at, "JVM CRASH", s"child JVM exited with $code during case $at"))
        System.err.println(s"[fuzz] the child JVM died (exit $code) in case $at; resuming after it")
        next = at + 1
        done += 1
      }
    }
    val secs = (System.nanoTime() - start) / 1e9
    val w = (counts.keys.map(_.length) ++ Seq(5)).max
    println(f"Fermion reader fuzz: seed ${a.seed}, cases ${a.from} until ${a.cases} (${done}%,d run) in $secs%.0f s")
    counts.foreach { case (k, n) => println(f"  ${k.padTo(w, ' ')}  $n%,d") }
    println(f"  ${"total".padTo(w, ' ')}  ${counts.values.sum}%,d")
    println(
      f"largest Arrow allocation of one case: $peakDamaged%,d bytes (of an exact read: $peakExact%,d bytes); slowest case: $slowest%,d ms (limit ${a.timeoutMillis}%,d ms)"
    )
    if (largest._1 >= 0)
      println(f"  (the largest allocation above 8 MiB was case ${largest._1}: ${largest._2}%,d bytes)")
    println(s"bad cases: ${bad.size} (untyped exceptions, wrong results without error, hangs, leaks, JVM crashes)")
    bad.take(200).foreach { case (i, k, d) => println(s"  case $i: $k: ${d.take(500)}") }
    a.save.foreach { dir =>
      val runner = new FuzzRunner(a.seed, a.timeoutMillis)
      bad.foreach { case (i, k, d) =>
        val c = runner.generate(i)
        val hash = FuzzShapes.files.find(_.name == c.shape).map(_.hash)
          .getOrElse(java.util.Arrays.hashCode(FuzzShapes.metadata.find(_.name == c.shape).get.bytes).toHexString)
        val f = FuzzCorpus.save(dir, c, Outcome(k, bad = true, d), a.seed, hash)
        println(s"saved $f")
      }
      runner.close()
    }
    sys.exit(if (bad.isEmpty) 0 else 1)
  }
}
