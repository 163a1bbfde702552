package io.fermion.core.inspect

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path

import io.fermion.core.storage.FileSystems

/** `fermion inspect PATH`: a Fermion file's or dataset's metadata, as text or `--json`. Needs no
  * Spark: `java -cp "fermion.jar:$SPARK_HOME/jars/(all)" io.fermion.core.inspect.InspectCommand PATH`.
  * {{{
  * fermion inspect PATH [--json] [--column NAME]... [--stripe N]... [--chunks] [--pages]
  *                      [--no-page-headers] [--version V]
  * }}}
  */
object InspectCommand {
  val Usage: String =
    """usage: fermion inspect PATH [options]
      |
      |Shows a Fermion file's metadata (footer, format version, settings, schema with field ids, stripes,
      |and per column its streams, DescTypes, pages, encodings, codecs, null counts, min/max, bloom filters,
      |sizes and share of the file) or a dataset's (versions, operations, fragments, deletions, tags,
      |config). Reads metadata only and says how many bytes it read.
      |
      |  --json               machine-readable output (section 2 of docs/migration.md, docs/inspect.schema.json)
      |  --column NAME        only this top-level column (repeatable, or comma-separated)
      |  --stripe N           only this stripe (repeatable, or comma-separated); shows its chunks
      |  --chunks             one line per stream and stripe
      |  --pages              one line per page (implies --chunks)
      |  --no-page-headers    do not read the 20-byte page headers (no encodings/codecs; fewer reads)
      |  --version V          a dataset's version to list the fragments of (default: the latest)""".stripMargin

  final case class Args(
      path: String = null,
      json: Boolean = false,
      columns: Seq[String] = Nil,
      stripes: Seq[Int] = Nil,
      chunks: Boolean = false,
      pages: Boolean = false,
      pageHeaders: Boolean = true,
      version: Option[Long] = None
  )

  def parse(args: Seq[String]): Args = {
    def list(v: String): Seq[String] = v.split(",").map(_.trim).filter(_.nonEmpty).toSeq
    def int(flag: String, v: String): Int =
      v.toIntOption.getOrElse(throw new IllegalArgumentException(s"$flag takes a number, got '$v'"))
    @annotation.tailrec
    def go(rest: List[String], a: Args): Args = rest match {
      case Nil => a
      case "--json" :: t => go(t, a.copy(json = true))
      case "--chunks" :: t => go(t, a.copy(chunks = true))
      case "--pages" :: t => go(t, a.copy(pages = true, chunks = true))
      case "--no-page-headers" :: t => go(t, a.copy(pageHeaders = false))
      case ("--column" | "-c") :: v :: t => go(t, a.copy(columns = a.columns ++ list(v)))
      case ("--stripe" | "-s") :: v :: t => go(t, a.copy(stripes = a.stripes ++ list(v).map(int("--stripe", _))))
      case "--version" :: v :: t =>
        go(
          t,
          a.copy(version =
            Some(v.toLongOption.getOrElse(throw new IllegalArgumentException(s"--version takes a number, got '$v'")))
          )
        )
      case flag :: _ if flag.startsWith("-") && flag != "-" =>
        throw new IllegalArgumentException(s"unknown or incomplete option $flag")
      case p :: t if a.path == null => go(t, a.copy(path = p))
      case p :: _ => throw new IllegalArgumentException(s"one PATH only (got '${a.path}' and '$p')")
    }
    val a = go(args.toList, Args())
    if (a.path == null) throw new IllegalArgumentException("PATH is missing")
    a
  }

  /** The report of `a.path`: a dataset when it has versions, else a Fermion file. */
  def inspect(a: Args, conf: Configuration): Inspection = {
    val p = new Path(a.path)
    val fs = FileSystems.forPath(p, conf)
    if (!fs.exists(p)) throw new IllegalArgumentException(s"${a.path} does not exist")
    if (fs.getFileStatus(p).isDirectory) {
      if (!DatasetInspector.isDataset(a.path, conf))
        throw new IllegalArgumentException(
          s"${a.path} is a directory without a Fermion dataset (no _versions/); inspect one of its .fermion files"
        )
      if (a.columns.nonEmpty || a.stripes.nonEmpty)
        throw new IllegalArgumentException("--column and --stripe apply to files; inspect a data file of the dataset")
      DatasetInspector.inspect(a.path, conf, a.version)
    } else {
      if (a.version.nonEmpty) throw new IllegalArgumentException("--version applies to datasets")
      FileInspector.inspect(
        a.path,
        conf,
        InspectSelection(
          if (a.columns.isEmpty) None else Some(a.columns),
          if (a.stripes.isEmpty) None else Some(a.stripes),
          a.pageHeaders
        )
      )
    }
  }

  def render(a: Args, i: Inspection): String =
    if (a.json) InspectJson.render(i) + "\n" else InspectText.render(i, a.chunks || a.stripes.nonEmpty, a.pages)

  /** The report `args` ask for, as text or JSON (what the Python API calls on a session's JVM);
    * failures are thrown. */
  def renderArgs(args: Array[String], conf: Configuration): String = {
    val a = parse(args.toSeq)
    render(a, inspect(a, conf))
  }

  /** Runs the command; returns the exit code (0 ok, 1 failure, 2 usage). */
  def run(args: Seq[String], out: java.io.PrintStream, err: java.io.PrintStream, conf: Configuration): Int = {
    if (args.isEmpty || args.contains("--help") || args.contains("-h")) {
      out.println(Usage)
      return if (args.isEmpty) 2 else 0
    }
    val a =
      try parse(args)
      catch { case e: IllegalArgumentException => err.println(s"fermion inspect: ${e.getMessage}\n\n$Usage"); return 2 }
    try {
      out.print(render(a, inspect(a, conf)))
      out.flush()
      0
    } catch {
      case e: Exception =>
        err.println(s"fermion inspect: ${e.getClass.getSimpleName}: ${e.getMessage}")
        1
    }
  }

  def main(args: Array[String]): Unit = sys.exit(run(args.toSeq, System.out, System.err, new Configuration()))
}
