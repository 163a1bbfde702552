package io.fermion.core.layout

import java.nio.{ByteBuffer, ByteOrder}

/** The 20-byte header in front of every page's payload (docs/format.md, "Pages"):
  * {{{
  * u32 storedLength  u32 uncompressedLength  u32 valueCount  u32 crc32(stored payload)
  * u8 codec  u8 encoding  u16 reserved
  * }}}
  * It makes the pages of a chunk walkable without the CMB (VALIDITY and OFFSETS chunks have no
  * page metadata) and keeps each page's checksum next to the bytes it protects. */
final private[core] case class PageHeader(
    storedLength: Int,
    uncompressedLength: Int,
    valueCount: Int,
    crc32: Int,
    codec: Int,
    encoding: Int
) {
  def encode(): Array[Byte] = {
    val b = ByteBuffer.allocate(PageHeader.Size).order(ByteOrder.LITTLE_ENDIAN)
    b.putInt(storedLength).putInt(uncompressedLength).putInt(valueCount).putInt(crc32)
    b.put(codec.toByte).put(encoding.toByte).putShort(0.toShort)
    b.array()
  }
}

private[core] object PageHeader {
  val Size: Int = 20

  def decode(b: ByteBuffer, at: Int): PageHeader = {
    val o = b.duplicate().order(ByteOrder.LITTLE_ENDIAN)
    PageHeader(
      o.getInt(at),
      o.getInt(at + 4),
      o.getInt(at + 8),
      o.getInt(at + 12),
      o.get(at + 16) & 0xff,
      o.get(at + 17) & 0xff
    )
  }
}

/** How a page's values are laid out before compression (docs/format.md, "Page encodings"). Every
  * encoding decodes back to the PLAIN layout of the page's stream. */
private[core] object PageEncoding {

  /** Values as the stream defines them: bitmaps LSB-first, fixed-width little-endian, lengths as
    * u32, variable-width bytes concatenated. */
  val Plain: Int = 0

  /** One value repeated for the whole page. */
  val Constant: Int = 1

  /** Runs of equal values: run values and run lengths. */
  val Rle: Int = 2

  /** Non-negative integers bit-packed at the width of the largest. */
  val BitPack: Int = 3

  /** Frame of reference: the minimum, then value - minimum bit-packed. */
  val For: Int = 4

  /** First value, then zigzag-encoded differences bit-packed. */
  val Delta: Int = 5

  /** First value, then differences minus the smallest difference bit-packed (delta, then FOR). */
  val DeltaFor: Int = 6

  /** Distinct values once, then one code per value (codes bit-packed or run-length encoded). */
  val Dictionary: Int = 7

  /** Strings (1.6): a dictionary whose codes count only the entries of the value's length, which
    * the node's OFFSETS already give: values whose lengths tell them apart need no code bits. */
  val DictionaryByLength: Int = 8

  /** Integers (1.7): a reference, then `value - reference` as a Huffman block (bins coded by their
    * frequency, offsets within bins raw); also the code scheme of Huffman-coded dictionary codes. */
  val Huffman: Int = 9

  /** Integers (1.7): first value, then zigzag-encoded differences as a Huffman block. */
  val DeltaHuffman: Int = 10

  val all: IndexedSeq[Int] =
    IndexedSeq(
      Plain,
      Constant,
      Rle,
      BitPack,
      For,
      Delta,
      DeltaFor,
      Dictionary,
      DictionaryByLength,
      Huffman,
      DeltaHuffman
    )

  def name(id: Int): String = id match {
    case Plain => "plain"; case Constant => "constant"; case Rle => "rle"; case BitPack => "bitpack"
    case For => "for"; case Delta => "delta"; case DeltaFor => "delta_for"; case Dictionary => "dictionary"
    case DictionaryByLength => "dictionary_by_length"; case Huffman => "huffman"; case DeltaHuffman => "delta_huffman"
    case other => s"unknown($other)"
  }

  def parse(name: String): Int = {
    val n = name.trim.toLowerCase(java.util.Locale.ROOT).replace("-", "_").replace("+", "_")
    all.find(id => this.name(id) == n).getOrElse(n match {
      case "dict" => Dictionary
      case "bitpacked" | "bit_pack" | "bit_packing" => BitPack
      case "deltafor" => DeltaFor
      case "run_length" => Rle
      case _ => throw new IllegalArgumentException(
          s"unknown encoding '$name' (expected one of ${all.map(this.name).mkString(", ")})"
        )
    })
  }
}
