package io.fermion.core.soak

import java.io.{BufferedReader, File, InputStreamReader}
import java.nio.charset.StandardCharsets
import java.nio.file.{Files, Paths}

import scala.collection.mutable
import scala.jdk.CollectionConverters._
import scala.util.Random

import io.fermion.core.dataset._
import org.apache.hadoop.fs.Path

/** What an operation was to do, from its journal line. */
sealed trait Intent
object Intent {
  final case class Append(fields: Set[Int], ids: IndexedSeq[Long]) extends Intent
  final case class Delete(ids: IndexedSeq[Long]) extends Intent
  case object Compact extends Intent
  final case class AddColumn(field: Int, ids: IndexedSeq[Long]) extends Intent
}

/** The expected content of the dataset: row id -> non-null field ids, after applying the intents of
  * the committed operations in version order; with an order-independent digest kept up to date. */
final class SoakModel {
  val rows = mutable.HashMap.empty[Long, Set[Int]]
  var digest = 0L
  private def contrib(id: Long, fs: Set[Int]) = SoakData.value(id, fs.toSeq.sorted.hashCode)

  /** Applies an intent; returns a problem (a row added twice, a deleted row not live) or None. */
  def apply(i: Intent): Option[String] = i match {
    case Intent.Append(fields, ids) =>
      ids.find(rows.contains).map(id => s"row $id appended twice").orElse {
        ids.foreach { id => rows(id) = fields; digest += contrib(id, fields) }; None
      }
    case Intent.Delete(ids) =>
      ids.find(id => !rows.contains(id)).map(id => s"deleted row $id was not live").orElse {
        ids.foreach(id => digest -= contrib(id, rows.remove(id).get)); None
      }
    case Intent.Compact => None
    case Intent.AddColumn(k, ids) =>
      ids.foreach { id =>
        rows.get(id).foreach { fs => digest -= contrib(id, fs); rows(id) = fs + k; digest += contrib(id, fs + k) }
      }
      None
  }
}

/** Journals of all workers, and the version chain as verified so far. */
final class SoakState(val dir: File, ds: FermionDataset) {
  val intents = mutable.HashMap.empty[Long, Intent]
  val kinds = mutable.HashMap.empty[Long, String]
  val oks = mutable.HashMap.empty[Long, Long] // op -> version it reported
  val fails = mutable.HashMap.empty[Long, String] // op -> "conflict ..." / "error ..."
  val reads = mutable.ArrayBuffer.empty[(Long, Long, Int)] // version, digest, rows
  val chain = mutable.TreeMap.empty[Long, Long] // version -> op
  val digests = mutable.HashMap.empty[Long, (Long, Int)] // version -> (digest, rows) of the model
  val model = new SoakModel
  var verified = 0L
  val problems = mutable.ArrayBuffer.empty[String]

  def loadJournals(): Unit = {
    intents.clear(); kinds.clear(); oks.clear(); fails.clear(); reads.clear()
    dir.listFiles().filter(_.getName.endsWith(".journal")).sortBy(_.getName).foreach { f =>
      Files.readAllLines(f.toPath, StandardCharsets.UTF_8).asScala.foreach { line =>
        line.split(" ", 5).toList match {
          case "I" :: op :: "append" :: fields :: ids :: Nil =>
            intents(op.toLong) =
              Intent.Append(fields.split(",").map(_.toInt).toSet, SoakJournal.parseRanges(ids).toIndexedSeq)
            kinds(op.toLong) = "append"
          case "I" :: op :: "delete" :: ids :: Nil =>
            intents(op.toLong) = Intent.Delete(SoakJournal.parseRanges(ids).toIndexedSeq); kinds(op.toLong) = "delete"
          case "I" :: op :: "compact" :: Nil => intents(op.toLong) = Intent.Compact; kinds(op.toLong) = "compact"
          case "I" :: op :: "addcol" :: k :: ids :: Nil =>
            intents(op.toLong) = Intent.AddColumn(k.toInt, SoakJournal.parseRanges(ids).toIndexedSeq)
            kinds(op.toLong) = "addcol"
          case "OK" :: op :: v :: Nil => oks(op.toLong) = v.toLong
          case "FAIL" :: op :: rest => fails(op.toLong) = rest.mkString(" ")
          case "READ" :: v :: d :: n :: Nil => reads += ((v.toLong, d.toLong, n.toInt))
          case other if line.trim.isEmpty =>
          case _ => // a line torn by a kill (the journal syncs whole lines, but a kill may land mid-write)
        }
      }
    }
  }

