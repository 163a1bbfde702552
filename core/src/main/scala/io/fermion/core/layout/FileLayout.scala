package io.fermion.core.layout

import java.nio.charset.StandardCharsets

/** Fixed constants of the file layout (docs/format.md, "File layout"). */
private[core] object FileLayout {

  /** "FRMN" at the start of the file (followed by 4 zero bytes) and in the footer's last 4 bytes. */
  val Magic: Array[Byte] = "FRMN".getBytes(StandardCharsets.US_ASCII)

  /** Magic plus padding: data starts 8-byte aligned. */
  val HeaderSize: Int = 8
  val FooterSize: Int = 64

  /** Stored in SimpleChunkDesc.length of a VALIDITY chunk whose stripe is entirely null. */
  val AllNullChunkLength: Long = 0xffffffffL

  /** Footer.settings bits. */
  object Settings {
    val PageCrc32: Int = 1
    val BatchMode: Int = 1 << 1

    /** Format 1.5: a column directory ends at the CMB area's start (docs/format.md 10.1). */
    val ColumnDirectory: Int = 1 << 2
  }
}

/** How a stream's per-stripe descriptors are stored (DescType, docs/format.md 6.3). */
private[core] object DescType {
  val Simple: Int = 0
  val Full: Int = 1
  val UseDefault: Int = 2
  val ForceNull: Int = 3
  def name(t: Int): String = t match {
    case Simple => "SIMPLE"; case Full => "FULL"; case UseDefault => "USE_DEFAULT"; case ForceNull => "FORCE_NULL"
    case other => s"UNKNOWN($other)"
  }
}

/** The kind of a stream (StreamType, docs/format.md 4.2). */
private[core] object StreamType {
  val Validity: Int = 0
  val Offsets: Int = 1
  val Data: Int = 2
  val BatchMeta: Int = 3
}
