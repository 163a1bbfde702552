package io.fermion.core

import java.nio.file.{Files, Paths}

import io.fermion.core.options.{OptionRegistry, OptionScope}
import io.fermion.core.read.ReaderOptions
import io.fermion.core.write.WriterOptions
import org.scalatest.funsuite.AnyFunSuite

/** The option registry is the one source of options: the README's tables, the documented
  * defaults and the unknown-key check all follow it. */
class OptionRegistrySuite extends AnyFunSuite {
  import OptionRegistry._

  private def readme: String = {
    // Tests run with the module as working directory (sbt forks there) or the repository root.
    val p = Seq(Paths.get("README.md"), Paths.get("../README.md")).find(p =>
      Files.exists(p) && Files.readString(p).contains("# Fermion")
    )
    Files.readString(p.getOrElse(fail("README.md not found")))
  }

  test("the README's option tables are the ones generated from the registry") {
    val text = readme
    Seq(OptionScope.Write, OptionScope.Dataset, OptionScope.Read, OptionScope.Storage).foreach { scope =>
      val table = markdownTable(scope)
      assert(text.contains(table), s"README.md must contain this table (regenerate it from OptionRegistry):\n$table\n")
    }
  }

  test("documented defaults are the defaults the reader and writer use") {
    val w = WriterOptions()
    val r = ReaderOptions()
    def default[T](spec: io.fermion.core.options.OptionSpec[T]): T =
      spec.parse(spec.defaultText.stripPrefix("`").stripSuffix("`"))
    assert(default(Compression) == w.compression)
    assert(default(CompressionLevel) == w.compressionLevel)
    assert(default(Encodings) == w.encodings)
    assert(default(PageSize) == w.pageSize)
    assert(default(PageRows) == w.pageRows)
    assert(default(StripeRows) == w.stripeMaxRows)
    assert(default(StripeBytes) == w.stripeMaxBytes)
    assert(default(Checksum) == w.pageChecksums)
    assert(default(BloomFilterFpp) == w.bloomFilterFpp)
    assert(default(CmbEagerLoadThreshold) == r.cmbEagerLoadThreshold)
    assert(default(MaxCoalescedBytes) == r.maxCoalescedBytes)
    assert(default(VerifyChecksums) == r.verifyChecksums)
    assert(default(FilterPushdown) == r.filterPushdown)
    assert(!default(MergeSchema) && !default(StableRowIds))
  }

  test("unknown keys and bad values fail naming the option; per-column settings and ignored keys pass") {
    val all = Set[OptionScope](OptionScope.Read, OptionScope.Write, OptionScope.Dataset)
    val e = intercept[IllegalArgumentException](checkKnown(Map("compresion" -> "zstd"), all))
    assert(e.getMessage.contains("'compresion'") && e.getMessage.contains("compression"))
    val bad = intercept[IllegalArgumentException](checkKnown(Map("pageRows" -> "7"), all))
    assert(bad.getMessage.contains("'pageRows'") && bad.getMessage.contains("multiple of 8"))
    // a write option is not a read option
    intercept[IllegalArgumentException](checkKnown(Map("compression" -> "zstd"), Set(OptionScope.Read)))
    // per column only
    intercept[IllegalArgumentException](checkKnown(Map("bloomFilter" -> "true"), all))
    checkKnown(Map("column.a.b.bloomFilter" -> "true", "COLUMN.x.pageSize" -> "64k", "Path" -> "/x"), all, Set("path"))
    assert(WriterOptions.parse(Map("column.S.x.pageSize" -> "64k")).forColumn("s.x").pageSize == 65536)
  }

  test("option keys are unique and documented") {
    assert(all.map(_.key.toLowerCase).distinct.size == all.size)
    assert(all.forall(_.doc.nonEmpty))
  }
}