  /** Checks every version published since the last check: it decodes, was committed by an operation
    * that logged its intent, comes right after the previous one, and holds as many rows as the
    * model; then the newest version's content row by row against the model. */
  def verify(allocator: org.apache.arrow.memory.BufferAllocator, full: Boolean = true): Unit = {
    loadJournals()
    val versions = ds.versionNumbers()
    versions.filter(_ > verified).foreach { v =>
      if (verified > 0 && v != verified + 1 && chain.nonEmpty) problems += s"version $v follows $verified"
      try {
        val m = ds.manifest(v)
        SoakData.opIdOf(ds, m) match {
          case None => problems += s"version $v: no soak operation id in its transaction"
          case Some(op) =>
            if (chain.values.exists(_ == op)) problems += s"version $v: operation $op committed twice"
            intents.get(op) match {
              case None => problems += s"version $v: operation $op published without logging its intent"
              case Some(i) => model.apply(i).foreach(p => problems += s"version $v (${kinds(op)}): $p")
            }
            chain(v) = op
            digests(v) = (model.digest, model.rows.size)
            if (m.rowCount != model.rows.size)
              problems += s"version $v: manifest counts ${m.rowCount} rows, the model ${model.rows.size}"
            m.fragments.flatMap(f => f.files.map(_.path) ++ f.deletion.map(_.path)).foreach { p =>
              if (!ds.fs.exists(ds.resolvePath(p))) problems += s"version $v references missing $p"
            }
        }
      } catch { case e: Exception => problems += s"version $v is unreadable: $e" }
      verified = v
    }
    if (full && versions.nonEmpty) {
      val latest = versions.last
      try {
        val m = ds.manifest(latest)
        val shape = SoakData.shapeOf(latest, SoakData.readVersion(ds, m, allocator))
        if (shape != model.rows) {
          val missing = model.rows.keySet.toSet -- shape.keySet
          val extra = shape.keySet -- model.rows.keySet.toSet
          val differ = shape.keySet.intersect(model.rows.keySet).filter(id => shape(id) != model.rows(id))
          problems += s"version $latest: ${missing.size} rows missing, ${extra.size} unexpected, ${differ.size} with other columns (e.g. ${(missing ++ extra ++ differ).take(3)})"
        }
      } catch { case e: Exception => problems += s"latest version $latest does not read: $e" }
    }
    // Reported outcomes agree with the chain.
    oks.foreach { case (op, v) =>
      if (chain.contains(v) && chain(v) != op) problems += s"operation $op reported version $v, which holds ${chain(v)}"
    }
    fails.keys.foreach(op =>
      if (chain.values.exists(_ == op)) problems += s"operation $op reported failure but was published"
    )
  }
}

/** The soak tests' supervisor (`dev/soak crash|concurrency ...`):
  *
  *  - `crash [--kills N] [--dir D] [--seed S] [--max-wait-ms T]`: one worker JVM at a time runs
  *    random operations (append, delete, compact, add column, cleanup) and is killed with SIGKILL
  *    after a random time; after each kill the dataset is checked: every version published since
  *    the last check decodes, was committed by an operation that logged its intent, and holds the
  *    rows the intents predict; the latest is read whole and compared row by row. At the end a
  *    cleanup with no writer left must remove every unreferenced file and nothing referenced.
  *  - `concurrency [--procs P] [--seconds T] [--dir D] [--seed S]`: P worker JVMs append, delete,
  *    compact, add columns and read at once for T seconds; then the final content must equal the
  *    sum of the operations that reported success, each exactly once and in version order, every
  *    failure must be the typed commit conflict, and every read must have seen a whole version. */
object SoakMain {

  /** Phases a kill is aimed at (operation, phase as the worker announces it). */
  val targets: IndexedSeq[(String, String)] = IndexedSeq(
    ("append", "write"),
    ("append", "commit"),
    ("delete", "write"),
    ("delete", "commit"),
    ("compact", "write"),
    ("compact", "commit"),
    ("addcol", "write"),
    ("addcol", "commit"),
    ("cleanup", "start")
  )

  private def opt(args: Seq[String], name: String, default: String): String =
    args.sliding(2).collectFirst { case Seq(`name`, v) => v }.getOrElse(default)

