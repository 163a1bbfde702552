package io.fermion.spark.tools

import io.fermion.core.inspect.InspectCommand
import io.fermion.core.scan.ReadAt
import org.apache.spark.sql.SparkSession

/** `fermion` commands on the JVM, the entry point of `spark-submit --class` (local by default,
  * any master through spark-submit's `--master`):
  * {{{
  * spark-submit --class io.fermion.spark.tools.FermionCli fermion-spark-assembly.jar convert --to fermion SRC DST
  * spark-submit --class io.fermion.spark.tools.FermionCli fermion-spark-assembly.jar inspect PATH --json
  * }}}
  * The `fermion` console script of the Python package launches exactly this. */
object FermionCli {
  val ConvertUsage: String =
    """usage: fermion convert [--to fermion|parquet] SRC DST [options]
      |       fermion convert --to fermion --table NAME DST [options]
      |       fermion convert --to fermion --in-place SRC [--delete-source]
      |
      |Parquet files, directories and partitioned directories (partition columns become columns), Spark
      |tables, or Fermion datasets (at a version) converted both ways, one output file per input file with
      |the rows in the same order. Progress goes to stderr, a summary to stdout at the end.
      |
      |  --to fermion|parquet   direction (default: parquet for a Fermion source, else fermion)
      |  --table NAME           the source is a table of the session catalog instead of SRC
      |  --in-place             write the Fermion dataset at SRC itself; the Parquet files stay readable
      |                         until the commit (data files go to the hidden _fermion_data/)
      |  --delete-source        with --in-place: delete the converted Parquet files after the commit
      |  --mode error|overwrite what to do when DST exists (default: error)
      |  --version N | --tag T | --timestamp 'YYYY-MM-DD HH:MM:SS'   the Fermion version to convert
      |  --option KEY=VALUE     a Fermion write option (--to fermion) or Parquet writer option (--to parquet)
      |  --read-option KEY=VALUE  a Parquet read option (e.g. mergeSchema=true)
      |  --progress-interval S  seconds between progress lines (default 5)
      |  --quiet                no progress lines
      |  --json                 print the summary as JSON""".stripMargin

  val Usage: String =
    """usage: fermion <command> ...
      |
      |  convert   Parquet <-> Fermion (files, directories, tables, datasets)
      |  inspect   a Fermion file's or dataset's metadata
      |
      |fermion <command> --help for the command's options""".stripMargin

  final case class ConvertArgs(request: FermionConvert.Request, json: Boolean)

  def parseConvert(args: Seq[String]): FermionConvert.Request = parseConvertArgs(args).request

