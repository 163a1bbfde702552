package io.fermion.core.encoding

import io.fermion.core.layout.PageEncoding

/** Turns one encoded page body back into the PLAIN bytes of its stream. Each encoding is a tight
  * loop over long arrays; PLAIN pages pass through without a copy. Every count read from the body
  * is checked against the page's value count (already checked against the node's slots by the
  * caller) and against the body's length before anything is allocated, so a damaged page fails with
  * [[MalformedPageException]] instead of a huge allocation or a wrong answer. One instance per
  * reader; the returned bytes are valid until the next call. */
final private[core] class PageValueDecoder {
  private val scratch = new LongScratch
  private val huffman = new HuffmanScratch
  private var out = new Array[Byte](0)
  private def outOf(n: Long): Array[Byte] = {
    if (n > Int.MaxValue - 16) throw new MalformedPageException(s"page decodes to $n bytes")
    if (out.length < n) out = new Array[Byte](math.max(n.toInt, math.min(Int.MaxValue - 16L, out.length * 2L).toInt))
    out
  }

  /** The array and length of the decoded bytes (offset `plainOffset`). */
  var plainArray: Array[Byte] = Array.emptyByteArray
  var plainOffset: Int = 0
  var plainLength: Int = 0

  /** When a fixed-width page of up to 8-byte values was decoded with `keepLongs`: its values, one
    * `i64` each (`valueCount` of them), not yet cut to their PLAIN bytes (then `plainArray` is
    * null); a caller writing them to their destination itself saves a pass over the page. */
  var longValues: Array[Long] = null

  /** When a BITPACK or FOR page of fixed-width values of up to 8 bytes, in at most 56 bits, was
    * decoded with `keepEncoded`: its values still packed (then `plainArray` and [[longValues]] are
    * null), for a caller unpacking them into their destination in one pass. */
  var packedValues: PackedValues = null
  private val packed = new PackedValues

  /** When a DELTA or DELTA_FOR page of fixed-width values of up to 8 bytes, differences in at most
    * 56 bits, was decoded with `keepLongs` and `keepEncoded`: its first value and its differences
    * still packed (then `plainArray` and [[longValues]] are null), for a caller summing them into
    * their destination in one pass; a DELTA_HUFFMAN page's differences out of their Huffman block
    * but not summed ([[PackedDeltas.unpacked]]); a CONSTANT page as 0-bit differences from its value. */
  var packedDeltas: PackedDeltas = null

  /** When an RLE page of fixed-width values of up to 8 bytes was decoded with `keepLongs` and
    * `keepEncoded`: its runs, checked to cover its values exactly (then `plainArray` and
    * [[longValues]] are null), for a caller writing each run straight to its destination. */
  var runValues: Runs = null
  private val runs = new Runs
  private val deltas = new PackedDeltas

  /** When a dictionary page of variable-width values was decoded with `keepEncoded`: its entries
    * and codes (then `plainArray` is null, `plainLength` the values' bytes), for a caller writing
    * the values straight to their destination. */
  var entryValues: DictionaryEntries = null
  private val entries = new DictionaryEntries

  /** When a dictionary page of fixed-width values of up to 8 bytes with bit-packed codes was
    * decoded with `keepLongs` and `keepEncoded`: its entries and its codes still packed (then
    * `plainArray` and [[longValues]] are null), for a caller looking the values up straight into
    * their destination. */
  var dictionaryCodes: DictionaryCodes = null
  private val fixedDictionary = new DictionaryCodes

  /** Decodes `n` values of kind `values`. `maxBytes` bounds the decoded size of variable-width
    * pages (the bytes their OFFSETS still allow); `valueLengths` gives the lengths of a variable
    * page's non-null values from the node's OFFSETS, which `dictionary_by_length` needs (null: not
    * at hand, and such a page is rejected). With `keepLongs`, an encoded page of fixed-width values
    * of up to 8 bytes stops at its values in [[longValues]]; with `keepEncoded` too, a BITPACK or
    * FOR page of such values stops before unpacking them ([[packedValues]]), a DELTA, DELTA_FOR or
    * DELTA_HUFFMAN page before summing its differences, a CONSTANT page as its value
    * ([[packedDeltas]]). With `keepEncoded`, a
    * dictionary page of variable-width values stops at its entries and codes ([[entryValues]]). */
  def decode(
      encoding: Int,
      src: Array[Byte],
      off: Int,
      len: Int,
      n: Int,
      values: PageValues,
      maxBytes: Long,
      valueLengths: () => Array[Int] = null,
      keepLongs: Boolean = false,
      keepEncoded: Boolean = false
  ): Unit = {
    longValues = null
    packedValues = null
    packedDeltas = null
    runValues = null
    entryValues = null
    dictionaryCodes = null
    if (encoding == PageEncoding.Plain) { plainArray = src; plainOffset = off; plainLength = len; return }
    val r = new EncodedReader(src, off, len)
    plainOffset = 0
    values match {
      case PageValues.Bitmap => decodeBitmap(encoding, r, n)
      case PageValues.Fixed(w) if w > 8 => decodeWide(encoding, r, n, w)
      case PageValues.Fixed(w)
          if keepLongs && keepEncoded && (encoding == PageEncoding.BitPack || encoding == PageEncoding.For) =>
        keepPackedValues(encoding, r, n, w)
      case PageValues.Fixed(w)
          if keepLongs && keepEncoded && (encoding == PageEncoding.Delta || encoding == PageEncoding.DeltaFor) =>
        keepPackedDeltas(encoding, r, n, w)
      case PageValues.Fixed(w) if keepLongs && keepEncoded && encoding == PageEncoding.DeltaHuffman =>
        keepHuffmanDeltas(r, n, w)
      case PageValues.Fixed(w) if keepLongs && keepEncoded && encoding == PageEncoding.Constant =>
        keepConstant(r, n, w)
      case PageValues.Fixed(w) if keepLongs && keepEncoded && encoding == PageEncoding.Rle =>
        readRuns(r, n, runs); runValues = runs; plainLength = n * w
      case PageValues.Fixed(w) if keepLongs && keepEncoded && encoding == PageEncoding.Dictionary =>
        keepDictionaryCodes(r, n, w)
      case PageValues.Fixed(w) => decodeFixed(encoding, r, n, w, keepLongs)
      case PageValues.Variable => decodeVariable(encoding, r, n, maxBytes, valueLengths, keepEncoded)
    }
    // `out` may have grown while decoding.
    plainArray =
      if (
        longValues != null || packedValues != null || packedDeltas != null || entryValues != null ||
        dictionaryCodes != null || runValues != null
      ) null
      else out
    if (r.remaining != 0) throw new MalformedPageException(
      s"${PageEncoding.name(encoding)} page body has ${r.remaining} bytes past its end"
    )
  }

  private def unsupported(encoding: Int, what: String): Nothing =
    throw new MalformedPageException(s"encoding ${PageEncoding.name(encoding)} does not apply to $what pages")

  /** A BITPACK or FOR page read up to its packed words (checked to lie within the body); values of
    * more than 56 bits, beyond the callers' one-load-per-value kernels, are unpacked as usual. */
  private def keepPackedValues(encoding: Int, r: EncodedReader, n: Int, width: Int): Unit = {
    val (reference, w, what) = packedHeader(encoding, r)
    if (w <= 56) { r.packedAsIs(n, w, reference, packed, what); packedValues = packed }
    else { val v = scratch.values(n); r.packed(n, w, reference, v, what); longValues = v }
    plainLength = n * width
  }

  /** A dictionary page of fixed-width values read up to its codes: left packed when bit-packed in
    * up to 32 bits (the callers' lookup kernels), otherwise decoded and looked up into
    * [[longValues]]. */
  private def keepDictionaryCodes(r: EncodedReader, n: Int, width: Int): Unit = {
    val dict = readLongDictionary(r, n, width)
    val at = r.arrayPosition
    if (r.remaining >= 2 && r.array(at) == PageEncoding.BitPack && (r.array(at + 1) & 0xff) <= 32) {
      r.skip(2, "code scheme and bit width")
      r.packedAsIs(n, r.array(at + 1) & 0xff, 0L, fixedDictionary.codes, "dictionary codes")
      fixedDictionary.entries = dict
      dictionaryCodes = fixedDictionary
    } else {
      val v = scratch.values(n)
      lookUp(r, n, dict, v)
      longValues = v
    }
    plainLength = n * width
  }

  /** A dictionary page's u32 entry count and its entries, `width` bytes each (exactly that many:
    * a code past them fails the lookup). */
  private def readLongDictionary(r: EncodedReader, n: Int, width: Int): Array[Long] = {
    val size = r.u32("dictionary size")
    if (size == 0 || size > n || size.toLong * width > r.remaining)
      throw new MalformedPageException(s"dictionary of $size entries for $n values")
    val dict = new Array[Long](size)
    var i = 0
    while (i < size) { dict(i) = r.signed(width, "dictionary entry"); i += 1 }
    dict
  }

  /** Reads a dictionary page's `n` codes and looks each up in `dict` into `v`. */
  private def lookUp(r: EncodedReader, n: Int, dict: Array[Long], v: Array[Long]): Unit = {
    val size = dict.length
    val codes = scratch.second(n)
    readCodes(r, n, size, codes, checked = false)
    // Each code checked here, in the pass that looks it up.
    var i = 0
    while (i < n) {
      val c = codes(i)
      if (java.lang.Long.compareUnsigned(c, size) >= 0) badCode(c, size)
      v(i) = dict(c.toInt)
      i += 1
    }
  }

  /** A BITPACK page's bit width, or a FOR page's reference and bit width (format 5.7): the
    * reference (0 for BITPACK), the width, and what the packed values are called in errors. */
  private def packedHeader(encoding: Int, r: EncodedReader): (Long, Int, String) =
    if (encoding == PageEncoding.For) {
      val (reference, w) = r.forHeader("FOR values")
      (reference, w, "FOR values")
    } else {
      val w = r.u8("bit width")
      if (w > 64) throw new MalformedPageException(s"bit width $w")
      (0L, w, "bit-packed values")
    }

  private def decodeFixed(encoding: Int, r: EncodedReader, n: Int, width: Int, keepLongs: Boolean): Unit = {
    val v = scratch.values(n)
    encoding match {
      case PageEncoding.Constant => java.util.Arrays.fill(v, 0, n, r.signed(width, "constant value"))
      case PageEncoding.BitPack | PageEncoding.For =>
        val (reference, w, what) = packedHeader(encoding, r)
        r.packed(n, w, reference, v, what)
      case PageEncoding.Delta | PageEncoding.DeltaFor =>
        val (first, reference, w) = deltaHeader(encoding, r)
        sumDeltas(encoding, r, n, first, reference, w, v)
      case PageEncoding.Huffman =>
        HuffmanBlock.decode(r, n, v, huffman, "Huffman block", add = r.i64("reference"))
      case PageEncoding.DeltaHuffman =>
        val first = r.i64("first value")
        val d = scratch.second(math.max(1, n - 1))
        HuffmanBlock.decode(r, math.max(0, n - 1), d, huffman, "Huffman block of differences")
        prefixSum(first, d, n, zigzag = true, v)
      case PageEncoding.Dictionary => lookUp(r, n, readLongDictionary(r, n, width), v)
      case PageEncoding.Rle => readRle(r, n, v)
      case other => unsupported(other, s"$width-byte")
    }
    if (keepLongs) longValues = v else PlainValues.writeAll(v, n, width, outOf(n.toLong * width), 0)
    plainLength = n * width
  }

  /** A DELTA or DELTA_FOR page read up to its packed differences (checked to lie within the body);
    * differences of more than 56 bits, beyond the callers' one-load-per-value kernels, are summed
    * as usual. */
  private def keepPackedDeltas(encoding: Int, r: EncodedReader, n: Int, width: Int): Unit = {
    val (first, reference, w) = deltaHeader(encoding, r)
    if (w <= 56) {
      r.packedAsIs(math.max(0, n - 1), w, reference, deltas.deltas, deltaWhat(encoding))
      deltas.first = first; deltas.zigzag = encoding == PageEncoding.Delta; deltas.unpacked = null
      packedDeltas = deltas
    } else {
      val v = scratch.values(n)
      sumDeltas(encoding, r, n, first, reference, w, v)
      longValues = v
    }
    plainLength = n * width
  }

  /** A CONSTANT page as a DELTA_FOR page of 0-bit differences from its value: the caller writes
    * the value `n` times (its range the value), without an array of `n` copies to write from. */
  private def keepConstant(r: EncodedReader, n: Int, width: Int): Unit = {
    deltas.first = r.signed(width, "constant value"); deltas.zigzag = false; deltas.unpacked = null
    val d = deltas.deltas
    d.array = Array.emptyByteArray; d.offset = 0; d.bits = 0; d.reference = 0L
    packedDeltas = deltas
    plainLength = n * width
  }

  /** A DELTA_HUFFMAN page read up to its differences, decoded from their Huffman block but not
    * summed ([[PackedDeltas.unpacked]]). */
  private def keepHuffmanDeltas(r: EncodedReader, n: Int, width: Int): Unit = {
    val first = r.i64("first value")
    val d = scratch.second(math.max(1, n - 1))
    HuffmanBlock.decode(r, math.max(0, n - 1), d, huffman, "Huffman block of differences")
    deltas.first = first; deltas.zigzag = true; deltas.unpacked = d
    packedDeltas = deltas
    plainLength = n * width
  }

  /** A DELTA or DELTA_FOR page's `n` values into `v`, from its header's fields and its packed differences. */
  private def sumDeltas(
      encoding: Int,
      r: EncodedReader,
      n: Int,
      first: Long,
      reference: Long,
      w: Int,
      v: Array[Long]
  ): Unit = {
    val d = scratch.second(math.max(1, n - 1))
    r.packed(math.max(0, n - 1), w, reference, d, deltaWhat(encoding))
    prefixSum(first, d, n, zigzag = encoding == PageEncoding.Delta, v)
  }

  /** A DELTA page's first value and bit width (its differences zigzag words, reference 0), or a
    * DELTA_FOR page's first value and its FOR block's reference and bit width. */
  private def deltaHeader(encoding: Int, r: EncodedReader): (Long, Long, Int) = {
    val first = r.i64("first value")
    if (encoding == PageEncoding.Delta) {
      val w = r.u8("delta bit width")
      if (w > 64) throw new MalformedPageException(s"bit width $w")
      (first, 0L, w)
    } else {
      val (reference, w) = r.forHeader("FOR deltas")
      (first, reference, w)
    }
  }

  private def deltaWhat(encoding: Int): String = if (encoding == PageEncoding.Delta) "zigzag deltas" else "FOR deltas"

  private def prefixSum(first: Long, d: Array[Long], n: Int, zigzag: Boolean, v: Array[Long]): Unit = if (n > 0) {
    var acc = first
    v(0) = acc
    var i = 1
    if (zigzag) while (i < n) { val z = d(i - 1); acc += (z >>> 1) ^ -(z & 1); v(i) = acc; i += 1 }
    else while (i < n) { acc += d(i - 1); v(i) = acc; i += 1 }
  }

  /** u32 runs, FOR block of run values, FOR block of run lengths, expanded into `v(0 until n)`. */
  private def readRle(r: EncodedReader, n: Int, v: Array[Long]): Unit = {
    readRuns(r, n, runs)
    var at = 0
    var k = 0
    while (k < runs.count) {
      val l = runs.lengths(k).toInt
      java.util.Arrays.fill(v, at, at + l, runs.values(k))
      at += l
      k += 1
    }
  }

  /** An RLE page's runs into `into`, each length checked: at least 1, together exactly `n`. */
  private def readRuns(r: EncodedReader, n: Int, into: Runs): Unit = {
    val count = r.u32("run count")
    if (count > n || (count == 0 && n > 0)) throw new MalformedPageException(s"$count runs for $n values")
    val values = new Array[Long](count)
    val lengths = new Array[Long](count)
    r.forBlock(count, values, "run values")
    r.forBlock(count, lengths, "run lengths")
    var at = 0L
    var k = 0
    while (k < count) {
      val l = lengths(k)
      if (l <= 0 || l > n - at) throw new MalformedPageException(s"runs cover more than the page's $n values")
      at += l
      k += 1
    }
    if (at != n) throw new MalformedPageException(s"runs cover $at of the page's $n values")
    into.values = values; into.lengths = lengths; into.count = count
  }

  /** A dictionary's `n` codes: u8 scheme (BITPACK, RLE or HUFFMAN), then its body; every code
    * below `size`, checked here unless `checked` is false (then the caller checks each one). */
  private def readCodes(r: EncodedReader, n: Int, size: Int, codes: Array[Long], checked: Boolean = true): Unit = {
    r.u8("code scheme") match {
      case PageEncoding.BitPack =>
        val w = r.u8("code bit width")
        if (w > 32) throw new MalformedPageException(s"code bit width $w")
        r.packed(n, w, 0L, codes, "dictionary codes")
      case PageEncoding.Rle => readRle(r, n, codes)
      case PageEncoding.Huffman => HuffmanBlock.decode(r, n, codes, huffman, "Huffman-coded dictionary codes")
      case other => throw new MalformedPageException(s"unknown dictionary code scheme $other")
    }
    var i = 0
    while (checked && i < n) { if (codes(i) < 0 || codes(i) >= size) badCode(codes(i), size); i += 1 }
  }

  private def badCode(code: Long, size: Int): Nothing =
    throw new MalformedPageException(s"dictionary code $code outside a dictionary of $size")

  private def decodeWide(encoding: Int, r: EncodedReader, n: Int, width: Int): Unit = {
    val dst = outOf(n.toLong * width)
    encoding match {
      case PageEncoding.Constant =>
        r.bytesInto(dst, 0, width, "constant value")
        var i = 1
        while (i < n) { System.arraycopy(dst, 0, dst, i * width, width); i += 1 }
      case other => unsupported(other, s"$width-byte")
    }
    plainLength = n * width
  }

  private def decodeBitmap(encoding: Int, r: EncodedReader, n: Int): Unit = {
    val bytes = (n + 7) >>> 3
    val dst = outOf(bytes)
    java.util.Arrays.fill(dst, 0, bytes, 0.toByte)
    encoding match {
      case PageEncoding.Constant =>
        val bit = r.u8("constant bit")
        if (bit > 1) throw new MalformedPageException(s"constant bit $bit")
        if (bit == 1) setBits(dst, 0, n)
      case PageEncoding.Rle =>
        var bit = r.u8("first bit")
        if (bit > 1) throw new MalformedPageException(s"first bit $bit")
        val lengths = scratch.values(n)
        val runs = r.u32("run count")
        if (runs > n || (runs == 0 && n > 0)) throw new MalformedPageException(s"$runs runs for $n bits")
        r.forBlock(runs, lengths, "run lengths")
        var at = 0
        var k = 0
        while (k < runs) {
          val l = lengths(k)
          if (l <= 0 || l > n - at) throw new MalformedPageException(s"runs cover more than the page's $n bits")
          if (bit == 1) setBits(dst, at, at + l.toInt)
          at += l.toInt
          bit ^= 1
          k += 1
        }
        if (at != n) throw new MalformedPageException(s"runs cover $at of the page's $n bits")
      case other => unsupported(other, "bitmap")
    }
    plainLength = bytes
  }

  /** Sets bits [from, to) of `dst`. */
  private def setBits(dst: Array[Byte], from: Int, to: Int): Unit = {
    var i = from
    while (i < to && (i & 7) != 0) { dst(i >>> 3) = (dst(i >>> 3) | (1 << (i & 7))).toByte; i += 1 }
    while (i + 8 <= to) { dst(i >>> 3) = -1; i += 8 }
    while (i < to) { dst(i >>> 3) = (dst(i >>> 3) | (1 << (i & 7))).toByte; i += 1 }
  }

  private var wordArray: Array[Byte] = null
  private var words: java.nio.ByteBuffer = null

  /** `dst` as a little-endian buffer for 8-byte writes, kept while `dst` is the output array. */
  private def wordView(dst: Array[Byte]): java.nio.ByteBuffer = {
    if (!(wordArray eq dst)) {
      wordArray = dst
      words = java.nio.ByteBuffer.wrap(dst).order(java.nio.ByteOrder.LITTLE_ENDIAN)
    }
    words
  }

  private def decodeVariable(
      encoding: Int,
      r: EncodedReader,
      n: Int,
      maxBytes: Long,
      valueLengths: () => Array[Int],
      keepEncoded: Boolean
  ): Unit = {
    val m = r.u32("value count")
    if (m > n) throw new MalformedPageException(s"$m values in a page of $n slots")
    encoding match {
      case PageEncoding.Constant =>
        val l = r.u32("value length")
        if (m == 0 && l != 0) throw new MalformedPageException(s"constant page of no values holds a $l-byte value")
        val total = m.toLong * l
        if (total > maxBytes)
          throw new MalformedPageException(s"page decodes to $total bytes, its OFFSETS allow $maxBytes")
        val dst = outOf(total)
        r.bytesInto(dst, 0, l, "constant value")
        var i = 1
        while (i < m) { System.arraycopy(dst, 0, dst, i * l, l); i += 1 }
        plainLength = total.toInt
      case PageEncoding.Dictionary | PageEncoding.DictionaryByLength =>
        val size = r.u32("dictionary size")
        if (size == 0 || size > m) throw new MalformedPageException(s"dictionary of $size entries for $m values")
        val lens = new Array[Long](size)
        r.forBlock(size, lens, "dictionary lengths")
        val starts = new Array[Int](size)
        var at = r.arrayPosition
        var bytes = 0L
        var i = 0
        while (i < size) {
          if (lens(i) < 0 || lens(i) > r.remaining)
            throw new MalformedPageException(s"dictionary entry of ${lens(i)} bytes")
          starts(i) = at + bytes.toInt
          bytes += lens(i)
          i += 1
        }
        if (bytes > r.remaining)
          throw new MalformedPageException(s"dictionary entries need $bytes bytes, the page body has ${r.remaining}")
        val dictBytes = src(r)
        r.skip(bytes.toInt, "dictionary entries")
        val codes = scratch.second(m)
        if (encoding == PageEncoding.Dictionary) readCodes(r, m, size, codes)
        else entriesByLength(r, m, lens, codes, valueLengths)
        var total = 0L
        i = 0
        while (i < m) { total += lens(codes(i).toInt); i += 1 }
        if (total > maxBytes)
          throw new MalformedPageException(s"page decodes to $total bytes, its OFFSETS allow $maxBytes")
        entries.set(dictBytes, starts, lens, codes, m, scratch)
        if (keepEncoded) { entryValues = entries; plainLength = total.toInt }
        else plainLength = entries.copyTo(wordView(outOf(total + DictionaryEntries.Spill)))
      case other => unsupported(other, "variable-width")
    }
  }

  /** Turns a `dictionary_by_length` page's codes into entry numbers in `codes`: value `k`'s code
    * counts the entries of its length (from the OFFSETS) in entry order. */
  private def entriesByLength(
      r: EncodedReader,
      m: Int,
      lens: Array[Long],
      codes: Array[Long],
      valueLengths: () => Array[Int]
  ): Unit = {
    if (valueLengths == null)
      throw new MalformedPageException("dictionary_by_length page read without its values' lengths")
    val lengths = valueLengths()
    if (lengths.length != m)
      throw new MalformedPageException(s"$m values in the page, ${lengths.length} non-null slots in its OFFSETS")
    // Entries sorted by (length, entry number): the entries of one length form a run, in entry
    // order, and code c of a value of length l is the c-th of l's run. Keys are length * 2^31 +
    // entry number, both below 2^31 (lengths checked above, entries fewer than m).
    val d = lens.length
    val keys = new Array[Long](d)
    var e = 0
    while (e < d) { keys(e) = (lens(e) << 31) | e; e += 1 }
    java.util.Arrays.sort(keys)
    // Distinct lengths, where each one's run starts in `keys`, and the run's size.
    val runLength = new Array[Long](d)
    val runStart = new Array[Int](d + 1)
    var runs = 0
    e = 0
    while (e < d) {
      val l = keys(e) >>> 31
      if (runs == 0 || runLength(runs - 1) != l) { runLength(runs) = l; runStart(runs) = e; runs += 1 }
      e += 1
    }
    runStart(runs) = d
    var largest = 1
    e = 0
    while (e < runs) { largest = math.max(largest, runStart(e + 1) - runStart(e)); e += 1 }
    readCodes(r, m, largest, codes)
    // Short entries (the usual case: a few short values): where each length's run starts and how
    // long it is, by length, so that a value costs two lookups and no branch it could mispredict.
    if (runLength(runs - 1) < 4096) {
      val lengthsKnown = runLength(runs - 1).toInt + 1
      val first = new Array[Int](lengthsKnown)
      val size = new Array[Int](lengthsKnown) // 0: no entry of that length
      e = 0
      while (e < runs) {
        first(runLength(e).toInt) = runStart(e); size(runLength(e).toInt) = runStart(e + 1) - runStart(e); e += 1
      }
      val entry = new Array[Int](d)
      e = 0
      while (e < d) { entry(e) = (keys(e) & 0x7fffffffL).toInt; e += 1 }
      var k = 0
      while (k < m) {
        val l = lengths(k)
        val c = codes(k)
        if (l < 0 || l >= lengthsKnown || c >= size(l))
          throw new MalformedPageException(
            if (l < 0 || l >= lengthsKnown || size(l) == 0) s"no dictionary entry of $l bytes for value $k"
            else s"code $c among ${size(l)} dictionary entries of $l bytes"
          )
        codes(k) = entry(first(l) + c.toInt)
        k += 1
      }
      return
    }
    var k = 0
    var run = -1
    while (k < m) {
      val l = lengths(k).toLong
      if (run < 0 || runLength(run) != l) {
        run =
          java.util.Arrays.binarySearch(runLength, 0, runs, l)
        if (run < 0) throw new MalformedPageException(s"no dictionary entry of $l bytes for value $k")
      }
      val size = runStart(run + 1) - runStart(run)
      val c = codes(k)
      if (c >= size) throw new MalformedPageException(s"code $c among $size dictionary entries of $l bytes")
      codes(k) = keys(runStart(run) + c.toInt) & 0x7fffffffL
      k += 1
    }
  }

  private def src(r: EncodedReader): Array[Byte] = r.array
}