  def main(argv: Array[String]): Unit = {
    val args = argv.toSeq
    val code = args.headOption match {
      case Some("crash") =>
        if (
          crash(
            opt(args, "--kills", "300").toInt,
            dir(args),
            opt(args, "--seed", "1").toLong,
            opt(args, "--max-wait-ms", "2500").toLong
          ).ok
        ) 0
        else 1
      case Some("concurrency") =>
        if (
          concurrency(
            opt(args, "--procs", "4").toInt,
            opt(args, "--seconds", "600").toInt,
            dir(args),
            opt(args, "--seed", "1").toLong
          ).ok
        ) 0
        else 1
      case _ => System.err.println("usage: crash [--kills N] ... | concurrency [--procs P] [--seconds T] ..."); 2
    }
    sys.exit(code)
  }

  private def dir(args: Seq[String]): File = {
    val d = new File(opt(args, "--dir", Files.createTempDirectory("fermion-soak").toString))
    d.mkdirs(); d
  }

  final case class Result(ok: Boolean, report: String)

  private def workerCommand(
      datasetDir: String,
      journal: File,
      seed: Long,
      deadline: Long,
      cutoff: Long,
      weights: String
  ): Seq[String] = {
    val javaBin = Paths.get(System.getProperty("java.home"), "bin", "java").toString
    val flags = java.lang.management.ManagementFactory.getRuntimeMXBean.getInputArguments.asScala
      .filter(f => f.startsWith("--add-opens") || f.startsWith("-Dio.netty"))
    Seq(
      javaBin,
      "-Xmx256m",
      "-XX:+UseSerialGC",
      "-XX:TieredStopAtLevel=1",
      "-cp",
      System.getProperty("java.class.path")
    ) ++
      flags ++ Seq(
        "io.fermion.core.soak.SoakWorker",
        datasetDir,
        journal.getPath,
        seed.toString,
        deadline.toString,
        cutoff.toString,
        weights
      )
  }

  /** A new dataset with one version (100 rows), committed by this process. */
  private def create(root: File): (FermionDataset, SoakState) = {
    val data = new File(root, "dataset")
    val ds = new FermionDataset(new Path(data.toURI), SoakData.conf)
    val journal = new SoakJournal(new File(root, "0-setup.journal"))
    val allocator = SoakData.newAllocator()
    val ids = (0L until 100L).map(i => (1L << 62) | i)
    val path = s"${DatasetLayout.DataDir}/op1-0.fermion"
    ds.fs.mkdirs(ds.resolvePath(DatasetLayout.DataDir))
    SoakData.writeFile(
      ds.resolvePath(path),
      SoakData.baseSchema,
      ids,
      (id, f) => Some(SoakData.value(id, f)),
      allocator,
      io.fermion.core.write.WriterOptions()
    )
    journal.append(s"I 1 append 0,1 ${SoakJournal.ranges(ids)}")
    val m = ds.commit(
      0,
      Operation.Append(
        SoakData.baseSchema,
        IndexedSeq(Fragment(0, 100, IndexedSeq(DataFile(path, IndexedSeq(0, 1))), None))
      )
    )
    journal.append(s"OK 1 ${m.version}")
    journal.close()
    val state = new SoakState(root, ds)
    state.verify(allocator)
    (ds, state)
  }

