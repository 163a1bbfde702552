package io.fermion.core.encoding

import io.fermion.core.layout.PageEncoding
import io.fermion.core.bytes.GrowableBytes

/** Chooses and applies one page's lightweight encoding (BtrBlocks-style, but exact rather than
  * sampled: one pass over the page's values gives min, max, runs and the range of differences, from
  * which the size of every candidate follows; the distinct count comes from building the
  * dictionary with a cap). The smallest allowed candidate wins, ties going to the one that decodes
  * fastest. PLAIN competes only when allowed explicitly or when nothing else applies, so that a
  * column restricted to, say, `dictionary` gets dictionary pages wherever they are possible.
  * One instance per writer; it reuses its scratch arrays between pages. */
final private[core] class PageEncoder {
  private var values = new Array[Long](0)
  private var second = new Array[Long](0)
  private var third = new Array[Long](0)
  private val longDict = new LongDictionaryBuilder
  private val bytesDict = new BytesDictionaryBuilder
  // The last fixed-width page's values (in `values`), for [[encodeLastAsDelta]].
  private var lastN = 0
  private var lastMaxZz = 0L
  private var lastRepeats = false
  // The last page as [[entropyAlternativeSize]] sees it: its values (fixed pages, in `values`) and
  // its dictionary codes with where their code block starts in the body (dictionary pages).
  private val huffman = new HuffmanEncoder
  private var lastFixed = false
  private var lastMin = 0L
  private var lastMax = 0L
  private var lastCodes = new Array[Long](0)
  private var lastCodeCount = 0
  private var lastCodeMax = 0L
  private var lastCodeBlockAt = -1
  private var lastDictionaryEncoding = PageEncoding.Dictionary
  // The smallest Huffman-coded form found by entropyAlternativeSize: encoding and mantissa width;
  // and whether it was the last one measured (`huffman` then holds its code, ready to write).
  private var entropyChoice = -1
  private var entropyMantissa = 0
  private var entropyChoiceMeasuredLast = false

  private def longs(n: Int): Array[Long] = {
    if (values.length < n) values = new Array[Long](math.max(n, values.length * 2)); values
  }
  private def seconds(n: Int): Array[Long] = {
    if (second.length < n) second = new Array[Long](math.max(n, second.length * 2)); second
  }
  private def thirds(n: Int): Array[Long] = {
    if (third.length < n) third = new Array[Long](math.max(n, third.length * 2)); third
  }

  /** Encodes `n` fixed-width values from `src(off until off + n * width)` into `out` and returns the
    * encoding id. */
  def encodeFixed(src: Array[Byte], off: Int, n: Int, width: Int, allowed: EncodingSet, out: GrowableBytes): Int = {
    lastRepeats = false
    forgetLastPage()
    if (n == 0 || width > 8) return encodeWideFixed(src, off, n, width, allowed, out)
    val v = longs(n)
    PlainValues.readSigned(src, off, n, width, v)
    var min = v(0); var max = v(0)
    var runs = 1; var run = 1; var maxRun = 1
    var minD = Long.MaxValue; var maxD = Long.MinValue; var maxZz = 0L
    var i = 1
    while (i < n) {
      val x = v(i)
      if (x < min) min = x
      if (x > max) max = x
      val d = x - v(i - 1)
      if (d == 0) { run += 1; if (run > maxRun) maxRun = run }
      else { runs += 1; run = 1 }
      if (d < minD) minD = d
      if (d > maxD) maxD = d
      val zz = (d << 1) ^ (d >> 63)
      if (java.lang.Long.compareUnsigned(zz, maxZz) > 0) maxZz = zz
      i += 1
    }
    lastN = n; lastMaxZz = maxZz; lastRepeats = runs.toLong * 2 <= n
    lastFixed = true; lastMin = min; lastMax = max
    val plainAllowed = allowed.ids.contains(PageEncoding.Plain)
    val candidates = new Candidates(plainAllowed)
    val deltas = n - 1
    if (allowed.allows(PageEncoding.Constant) && runs == 1) candidates.offer(PageEncoding.Constant, width)
    if (allowed.allows(PageEncoding.BitPack) && min >= 0)
      candidates.offer(PageEncoding.BitPack, 1 + BitPacking.packedBytes(n, BitPacking.bitWidth(max)))
    if (allowed.allows(PageEncoding.For))
      candidates.offer(PageEncoding.For, 9 + BitPacking.packedBytes(n, BitPacking.bitWidth(max - min)))
    if (allowed.allows(PageEncoding.DeltaFor))
      candidates.offer(
        PageEncoding.DeltaFor,
        8 + 9 + (if (deltas == 0) 0 else BitPacking.packedBytes(deltas, BitPacking.bitWidth(maxD - minD)))
      )
    if (allowed.allows(PageEncoding.Delta))
      candidates.offer(PageEncoding.Delta, 8 + 1 + BitPacking.packedBytes(deltas, BitPacking.bitWidth(maxZz)))
    val rleCost = 4 + 9 + BitPacking.packedBytes(runs, BitPacking.bitWidth(max - min)) + 9 + BitPacking.packedBytes(
      runs,
      BitPacking.bitWidth(maxRun)
    )
    var dictSize = -1
    if (allowed.allows(PageEncoding.Dictionary) && candidatesMayTakeDictionary(candidates, n, width)) {
      dictSize = buildLongDictionary(v, n)
      if (dictSize > 0) {
        val codeWidth = BitPacking.bitWidth(dictSize - 1L)
        val codes = math.min(
          2 + BitPacking.packedBytes(n, codeWidth),
          1 + 4 + 9 + BitPacking.packedBytes(runs, codeWidth) + 9 + BitPacking.packedBytes(
            runs,
            BitPacking.bitWidth(maxRun)
          )
        )
        candidates.offer(PageEncoding.Dictionary, 4L + dictSize.toLong * width + codes)
      }
    }
    if (allowed.allows(PageEncoding.Rle)) candidates.offer(PageEncoding.Rle, rleCost)
    candidates.offer(PageEncoding.Plain, n.toLong * width)

    candidates.best match {
      case PageEncoding.Constant => PlainValues.writeSigned(out, v(0), width)
      case PageEncoding.BitPack =>
        val w = BitPacking.bitWidth(max); out.putByte(w); BitPacking.pack(v, n, 0L, w, out)
      case PageEncoding.For => writeFor(v, n, min, max, out)
      case PageEncoding.DeltaFor =>
        out.putLong(v(0))
        val d = deltasOf(v, n)
        writeFor(d, deltas, if (deltas == 0) 0L else minD, if (deltas == 0) 0L else maxD, out)
      case PageEncoding.Delta => writeDelta(v, n, maxZz, out)
      case PageEncoding.Dictionary =>
        out.putInt(dictSize)
        val entries = longDict.entries
        i = 0
        while (i < dictSize) { PlainValues.writeSigned(out, entries(i), width); i += 1 }
        val codes = seconds(n)
        i = 0
        while (i < n) { codes(i) = longDict.codeOf(v(i), Int.MaxValue); i += 1 }
        keepCodes(codes, n, dictSize - 1L, PageEncoding.Dictionary, out)
        writeCodes(codes, n, dictSize, runs, maxRun, out)
      case PageEncoding.Rle => writeRle(v, n, runs, out)
      case _ => out.putBytes(src, off, n * width)
    }
    candidates.best
  }

  /** Whether the last fixed-width page is worth a DELTA body beside its chosen one when pages are
    * compressed: at least half of its values repeat their predecessor (sorted keys with duplicates),
    * whose runs RLE stores at the full width of their values while zstd packs their differences
    * (mostly 0 and a few small steps) into a few bits. The caller compresses both and keeps the
    * smaller. */
  def lastMayCompressAsDelta(allowed: EncodingSet): Boolean =
    lastRepeats && lastN > 1 && allowed.allows(PageEncoding.Delta)

  /** Writes the last fixed-width page as a DELTA body into `out`; returns the encoding. */
  def encodeLastAsDelta(out: GrowableBytes): Int = {
    writeDelta(values, lastN, lastMaxZz, out)
    PageEncoding.Delta
  }

  private def forgetLastPage(): Unit = {
    lastFixed = false; lastCodeBlockAt = -1; entropyChoice = -1; entropyChoiceMeasuredLast = false
  }

  /** Keeps a dictionary page's codes (at most `max`), whose code block starts at `out`'s end. */
  private def keepCodes(codes: Array[Long], n: Int, max: Long, encoding: Int, out: GrowableBytes): Unit = {
    if (lastCodes.length < n) lastCodes = new Array[Long](math.max(n, lastCodes.length * 2))
    System.arraycopy(codes, 0, lastCodes, 0, n)
    lastCodeCount = n; lastCodeMax = max; lastCodeBlockAt = out.length; lastDictionaryEncoding = encoding
  }

  /** The size of the last page's smallest form with Huffman blocks (format 5.7.1), or -1 when none
    * is allowed: for integers, HUFFMAN (values minus the minimum) and DELTA_HUFFMAN (zigzag
    * differences); for dictionary pages, the same body with its codes Huffman-coded. Each is
    * measured exactly at mantissa width 2 (bins of a quarter octave, for wide ranges) and, when the
    * values fit in 8 bits, at their width (every value its own symbol). The caller compares the
    * size with the stored size of the page it has, since Huffman blocks do not compress further
    * while the other encodings' bodies may, and calls [[encodeEntropyAlternative]] to write it. */
  def entropyAlternativeSize(allowed: EncodingSet): Long = {
    var best = Long.MaxValue
    def consider(encoding: Int, u: Array[Long], k: Int, max: Long, fixedBytes: Long): Unit =
      mantissaWidths(max).foreach { m =>
        val size = fixedBytes + huffman.measure(u, k, m)
        entropyChoiceMeasuredLast = size < best
        if (size < best) { best = size; entropyChoice = encoding; entropyMantissa = m }
      }
    if (lastFixed && lastN > 0) {
      val n = lastN
      if (allowed.allows(PageEncoding.Huffman)) {
        val u = thirds(n)
        var i = 0
        while (i < n) { u(i) = values(i) - lastMin; i += 1 }
        consider(PageEncoding.Huffman, u, n, lastMax - lastMin, 8)
      }
      if (allowed.allows(PageEncoding.DeltaHuffman) && n > 1) {
        val z = zigzagDeltas(n)
        consider(PageEncoding.DeltaHuffman, z, n - 1, lastMaxZz, 8)
      }
    }
    if (lastCodeBlockAt >= 0 && allowed.allows(PageEncoding.Huffman))
      consider(PageEncoding.Dictionary, lastCodes, lastCodeCount, lastCodeMax, lastCodeBlockAt + 1L)
    if (best == Long.MaxValue) { entropyChoice = -1; -1L }
    else best
  }

  /** Writes the form [[entropyAlternativeSize]] measured into `out`; `first` holds the page's body
    * as encoded (a dictionary page keeps everything before its code block). Returns the encoding. */
  def encodeEntropyAlternative(first: GrowableBytes, out: GrowableBytes): Int = {
    val m = entropyMantissa
    entropyChoice match {
      case PageEncoding.Huffman =>
        val u = thirds(lastN)
        var i = 0
        while (i < lastN) { u(i) = values(i) - lastMin; i += 1 }
        out.putLong(lastMin)
        if (!entropyChoiceMeasuredLast) huffman.measure(u, lastN, m)
        huffman.write(u, lastN, out)
        PageEncoding.Huffman
      case PageEncoding.DeltaHuffman =>
        val z = zigzagDeltas(lastN)
        out.putLong(values(0))
        if (!entropyChoiceMeasuredLast) huffman.measure(z, lastN - 1, m)
        huffman.write(z, lastN - 1, out)
        PageEncoding.DeltaHuffman
      case _ =>
        out.putBytes(first.array, 0, lastCodeBlockAt)
        out.putByte(PageEncoding.Huffman)
        if (!entropyChoiceMeasuredLast) huffman.measure(lastCodes, lastCodeCount, m)
        huffman.write(lastCodes, lastCodeCount, out)
        lastDictionaryEncoding
    }
  }

  /** Mantissa widths worth measuring for unsigned values up to `max`. */
  private def mantissaWidths(max: Long): Seq[Int] = {
    val width = BitPacking.bitWidth(max)
    if (width <= 2) Seq(width) else if (width <= HuffmanEncoder.MaxWriterMantissa) Seq(2, width) else Seq(2)
  }

  /** The last fixed page's zigzag differences, in `third`. */
  private def zigzagDeltas(n: Int): Array[Long] = {
    val z = thirds(n)
    var i = 1
    while (i < n) { val d = values(i) - values(i - 1); z(i - 1) = (d << 1) ^ (d >> 63); i += 1 }
    z
  }

  /** i64 first value, u8 bit width, zigzag differences packed. */
  private def writeDelta(v: Array[Long], n: Int, maxZz: Long, out: GrowableBytes): Unit = {
    out.putLong(v(0))
    val d = deltasOf(v, n)
    var i = 0
    while (i < n - 1) { val x = d(i); d(i) = (x << 1) ^ (x >> 63); i += 1 }
    val w = BitPacking.bitWidth(maxZz); out.putByte(w); BitPacking.pack(d, n - 1, 0L, w, out)
  }

  // For `dictionary_by_length`: each entry's rank among the entries of its length, in entry order.
  private var lengthRanks = new Array[Int](0)
  private var largestLengthGroup = 1

  /** Ranks the byte dictionary's `size` entries within their lengths; returns the largest group. */
  private def rankByLength(size: Int): Int = {
    if (lengthRanks.length < size) lengthRanks = new Array[Int](math.max(size, lengthRanks.length * 2))
    val seen = new java.util.HashMap[Integer, Integer]()
    largestLengthGroup = 1
    var c = 0
    while (c < size) {
      val rank = seen.getOrDefault(bytesDict.entryLength(c), 0)
      lengthRanks(c) = rank
      seen.put(bytesDict.entryLength(c), rank + 1)
      largestLengthGroup = math.max(largestLengthGroup, rank + 1)
      c += 1
    }
    largestLengthGroup
  }

  /** Width 16 (decimal128) and empty pages: PLAIN or CONSTANT. */
  private def encodeWideFixed(
      src: Array[Byte],
      off: Int,
      n: Int,
      width: Int,
      allowed: EncodingSet,
      out: GrowableBytes
  ): Int = {
    var constant = n > 0 && allowed.allows(PageEncoding.Constant)
    var i = 1
    while (constant && i < n) {
      constant = java.util.Arrays.equals(src, off, off + width, src, off + i * width, off + (i + 1) * width)
      i += 1
    }
    if (constant) { out.putBytes(src, off, width); PageEncoding.Constant }
    else { out.putBytes(src, off, n * width); PageEncoding.Plain }
  }

  /** A dictionary can only win if its codes beat the best cost so far. */
  private def candidatesMayTakeDictionary(c: Candidates, n: Int, width: Int): Boolean =
    !c.has || c.cost > 4 + width + BitPacking.packedBytes(n, 1)

  /** Distinct values of the page, or -1 past the cap (half the page, at most 65,536 entries). */
  private def buildLongDictionary(v: Array[Long], n: Int): Int = {
    val cap = math.max(1, math.min(n / 2, 1 << 16))
    longDict.reset(math.min(n, cap + 1))
    var i = 0
    while (i < n) { if (longDict.codeOf(v(i), cap) < 0) return -1; i += 1 }
    longDict.size
  }

  private def deltasOf(v: Array[Long], n: Int): Array[Long] = {
    val d = seconds(math.max(1, n - 1))
    var i = 1
    while (i < n) { d(i - 1) = v(i) - v(i - 1); i += 1 }
    d
  }

  /** A FOR block: i64 reference (the minimum), u8 bit width, packed values. */
  private def writeFor(v: Array[Long], n: Int, min: Long, max: Long, out: GrowableBytes): Unit = {
    val w = BitPacking.bitWidth(max - min)
    out.putLong(min); out.putByte(w); BitPacking.pack(v, n, min, w, out)
  }

  /** u32 run count, FOR block of run values, FOR block of run lengths. */
  private def writeRle(v: Array[Long], n: Int, runs: Int, out: GrowableBytes): Unit = {
    val runValues = thirds(runs)
    val runLengths = new Array[Long](runs)
    var r = 0
    var i = 0
    var min = Long.MaxValue; var max = Long.MinValue; var maxLen = 0L
    while (i < n) {
      val x = v(i)
      var j = i + 1
      while (j < n && v(j) == x) j += 1
      runValues(r) = x; runLengths(r) = j - i
      if (x < min) min = x
      if (x > max) max = x
      if (j - i > maxLen) maxLen = j - i
      r += 1
      i = j
    }
    out.putInt(runs)
    writeFor(runValues, runs, min, max, out)
    writeFor(runLengths, runs, 0L, maxLen, out)
  }

  /** Dictionary codes as an integer block: u8 scheme (BITPACK or RLE) and its body. */
  private def writeCodes(
      codes: Array[Long],
      n: Int,
      dictSize: Int,
      runs: Int,
      maxRun: Int,
      out: GrowableBytes
  ): Unit = {
    val codeWidth = BitPacking.bitWidth(dictSize - 1L)
    val packed = 1 + BitPacking.packedBytes(n, codeWidth)
    val rle =
      4 + 9 + BitPacking.packedBytes(runs, codeWidth) + 9 + BitPacking.packedBytes(runs, BitPacking.bitWidth(maxRun))
    if (rle < packed) { out.putByte(PageEncoding.Rle); writeRle(codes, n, runs, out) }
    else { out.putByte(PageEncoding.BitPack); out.putByte(codeWidth); BitPacking.pack(codes, n, 0L, codeWidth, out) }
  }

  /** Encodes a bitmap page of `n` bits starting at byte `off` of `src`. */
  def encodeBitmap(src: Array[Byte], off: Int, n: Int, allowed: EncodingSet, out: GrowableBytes): Int = {
    forgetLastPage()
    val bytes = (n + 7) >>> 3
    var runs = if (n == 0) 0 else 1
    var maxRun = if (n == 0) 0 else 1
    var run = 1
    var prev = n > 0 && (src(off) & 1) != 0
    var i = 1
    while (i < n) {
      val b = (src(off + (i >>> 3)) & (1 << (i & 7))) != 0
      if (b == prev) { run += 1; if (run > maxRun) maxRun = run }
      else { runs += 1; run = 1; prev = b }
      i += 1
    }
    val candidates = new Candidates(allowed.ids.contains(PageEncoding.Plain))
    if (allowed.allows(PageEncoding.Constant) && runs == 1) candidates.offer(PageEncoding.Constant, 1)
    if (allowed.allows(PageEncoding.Rle) && n > 0)
      candidates.offer(PageEncoding.Rle, 1 + 4 + 9 + BitPacking.packedBytes(runs, BitPacking.bitWidth(maxRun)))
    candidates.offer(PageEncoding.Plain, bytes)
    candidates.best match {
      case PageEncoding.Constant => out.putByte(src(off) & 1)
      case PageEncoding.Rle =>
        val lens = longs(runs)
        var r = 0
        i = 0
        while (i < n) {
          val b = (src(off + (i >>> 3)) & (1 << (i & 7))) != 0
          var j = i + 1
          while (j < n && ((src(off + (j >>> 3)) & (1 << (j & 7))) != 0) == b) j += 1
          lens(r) = j - i; r += 1; i = j
        }
        out.putByte(src(off) & 1); out.putInt(runs); writeFor(lens, runs, 0L, maxRun, out)
      case _ =>
        val at = out.length
        out.putBytes(src, off, bytes)
        val tail = n & 7 // bits past the page's end are zero, whatever the buffer held there
        if (tail != 0) out.array(at + bytes - 1) = (out.array(at + bytes - 1) & ((1 << tail) - 1)).toByte
    }
    candidates.best
  }

  /** Encodes the variable-width values of one page: `count` slots, of which the valid ones hold
    * `lens(k)` bytes starting at `starts(k)` in `src`. */
  def encodeVariable(
      src: Array[Byte],
      starts: Array[Int],
      lens: Array[Int],
      valid: Array[Boolean],
      count: Int,
      allowed: EncodingSet,
      out: GrowableBytes
  ): Int = {
    forgetLastPage()
    var m = 0
    var total = 0L
    var i = 0
    while (i < count) { if (valid(i)) { m += 1; total += lens(i) }; i += 1 }
    val candidates = new Candidates(allowed.ids.contains(PageEncoding.Plain))
    val firstValid = valid.indexWhere(identity)
    if (allowed.allows(PageEncoding.Constant) && m > 0) {
      var same = true
      i = firstValid + 1
      val s0 = starts(firstValid); val l0 = lens(firstValid)
      while (same && i < count) {
        if (valid(i)) same = lens(i) == l0 && java.util.Arrays.equals(src, s0, s0 + l0, src, starts(i), starts(i) + l0)
        i += 1
      }
      if (same) candidates.offer(PageEncoding.Constant, 8L + l0)
    }
    var dictSize = -1
    var dictBytes = 0L
    var maxLen = 0
    val byLengthAllowed = allowed.allows(PageEncoding.DictionaryByLength)
    if ((allowed.allows(PageEncoding.Dictionary) || byLengthAllowed) && m > 1 && !candidates.has) {
      val cap = math.max(1, math.min(m / 2, 1 << 16))
      bytesDict.reset(src, math.min(m, cap + 1))
      i = 0
      var ok = true
      while (ok && i < count) { if (valid(i)) ok = bytesDict.codeOf(starts(i), lens(i), cap) >= 0; i += 1 }
      if (ok) {
        dictSize = bytesDict.size
        var c = 0
        while (c < dictSize) {
          dictBytes += bytesDict.entryLength(c); maxLen = math.max(maxLen, bytesDict.entryLength(c)); c += 1
        }
        val codes = 2 + BitPacking.packedBytes(m, BitPacking.bitWidth(dictSize - 1L))
        val entries = 8 + 9 + BitPacking.packedBytes(dictSize, BitPacking.bitWidth(maxLen)) + dictBytes
        if (allowed.allows(PageEncoding.Dictionary)) candidates.offer(PageEncoding.Dictionary, entries + codes)
        if (byLengthAllowed) {
          val group = rankByLength(dictSize)
          candidates.offer(
            PageEncoding.DictionaryByLength,
            entries + 2 + BitPacking.packedBytes(m, BitPacking.bitWidth(group - 1L))
          )
        }
      }
    }
    candidates.offer(PageEncoding.Plain, total)
    candidates.best match {
      case PageEncoding.Constant =>
        out.putInt(m); out.putInt(lens(firstValid)); out.putBytes(src, starts(firstValid), lens(firstValid))
      case PageEncoding.Dictionary | PageEncoding.DictionaryByLength =>
        val byLength = candidates.best == PageEncoding.DictionaryByLength
        out.putInt(m); out.putInt(dictSize)
        val entryLens = longs(dictSize)
        var c = 0
        while (c < dictSize) { entryLens(c) = bytesDict.entryLength(c); c += 1 }
        writeFor(entryLens, dictSize, 0L, maxLen, out)
        c = 0
        while (c < dictSize) { out.putBytes(src, bytesDict.entryStart(c), bytesDict.entryLength(c)); c += 1 }
        val codes = seconds(m)
        var k = 0
        var runs = if (m > 0) 1 else 0
        var run = 1; var maxRun = if (m > 0) 1 else 0
        i = 0
        while (i < count) {
          if (valid(i)) {
            val entry = bytesDict.codeOf(starts(i), lens(i), Int.MaxValue)
            codes(k) = if (byLength) lengthRanks(entry) else entry
            if (k > 0) {
              if (codes(k) == codes(k - 1)) { run += 1; if (run > maxRun) maxRun = run }
              else { runs += 1; run = 1 }
            }
            k += 1
          }
          i += 1
        }
        val codeCount = if (byLength) largestLengthGroup else dictSize
        keepCodes(codes, m, codeCount - 1L, candidates.best, out)
        writeCodes(codes, m, codeCount, runs, maxRun, out)
      case _ =>
        if (count > 0) out.putBytes(src, starts(0), total.toInt) // valid values are contiguous, nulls hold no bytes
    }
    candidates.best
  }
}

/** The running choice among candidate encodings; offer them in order of decoding speed so that a
  * tie keeps the faster one. PLAIN is taken only when allowed or when nothing else was offered. */
final private class Candidates(plainAllowed: Boolean) {
  var best: Int = PageEncoding.Plain
  var cost: Long = Long.MaxValue
  var has: Boolean = false
  def offer(id: Int, bytes: Long): Unit =
    if (id == PageEncoding.Plain) {
      if (!has || (plainAllowed && bytes < cost)) { best = id; cost = bytes; has = true }
    } else if (!has || bytes < cost) { best = id; cost = bytes; has = true }
}
