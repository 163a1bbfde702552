package io.fermion.spark.extensions

import java.util.Locale

import io.fermion.core.scan.ReadAt
import io.fermion.spark.tools.{FermionConvert, ProgressSettings}
import org.apache.spark.sql.{Row, SparkSession}
import org.apache.spark.sql.catalyst.expressions.{Attribute, AttributeReference}
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.execution.command.LeafRunnableCommand
import org.apache.spark.sql.types._

/** `CONVERT TO FERMION` / `CONVERT TO PARQUET` statements, parsed ahead of Spark's parser by
  * [[FermionSqlParser]] (docs/migration.md):
  * {{{
  * CONVERT TO FERMION parquet.`/data/events`                     -- in place
  * CONVERT TO FERMION parquet.`/data/events` TO '/data/events-f' [OPTIONS (compressionLevel = 9)]
  * CONVERT TO FERMION db.events TO '/data/events-f'             -- a table by name
  * CONVERT TO PARQUET fermion.`/data/events-f` [VERSION AS OF 3] TO '/data/events-v3'
  * }}}
  * The statement returns one row: what [[io.fermion.spark.tools.ConvertResult]] reports. */
object ConvertSqlParser {

  /** A CONVERT statement, or None (not one: Spark's parser takes it). A statement that starts with
    * `CONVERT TO FERMION|PARQUET` but does not parse is an error naming what was expected. */
  def parse(sql: String): Option[ConvertCommand] = {
    val s = new Scanner(sql)
    if (!(s.word("CONVERT") && s.word("TO"))) return None
    val to =
      if (s.word("FERMION")) "fermion" else if (s.word("PARQUET")) "parquet" else return None
    val (path, table) = s.source()
    val at = if (s.word("VERSION")) { s.expect("AS"); s.expect("OF"); Some(s.number()) }
    else None
    val dst = if (s.word("TO") || s.word("LOCATION")) Some(s.string()) else None
    val options = if (s.word("OPTIONS")) s.options() else Map.empty[String, String]
    s.end()
    Some(ConvertCommand(
      FermionConvert.Request(
        to = Some(to),
        source = path,
        table = table,
        destination = dst,
        inPlace = dst.isEmpty && to == "fermion",
        at = at.map(ReadAt.Version).getOrElse(ReadAt.Latest),
        options = options,
        progress = ProgressSettings(Some(System.err))
      )
    ))
  }

  final private class Scanner(sql: String) {
    private var i = 0
    private def skip(): Unit = while (i < sql.length && sql.charAt(i).isWhitespace) i += 1
    private def fail(what: String): Nothing =
      throw new IllegalArgumentException(
        s"CONVERT TO: expected $what at position $i of: $sql\n" +
          "syntax: CONVERT TO FERMION parquet.`path` | table [TO 'destination'] [OPTIONS (key = value, ...)]\n" +
          "        CONVERT TO PARQUET fermion.`path` | table [VERSION AS OF n] TO 'destination' [OPTIONS (...)]"
      )
    def word(w: String): Boolean = {
      skip()
      val end = i + w.length
      if (
        end <= sql.length && sql.substring(i, end).equalsIgnoreCase(w) &&
        (end == sql.length || !(sql.charAt(end).isLetterOrDigit || sql.charAt(end) == '_'))
      ) { i = end; true }
      else false
    }
    def expect(w: String): Unit = if (!word(w)) fail(w)
    private def identifier(): String = {
      skip()
      if (i < sql.length && sql.charAt(i) == '`') quoted('`')
      else {
        val start = i
        while (i < sql.length && (sql.charAt(i).isLetterOrDigit || sql.charAt(i) == '_')) i += 1
        if (i == start) fail("a name") else sql.substring(start, i)
      }
    }
    private def quoted(q: Char): String = {
      val sb = new StringBuilder
      i += 1
      while (true) {
        if (i >= sql.length) fail(s"a closing $q")
        val c = sql.charAt(i)
        if (c == q && i + 1 < sql.length && sql.charAt(i + 1) == q) { sb += q; i += 2 }
        else if (c == q) { i += 1; return sb.toString }
        else if (c == '\\' && q != '`' && i + 1 < sql.length) { sb += sql.charAt(i + 1); i += 2 }
        else { sb += c; i += 1 }
      }
      fail("a closing quote")
    }
    def string(): String = {
      skip()
      if (i < sql.length && (sql.charAt(i) == '\'' || sql.charAt(i) == '"')) quoted(sql.charAt(i))
      else fail("a quoted path")
    }
    def number(): Long = {
      skip()
      val start = i
      while (i < sql.length && sql.charAt(i).isDigit) i += 1
      sql.substring(start, i).toLongOption.getOrElse(fail("a version number"))
    }

