package io.fermion.core.options

/** Parsing of option values with errors that name the option. */
object OptionValues {
  def wrap[T](key: String, value: String)(f: => T): T =
    try f
    catch {
      case e: IllegalArgumentException =>
        throw new IllegalArgumentException(
          s"Invalid value '$value' for option '$key': ${e.getMessage.stripPrefix("requirement failed: ")}"
        )
    }

  def int(key: String, value: String): Int =
    wrap(key, value)(value.trim.toIntOption.getOrElse(throw new IllegalArgumentException("expected an integer")))

  def bool(key: String, value: String): Boolean = wrap(key, value) {
    value.trim.toLowerCase(java.util.Locale.ROOT) match {
      case "true" => true
      case "false" => false
      case _ => throw new IllegalArgumentException("expected true or false")
    }
  }

  /** A byte count: digits with an optional k, m or g suffix (binary units). */
  def bytes(key: String, value: String, max: Long): Long = wrap(key, value)(bytes(value, max))

  /** [[bytes]] without naming an option in the error. */
  def bytes(value: String, max: Long): Long = {
    val v = value.trim.toLowerCase(java.util.Locale.ROOT)
    val (digits, mult) =
      if (v.endsWith("k") || v.endsWith("kb")) (v.takeWhile(_.isDigit), 1L << 10)
      else if (v.endsWith("m") || v.endsWith("mb")) (v.takeWhile(_.isDigit), 1L << 20)
      else if (v.endsWith("g") || v.endsWith("gb")) (v.takeWhile(_.isDigit), 1L << 30)
      else (v, 1L)
    val n = digits.toLongOption.getOrElse(
      throw new IllegalArgumentException("expected a byte size such as 524288, 512k or 64m")
    )
    if (n <= 0 || n > max / mult) throw new IllegalArgumentException(s"must be between 1 and $max bytes")
    n * mult
  }
}