  def crash(kills: Int, root: File, seed: Long, maxWaitMillis: Long, log: String => Unit = println): Result = {
    val start = System.nanoTime()
    val (ds, state) = create(root)
    val allocator = SoakData.newAllocator()
    val rnd = new Random(seed)
    val killedIn = mutable.TreeMap.empty[String, Int]
    var verifiedAt = System.currentTimeMillis()
    var round = 0
    var exits = 0
    while (round < kills) {
      round += 1
      val journal = new File(root, f"w$round%05d.journal")
      // Cleanup may remove versions older than the last check (all of them checked by now).
      val cmd = workerCommand(
        new File(root, "dataset").toURI.toString,
        journal,
        rnd.nextLong(),
        0L,
        verifiedAt - 1,
        "30,18,14,16,14,8"
      )
      val p = new ProcessBuilder(cmd: _*).redirectError(ProcessBuilder.Redirect.INHERIT).start()
      val out = new BufferedReader(new InputStreamReader(p.getInputStream, StandardCharsets.UTF_8))
      val lines = new java.util.concurrent.LinkedBlockingQueue[String]()
      val reader = new Thread(() => {
        // The JDK may close the pipe once the killed process is reaped: that ends the reading too.
        try { var l = out.readLine(); while (l != null) { lines.put(l); l = out.readLine() } }
        catch { case _: java.io.IOException => }
        lines.put("EOF")
      })
      reader.setDaemon(true); reader.start()
      var lastPhase: Option[String] = None
      def take(millis: Long): String = {
        val l = lines.poll(millis, java.util.concurrent.TimeUnit.MILLISECONDS)
        if (l != null && l.startsWith("P ")) lastPhase = Some(l)
        l
      }
      var line = take(60000)
      while (line != null && line != "R ready" && line != "EOF") line = take(60000)
      if (rnd.nextInt(10) < 6) {
        // Aimed: at the moment a chosen phase of a chosen operation starts (a commit, a cleanup,
        // a write), plus up to 30 ms, so that kills land inside short windows too.
        val (kind, phase) = SoakMain.targets(rnd.nextInt(SoakMain.targets.size))
        val deadline = System.currentTimeMillis() + 20000
        var hit = false
        while (!hit && System.currentTimeMillis() < deadline) {
          val l = take(200)
          if (l == "EOF") hit = true
          else if (l != null && l.startsWith("P ")) { val ps = l.split(" "); hit = ps(2) == kind && ps(3) == phase }
        }
        Thread.sleep(rnd.nextInt(31).toLong)
      } else Thread.sleep((rnd.nextDouble() * maxWaitMillis).toLong)
      p.destroyForcibly() // SIGKILL
      p.waitFor()
      reader.join(10000)
      var rest = take(0)
      while (rest != null) rest = take(0)
      val where = lastPhase.map { l =>
        val parts = l.split(" "); s"${parts(2)} ${parts(3)}"
      }.getOrElse("startup")
      // 137 = killed by SIGKILL; anything else means the worker died on its own (an exception).
      if (p.exitValue() != 137) {
        exits += 1
        state.problems += s"worker $round exited with ${p.exitValue()} before it was killed (last phase: $where)"
      }
      killedIn(where) = killedIn.getOrElse(where, 0) + 1
      state.verify(allocator)
      verifiedAt = System.currentTimeMillis()
      if (round % 25 == 0 || state.problems.nonEmpty)
        log(
          f"[soak] $round kills, latest version ${state.verified}, ${state.model.rows.size} rows, ${state.problems.size} problems, ${(System.nanoTime() - start) / 1e9}%.0f s"
        )
      if (state.problems.size > 20) round = kills
    }
    // No writer is left: a cleanup now must remove every unreferenced file and nothing referenced.
    Thread.sleep(1100)
    val cleaned = ds.cleanup(System.currentTimeMillis() - 1)
    state.verify(allocator)
    val kept = ds.versionNumbers()
    val referenced = kept.flatMap { v =>
      val m = ds.manifest(v)
      m.fragments.flatMap(f => f.files.map(_.path) ++ f.deletion.map(_.path)) :+ s"${DatasetLayout.TransactionsDir}/${m.transactionFile}"
    }.map(p => ds.resolvePath(p).toUri.getPath).toSet
    val leftovers = Seq(
      DatasetLayout.DataDir,
      DatasetLayout.DeletionsDir,
      DatasetLayout.TransactionsDir,
      DatasetLayout.VersionsDir
    ).flatMap { d =>
      val dirPath = ds.resolvePath(d)
      if (!ds.fs.exists(dirPath)) Nil
      else ds.fs.listStatus(dirPath).toSeq.map(_.getPath).filter { p =>
        // In _versions/ only manifests and the latest-version hint belong.
        if (d == DatasetLayout.VersionsDir)
          DatasetLayout.versionOf(p.getName).isEmpty && p.getName != VersionHint.FileName
        else !referenced.contains(p.toUri.getPath)
      }
    }
    val missing = referenced.filterNot(p => new File(p).exists())
    kept.foreach { v =>
      try SoakData.shapeOf(v, SoakData.readVersion(ds, ds.manifest(v), allocator))
      catch { case e: Exception => state.problems += s"version $v does not read after cleanup: $e" }
    }
    if (leftovers.nonEmpty)
      state.problems += s"cleanup left ${leftovers.size} unreferenced files, e.g. ${leftovers.take(3)}"
    if (missing.nonEmpty) state.problems += s"cleanup removed ${missing.size} referenced files, e.g. ${missing.take(3)}"
    val committed = state.chain.size
    val report = new StringBuilder
    report ++= f"Fermion crash soak: $round worker JVMs killed with SIGKILL (seed $seed) in ${(System.nanoTime() - start) / 1e9}%.0f s\n"
    report ++= "kills by operation and phase:\n"
    killedIn.foreach { case (k, n) => report ++= f"  ${k.padTo(24, ' ')} $n%5d\n" }
    report ++= s"versions committed and checked: $committed (latest ${state.verified}, ${state.model.rows.size} rows); operations that reported success: ${state.oks.size}, conflicts/errors reported: ${state.fails.size}\n"
    report ++= s"final cleanup: ${cleaned.versionsRemoved} versions and ${cleaned.filesRemoved} unreferenced files removed; ${kept.size} versions kept; unreferenced files left: ${leftovers.size}; referenced files missing: ${missing.size}\n"
    report ++= s"problems (lost or partial commits, unreadable versions, wrong rows): ${state.problems.size}\n"
    state.problems.take(30).foreach(p => report ++= s"  $p\n")
    log(report.toString)
    Result(state.problems.isEmpty, report.toString)
  }