  def parseConvertArgs(args: Seq[String]): ConvertArgs = {
    def kv(flag: String, v: String): (String, String) = v.split("=", 2) match {
      case Array(k, value) if k.trim.nonEmpty => k.trim -> value
      case _ => throw new IllegalArgumentException(s"$flag takes KEY=VALUE, got '$v'")
    }
    var r = FermionConvert.Request()
    var json = false
    var interval = 5.0
    var quiet = false
    val positional = scala.collection.mutable.ArrayBuffer.empty[String]
    var rest = args.toList
    def value(flag: String): String = rest match {
      case v :: t => rest = t; v
      case Nil => throw new IllegalArgumentException(s"$flag needs a value")
    }
    while (rest.nonEmpty) {
      val a = rest.head
      rest = rest.tail
      a match {
        case "--to" => r = r.copy(to = Some(value(a)))
        case "--table" => r = r.copy(table = Some(value(a)))
        case "--in-place" => r = r.copy(inPlace = true)
        case "--delete-source" => r = r.copy(deleteSource = true)
        case "--mode" =>
          value(a).toLowerCase(java.util.Locale.ROOT) match {
            case "error" | "errorifexists" => r = r.copy(overwrite = false)
            case "overwrite" => r = r.copy(overwrite = true)
            case other => throw new IllegalArgumentException(s"--mode takes error or overwrite, not '$other'")
          }
        case "--version" =>
          val v = value(a)
          r = r.copy(at =
            ReadAt.Version(v.toLongOption.filter(_ >= 1).getOrElse(
              throw new IllegalArgumentException(s"--version takes a version number, got '$v'")
            ))
          )
        case "--tag" => r = r.copy(at = ReadAt.Tag(value(a)))
        case "--timestamp" => r = r.copy(timestamp = Some(value(a)))
        case "--option" => r = r.copy(options = r.options + kv(a, value(a)))
        case "--read-option" => r = r.copy(readOptions = r.readOptions + kv(a, value(a)))
        case "--progress-interval" =>
          val v = value(a)
          interval = v.toDoubleOption.filter(_ > 0).getOrElse(
            throw new IllegalArgumentException(s"--progress-interval takes seconds, got '$v'")
          )
        case "--quiet" | "-q" => quiet = true
        case "--json" => json = true
        case flag if flag.startsWith("--") => throw new IllegalArgumentException(s"unknown option $flag")
        case p => positional += p
      }
    }
    val (src, dst) = (positional.toList, r.table.nonEmpty) match {
      case (Nil, true) => (None, None)
      case (d :: Nil, true) => (None, Some(d))
      case (s :: Nil, false) if r.inPlace => (Some(s), None)
      case (s :: d :: Nil, false) => (Some(s), Some(d))
      case _ =>
        throw new IllegalArgumentException(s"expected SRC DST (or --table NAME DST), got ${positional.mkString(" ")}")
    }
    val progress = if (quiet) ProgressSettings.Quiet else ProgressSettings(Some(System.err), (interval * 1000).toLong)
    ConvertArgs(r.copy(source = src, destination = dst, progress = progress), json)
  }

  /** Runs `args` (a command and its arguments); returns the exit code. */
  def run(args: Seq[String], sessionFactory: () => SparkSession): Int = args.toList match {
    case Nil | ("-h" | "--help" | "help") :: _ => println(Usage); if (args.isEmpty) 2 else 0
    case "inspect" :: rest =>
      val conf = scala.util.Try(SparkSession.active.sparkContext.hadoopConfiguration)
        .getOrElse(new org.apache.hadoop.conf.Configuration())
      InspectCommand.run(rest, System.out, System.err, conf)
    case "convert" :: rest if rest.isEmpty || rest.exists(a => a == "--help" || a == "-h") =>
      println(ConvertUsage); if (rest.isEmpty) 2 else 0
    case "convert" :: rest =>
      val parsed =
        try parseConvertArgs(rest)
        catch {
          case e: IllegalArgumentException =>
            System.err.println(s"fermion convert: ${e.getMessage}\n\n$ConvertUsage"); return 2
        }
      ConvertDestination.refusalBeforeSpark(parsed.request).foreach { e =>
        System.err.println(s"fermion convert: ${e.getClass.getSimpleName}: ${e.getMessage}"); return 1
      }
      val spark = sessionFactory()
      try {
        val result = FermionConvert.run(spark, parsed.request)
        println(if (parsed.json) result.toJson else result.summary)
        0
      } catch {
        case e: Exception =>
          System.err.println(s"fermion convert: ${e.getClass.getSimpleName}: ${e.getMessage}")
          1
      }
    case other :: _ => System.err.println(s"fermion: unknown command '$other'\n\n$Usage"); 2
  }

  /** A session on spark-submit's master, or local[*] when none is configured. */
  def session(): SparkSession = {
    val builder = SparkSession.builder().appName("fermion convert")
    val conf = new org.apache.spark.SparkConf()
    if (!conf.contains("spark.master")) builder.master("local[*]")
    if (!conf.contains("spark.ui.showConsoleProgress")) builder.config("spark.ui.showConsoleProgress", "false")
    val s = builder.getOrCreate()
    if (!conf.contains("spark.log.level")) s.sparkContext.setLogLevel("WARN")
    s
  }

  def main(args: Array[String]): Unit = {
    val code =
      try run(args.toSeq, () => session())
      finally SparkSession.getActiveSession.foreach(_.stop())
    sys.exit(code)
  }
}
