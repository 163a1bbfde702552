package io.fermion.spark.extensions

import java.util.Locale

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.{FunctionIdentifier, TableIdentifier}
import org.apache.spark.sql.catalyst.expressions.{Expression, Literal}
import org.apache.spark.sql.catalyst.parser.{ParameterContext, ParserInterface, SqlStatementSplitResult}
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.types.{DataType, StringType, StructType, TimestampNTZType, TimestampType}

/** Spark's SQL parser plus Fermion's table commands; every other statement goes to Spark's parser
  * unchanged (`delegate`). The commands (`t` is a table name, ``fermion.`/path` `` included):
  * {{{
  * DESCRIBE HISTORY t [LIMIT n]
  * DESCRIBE DETAIL t
  * OPTIMIZE t
  * VACUUM t [RETAIN n HOURS] [DRY RUN]
  * RESTORE [TABLE] t [TO] VERSION AS OF n
  * RESTORE [TABLE] t [TO] TIMESTAMP AS OF 'timestamp'
  * ALTER TABLE t CREATE [OR REPLACE] TAG [IF NOT EXISTS] name [AS OF VERSION n]
  * ALTER TABLE t DROP TAG [IF EXISTS] name
  * CONVERT TO FERMION ... / CONVERT TO PARQUET ...   (see [[ConvertSqlParser]])
  * }}}
  * (`DESC` for `DESCRIBE`; keywords in any case). Table names are parsed by Spark's parser, so
  * they follow Spark's quoting rules. Parsing also installs Fermion's session catalog when the
  * session has none ([[FermionSparkSessionExtensions.installCatalog]]). */
final class FermionSqlParser(session: SparkSession, delegate: ParserInterface) extends ParserInterface {
  import FermionSqlParser._

  override def parsePlan(sqlText: String): LogicalPlan = {
    FermionSparkSessionExtensions.installCatalog(session)
    command(sqlText).getOrElse(delegate.parsePlan(sqlText))
  }

  override def parsePlanWithParameters(sqlText: String, context: ParameterContext): LogicalPlan = {
    FermionSparkSessionExtensions.installCatalog(session)
    command(sqlText).getOrElse(delegate.parsePlanWithParameters(sqlText, context))
  }

  override def parseExpression(sqlText: String): Expression = delegate.parseExpression(sqlText)
  override def parseTableIdentifier(sqlText: String): TableIdentifier = {
    FermionSparkSessionExtensions.installCatalog(session)
    delegate.parseTableIdentifier(sqlText)
  }
  override def parseFunctionIdentifier(sqlText: String): FunctionIdentifier = delegate.parseFunctionIdentifier(sqlText)
  override def parseMultipartIdentifier(sqlText: String): Seq[String] = {
    FermionSparkSessionExtensions.installCatalog(session)
    delegate.parseMultipartIdentifier(sqlText)
  }
  override def parseQuery(sqlText: String): LogicalPlan = delegate.parseQuery(sqlText)
  override def parseRoutineParam(sqlText: String): StructType = delegate.parseRoutineParam(sqlText)
  override def splitStatements(sqlText: String): SqlStatementSplitResult = delegate.splitStatements(sqlText)
  override def parseTableSchema(sqlText: String): StructType = delegate.parseTableSchema(sqlText)
  override def parseDataType(sqlText: String): DataType = delegate.parseDataType(sqlText)

  /** One of Fermion's commands, or None (Spark's parser takes the statement). */
  private def command(sqlText: String): Option[LogicalPlan] = {
    val convert = ConvertSqlParser.parse(sqlText)
    if (convert.isDefined) return convert
    // Tokens are read as the command needs them: most statements are queries, told apart by their
    // first word, and tokenizing all of a long query cost 2 % of its planning (TPC-H Q2).
    val c = new Cursor(sqlText, tokenize(sqlText))
    try {
      val plan = commandAt(c)
      if (c.atEnd) plan else None
    } catch { case NotOurs | Untokenizable => None } // Spark reports the syntax error
  }

