package io.fermion.spark.tools

import java.util.Locale

/** What a conversion did: from what to what, how many input files and output files, rows, bytes
  * before and after, and the wall time. */
final case class ConvertResult(
    direction: String,
    source: String,
    destination: String,
    inputFiles: Int,
    outputFiles: Int,
    rows: Long,
    inputBytes: Long,
    outputBytes: Long,
    seconds: Double,
    /** The dataset version written (conversions to Fermion). */
    version: Option[Long]
) {
  def ratio: Double = if (inputBytes > 0) outputBytes.toDouble / inputBytes else 0.0

  /** The summary printed at the end. */
  def summary: String = {
    import ConvertProgress.{bytes, duration}
    val rate = if (seconds > 0) s" (${bytes((inputBytes / seconds).toLong)}/s)" else ""
    val v = version.map(n => s" (version $n)").getOrElse("")
    s"""Converted $direction: $source -> $destination$v
       |  files: $inputFiles -> $outputFiles
       |  rows:  ${String.format(Locale.ROOT, "%,d", Long.box(rows))}
       |  bytes: ${bytes(inputBytes)} -> ${bytes(outputBytes)} (${String.format(
        Locale.ROOT,
        "%.3f",
        Double.box(ratio)
      )} of the input)
       |  time:  ${duration(seconds)}$rate""".stripMargin
  }

  def toJson: String = {
    val w = new java.io.StringWriter()
    val g = new com.fasterxml.jackson.core.JsonFactory().createGenerator(w)
    g.writeStartObject()
    g.writeStringField("direction", direction)
    g.writeStringField("source", source)
    g.writeStringField("destination", destination)
    g.writeNumberField("input_files", inputFiles)
    g.writeNumberField("output_files", outputFiles)
    g.writeNumberField("rows", rows)
    g.writeNumberField("input_bytes", inputBytes)
    g.writeNumberField("output_bytes", outputBytes)
    g.writeNumberField("seconds", seconds)
    version match { case Some(n) => g.writeNumberField("version", n); case None => g.writeNullField("version") }
    g.writeEndObject()
    g.close()
    w.toString
  }
}
