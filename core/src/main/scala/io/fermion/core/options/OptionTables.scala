package io.fermion.core.options

import java.nio.file.{Files, Paths}

/** Writes the README's option tables from [[OptionRegistry]]: the text between
  * `<!-- options:<scope> -->` and `<!-- /options -->` is replaced by the scope's table.
  * Run by `dev/options-doc`. */
private[core] object OptionTables {
  private val scopes = Seq(
    "write" -> OptionScope.Write,
    "dataset" -> OptionScope.Dataset,
    "read" -> OptionScope.Read,
    "storage" -> OptionScope.Storage
  )

  def render(text: String): String = scopes.foldLeft(text) { case (t, (name, scope)) =>
    val open = s"<!-- options:$name -->"
    val close = "<!-- /options -->"
    val start = t.indexOf(open)
    if (start < 0) throw new IllegalArgumentException(s"no $open marker")
    val end = t.indexOf(close, start)
    t.substring(0, start + open.length) + "\n" + OptionRegistry.markdownTable(scope) + "\n" + t.substring(end)
  }

  def main(args: Array[String]): Unit = {
    val path = Paths.get(args.headOption.getOrElse("README.md"))
    Files.writeString(path, render(Files.readString(path)))
  }
}