  def concurrency(procs: Int, seconds: Int, root: File, seed: Long, log: String => Unit = println): Result = {
    val start = System.nanoTime()
    val (ds, state) = create(root)
    val allocator = SoakData.newAllocator()
    val rnd = new Random(seed)
    val deadline = System.currentTimeMillis() + seconds * 1000L
    val workers = (1 to procs).map { i =>
      val cmd = workerCommand(
        new File(root, "dataset").toURI.toString,
        new File(root, s"c$i.journal"),
        rnd.nextLong(),
        deadline,
        -1L,
        "35,20,12,4,0,29"
      )
      new ProcessBuilder(cmd: _*).redirectError(ProcessBuilder.Redirect.INHERIT)
        .redirectOutput(new File(root, s"c$i.out")).start()
    }
    val codes = workers.map(_.waitFor())
    state.verify(allocator)
    val versions = ds.versionNumbers()
    if (versions != (1L to versions.last)) state.problems += "versions are not contiguous (nothing was cleaned up)"
    codes.zipWithIndex.filter(_._1 != 0).foreach { case (c, i) => state.problems += s"worker ${i + 1} exited with $c" }
    // Every success is in the chain once; every failure is a typed conflict.
    state.oks.foreach { case (op, v) =>
      if (!state.chain.get(v).contains(op)) state.problems += s"operation $op reported version $v but is not there"
    }
    state.chain.foreach { case (v, op) =>
      if (v > 1 && !state.oks.contains(op))
        state.problems += s"version $v (operation $op) was not reported as a success"
    }
    state.fails.foreach { case (op, why) =>
      if (!why.startsWith("conflict")) state.problems += s"operation $op failed untyped: $why"
    }
    state.reads.foreach { case (v, d, n) =>
      state.digests.get(v) match {
        case Some((md, mn)) => if (md != d || mn != n)
            state.problems += s"a reader saw version $v with $n rows (digest $d), the model has $mn rows (digest $md)"
        case None => state.problems += s"a reader saw version $v, which is not in the chain"
      }
    }
    val byKind = mutable.TreeMap.empty[String, (Int, Int, Int)]
    state.kinds.foreach { case (op, k) =>
      val (ok, conflict, err) = byKind.getOrElse(k, (0, 0, 0))
      byKind(k) =
        if (state.oks.contains(op)) (ok + 1, conflict, err)
        else if (state.fails.get(op).exists(_.startsWith("conflict"))) (ok, conflict + 1, err)
        else if (state.fails.contains(op)) (ok, conflict, err + 1)
        else (ok, conflict, err)
    }
    val report = new StringBuilder
    report ++= f"Fermion concurrency soak: $procs worker JVMs for $seconds s (seed $seed), ${(System.nanoTime() - start) / 1e9}%.0f s in all\n"
    report ++= "operations: kind, committed, FermionCommitConflictException, other errors\n"
    byKind.foreach { case (k, (a, b, c)) => report ++= f"  ${k.padTo(10, ' ')} $a%6d $b%6d $c%6d\n" }
    report ++= s"reads of a whole version checked against the model: ${state.reads.size}\n"
    report ++= s"versions: ${versions.size}, final rows ${state.model.rows.size} (checked row by row)\n"
    report ++= s"problems (lost or duplicated commits, untyped failures, partial reads, wrong rows): ${state.problems.size}\n"
    state.problems.take(30).foreach(p => report ++= s"  $p\n")
    log(report.toString)
    Result(state.problems.isEmpty, report.toString)
  }
}