    /** `parquet.`path`` / `fermion.`path`` (a path), else a table name. */
    def source(): (Option[String], Option[String]) = {
      val parts = scala.collection.mutable.ArrayBuffer(identifier())
      skip()
      while (i < sql.length && sql.charAt(i) == '.') { i += 1; parts += identifier(); skip() }
      parts.toList match {
        case format :: path :: Nil if Set("parquet", "fermion").contains(format.toLowerCase(Locale.ROOT)) =>
          (Some(path), None)
        case _ =>
          (None, Some(parts.map(p => if (p.forall(c => c.isLetterOrDigit || c == '_')) p else s"`$p`").mkString(".")))
      }
    }
    def options(): Map[String, String] = {
      skip()
      if (i >= sql.length || sql.charAt(i) != '(') fail("(")
      i += 1
      val out = Map.newBuilder[String, String]
      var more = true
      while (more) {
        skip()
        val key = if (i < sql.length && (sql.charAt(i) == '\'' || sql.charAt(i) == '"')) string()
        else {
          val start = i
          while (i < sql.length && (sql.charAt(i).isLetterOrDigit || "_.".contains(sql.charAt(i)))) i += 1
          if (i == start) fail("an option name") else sql.substring(start, i)
        }
        skip()
        if (i < sql.length && sql.charAt(i) == '=') i += 1
        skip()
        val value = if (i < sql.length && (sql.charAt(i) == '\'' || sql.charAt(i) == '"')) string()
        else {
          val start = i
          while (i < sql.length && !",) ".contains(sql.charAt(i))) i += 1
          if (i == start) fail("an option value") else sql.substring(start, i)
        }
        out += key -> value
        skip()
        if (i < sql.length && sql.charAt(i) == ',') i += 1 else more = false
      }
      skip()
      if (i >= sql.length || sql.charAt(i) != ')') fail(")")
      i += 1
      out.result()
    }
    def end(): Unit = {
      skip()
      if (i < sql.length && sql.charAt(i) == ';') i += 1
      skip()
      if (i < sql.length) fail("the end of the statement")
    }
  }
}

/** Runs a conversion and returns its summary as one row. */
final case class ConvertCommand(request: FermionConvert.Request) extends LeafRunnableCommand {
  override val output: Seq[Attribute] = Seq(
    AttributeReference("direction", StringType, nullable = false)(),
    AttributeReference("source", StringType, nullable = false)(),
    AttributeReference("destination", StringType, nullable = false)(),
    AttributeReference("input_files", IntegerType, nullable = false)(),
    AttributeReference("output_files", IntegerType, nullable = false)(),
    AttributeReference("rows", LongType, nullable = false)(),
    AttributeReference("input_bytes", LongType, nullable = false)(),
    AttributeReference("output_bytes", LongType, nullable = false)(),
    AttributeReference("seconds", DoubleType, nullable = false)(),
    AttributeReference("version", LongType, nullable = true)()
  )

  override def run(spark: SparkSession): Seq[Row] = {
    val r = FermionConvert.run(spark, request)
    Seq(Row(
      r.direction,
      r.source,
      r.destination,
      r.inputFiles,
      r.outputFiles,
      r.rows,
      r.inputBytes,
      r.outputBytes,
      r.seconds,
      r.version.map(Long.box).orNull
    ))
  }
}