  private def commandAt(c: Cursor): Option[LogicalPlan] = {
    def name(): Seq[String] =
      try delegate.parseMultipartIdentifier(need(c.tableName()))
      catch { case _: org.apache.spark.sql.catalyst.parser.ParseException => throw NotOurs }
    def keywords(ws: String*): Unit = ws.foreach(w => if (!c.word(w)) throw NotOurs)
    if (c.word("DESCRIBE") || c.word("DESC")) {
      if (c.word("HISTORY")) {
        val t = name()
        val limit = if (c.word("LIMIT")) Some(need(c.integer())) else None
        Some(DescribeHistoryCommand(t, limit))
      } else if (c.word("DETAIL")) Some(DescribeDetailCommand(name()))
      else None
    } else if (c.word("OPTIMIZE")) Some(OptimizeCommand(name()))
    else if (c.word("VACUUM")) {
      val t = name()
      val hours = if (c.word("RETAIN")) {
        val n = need(c.number())
        keywords("HOURS")
        Some(n)
      } else None
      val dryRun = c.word("DRY")
      if (dryRun) keywords("RUN")
      Some(VacuumCommand(t, hours, dryRun))
    } else if (c.word("RESTORE")) {
      c.word("TABLE")
      val t = name()
      c.word("TO")
      if (c.word("VERSION")) {
        keywords("AS", "OF")
        Some(RestoreCommand(t, Left(need(c.integer()))))
      } else if (c.word("TIMESTAMP")) {
        keywords("AS", "OF")
        val rest = c.rest()
        if (rest.isEmpty) throw NotOurs
        Some(RestoreCommand(t, Right(timestampOf(delegate.parseExpression(rest)))))
      } else None
    } else if (c.word("ALTER") && c.word("TABLE")) {
      val t = name()
      if (c.word("CREATE")) {
        val replace = c.word("OR")
        if (replace) keywords("REPLACE")
        keywords("TAG")
        val ifNotExists = c.word("IF")
        if (ifNotExists) keywords("NOT", "EXISTS")
        val tag = need(c.identifier())
        val version = if (c.word("AS")) { keywords("OF", "VERSION"); Some(need(c.integer())) }
        else None
        Some(CreateTagCommand(t, tag, version, ifNotExists, replace))
      } else if (c.word("DROP") && c.word("TAG")) {
        val ifExists = c.word("IF")
        if (ifExists) keywords("EXISTS")
        Some(DropTagCommand(t, need(c.identifier()), ifExists))
      } else None
    } else None
  }
}

object FermionSqlParser {

  /** The statement is not one of Fermion's commands. */
  private object NotOurs extends scala.util.control.ControlThrowable
  private def need[T](o: Option[T]): T = o.getOrElse(throw NotOurs)

  /** A timestamp given as a string literal (read in the session time zone, as Spark reads
    * `TIMESTAMP AS OF`) or a TIMESTAMP literal. */
  sealed trait AsOf
  final case class AsOfString(text: String) extends AsOf
  final case class AsOfMicros(micros: Long) extends AsOf

  private def timestampOf(e: Expression): AsOf = e match {
    case Literal(v, StringType) if v != null => AsOfString(v.toString)
    case Literal(v: Long, TimestampType | TimestampNTZType) => AsOfMicros(v)
    case other =>
      throw new IllegalArgumentException(s"RESTORE ... TIMESTAMP AS OF takes a timestamp string, not ${other.sql}")
  }

  sealed trait Kind
  case object Word extends Kind
  case object Quoted extends Kind // `backquoted`
  case object Str extends Kind
  case object Num extends Kind
  case object Sym extends Kind

  final case class Token(kind: Kind, text: String, start: Int, end: Int)

  /** An unterminated quote or comment: not a statement of Fermion's. */
  private object Untokenizable extends scala.util.control.ControlThrowable

