package io.fermion.core

import java.nio.file.{Files, Path, Paths}

import scala.jdk.CollectionConverters._

import org.scalatest.funsuite.AnyFunSuite

/** The core's packages form layers: no package depends, directly or through others, on one that
  * depends on it. Dependencies are read from the sources (imports and fully qualified names). */
class PackageLayersSuite extends AnyFunSuite {
  private val root: Path =
    Seq(Paths.get("src/main/scala/io/fermion/core"), Paths.get("core/src/main/scala/io/fermion/core")).find(
      Files.isDirectory(_)
    )
      .getOrElse(fail("core sources not found"))

  private val reference = """io\.fermion\.core\.([a-z]+(?:\.[a-z]+)*)""".r

  /** Source text without comments (a doc comment may name any class without depending on it). */
  private def withoutComments(text: String): String =
    text.replaceAll("(?s)/\\*.*?\\*/", "").replaceAll("//[^\n]*", "")

  /** package -> packages it refers to (all relative to io.fermion.core). */
  private lazy val graph: Map[String, Set[String]] = {
    val files = Files.walk(root).iterator().asScala.filter(_.toString.endsWith(".scala")).toSeq
    val packages = files.map(f => root.relativize(f.getParent).toString.replace('/', '.')).toSet
    files.groupBy(f => root.relativize(f.getParent).toString.replace('/', '.')).map { case (pkg, fs) =>
      val refs = fs.flatMap { f =>
        reference.findAllMatchIn(withoutComments(Files.readString(f))).map(_.group(1)).flatMap { r =>
          // The longest known package the reference starts with.
          packages.filter(p => r == p || r.startsWith(p + ".")).maxByOption(_.length)
        }
      }.toSet - pkg
      pkg -> refs
    }
  }

  test("core packages have no dependency cycles") {
    assert(graph.size > 10, s"found packages: ${graph.keys}")
    def reaches(from: String, to: String, seen: Set[String] = Set.empty): Boolean =
      graph.getOrElse(from, Set.empty).exists(n => n == to || (!seen(n) && reaches(n, to, seen + n)))
    val cycles = graph.keys.toSeq.sorted.filter(p => reaches(p, p))
    assert(
      cycles.isEmpty,
      s"packages on a cycle: ${cycles.map(p => s"$p -> ${graph(p).toSeq.sorted.mkString(", ")}").mkString("; ")}"
    )
  }

  test("the format's low layers depend on nothing above them") {
    for (low <- Seq("bytes", "codec", "layout", "expr", "options")) {
      val above = graph.getOrElse(low, Set.empty).intersect(Set("read", "write", "dataset", "scan", "compaction"))
      assert(above.isEmpty, s"$low depends on $above")
    }
  }

  /** Packages wholly internal: the byte layout and what encodes, compresses and indexes it. */
  private val internalPackages = Seq("bytes", "bloom", "codec", "encoding", "layout", "stats", "read.filter")
  private val topLevel =
    """(?m)^((?:private\[[a-z]+\] )?)(?:(?:final|sealed|abstract|case) )*(?:class|object|trait) (\w+)""".r

  test("internal packages define nothing public: a Scala user of the core cannot name them") {
    val public = internalPackages.flatMap { pkg =>
      val dir = root.resolve(pkg.replace('.', '/'))
      Files.list(dir).iterator().asScala.filter(_.toString.endsWith(".scala")).flatMap { f =>
        topLevel.findAllMatchIn(withoutComments(Files.readString(f))).filter(_.group(1).isEmpty).map(m =>
          s"$pkg.${m.group(2)}"
        )
      }
    }
    assert(internalPackages.forall(p => Files.isDirectory(root.resolve(p.replace('.', '/')))))
    assert(public.isEmpty, s"public definitions in internal packages: ${public.mkString(", ")}")
  }

  test("the Spark connector refers to no internal package of the core") {
    val connector = Seq(Paths.get("../spark-connector/src/main/scala"), Paths.get("spark-connector/src/main/scala"))
      .find(Files.isDirectory(_)).getOrElse(fail("connector sources not found"))
    val files = Files.walk(connector).iterator().asScala.filter(_.toString.endsWith(".scala")).toSeq
    assert(files.size > 20, s"connector sources: ${files.size}")
    val uses = for {
      f <- files
      r <- reference.findAllMatchIn(withoutComments(Files.readString(f))).map(_.group(1))
      if internalPackages.exists(p => r == p || r.startsWith(p + "."))
    } yield s"${connector.relativize(f)}: $r"
    assert(uses.isEmpty, uses.mkString("; "))
  }
}
