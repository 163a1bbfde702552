package io.fermion.spark.tools

import java.io.PrintStream
import java.util.Locale
import java.util.concurrent.atomic.AtomicBoolean

import scala.collection.mutable

import org.apache.spark.Success
import org.apache.spark.scheduler._

/** Progress of a conversion job, measured on the driver: a SparkListener counts the tasks of the
  * job group's stages as they finish (one task per input file, whose size the driver knows) and
  * adds what running tasks report through executor heartbeats (an accumulator named
  * `inFlightMetric`), and a daemon thread prints a line to `out` every `intervalMs`:
  * {{{
  * [fermion convert] 3/8 files, 120.5 MiB of 480.2 MiB (25.1%), 40.2 MiB/s, 9.0 s left
  * }}}
  * `bytesByTask(i)` is the input size of the stage's task `i`; -1 when sizes are unknown (then the
  * line counts tasks only). */
final class ConvertProgress(
    jobGroup: String,
    unit: String,
    bytesByTask: IndexedSeq[Long],
    inFlightMetric: String,
    out: PrintStream,
    intervalMs: Long
) extends SparkListener {
  private val total = bytesByTask.size
  private val totalBytes = if (bytesByTask.forall(_ >= 0)) bytesByTask.sum else -1L
  private val stages = mutable.Set.empty[Int]
  private val done = mutable.BitSet.empty
  private var doneBytes = 0L
  private var recordsWritten = 0L
  private val inFlight = mutable.Map.empty[Long, Long] // task id -> bytes read so far
  private val startNanos = System.nanoTime()
  private val stopped = new AtomicBoolean(false)

  private val thread = new Thread(
    () => {
      try
        while (!stopped.get()) {
          Thread.sleep(intervalMs)
          if (!stopped.get()) out.println(line())
        }
      catch { case _: InterruptedException => }
    },
    "fermion-convert-progress"
  )
  thread.setDaemon(true)

  def start(): this.type = { thread.start(); this }

  /** Stops printing; the last line shows the final counts. */
  def stop(): Unit = if (stopped.compareAndSet(false, true)) {
    thread.interrupt()
    out.println(line())
  }

  def filesDone: Int = synchronized(done.size)
  def rows: Long = synchronized(recordsWritten)

  override def onJobStart(e: SparkListenerJobStart): Unit = {
    val group = Option(e.properties).map(_.getProperty("spark.jobGroup.id")).orNull
    if (group == jobGroup) synchronized { stages ++= e.stageIds }
  }

  override def onTaskEnd(e: SparkListenerTaskEnd): Unit = synchronized {
    if (stages.contains(e.stageId)) {
      inFlight -= e.taskInfo.taskId
      val i = e.taskInfo.index
      if (e.reason == Success && i < total && !done.contains(i)) {
        done += i
        if (totalBytes >= 0) doneBytes += bytesByTask(i)
        if (e.taskMetrics != null) recordsWritten += e.taskMetrics.outputMetrics.recordsWritten
      }
    }
  }

  override def onExecutorMetricsUpdate(e: SparkListenerExecutorMetricsUpdate): Unit = synchronized {
    e.accumUpdates.foreach { case (taskId, stageId, _, accs) =>
      if (stages.contains(stageId))
        accs.find(_.name.contains(inFlightMetric)).flatMap(_.update).foreach {
          case v: java.lang.Long => inFlight(taskId) = v.longValue()
          case v: Long => inFlight(taskId) = v
          case _ =>
        }
    }
  }

  def line(): String = synchronized {
    val elapsed = (System.nanoTime() - startNanos) / 1e9
    val partial = if (totalBytes >= 0) math.min(totalBytes, doneBytes + inFlight.values.sum) else -1L
    ConvertProgress.format(unit, done.size, total, partial, totalBytes, elapsed)
  }
}

object ConvertProgress {

  /** The name of the accumulator through which conversion tasks report input bytes done. */
  val InputBytesAccumulator = "fermion.convert.inputBytes"

  /** Spark's name of the Fermion scan metric of bytes read (docs of ScanMetrics). */
  val FermionBytesReadMetric = "Fermion bytes read"

  def bytes(n: Long): String = io.fermion.core.inspect.InspectText.bytes(n)

  def duration(seconds: Double): String =
    if (seconds < 60) f"$seconds%.1f s"
    else if (seconds < 3600) f"${(seconds / 60).toInt}%dm ${seconds % 60}%04.1fs"
    else f"${(seconds / 3600).toInt}%dh ${(seconds % 3600 / 60).toInt}%02dm"

  /** One progress line. `bytesDone`/`totalBytes` are -1 when unknown. */
  def format(unit: String, done: Int, total: Int, bytesDone: Long, totalBytes: Long, elapsedSeconds: Double): String = {
    val sb = new StringBuilder(s"[fermion convert] $done/$total $unit")
    if (totalBytes >= 0) {
      val pct = if (totalBytes == 0) 100.0 else 100.0 * bytesDone / totalBytes
      sb ++= String.format(Locale.ROOT, ", %s of %s (%.1f%%)", bytes(bytesDone), bytes(totalBytes), Double.box(pct))
      if (bytesDone > 0 && elapsedSeconds > 0) {
        val rate = bytesDone / elapsedSeconds
        sb ++= s", ${bytes(rate.toLong)}/s"
        sb ++= (if (bytesDone >= totalBytes) ", done" else s", ${duration((totalBytes - bytesDone) / rate)} left")
      } else sb ++= ", rate unknown yet"
    } else if (done > 0 && elapsedSeconds > 0) {
      val left = (total - done) * elapsedSeconds / done
      sb ++= (if (done >= total) ", done" else s", about ${duration(left)} left")
    }
    sb ++= s", ${duration(elapsedSeconds)} elapsed"
    sb.toString
  }
}