  /** Words, backquoted names, string literals, numbers and symbols; comments and whitespace
    * skipped. Lazy: a token is read when it is first looked at, and one that cannot be read (an
    * unterminated quote or comment) throws `Untokenizable` then. */
  private def tokenize(s: String): LazyList[Token] = {
    var i = 0
    var out: Token = null
    def quoted(q: Char, kind: Kind): Unit = {
      val start = i
      i += 1
      var closed = false
      while (!closed) {
        if (i >= s.length) throw Untokenizable
        val ch = s.charAt(i)
        if (ch == '\\' && q != '`') i += 2
        else if (ch == q) {
          if (i + 1 < s.length && s.charAt(i + 1) == q) i += 2 else { i += 1; closed = true }
        } else i += 1
      }
      out = Token(kind, s.substring(start, i), start, i)
    }
    def next(): Option[Token] = {
      out = null
      while (out == null && i < s.length) {
        val ch = s.charAt(i)
        if (ch.isWhitespace) i += 1
        else if (s.startsWith("--", i)) { while (i < s.length && s.charAt(i) != '\n') i += 1 }
        else if (s.startsWith("/*", i)) {
          val e = s.indexOf("*/", i + 2)
          if (e < 0) throw Untokenizable
          i = e + 2
        } else if (ch == '`') quoted('`', Quoted)
        else if (ch == '\'' || ch == '"') quoted(ch, Str)
        else if (ch.isDigit) {
          val start = i
          while (i < s.length && (s.charAt(i).isLetterOrDigit || s.charAt(i) == '.' || s.charAt(i) == '_')) i += 1
          out = Token(
            if (s.substring(start, i).forall(c => c.isDigit || c == '.')) Num else Word,
            s.substring(start, i),
            start,
            i
          )
        } else if (ch.isLetter || ch == '_') {
          val start = i
          while (i < s.length && (s.charAt(i).isLetterOrDigit || s.charAt(i) == '_' || s.charAt(i) == '$')) i += 1
          out = Token(Word, s.substring(start, i), start, i)
        } else { out = Token(Sym, ch.toString, i, i + 1); i += 1 }
      }
      Option(out)
    }
    LazyList.unfold(())(_ => next().map(_ -> ()))
  }

  /** Reads tokens left to right; every method consumes only what it matches. */
  final class Cursor(sql: String, tokens: LazyList[Token]) {
    private var pos = 0
    private def peek: Option[Token] = tokens.lift(pos)

    def word(w: String): Boolean = peek match {
      case Some(Token(Word, t, _, _)) if t.toUpperCase(Locale.ROOT) == w => pos += 1; true
      case _ => false
    }

    /** A (possibly qualified) table name: its text, for Spark's parser. */
    def tableName(): Option[String] = {
      def part(): Option[Token] = peek match {
        case Some(t @ Token(Word | Quoted, _, _, _)) => pos += 1; Some(t)
        case _ => None
      }
      val first = part().getOrElse(return None)
      var last = first
      while (peek.exists(t => t.kind == Sym && t.text == ".")) {
        pos += 1
        last = part().getOrElse(return None)
      }
      Some(sql.substring(first.start, last.end))
    }

    def identifier(): Option[String] = peek match {
      case Some(Token(Word, t, _, _)) => pos += 1; Some(t)
      case Some(Token(Quoted, t, _, _)) => pos += 1; Some(t.substring(1, t.length - 1).replace("``", "`"))
      case _ => None
    }

    def integer(): Option[Long] = peek match {
      case Some(Token(Num, t, _, _)) if t.forall(_.isDigit) => pos += 1; t.toLongOption
      case _ => None
    }

    def number(): Option[Double] = peek match {
      case Some(Token(Num, t, _, _)) => pos += 1; t.toDoubleOption
      case _ => None
    }

    /** The text after the current token (the cursor moves to the end). */
    def rest(): String = {
      val text = peek.map(t => sql.substring(t.start)).getOrElse("")
      pos = tokens.length
      text.trim.stripSuffix(";").trim
    }

    /** Nothing left but an optional `;`. */
    def atEnd: Boolean =
      tokens.drop(pos).forall(t => t.kind == Sym && t.text == ";")
  }
}
