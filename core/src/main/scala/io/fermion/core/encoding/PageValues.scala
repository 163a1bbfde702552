package io.fermion.core.encoding

/** What a page's PLAIN bytes are, which decides the encodings that apply to it. */
sealed private[core] trait PageValues

private[core] object PageValues {

  /** A bitmap of one bit per value, LSB first (VALIDITY, boolean DATA). */
  case object Bitmap extends PageValues

  /** Little-endian values of `width` bytes (OFFSETS lengths are 4-byte values). Widths 1, 2, 4 and 8
    * are integers for the integer encodings (floats by their bits); width 16 is opaque. */
  final case class Fixed(width: Int) extends PageValues

  /** Concatenated bytes of variable-width values (their lengths live in the OFFSETS stream). */
  case object Variable extends PageValues
}
